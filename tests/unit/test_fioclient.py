"""fio client/server (engine/fioclient.py) on real fio 3.33 output recorded here
(tests/fixtures/SOURCES.md "fio-3.33-client-*"): the job file a remote round sends, its json+ read
back without fio's "All clients" sum, and the two ways fio says its server went away."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fioclient import FioClientExecutor, HostLost, host_lost, server_address
from ssdpts.engine.jobfile import render_job_file
from ssdpts.errors import Interrupted, RunFailed
from ssdpts.pts.plan import build_parts
from ssdpts.pts.runspec import RunSpec

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "fio"
RECORDED_FIO = FIX / "fio-3.33-client-jsonplus-6steps-zram.fio"
RECORDED_JSON = FIX / "fio-3.33-client-jsonplus-6steps-zram.json"


def _lat_round_batch() -> Batch:
    """Round 1 of the recorded run: LAT, 0.05-s steps, TC 1, on a 64 MiB zram device (4096-byte blocks)."""
    spec = RunSpec(tests=("lat",), threads=1, iodepth=4, step_seconds=0.05, max_rounds=5, ioengine="io_uring")
    part = build_parts(spec, 64 * 2**20, 4096)[0]
    return Batch(steps=part.round_steps(1), filename="/dev/zram3", area=Area(0, 64 * 2**20), seed=spec.seed,
                 ioengine="io_uring")


def test_remote_round_job_file_is_the_recorded_one_each_step_a_stonewall():
    text, _ = render_job_file(_lat_round_batch(), stonewall=True)
    recorded = RECORDED_FIO.read_text()
    body = "\n".join(ln for ln in recorded.splitlines() if not ln.startswith(";"))
    assert text.strip() == body.strip()
    sections = text.split("\n[")[1:]
    assert len(sections) == 6
    assert "stonewall" not in sections[0] and all("stonewall" in s for s in sections[1:])
    assert "exec_prerun" not in text and "startdelay" not in text  # no gate, no offsets: fio's order


def test_recorded_client_output_read_without_the_all_clients_sum():
    batch = _lat_round_batch()
    raw = RECORDED_JSON.read_text()
    doc = json.loads(raw)
    names = [j["jobname"] for j in doc["client_stats"]]
    assert names[-1] == "All clients" and len(names) == 7
    res = FioClientExecutor("ip:127.0.0.1,8765", binary="fio")._client_result(batch, raw, "", 0, 3.0, 1000.0)
    assert len(res.measurements) == 6
    for m, j in zip(res.measurements, doc["client_stats"][:6]):
        assert m.jobname == j["jobname"]
        assert m.read.iops == j["read"]["iops"] and m.write.iops == j["write"]["iops"]
        assert m.read.ios == j["read"]["total_ios"]
    # Steps back to back, ending when the client had the result: no gate timestamps.
    tls = res.timelines
    assert {t["source"] for t in tls} == {"fio end of run (fio server)"}
    assert tls[-1]["end_unix_s"] == pytest.approx(1003.0)
    assert all(a["end_unix_s"] == pytest.approx(b["start_unix_s"]) for a, b in zip(tls, tls[1:]))
    assert res.tool_version == "fio-3.33"


def test_server_gone_mid_job_and_between_rounds_are_told_apart_from_other_failures():
    mid = (FIX / "fio-3.33-client-server-killed-mid-job.log").read_text()
    refused = (FIX / "fio-3.33-client-connection-refused.log").read_text()
    assert host_lost(mid) == "client: host=127.0.0.1 disconnected"
    assert host_lost(refused) == "fio: failed to connect to 127.0.0.1:36147"
    assert host_lost(RECORDED_JSON.read_text()) is None
    assert issubclass(HostLost, Interrupted)  # the run ends interrupted, its rounds kept
    # The empty document of a lost server is never read as a result.
    with pytest.raises(RunFailed, match="0 results for 6 steps"):
        FioClientExecutor("ip:127.0.0.1,8765", binary="fio")._client_result(_lat_round_batch(), mid, "", 1, 3.0, 0.0)


@pytest.mark.parametrize("bad", ["", "  ", "host name,8765"])
def test_server_address_refuses_what_fio_would_misread(bad):
    with pytest.raises(ValueError, match="not a fio server address"):
        server_address(bad)


@pytest.mark.parametrize("server_answers", [False, True])
def test_a_silent_client_failure_is_a_lost_server_only_when_the_server_no_longer_answers(tmp_path, server_answers):
    """CI saw fio's client exit 1 with no output and no 'disconnected' when its server was SIGKILLed
    mid-round: the run ended 'failed' instead of 'interrupted'. Such a silent exit asks the server again
    (a null-engine probe job); no answer is HostLost, an answer keeps it a failure. A stand-in fio
    script plays both: silent exit 1 for the round, and the probe's reply."""
    import dataclasses

    reply = ('{"fio version": "fio-3.33", "client_stats": [{"jobname": "ssdpts-probe"}]}' if server_answers
             else "fio: failed to connect to 127.0.0.1:9")
    fio = tmp_path / "fio"
    fio.write_text('#!/bin/sh\ncase "$*" in *ssdpts-probe*) ;; *) exit 1 ;; esac\n'  # the round: silent exit 1
                   f"printf '%s\\n' '{reply}'\nexit {0 if server_answers else 1}\n")
    fio.chmod(0o755)
    batch = dataclasses.replace(_lat_round_batch(), job_path=str(tmp_path / "round-002.fio"),
                                output_path=str(tmp_path / "round-002.json"))
    ex = FioClientExecutor("ip:127.0.0.1,9", binary=str(fio))
    if server_answers:
        with pytest.raises(RunFailed):
            ex.run(batch)
    else:
        with pytest.raises(HostLost, match="went away during round-002.json .*does not answer"):
            ex.run(batch)


def test_a_listener_that_is_not_a_fio_server_is_refused():
    """fio --client=S alone exits 1 without a word both when connected and when something else
    listens there (an HTTP server, measured): the null-engine probe must come back as fio JSON."""
    import http.server
    import threading

    from ssdpts.errors import UserError

    srv = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        ex = FioClientExecutor(f"127.0.0.1,{srv.server_address[1]}")
        with pytest.raises(UserError, match="did not answer as a fio server") as e:
            ex.check(timeout_s=10)
        assert "\n" not in str(e.value)
    finally:
        srv.shutdown()


def test_a_fio_server_without_sprandom_is_refused_in_one_line(tmp_path):
    """--precondition sprandom through a fio server: a second probe asks the server's fio for a
    sprandom job (here a stand-in client whose server is fio 3.33: it refuses the option, as fio
    3.33 does, and sends back no JSON); one that runs it passes."""
    from ssdpts.engine import fiobin
    from ssdpts.errors import UserError

    answer = '{"fio version": "fio-3.41", "client_stats": [{"jobname": "ssdpts-probe"}]}'
    for name, refuses in (("old", 'if grep -q "^sprandom=1" "$last"; then echo "fio: bad option sprandom=1"; exit 1; fi'),
                          ("new", ":")):
        fake = tmp_path / f"fio-{name}"
        fake.write_text(f"#!/bin/sh\nfor last; do :; done\n{refuses}\necho '{answer}'\n")
        fake.chmod(0o755)
        client = FioClientExecutor("localhost", chosen=fiobin.Fio(str(fake), "--fio"))
        client.check()  # a server answers either way
        if name == "old":
            with pytest.raises(UserError) as exc:
                client.check(sprandom=True)
            assert "\n" not in str(exc.value) and "fio 3.41 or later" in str(exc.value) and "make fio" in str(exc.value)
        else:
            client.check(sprandom=True)
