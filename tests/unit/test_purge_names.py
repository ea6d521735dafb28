"""Purge methods a new user can find: 'ssdpts run --help' lists every --purge name (the registry's,
device/purge/registry.py), and 'ssdpts plan' names those the target supports, as 'run' would accept them."""

from __future__ import annotations

import re

import pytest

from ssdpts.run.preview import supported_purges
from ssdpts.device.purge import registry as purge
from ssdpts.device.target import open_target
from tests.unit.test_purge_select import ata_info, nvme_info, target


def test_the_help_lists_every_registered_method(capsys):
    from ssdpts.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(["run", "--help"])
    assert done.value.code == 0
    text = re.sub(r"\s+", "", capsys.readouterr().out)  # argparse wraps names at their hyphens
    for name in set(purge.method_names()) - {"auto", "none"}:
        assert name in text, name


def test_plan_names_what_the_device_supports(tmp_path):
    sanitize = nvme_info("nvme-cli-2.x-id-ctrl-sanitize-DERIVED.json")
    assert supported_purges(target("nvme0n1"), sanitize) == [  # its Format NVM has no crypto erase
        "nvme-sanitize-block", "nvme-sanitize-crypto", "nvme-format", "discard", "zero-fill", "none"]
    format_only = nvme_info("nvme-cli-2.x-id-ctrl-samsung-980pro-1tb-keysorted.json")
    assert supported_purges(target("nvme0n1"), format_only)[0] == "nvme-format"
    assert "nvme-sanitize-block" not in supported_purges(target("nvme0n1"), format_only)
    frozen = supported_purges(target("sda", transport="sata"), ata_info("hdparm-I-sata-ssd-frozen-CONSTRUCTED.txt"))
    assert not any(m.startswith("ata-secure-erase") for m in frozen) and "discard" in frozen
    assert supported_purges(open_target(str(tmp_path / "f.img"), size_bytes=1 << 27), None) == ["file-recreate", "none"]
