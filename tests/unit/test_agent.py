"""ssdpts agent and its controlling side (device/remote/agent.py, device/remote/remote.py) over a real pipe: the
agent is this checkout's ssdpts started through a shell prefix, on a file target (no root, no
device). The device case, through a network namespace, is tests/integration/test_remote_hosts.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import sys

import pytest

from ssdpts.device.remote.remote import RemoteSide, parse_shell, side_for
from ssdpts.errors import HostLost, UserError

SRC = str(Path(__file__).resolve().parents[2] / "src")
AGENT = (sys.executable, "-c", "import sys; from ssdpts.cli.main import main; sys.exit(main())")
# a login banner before the agent speaks, as some ssh servers print: skipped
SHELL = ["env", f"PYTHONPATH={SRC}", "sh", "-c", 'echo "Welcome to rack1"; exec "$@"', "sh"]


def side(path: Path, **kw) -> RemoteSide:
    return RemoteSide(SHELL, str(path), name="rack1", command=AGENT, **kw)


def test_a_file_target_through_the_agent(tmp_path):
    target = tmp_path / "t.bin"
    with side(target, size_bytes=8 << 20) as s:
        assert s.remote["name"] == "rack1" and s.remote["shell"] == SHELL and s.remote["agent_ssdpts"]
        assert s.target.kind == "file" and not s.target.exists and s.target.size_bytes == 8 << 20
        with s.claimed(s.target.size_bytes, None, False):
            assert target.exists() and target.stat().st_size == 8 << 20  # made by the agent, marked as its own
            got = s.collect("auto", "fio-3.33")
            assert got.purge.name == "file-recreate" and got.purge.pts is False
            assert got.info["device_class"] == "file" and got.host["fio_version"] == "fio-3.33"
            assert got.fingerprint["kind"] == "file" and got.claim["kernel_exclusive"] is False
            s.set_run_dir(str(tmp_path / "runs" / "r1"))
            tel = s.start_telemetry(got.info)
            snap = tel.snapshot()
            assert snap["request_ms"] >= 0 and "agent_t_unix_s" in snap
            summary, record = s.apply_write_cache("disabled", got.info)
            assert summary.startswith("not applicable") and record["changed"] is False
            lines: list[str] = []
            rec = s.purge("auto", got.info, lines.append)
            assert rec["method"] == "file-recreate" and rec["is_pts_purge"] is False
            s.guard()
            with pytest.raises(UserError, match=r"^on host rack1: unknown purge method 'nonesuch'"):
                s.purge("nonesuch", got.info, lines.append)
            s.guard()  # an error answered in one line leaves the agent serving
            assert s.finish() == record  # nothing was changed, so the record comes back as it was
    assert s._proc.returncode == 0  # noqa: SLF001 - the agent ended when its stdin closed


def test_an_agent_that_goes_away_is_a_lost_host(tmp_path):
    s = side(tmp_path / "t.bin", size_bytes=1 << 20)
    try:
        os.kill(s._proc.pid, signal.SIGKILL)  # noqa: SLF001 - the host (or its ssh session) is gone
        with pytest.raises(HostLost, match="the ssdpts agent on rack1 went away during guard"):
            s.guard()
        assert s.finish() is None  # nothing to ask: the agent restored what it held when it ended
    finally:
        s.close()


def test_a_shell_that_cannot_start_the_agent_is_refused_in_one_line(tmp_path):
    with pytest.raises(UserError, match="went away during its start .*exit 127.*then try again .nothing was written"):
        RemoteSide(["sh", "-c", 'exec "$@"', "sh"], str(tmp_path / "t.bin"), name="rack1",
                   command=("ssdpts-not-installed-here",))
    with pytest.raises(UserError, match="--remote-shell is empty"):
        parse_shell("   ")
    with pytest.raises(UserError, match="quote it as a shell would"):
        parse_shell("ssh 'rack1")
    assert parse_shell("ssh -o BatchMode=yes rack1") == ["ssh", "-o", "BatchMode=yes", "rack1"]
    assert side_for(None, "/dev/x") is None
    with pytest.raises(UserError, match="without a remote shell"):
        side_for({"name": "rack1"}, "/dev/x")


def test_a_host_lost_before_the_first_round_leaves_an_interrupted_run(tmp_path):
    """The agent can go away between the run directory's creation and the first round (its
    telemetry or write cache request): the run is marked interrupted by a lost host, not left
    'running', and the write cache it may have set is given back by the agent itself."""
    from ssdpts.device.side import LocalSide
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.errors import Interrupted
    from ssdpts.pts.runspec import RunSpec
    from ssdpts.run.session import start_run

    class Lost(LocalSide):
        remote = {"name": "rack1", "shell": ["ssh", "rack1"]}

        def start_telemetry(self, info):
            raise HostLost("the ssdpts agent on rack1 went away during telemetry (exit 255)")

    target = open_target(str(tmp_path / "t.img"), size_bytes=256 << 20)
    spec = RunSpec(tests=("iops",), step_seconds=1, max_rounds=5)
    with pytest.raises(Interrupted, match="went away during telemetry .*nothing was measured yet.*ssdpts resume") as e:
        start_run(spec, target, executor=FakeExecutor(), out_dir=tmp_path / "runs", confirm=None, argv=["t"],
                  side=Lost(target))
    man = json.loads((e.value.run_dir / "manifest.json").read_text())
    assert man["status"] == "interrupted" and man["interruption"]["host_lost"] is True
    assert man["device_host"]["name"] == "rack1" and e.value.exit_code == HostLost.exit_code


def test_a_late_answer_is_not_taken_for_the_next_requests(tmp_path):
    """A controller interrupted while it waits (Ctrl-C during a purge) asks its next request while
    the agent still works on the last: the late answer is skipped by its id."""
    with side(tmp_path / "t.bin", size_bytes=8 << 20) as s:
        s._seq += 1  # noqa: SLF001 - a request whose answer is never read: as if interrupted while waiting
        s._proc.stdin.write(json.dumps({"op": "fingerprint", "id": s._seq}) + "\n")  # noqa: SLF001
        s._proc.stdin.flush()  # noqa: SLF001
        fp = s.fingerprint()
        assert fp["kind"] == "file"
        with s.claimed(s.target.size_bytes, None, False):
            got = s.collect(None, "fio-3.33")  # had the late fingerprint been taken for 'take', this failed
            assert got.purge is None and got.fingerprint["kind"] == "file"
