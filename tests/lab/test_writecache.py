"""Volatile write cache per profile (PTS 2.0.2: Enterprise WCD, Client WCE), read back with the drive's
own tool (nvme get-feature 6, hdparm -W, sdparm --get=WCE) while the run is in fio and after it:
set as the profile says during the run, and the original setting back after SIGINT and after a
failed run. The manifest must record what the tool reads.
"""

from __future__ import annotations

import shlex

import pytest

from .conftest import TARGETS
from .truth import write_cache_argv, write_cache_state

WANT = {"enterprise": "disabled", "client": "enabled"}


def set_cache(lab, key: str, state: str) -> None:
    """Put a drive's cache back by hand (only when a test left it wrong)."""
    dev = lab.dev[key]
    on = state == "enabled"
    kind = TARGETS[key].kind
    if kind == "nvme":
        lab.sh(["nvme", "set-feature", dev.rsplit("n", 1)[0], "--feature-id=6", f"--value={int(on)}"], check=True)
    elif kind == "ata":
        lab.sh(["hdparm", f"-W{int(on)}", dev], check=True)
    else:
        lab.sh(["sdparm", "--set=WCE" if on else "--clear=WCE", dev])


CASES = [
    pytest.param("nvme", "enterprise", "sigint", id="nvme-enterprise-sigint"),
    pytest.param("nvme4k", "client", "sigint", id="nvme4k-client-sigint"),  # off at power-on: WCE, then off again
    pytest.param("sata", "enterprise", "sigint", id="sata-enterprise-sigint"),
    pytest.param("nvme", "enterprise", "fail", id="nvme-enterprise-failed-run"),
    pytest.param("sata", "client", "fail", id="sata-client-failed-run"),
    # D4: sdparm printed 'WCE 1' but exited 5; ssdpts cleared WCE anyway and never restored it
    pytest.param("scsi", "enterprise", "sigint", id="scsi-enterprise-sigint"),
]


@pytest.mark.slow
@pytest.mark.parametrize("key,profile,stop", CASES)
def test_write_cache_set_per_profile_and_restored(lab, key, profile, stop):
    kind = TARGETS[key].kind
    probe = shlex.join(write_cache_argv(kind, lab.dev[key]))  # read while the run is in fio
    before = lab.wce(key)
    try:
        out = lab.scenario(key, "lat", "--profile", profile, "--purge", "none", "--destroy-data-on",
                           TARGETS[key].serial, "--step-seconds", "1", stop=stop, probes=(probe,),
                           name=f"wc-{key}-{profile}-{stop}")
        after = lab.wce(key)
        man = out["manifest"]
        assert "Traceback" not in out["stderr"], out["stderr"][-3000:]
        assert out["fio_reached"], f"the run never reached fio: {out['stderr'][-1000:]}"
        assert out["rc"] == (130 if stop == "sigint" else 1), out["stderr"][-1000:]
        assert man["status"] == ("interrupted" if stop == "sigint" else "failed")
        rec = man["write_cache_record"]
        if stop == "sigint":
            during = write_cache_state(kind, out["probes"][0]["stdout"])
            assert during == WANT[profile], f"{profile} profile: the drive's cache was {during} during the run"
            assert rec["in_force"] == during, f"manifest says {rec['in_force']!r}, the drive said {during!r}"
        assert rec["before"] == before, f"manifest says the cache was {rec['before']!r}, the drive said {before!r}"
        assert after == before, f"cache left {after} after the {stop} run (was {before})"
        assert man["write_cache_restored"]["in_force"] == after
    finally:
        if lab.wce(key) != before:
            set_cache(lab, key, before)
