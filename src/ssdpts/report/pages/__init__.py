"""The pages of each test of a run's report, one module per test (iops, tp, lat, wsat, hir, xsr,
demand: CBW and DIRTH), on the skeleton they share (common.py), and the run's own sections
(boundaries, temperature). Each test module has ``sections(ctx, pids) -> list[Section]``; the
assembler (report/assemble.py) calls them in the run's test order."""
