"""--realtime (engine/rtsched.py): the refusals, the policy taken and given back, what inherits it,
and the option's way through RunSpec and the manifest. A real run at real-time priority under CPU
load is tests/integration/test_boundaries.py."""

from __future__ import annotations

import os
import threading

import pytest

from ssdpts.cli import main as M
from ssdpts.engine import rtsched
from ssdpts.errors import UserError
from ssdpts.pts.runspec import RunSpec


@pytest.mark.parametrize("budget, word", [("-1", "throttling is off"), ("0", "no CPU time")])
def test_refused_where_real_time_tasks_are_unthrottled_or_starved(tmp_path, budget, word):
    f = tmp_path / "sched_rt_runtime_us"
    f.write_text(budget + "\n")
    with pytest.raises(UserError, match=word) as exc:
        rtsched.check(f)
    assert "--realtime" in str(exc.value) and "\n" not in str(exc.value)


def test_refused_without_the_privilege(tmp_path, monkeypatch):
    f = tmp_path / "sched_rt_runtime_us"
    f.write_text("950000\n")

    def denied(*_a):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", denied)
    with pytest.raises(UserError, match="CAP_SYS_NICE"):
        rtsched.check(f)


@pytest.mark.skipif(os.geteuid() != 0, reason="real-time priority needs root")
def test_the_block_runs_at_sched_fifo_and_what_it_starts_inherits_it():
    rtsched.check()  # this host allows it, the probe's thread changed nothing here
    assert os.sched_getscheduler(0) == os.SCHED_OTHER
    seen = []
    with rtsched.realtime(True):
        assert os.sched_getscheduler(0) == os.SCHED_FIFO and os.sched_getparam(0).sched_priority == 1
        t = threading.Thread(target=lambda: seen.append(os.sched_getscheduler(0)))  # as the gate's thread
        t.start()
        t.join()
        pid = os.fork()  # as fio
        if pid == 0:
            os._exit(0 if os.sched_getscheduler(0) == os.SCHED_FIFO else 1)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert seen == [os.SCHED_FIFO]
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # given back: the report is drawn at normal priority
    with rtsched.realtime(False):
        assert os.sched_getscheduler(0) == os.SCHED_OTHER


def test_recorded_with_the_run_and_read_back_by_resume():
    spec = RunSpec(tests=("lat",), realtime=True)
    d = spec.to_dict()
    assert d["realtime"] is True and RunSpec.from_dict(d).realtime is True
    assert "realtime" not in RunSpec(tests=("lat",)).to_dict()  # the default is not written


def test_refused_with_a_fio_server_before_anything_is_touched(tmp_path, capsys):
    target = tmp_path / "t.img"
    code = M.main(["run", "lat", "--target", str(target), "--size", "64M", "--realtime", "--fio-server",
                   "127.0.0.1,8765", "--out", str(tmp_path / "runs")])
    assert code == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and "chrt -f 1 fio --server" in err[0]
    assert not target.exists() and not (tmp_path / "runs").exists()
