"""The device-level purges' one command-then-poll shape (device/purge/base.py CommandPollPurge), run
on a fake tool runner that answers with recorded sanitize-log outputs, and the read-only seam: a
collector's runner cannot start a destructive command. Nothing here reaches a device."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdpts.device.interfaces import nvme
from ssdpts.device.interfaces import scsi
from ssdpts.device.target import Target
from ssdpts.device.tools import FakeTools, ReadOnlyRunner, ToolResult, Tools
from ssdpts.errors import RunFailed

TOOLS = Path(__file__).parents[1] / "fixtures" / "tools"


def nvme_target() -> Target:
    return Target(path="/dev/nvme0n1", real_path="/dev/nvme0n1", kind="block", name="nvme0n1", size_bytes=1 << 30,
                  logical_block_size_bytes=512, physical_block_size_bytes=512, model="M", serial="S", vendor=None,
                  firmware=None, transport="nvme", rotational=False, removable=False, read_only=False,
                  is_partition=False, parent=None, exists=True)


def checked(target: Target) -> None:
    """Stands in for the safety re-check (device/safety/guard.py, tested on fake and real devices elsewhere)."""
    checked.calls.append(target.path)


checked.calls = []


def test_nvme_sanitize_runs_the_command_then_polls_the_log_until_done():
    logs = iter([(TOOLS / f"nvme-cli-2.3-sanitize-log-{s}-CONSTRUCTED.json").read_text()
                 for s in ("in-progress", "in-progress", "completed")])
    fake = FakeTools({("nvme", "sanitize"): "", ("nvme", "sanitize-log"): lambda argv: next(logs)}, destructive=True)
    method = nvme.SanitizePurge("block", tools=fake, guard=checked)
    method.interval_s = 0
    lines: list[str] = []
    rec = method.run(nvme_target(), log=lines.append)
    assert fake.calls[0] == ("nvme", "sanitize", "/dev/nvme0", "--sanact=2")
    assert [c[1] for c in fake.calls[1:]] == ["sanitize-log"] * 3
    assert checked.calls[-1] == "/dev/nvme0n1"
    assert rec.is_pts_purge and rec.method == "nvme-sanitize-block"
    assert rec.detail.startswith("nvme sanitize --sanact=2 on /dev/nvme0 (all namespaces of the controller), "
                                 "completed after ")
    assert any("25.0%" in ln for ln in lines) and lines[-1].startswith("purge: sanitize (block erase) of /dev/nvme0 complete")


def test_a_failing_command_stops_before_polling():
    fake = FakeTools({("sg_format",): ToolResult(("sg_format",), 5, "", "Illegal request", None)}, destructive=True)
    method = scsi.FormatPurge(protection_type=1, tools=fake, guard=checked)
    t = nvme_target()
    t = Target(**{**t.to_dict(), "path": "/dev/sdb", "real_path": "/dev/sdb", "name": "sdb", "transport": "sas"})
    with pytest.raises(RunFailed, match=r"sg_format /dev/sdb failed: Illegal request: check the drive"):
        method.run(t)
    assert fake.calls == [("sg_format", "--format", "--quick", "--early", "--fmtpinfo=2", "/dev/sdb")]


def test_a_read_only_runner_refuses_every_destructive_command():
    fake = FakeTools({(): ""})  # read-only, as the collectors get it
    with pytest.raises(ReadOnlyRunner):
        nvme.SanitizePurge("block", tools=fake, guard=checked).run(nvme_target())
    with pytest.raises(ReadOnlyRunner):
        Tools().change(["hdparm", "-W0", "/dev/sda"])
    with pytest.raises(ReadOnlyRunner):
        Tools().must(["blkdiscard", "/dev/sda"], "blkdiscard /dev/sda", "")
    assert fake.calls == []  # the guard passed, nothing reached the (fake) device
