"""The OCP latency monitor on QEMU's emulated NVMe drive, which has none (issue 32, item 5): a real
ocp-trim run (time-compressed, real fio) says so in one line — on the console, in the manifest and
on the report — and records nothing else: the same run with the monitor turned off records the same
manifest entries, parts and steps. nvme-cli's OCP plugin in the guest agrees that the drive has no
log page C3h."""

from __future__ import annotations

import json
from pathlib import Path
import re

import pytest

from .conftest import TARGETS

pytestmark = pytest.mark.slow

LINE = re.compile(r"^latency monitor: not available: /dev/nvme\d+ refused log page C3h \(NVMe status 0x[0-9a-f]+\): "
                  r"no OCP latency monitor$")


def _run(lab, name: str, *extra: str) -> dict:
    out = lab.fresh_out(name)
    res = lab.ssdpts("run", "ocp-trim", "--target", lab.dev["nvme"], "--destroy-data-on", TARGETS["nvme"].serial,
                     "--step-seconds", "0.2", "--out", out, *extra, timeout=1500)
    assert res.rc == 0, f"rc {res.rc}: {res.stderr[-3000:]}"
    (run_dir,) = [p.parent for p in Path(out).glob("*/manifest.json")]
    steps = [json.loads(ln) for ln in (run_dir / "steps.jsonl").read_text().splitlines() if ln.strip()]
    # the plain progress display puts the time (HH:MM:SS) before each message
    console = [re.sub(r"^\d\d:\d\d:\d\d\s+", "", ln.strip()) for ln in (res.stdout + res.stderr).splitlines()
               if "latency monitor" in ln]
    return {"dir": run_dir, "man": json.loads((run_dir / "manifest.json").read_text()), "steps": steps,
            "console": console, "html": (run_dir / "report.html").read_text(errors="replace")}


def test_qemu_nvme_has_no_latency_monitor_one_line_nothing_else(lab):
    truth = lab.sh(["nvme", "ocp", "latency-monitor-log", lab.dev["nvme"]], timeout=60)
    assert truth.rc != 0, f"nvme-cli read a latency monitor log from QEMU's drive: {truth.stdout[:500]}"

    on = _run(lab, "latmon-default")
    assert on["man"]["status"] == "complete"
    assert len(on["console"]) == 1 and LINE.match(on["console"][0]), on["console"]
    reason = on["console"][0].removeprefix("latency monitor: ")
    assert on["man"]["latency_monitor"] == reason
    assert on["html"].count("latency monitor: not available") == 1
    assert "Drive latency monitor" not in on["html"]

    off = _run(lab, "latmon-off", "--latmon-ms", "off")
    assert off["console"] == ["latency monitor: off (--latmon-ms off)"]
    # nothing else: the same manifest entries, parts and part entries, run spec and steps
    for run in (on, off):
        assert "latency_monitor_restored" not in run["man"]
        assert not [p for p in run["man"]["parts"].values() if "latency_monitor" in p]
    assert set(on["man"]) == set(off["man"])
    assert {k: set(v) for k, v in on["man"]["parts"].items()} == {k: set(v) for k, v in off["man"]["parts"].items()}
    spec_on, spec_off = dict(on["man"]["run_spec"]), dict(off["man"]["run_spec"])
    assert "latmon_ms" not in spec_on and spec_off.pop("latmon_ms") == []
    assert spec_on == spec_off
    assert [(s["test"], s["phase"], s["label"]) for s in on["steps"]] == \
        [(s["test"], s["phase"], s["label"]) for s in off["steps"]]
    assert set(on["steps"][-1]) == set(off["steps"][-1])
