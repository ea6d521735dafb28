"""Verification of a run directory, in one place: ``integrity.py`` (the directory against what its
rounds recorded: raw files, step lines, the manifest's digests and seal; ``ssdpts verify``, and the
same check in report, compare, the library and resume) and ``proof.py`` (each step recomputed from
fio's output, the summary from the steps; the summary a reader may present)."""
