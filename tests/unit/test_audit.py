"""Host audit (ssdpts doctor): the checks here, on a fake sysfs tree, and apply/undo round trips.

apply/undo only ever touch files in tmp_path here (host.SYS_CPU, audit.SYS, host.PROC point at a
fake tree; commands are replaced), never the real host's settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdpts.cli.doctor import fio_checks
from ssdpts.device.host import audit
from ssdpts.device.host import host
from ssdpts.device.tools import FakeTools


def test_audit_runs_here_and_every_check_has_a_fix() -> None:
    checks = audit.audit()
    names = [c.name for c in checks]
    assert len(names) == len(set(names)) == len(audit.CHECKS)
    for c in checks:
        assert c.current and c.recommended and c.fix_command, c
        assert c.ok in (True, False, None)
        assert c.ok is not False or c.fix_command != "—"
        if c.reversible:
            assert c.actions, c
    entry = audit.manifest_entry(checks)
    json.dumps(entry)
    assert entry["differs"] == [c.name for c in checks if c.ok is False]
    assert set(entry["checks"][0]) == {"name", "current", "recommended", "ok", "fix_command", "reversible", "why"}


def test_tool_versions_are_read() -> None:
    fio = audit.check_fio()
    if fio.current != "not installed":
        assert audit._version_tuple(fio.current) >= (2,)


def test_io_uring_probe_returns_a_verdict() -> None:
    works, detail = audit.io_uring_works()
    assert isinstance(works, bool) and detail


# --- a fake host ----------------------------------------------------------------------------------


@pytest.fixture
def fakehost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cpu = tmp_path / "sys" / "devices" / "system" / "cpu"
    for n in (0, 1):
        (cpu / f"cpu{n}" / "cpufreq").mkdir(parents=True)
        (cpu / f"cpu{n}" / "cpufreq" / "scaling_governor").write_text("powersave\n")
        (cpu / f"cpu{n}" / "cpufreq" / "scaling_available_governors").write_text("performance powersave\n")
        for i, (name, lat) in enumerate((("POLL", 0), ("C1", 2), ("C1E", 10), ("C6", 170))):
            d = cpu / f"cpu{n}" / "cpuidle" / f"state{i}"
            d.mkdir(parents=True)
            (d / "name").write_text(name + "\n")
            (d / "latency").write_text(f"{lat}\n")
            (d / "disable").write_text("0\n")
    (cpu / "intel_pstate").mkdir()
    (cpu / "intel_pstate" / "no_turbo").write_text("1\n")
    (cpu / "intel_pstate" / "min_perf_pct").write_text("20\n")
    (cpu / "cpuidle").mkdir()
    (cpu / "cpuidle" / "current_driver").write_text("intel_idle\n")
    mod = tmp_path / "sys" / "module"
    (mod / "pcie_aspm" / "parameters").mkdir(parents=True)
    (mod / "pcie_aspm" / "parameters" / "policy").write_text("[default] performance powersave powersupersave\n")
    (mod / "nvme_core" / "parameters").mkdir(parents=True)
    (mod / "nvme_core" / "parameters" / "default_ps_max_latency_us").write_text("100000\n")
    pw = tmp_path / "sys" / "class" / "nvme" / "nvme0" / "power"
    pw.mkdir(parents=True)
    (pw / "pm_qos_latency_tolerance_us").write_text("100000\n")
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 1048572 0 100\n")
    monkeypatch.setattr(host, "SYS_CPU", str(cpu))
    monkeypatch.setattr(host, "PROC", str(proc))
    monkeypatch.setattr(audit, "SYS", str(tmp_path / "sys"))
    return tmp_path


def test_checks_on_an_untuned_host(fakehost: Path) -> None:
    gov = audit.check_governor()
    assert (gov.current, gov.ok, gov.reversible, len(gov.actions)) == ("powersave", False, True, 2)
    assert audit.check_min_perf().current == "20" and audit.check_turbo().current == "disabled"
    cst = audit.check_cstates()
    assert cst.ok is False and "C1E, C6 enabled on 2 CPUs" in cst.current and len(cst.actions) == 4
    aspm = audit.check_aspm()
    assert (aspm.current, aspm.ok) == ("default", False)
    apst = audit.check_apst()
    assert apst.ok is False and apst.reversible and "pm_qos_latency_tolerance_us" in apst.fix_command
    sw = audit.check_swap()
    assert sw.ok is False and sw.actions[0].argv == ("swapoff", "/dev/zram0")
    assert sw.actions[0].undo_argv == ("swapon", "-p", "100", "/dev/zram0")


def test_apply_and_undo_round_trip(fakehost: Path) -> None:
    fake = FakeTools({(): ""}, destructive=True)
    ran = fake.calls
    state = fakehost / "state" / "doctor-applied.json"
    cpu = Path(host.SYS_CPU)
    checks = [audit.check_governor(), audit.check_cstates(), audit.check_aspm(), audit.check_turbo(),
              audit.check_min_perf(), audit.check_swap(), audit.check_apst()]
    done, failed = audit.apply(checks, state=state, tools=fake)
    assert not failed and len(done) == 2 + 4 + 1 + 1 + 1 + 1 + 1
    assert (cpu / "cpu1" / "cpufreq" / "scaling_governor").read_text() == "performance"
    assert (cpu / "cpu0" / "cpuidle" / "state3" / "disable").read_text() == "1"
    assert (cpu / "cpu0" / "cpuidle" / "state1" / "disable").read_text().strip() == "0"  # C1 stays
    assert ("swapoff", "/dev/zram0") in ran
    recorded = json.loads(state.read_text())
    policy = next(c for c in recorded["changes"] if c["kind"] == "write" and c["path"].endswith("policy"))
    assert policy["old"] == "default"  # the bracketed policy in force, not the whole list

    # a second --apply must not overwrite the original values recorded by the first
    (cpu / "cpu0" / "cpufreq" / "scaling_governor").write_text("schedutil")
    audit.apply([audit.check_governor()], state=state, tools=fake)
    writes = [c for c in json.loads(state.read_text())["changes"] if c["kind"] == "write"]
    gov0 = [c for c in writes if c["path"].endswith("cpu0/cpufreq/scaling_governor")]
    assert len(gov0) == 1 and gov0[0]["old"] == "powersave"

    restored, failed = audit.undo(state=state, tools=fake)
    assert not failed and restored
    assert (cpu / "cpu0" / "cpufreq" / "scaling_governor").read_text() == "powersave"
    assert (cpu / "cpu0" / "cpuidle" / "state3" / "disable").read_text() == "0"
    assert (fakehost / "sys" / "module" / "pcie_aspm" / "parameters" / "policy").read_text() == "default"
    assert (cpu / "intel_pstate" / "no_turbo").read_text() == "1"
    assert ("swapon", "-p", "100", "/dev/zram0") in ran
    assert not state.exists()
    assert audit.undo(state=state) == ([], [])


def test_apply_skips_irreversible_and_ok_checks(tmp_path: Path) -> None:
    ok = audit.Check("x", "a", "a", True, "fix", True, actions=(audit.Action("write", str(tmp_path / "f"), "1"),))
    manual = audit.Check("y", "a", "b", False, "reboot", False)
    assert audit.apply([ok, manual], state=tmp_path / "s.json") == ([], [])
    assert not (tmp_path / "f").exists() and not (tmp_path / "s.json").exists()


def test_apply_reports_a_failed_write(tmp_path: Path) -> None:
    bad = audit.Check("x", "a", "b", False, "fix", True,
                      actions=(audit.Action("write", str(tmp_path / "no" / "such" / "file"), "1"),))
    done, failed = audit.apply([bad], state=tmp_path / "s.json")
    assert done == [] and len(failed) == 1 and "x: echo 1 >" in failed[0]


def test_state_file_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SSDPTS_STATE_DIR", str(tmp_path))
    assert audit.state_file() == tmp_path / "doctor-applied.json"
    monkeypatch.delenv("SSDPTS_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert audit.state_file() == tmp_path / "xdg" / "ssdpts" / "doctor-applied.json"


# --- the command ----------------------------------------------------------------------------------


def _doctor(argv: list[str]) -> int:
    from ssdpts.cli import doctor
    from ssdpts.cli.main import _Parser

    p = _Parser(prog="ssdpts")
    sub = p.add_subparsers(dest="command")
    doctor.add_parser(sub)
    args = p.parse_args(["doctor", *argv])
    return args.func(args)


def test_doctor_prints_one_line_per_check_with_its_fix(capsys: pytest.CaptureFixture[str]) -> None:
    assert _doctor([]) == 0
    out = capsys.readouterr().out.splitlines()
    checks = fio_checks(audit.audit())  # the fio a run uses, and what it can do
    assert any(c.name == "fio features" for c in checks) or not any(c.name == "fio" and "not installed" not in c.current
                                                                    for c in checks)
    for c in checks:
        line = next((ln for ln in out if f" {c.name}" in ln and "current:" in ln), None)
        assert line, f"no line for {c.name}: {out}"
        assert "recommended:" in line and "fix:" in line
    assert out[-1].startswith(f"{len(checks)} checks:")


def test_doctor_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert _doctor(["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {d["name"] for d in doc} == {c.name for c in fio_checks(audit.audit())}


def test_doctor_undo_with_nothing_recorded(capsys: pytest.CaptureFixture[str], monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SSDPTS_STATE_DIR", str(tmp_path))
    assert _doctor(["--undo"]) == 0
    assert "nothing to undo" in capsys.readouterr().out
