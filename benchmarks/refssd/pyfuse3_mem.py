"""A RAM-backed one-file FUSE server in Python (pyfuse3, Debian python3-pyfuse3): the Python
candidate for serving the reference SSD, measured by benchmarks/refssd_serving.py."""

import errno
import os
import stat
import sys

import pyfuse3
import trio

SIZE = 256 << 20


class MemFs(pyfuse3.Operations):
    def __init__(self):
        super().__init__()
        self.mem = bytearray(SIZE)

    async def getattr(self, inode, ctx=None):
        e = pyfuse3.EntryAttributes()
        e.st_ino = inode
        if inode == pyfuse3.ROOT_INODE:
            e.st_mode, e.st_size = stat.S_IFDIR | 0o755, 0
        elif inode == 2:
            e.st_mode, e.st_size = stat.S_IFREG | 0o600, SIZE
        else:
            raise pyfuse3.FUSEError(errno.ENOENT)
        e.attr_timeout = e.entry_timeout = 3600
        return e

    async def lookup(self, parent, name, ctx=None):
        if parent == pyfuse3.ROOT_INODE and name == b"disk":
            return await self.getattr(2)
        raise pyfuse3.FUSEError(errno.ENOENT)

    async def open(self, inode, flags, ctx):
        return pyfuse3.FileInfo(fh=inode, direct_io=True)

    async def read(self, fh, off, size):
        return bytes(self.mem[off:off + size])

    async def write(self, fh, off, buf):
        self.mem[off:off + len(buf)] = buf
        return len(buf)


async def main_async():
    await pyfuse3.main()


if __name__ == "__main__":
    opts = set(pyfuse3.default_options)
    pyfuse3.init(MemFs(), sys.argv[1], opts)
    try:
        trio.run(main_async)
    finally:
        pyfuse3.close()
