"""The PTS as code (SNIA SSS PTS 2.0.2; docs/pts-reference.md): pure definitions, no files, no subprocesses.

    units.py         KiB/MiB, block-size names, MB/s base 10
    workload.py      Workload (pattern, mix, block size, TC x QD) and Step
    profiles.py      the Enterprise and Client parameter sets
    runspec.py       RunSpec: the validated options of a run
    steady_state.py  the steady-state rule (PTS 2.0.2 §2.1.24)
    parts.py         Part and Tracking: purge -> WIPC -> rounds until the stop rule
    tables.py        what every test's measurement-window table shares
    iops.py tp.py lat.py wsat.py   one module per test: its parts, tracking variables and table
    registry.py      the tests, in run order
    plan.py          a run's parts for its target (build_parts), active range, forced deviations

A new test is a new module here, listed in registry.py (see docs/architecture.md).
"""
