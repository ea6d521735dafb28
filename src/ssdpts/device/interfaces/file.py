"""A file target: no device of its own (identify, telemetry and the write cache describe the disk
under its filesystem, where there is one); its purge is the file removed and recreated sparse."""

from __future__ import annotations

from typing import Any

from ssdpts.device.interfaces.base import Interface
from ssdpts.device.purge.fallback import FileRecreatePurge
from ssdpts.device.target import Target


class File(Interface):
    cls = "file"

    def __init__(self) -> None:
        super().__init__("file", health_what="a file", cache_what="a file (the filesystem decides)")
        self.named = "a file"

    def choose_purge(self, info: dict, target: Target) -> Any:
        return FileRecreatePurge()
