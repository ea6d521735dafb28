"""ssdpts: the SNIA SSS PTS 2.0.2 (Enterprise and Client) on fio."""

__version__ = "0.1.0"
