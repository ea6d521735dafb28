"""Purge on emulated drives, judged by its effect: markers written at sampled LBAs before the run must
read back as zeroes (or deallocated, which reads zeroes on these drives) after it.

Each case runs ``ssdpts run lat`` with a fio that stops the run right after the purge
(tests/lab/fio_stop.py; SIGKILL once fio is reached, so nothing overwrites the markers) and then
reads the markers back with O_DIRECT. A run that went on to fio after a purge that left data has
recorded a purge that did not happen; a method that cannot work must be refused before anything
is written (exit 2, markers intact).
"""

from __future__ import annotations

import pytest

from .conftest import TARGETS

EXPECTED_AUTO = {
    # QEMU 7.2 nvme: SANICAP 0 (no Sanitize), OACS bit 1 (Format NVM), FNA 0 (per namespace).
    "nvme": "nvme-format",
    "nvme4k": "nvme-format",
    # QEMU ide-hd: neither SANITIZE nor the ATA security feature set; TRIM (DSM) is there.
    "sata": "discard",
}


def purge_record(outcome: dict) -> dict | None:
    man = outcome["manifest"] or {}
    for part in (man.get("parts") or {}).values():
        if part.get("purge"):
            return part["purge"]
    return None


def stopped_purge(lab, key: str, purge: str = "auto", *, name: str = "") -> dict:
    """Markers, then ``ssdpts run lat --purge PURGE`` stopped once fio is reached, then markers again
    (and the other namespace's markers for nvme4k). Cached: several tests judge one run."""
    ck = ("purge", key, purge)
    if ck not in lab.cache:
        tag = f"{key}-{purge}-{len(lab.cache)}"
        before = lab.markers("write", key, tag)
        other = "nvme4k-ns2" if key == "nvme4k" else None
        if other:
            lab.markers("write", other, tag)
        out = lab.scenario(key, "lat", "--purge", purge, "--destroy-data-on", TARGETS[key].serial,
                           "--step-seconds", "1", stop="sigkill", name=name or f"purge-{key}-{purge}")
        after = lab.markers("check", key, tag)
        lab.cache[ck] = {"outcome": out, "markers_written": before["n"], "after": after,
                         "other_after": lab.markers("check", other, tag) if other else None}
    return lab.cache[ck]


def assert_no_crash(outcome: dict) -> None:
    err = outcome["stderr"]
    assert "Traceback" not in err, f"ssdpts crashed:\n{err[-3000:]}"
    if outcome["rc"] != -9:  # ssdpts ended by itself (not our SIGKILL): the run directory must say how
        man = outcome["manifest"]
        if man is not None:
            assert man["status"] in ("failed", "interrupted", "complete"), f"run left {man['status']!r}: {err[-500:]}"
            assert man["status"] != "failed" or man.get("error"), "failed run without an error in its manifest"


def assert_judged_by_effect(res: dict) -> None:
    """Data left behind means the purge failed: then the run must stop before writing, saying so."""
    out, after = res["outcome"], res["after"]
    rec = purge_record(out)
    left = after["intact"] + after["other"]
    if out["fio_reached"]:
        assert left == 0, (f"the run went on to fio after a purge that left {after['intact']} of {after['n']} markers "
                           f"intact ({after['other']} changed); the manifest records: {rec}")
    else:
        assert "Traceback" not in out["stderr"], f"ssdpts crashed:\n{out['stderr'][-3000:]}"
        assert out["rc"] in (1, 2), f"run stopped before fio with rc {out['rc']}: {out['stderr'][-1000:]}"
        last = ([ln for ln in out["stderr"].splitlines() if ln.strip()] or [""])[-1]
        assert "purge" in last.lower(), f"the run stopped before fio without saying the purge failed: {out['stderr']}"
        assert rec is None or not rec.get("is_pts_purge"), f"a purge that left data recorded as a PTS purge: {rec}"


@pytest.mark.parametrize("key", ["nvme", pytest.param("nvme4k", marks=pytest.mark.slow),
                                 pytest.param("sata", marks=pytest.mark.slow)])
def test_auto_purge_is_the_strongest_supported_and_erases(lab, key):
    res = stopped_purge(lab, key)
    out = res["outcome"]
    assert_no_crash(out)
    assert out["fio_reached"], f"run did not reach fio ({out['rc']}): {out['stderr'][-1500:]}"
    rec = purge_record(out)
    assert rec is not None, "no purge record in the manifest"
    assert rec["method"] == EXPECTED_AUTO[key], rec
    assert rec["is_pts_purge"] == rec["method"].startswith("nvme-"), rec
    if rec["method"] == "discard":
        assert any("neither SANITIZE nor the ATA security" in n for n in rec["notes"]), rec["notes"]
    assert_judged_by_effect(res)


@pytest.mark.slow
def test_format_of_one_namespace_leaves_the_other_alone(lab):
    """nvme4k has two namespaces and FNA bit 0 clear: Format NVM of ns1 must not touch ns2."""
    res = stopped_purge(lab, "nvme4k")
    assert purge_record(res["outcome"])["method"] == "nvme-format"
    assert res["after"]["zero"] == res["after"]["n"]
    other = res["other_after"]
    assert other["intact"] == other["n"], f"ns2 lost markers when ns1 was formatted: {other}"


@pytest.mark.slow
@pytest.mark.parametrize("key", ["scsi"])  # D5: sg_format's non-UTF-8 output crashed the run
def test_purge_never_crashes(lab, key):
    assert_no_crash(stopped_purge(lab, key)["outcome"])


@pytest.mark.slow
@pytest.mark.parametrize("key", ["scsi"])  # D6: QEMU's FORMAT UNIT is a no-op, the run went on as purged
def test_a_purge_that_leaves_data_is_not_taken_for_one(lab, key):
    assert_judged_by_effect(stopped_purge(lab, key))


@pytest.mark.parametrize("key", [
    pytest.param("nvme", marks=pytest.mark.slow),  # discard=unmap: deallocated blocks read zeroes
    pytest.param("sata", marks=pytest.mark.slow),  # discard=unmap
    pytest.param("nvme4k", marks=pytest.mark.slow),  # D6: discard=ignore drops the deallocate, data survives
])
def test_discard_fallback_is_judged_by_its_effect(lab, key):
    res = stopped_purge(lab, key, "discard")
    assert_no_crash(res["outcome"])
    assert_judged_by_effect(res)


REFUSALS = [
    # D1: accepted on a drive without the security feature set (unknown taken as supported)
    pytest.param("sata", "ata-secure-erase", marks=pytest.mark.slow, id="sata-ata-secure-erase"),
    pytest.param("sata", "ata-secure-erase-enhanced", marks=pytest.mark.slow, id="sata-ata-secure-erase-enhanced"),
    pytest.param("sata", "ata-sanitize-block", marks=pytest.mark.slow, id="sata-ata-sanitize-block"),
    pytest.param("nvme", "nvme-sanitize-block", marks=pytest.mark.slow, id="nvme-nvme-sanitize-block"),
    pytest.param("nvme", "nvme-format-crypto", marks=pytest.mark.slow, id="nvme-nvme-format-crypto"),
    pytest.param("nvme", "scsi-format", marks=pytest.mark.slow, id="nvme-scsi-format"),
    # D12: not refused although its support is unknown (REPORT SUPPORTED OPERATION CODES unanswered)
    pytest.param("scsi", "scsi-sanitize-block", marks=pytest.mark.slow, id="scsi-scsi-sanitize-block"),
    pytest.param("nvme", "no-such-method", marks=pytest.mark.slow, id="nvme-unknown-name"),
]


@pytest.mark.parametrize("key,method", REFUSALS)
def test_named_purge_the_drive_cannot_do_is_refused_up_front(lab, key, method):
    res = stopped_purge(lab, key, method)
    out, after = res["outcome"], res["after"]
    assert out["rc"] == 2, f"--purge {method} on {key}: rc {out['rc']} (fio reached: {out['fio_reached']}), " \
                           f"purge record {purge_record(out)}; stderr: {out['stderr'][-800:]}"
    lines = [ln for ln in out["stderr"].splitlines() if ln.strip()]
    assert len(lines) == 1 and method in lines[0], out["stderr"]
    assert out["manifest"] is None, "a refused run must not create a run directory"
    assert after["intact"] == after["n"], f"a refused purge changed the drive: {after}"
