"""The proof of the preconditioning by sprandom (docs/methodology.md#preconditioning-by-sprandom) on the
reference SSD: one test run twice on the same geometry, once preconditioned as the PTS says (purge,
WIPC, rounds) and once by the sprandom fill, each on a fresh drive.

What ssdpts reports must not depend on the way the drive got to steady state:
* the steady-state verdicts are equal (PTS 2.0.2 §2.1.24: reached in both, or in neither);
* every tracking variable's window value (the mean of its 5 window rounds, the figure the PTS
  reports it by) is within WINDOW_REL of the other run's;
* and, by the drive's truth, each tracking cell's mean modeled service time over the window within
  WINDOW_REL of the other run's: the drive's state, which a host that issues late at TC 1 x QD 2
  does not move (the window values above it does: measured, below).

Both comparisons are between two steady-state windows; the PTS rule judges the tracked IOPS, not
the drive, and has accepted a window that began while the drive's WA was still rising after the WIPC.
Each window's WA is read over its first and its last round (the truth): the fill's must hold within
WA_DRIFT; where the PTS run's did not, the two comparisons above are undecided, with the figures,
rather than failed (the PTS's imprecision is not the fill's).

What the drive holds after the fill must be the steady state, by the drive's own truth (never seen
by ssdpts):
* the fill has written the drive's physical space, as a random-write steady state has (where garbage
  collection keeps only its reserve of blocks erased): the erased blocks after the fill beyond the
  reserve, as a share of capacity, at most UNWRITTEN_SHARE;
* the write amplification of the next half capacity written after the fill (the test's own rounds)
  within NEXT_WA_REL of the WA over the run's steady-state window (the same workload, steady).

The refssd truth log holds no per-block valid-page counts (only the drive's totals: valid pages,
free blocks), so the histogram of valid pages per block a random-write steady state leaves cannot be
compared; the two figures above are what the truth can say of it: a victim's valid pages are
N (1 - 1/WA), so the WA of the first victims is the histogram's lower tail.

The mutation (tests/refssd/test_precondition.py): the fill at half the drive's OP writes
(1 + OP/2) x capacity, leaving part of the physical space unwritten (erased blocks that GC does not
need yet), and the physical-space check must fail. On a drive with a dynamic SLC cache the fill's
first writes go to the cache at a third of the density and use the free blocks up anyway: there the
WA of the next half capacity (13-14% short) is what shows the drive is not at steady state.
"""

from __future__ import annotations

import re

from .proofs import Drive, Run, Verdict, rel_diff

# The window values of the two runs: PTS 2.0.2 reports each test from its window's mean; the two
# runs' windows come from different rounds on different drives of the same geometry, so they differ
# by each round's own noise (the IOPS proof holds a window value to the drive's rate within 2%) —
# the bar the benchmark of this work was set: 2%.
WINDOW_REL = 0.02
# Erased blocks the fill leaves beyond the GC reserve, as a share of capacity: fio ends sprandom a
# little under (1 + OP) x the area (1.245 x for OP 0.25, docs/methodology.md: 0.5% of capacity short),
# and each die's open block is counted as erased until its first page (8 dies x 32 pages: 0.8% of
# the CI drive's 32,768 pages). 2% is both, with their sum's margin again; a fill at half the drive's
# OP (0.117 of 0.234) leaves 11.7%.
UNWRITTEN_SHARE = 0.02
# The WA of the next half capacity against the window's: the window is the run's own steady state,
# over five rounds of the same mix. The half capacity after a fill that left the drive in steady
# state differs from it by how far the fill's model (fio's: greedy GC over many pages per block) is
# from this drive's (32 pages per block: its steady WA is 7% below the large-block figure,
# docs/reference-ssd.md) and by the mix's order within a round (the half capacity is 1 to 2 rounds).
NEXT_WA_REL = 0.10
HALF = 0.5
# A window is the drive's steady state only if its WA holds across it: the WA of its last round
# against its first, by the drive's truth. The PTS rule judges the tracked IOPS, not the drive, and
# it has accepted a window that began while the WA was still rising (the WIPC leaves blocks whose
# invalid pages GC collects without copies: after it the WA over the next half capacity was 1.39
# against a steady 2.52, and over a PTS window that began at round 1, 2.459 against the fill's
# window's 2.523, its values 2.4-5.5% above the fill's). Window values compared between two windows of which one drifted are the PTS's own
# imprecision, not the fill's: that comparison is then undecided and says so, and the fill's own
# window must hold its WA (this check, on it, always).
WA_DRIFT = 0.02


def phase_end(run: Run, test: str, part: str = "") -> float:
    """When the part's preconditioning (WIPC or fill) ended: its last step's end; for a part that
    has none (HIR preconditions by its rounds from the purge), its first round's start."""
    pre = run.of(test, part, phase="wipc")
    if pre:
        return max(s["measurement"]["end_time"] for s in pre)
    return min(s["measurement"]["start_time"] for s in run.of(test, part))


def window_span(run: Run, test: str, part: str = "") -> tuple[float, float]:
    pid = f"{test}-{part}" if part else test
    rounds = set(run.summary["parts"][pid]["steady_state"]["window_rounds"])
    steps = [s for s in run.of(test, part) if s["round"] in rounds]
    return min(s["measurement"]["start_time"] for s in steps), max(s["measurement"]["end_time"] for s in steps)


def truth_after(run: Run, drive: Drive, test: str, part: str = "") -> dict:
    """The drive's own figures after the preconditioning and over the steady-state window."""
    t = phase_end(run, test, part)
    after = [iv for iv in drive.truth.intervals if iv["t1"] > t]
    L = drive.p["logical_pages"]
    host = flash = 0.0
    for iv in after:  # the next half capacity written
        host += iv["host_write_pages"]
        flash += iv["flash_prog_pages"]
        if host >= HALF * L:
            break
    onset_pages, seen = None, 0.0
    for iv in after:  # host pages written before the first GC copy after the fill
        if iv["gc_copy_pages"] > 0:
            onset_pages = seen
            break
        seen += iv["host_write_pages"]
    w0, w1 = window_span(run, test, part)
    wa_window = drive.truth.wa(w0, w1)
    quarters, h, f, total = [], 0.0, 0.0, 0.0
    for iv in after:  # the WA of each quarter capacity written after it, against the window's
        h, f = h + iv["host_write_pages"], f + iv["flash_prog_pages"]
        if h >= L / 4:
            total += h
            quarters.append((round(total / L, 2), round(f / h / wa_window - 1, 4)))
            h = f = 0.0
            if total >= 2 * L:
                break
    at = drive.truth.at(t)
    win = [iv for iv in drive.truth.intervals if iv["t0"] >= w0 and iv["t1"] <= w1]
    reserve = drive.p["dies"] * drive.p["gc_free_blocks"]
    return {"wa_next_half": flash / host if host else None, "next_half_pages": host,
            "unwritten_share": (at["free_blocks"] - reserve) * drive.p["pages_per_block"] / L,
            "host_pages_to_gc": onset_pages, "gc_onset_short": None if onset_pages is None else onset_pages / L,
            "wa_window": wa_window, "reference_wa": drive.p["reference_wa"], "wa_by_quarter_capacity": quarters,
            "free_blocks_after": at["free_blocks"], "valid_pages_after": at["valid_pages"],
            "free_blocks_window_mean": sum(iv["free_blocks"] for iv in win) / len(win) if win else None}


def window_drift(run: Run, drive: Drive, test: str, part: str = "") -> dict:
    """The drive's WA over the first and the last round of the steady-state window (its truth) and
    the drift between them."""
    pid = f"{test}-{part}" if part else test
    rounds = sorted(run.summary["parts"][pid]["steady_state"]["window_rounds"])
    def wa(rnd: int) -> float:
        steps = [s for s in run.of(test, part) if s["round"] == rnd]
        return drive.truth.wa(min(s["measurement"]["start_time"] for s in steps),
                              max(s["measurement"]["end_time"] for s in steps))
    first, last = wa(rounds[0]), wa(rounds[-1])
    return {"rounds": [rounds[0], rounds[-1]], "wa_first": round(first, 4), "wa_last": round(last, 4),
            "drift": round(last / first - 1, 4)}


def service_us(run: Run, drive: Drive, pid: str) -> dict[str, float]:
    """Each tracking variable's cell over the window as the drive served it: the mean modeled
    service time of its commands (reads and writes together), from the truth. The drive's state, not
    the host's: at TC 1 x QD 2 a host that issues late lowers ssdpts's IOPS and not this."""
    ss = run.summary["parts"][pid]["steady_state"]
    rounds = set(ss["window_rounds"])
    out = {}
    for var in ss["variables"]:
        # "RND 4KiB 0/100 IOPS" -> its cell's label; HIR's "RND 4KiB 0/100 IOPS, minute 30 of the
        # round" -> its minute's, "RND 4KiB 0/100, minute 30"
        m = re.fullmatch(r"(.*) IOPS(?:, minute (\d+) of the round)?", var["variable"])
        label = m.group(1) + (f", minute {m.group(2)}" if m.group(2) else "")
        n = t = 0.0
        for st in run.steps:
            if st["phase"] == "round" and st["round"] in rounds and st["label"] == label:
                t0, t1 = st["measurement"]["start_time"], st["measurement"]["end_time"]
                for op in ("read", "write"):
                    k = drive.truth.sum(f"host_{op}_ios", t0, t1)
                    if k:
                        n += k
                        t += k * drive.truth.lat_mean_us(op, t0, t1)
        out[var["variable"]] = t / n if n else float("nan")
    return out


def window_values(run: Run, pid: str) -> dict[str, float]:
    ss = run.summary["parts"][pid]["steady_state"]
    return {v["variable"]: v["average"] for v in ss["variables"]}


def precondition_proof(pts: tuple[Run, Drive], spr: tuple[Run, Drive], test: str, part: str = "") -> Verdict:
    """The same test preconditioned both ways: the verdicts and window values equal, the drive in
    steady state after the fill by its own truth."""
    pid = f"{test}-{part}" if part else test
    v = Verdict(f"{pid}: pts vs sprandom")
    (a, da), (b, db) = pts, spr
    ra, rb = a.summary["parts"][pid]["steady_state"]["reached"], b.summary["parts"][pid]["steady_state"]["reached"]
    v.check("verdicts equal", ra == rb, f"steady state reached: pts {ra}, sprandom {rb}")
    fa, fb = window_drift(a, da, test, part), window_drift(b, db, test, part)
    v.check("the fill's window holds the drive's WA", abs(fb["drift"]) <= WA_DRIFT,
            f"WA {fb['wa_first']:.3f} over round {fb['rounds'][0]}, {fb['wa_last']:.3f} over round "
            f"{fb['rounds'][1]} ({fb['drift']:+.1%}; limit {WA_DRIFT:.0%})")
    # the PTS's window: where the rule accepted one the drive had not settled into, the two cannot be
    # held to each other (WA_DRIFT's comment): said, not failed
    unsettled = None if abs(fa["drift"]) <= WA_DRIFT else (
        f"the PTS rule accepted a window whose WA was still moving (by the drive's truth: {fa['wa_first']:.3f} "
        f"over round {fa['rounds'][0]}, {fa['wa_last']:.3f} over round {fa['rounds'][1]}, {fa['drift']:+.1%}; "
        f"the fill's {fb['drift']:+.1%})")

    def side_by_side(name: str, pa: dict[str, float], pb: dict[str, float], fmt: str, unit: str = "") -> dict[str, float]:
        """Each figure of the fill's run against the PTS run's, the worst held to WINDOW_REL
        (undecided where it is past it and the PTS window was not the drive's steady state)."""
        rel = {k: rel_diff(pb[k], pa[k]) for k in pa}
        worst = max(rel, key=lambda k: abs(rel[k]))
        detail = (f"{worst}: sprandom {format(pb[worst], fmt)}{unit} vs pts {format(pa[worst], fmt)}{unit} "
                  f"({rel[worst]:+.2%}; limit {WINDOW_REL:.0%})")
        if unsettled and abs(rel[worst]) > WINDOW_REL:
            v.undecided(name, f"{detail}; {unsettled}")
        else:
            v.check(name, abs(rel[worst]) <= WINDOW_REL, detail)
        return rel

    wa, wb = window_values(a, pid), window_values(b, pid)
    diffs = side_by_side("window values within 2%", wa, wb, ".1f")
    sa, sb = service_us(a, da, pid), service_us(b, db, pid)
    sd = side_by_side("the drive's service times in the window within 2%", sa, sb, ".0f", " us")
    ta, tb = truth_after(a, da, test, part), truth_after(b, db, test, part)
    short = tb["unwritten_share"]
    v.check("physical space written by the fill", short <= UNWRITTEN_SHARE,
            f"{tb['free_blocks_after']} blocks free after the fill, {short:.2%} of capacity beyond the GC reserve "
            f"(limit {UNWRITTEN_SHARE:.0%}): GC starts only once it is written (the first GC copy after "
            f"{tb['host_pages_to_gc']} host pages)")
    d = None if tb["wa_next_half"] is None else rel_diff(tb["wa_next_half"], tb["wa_window"])
    v.check("WA of the next half capacity is the steady WA", d is not None and abs(d) <= NEXT_WA_REL,
            f"WA over the half capacity after the fill {tb['wa_next_half']} vs over the window {tb['wa_window']:.3f} "
            f"({'n/a' if d is None else f'{d:+.1%}'}; limit {NEXT_WA_REL:.0%})")
    v.figures.update(window={"pts": wa, "sprandom": wb, "rel": diffs}, truth={"pts": ta, "sprandom": tb},
                     window_wa_drift={"pts": fa, "sprandom": fb},
                     service_us={"pts": sa, "sprandom": sb, "rel": sd},
                     rounds={"pts": a.summary["parts"][pid]["rounds_run"], "sprandom": b.summary["parts"][pid]["rounds_run"]},
                     time_to_result={"pts": a.manifest["parts"][pid].get("time_to_result"),
                                     "sprandom": b.manifest["parts"][pid].get("time_to_result")})
    return v
