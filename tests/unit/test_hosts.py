"""--host NAME=SERVER and --target NAME:PATH (cli/hosts.py): parsed, refused in one line when wrong,
and a fio server on another host refused with nothing written (its device checks would run here)."""

from __future__ import annotations

import argparse
from pathlib import Path
import subprocess

import pytest

from ssdpts.cli.hosts import hosts_of, resolve, shells_of
from ssdpts.run.launch import check_reachable
from ssdpts.errors import UserError


def _args(*hosts: str) -> argparse.Namespace:
    return argparse.Namespace(host=list(hosts))


def test_targets_resolve_to_a_path_on_their_host():
    hosts = hosts_of(_args("a=ip:127.0.0.1,8765", "b=localhost"))
    assert hosts == {"a": "ip:127.0.0.1,8765", "b": "localhost"}
    assert resolve("a:/dev/zram3", hosts) == ("/dev/zram3", "ip:127.0.0.1,8765", "a")
    assert resolve("/dev/zram3", hosts) == ("/dev/zram3", None, None)
    assert resolve("b:/dev/sdb", hosts) == ("/dev/sdb", "localhost", "b")
    assert resolve("/tmp/x:y", {}) == ("/tmp/x:y", None, None)  # a file name with a colon is a path


def test_remote_shells_by_host_name():
    hosts = {"rack1": "10.0.0.5", "rack2": "10.0.0.6"}

    def shells(*values: str) -> dict:
        return shells_of(argparse.Namespace(remote_shell=list(values)), hosts)

    # NAME= only when NAME is a --host: an option's own '=' stays part of the command
    assert shells("rack1=ssh -o BatchMode=yes rack1") == {"rack1": ["ssh", "-o", "BatchMode=yes", "rack1"]}
    assert shells("ssh -o BatchMode=yes far") == {None: ["ssh", "-o", "BatchMode=yes", "far"]}
    assert shells("rack1=ssh a", "rack2=ssh b") == {"rack1": ["ssh", "a"], "rack2": ["ssh", "b"]}
    with pytest.raises(UserError, match="given twice for rack1"):
        shells("rack1=ssh a", "rack1=ssh b")
    with pytest.raises(UserError, match="no --host rack3=ADDRESS was given"):
        shells("rack3=ssh c")
    # with a remote shell the device's checks run on the server's host: any address is accepted
    check_reachable("192.0.2.7,8765", remote=True)


@pytest.mark.parametrize("hosts, target, message", [
    (["a"], "a:/dev/x", "give NAME=ADDRESS"),
    (["a=h", "a=g"], "a:/dev/x", "given twice"),
    (["a=127.0.0.1"], "c:/dev/x", "no --host c=ADDRESS was given"),
])
def test_bad_hosts_are_refused_in_one_line(hosts, target, message):
    with pytest.raises(UserError, match=message):
        resolve(target, hosts_of(_args(*hosts)))


def test_only_a_server_on_this_host_is_accepted():
    check_reachable("ip:127.0.0.1,8765")
    check_reachable("localhost,8765")
    with pytest.raises(UserError, match="is on another host"):
        check_reachable("192.0.2.7,8765")  # TEST-NET-1: never this host


def test_cli_refuses_a_remote_server_before_anything_is_written(tmp_path: Path):
    target = tmp_path / "f.img"
    r = subprocess.run(["ssdpts", "run", "iops", "--host", "far=192.0.2.7,8765", "--target", f"far:{target}",
                        "--size", "64M", "--out", str(tmp_path / "runs")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "is on another host" in r.stderr
    assert not target.exists() and not (tmp_path / "runs").exists()


def test_one_device_named_through_two_local_servers_is_refused(tmp_path: Path):
    target = tmp_path / "f.img"
    r = subprocess.run(["ssdpts", "run", "iops", "--host", "a=ip:127.0.0.1,1", "--host", "b=localhost,2",
                        "--target", f"a:{target}", "--target", f"b:{target}", "--size", "1G",
                        "--out", str(tmp_path / "runs")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "are the same device on this host" in r.stderr, r.stderr
    assert not target.exists() and not (tmp_path / "runs").exists()


def test_fio_server_applies_to_every_one_of_many_targets(tmp_path: Path):
    """--fio-server with two targets is not dropped (the paths would be run on this host): the remote
    server is refused as for one target, before any file is created."""
    a, b = tmp_path / "a.img", tmp_path / "b.img"
    r = subprocess.run(["ssdpts", "run", "iops", "--fio-server", "192.0.2.7,8765", "--target", str(a),
                        "--target", str(b), "--size", "64M", "--out", str(tmp_path / "runs")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "is on another host" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not a.exists() and not b.exists() and not (tmp_path / "runs").exists()


def test_the_docs_examples_name_servers_ssdpts_accepts():
    """docs/hosts.md's examples must run as shown: every --host/--fio-server address in its sh blocks
    is one check_reachable accepts (a server on another host only with that host's --remote-shell in
    the same command)."""
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "hosts.md").read_text(encoding="utf-8")
    blocks = "\n".join(re.findall(r"```sh\n(.*?)```", doc, re.S))
    commands = [c for c in blocks.replace("\\\n", " ").splitlines() if c.strip().startswith("ssdpts ")]
    checked = 0
    for cmd in commands:
        remote = set(re.findall(r"--remote-shell (\w+)=", cmd))
        for name, server in re.findall(r"--host (\S+?)=(\S+)", cmd):
            check_reachable(server, remote=name in remote)
            checked += 1
        for server in re.findall(r"--fio-server (\S+)", cmd):
            check_reachable(server, remote="--remote-shell" in cmd)
            checked += 1
    assert checked >= 4, "too few example servers found in docs/hosts.md: the test would check little"
