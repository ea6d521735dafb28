"""A Monte Carlo of greedy garbage collection, written from the policy docs/reference-ssd.md
describes and not from refssd/src: the check that the reference (the mean-field model in
refssd/src/reference.rs) and the simulator (refssd/src/model.rs) both get right.

One die of the drive, many replicas of it at once (numpy, one row per replica). A die holds
``logical_pages`` valid pages (the drive's logical pages over its dies) in ``blocks`` blocks of
``pages_per_block`` pages. Each host write overwrites a uniformly random logical page: the page
it replaces is a uniformly random valid page of the die, so only the valid count of each block
matters, and a block loses the page with probability proportional to its valid count. The new
page goes to the die's open block (its write frontier); a full frontier is closed and an erased
block opened in its place. When the die is down to ``reserve`` erased blocks it picks the full
block with the fewest valid pages (greedy), copies its v valid pages into the frontier
v / (N - v - 1) per host page written (paced; a page invalidated before its turn is not copied),
and erases it once it holds no valid page. The write amplification is programs (host pages and
copies) per host page.

What it leaves out of the drive: timing (a die here takes every host page in turn; in the drive
a die busy with GC takes fewer), and the spread of valid pages over the dies (here every die
holds exactly its share). Both are second order; the simulator, which has them, is checked
against the same reference (tests/refssd/test_reference_model.py).
"""

from __future__ import annotations

import numpy as np

FREE, OPEN, FULL, VICTIM = 0, 1, 2, 3


def greedy_wa_per_capacity(logical_pages: int, blocks: int, pages_per_block: int, reserve: int,
                           capacities: int, replicas: int = 32, seed: int = 1):
    """Yield the write amplification of each capacity written (``logical_pages`` host pages per
    replica), averaged over the replicas. The die starts written once, sequentially."""
    rng = np.random.default_rng(seed)
    U, B, N, R = logical_pages, blocks, pages_per_block, replicas
    if B * N <= U + (reserve + 1) * N:
        raise ValueError("no spare blocks to collect into")
    valid = np.zeros((R, B), np.int64)
    flat = valid.ravel()
    state = np.full((R, B), FREE, np.int8)
    full, part = divmod(U, N)
    valid[:, :full] = N
    state[:, :full] = FULL
    valid[:, full] = part
    state[:, full] = OPEN
    frontier = np.full(R, full)
    fill = np.full(R, part)
    erased = np.full(R, B - full - 1)
    victim = np.full(R, -1)
    ratio = np.zeros(R)
    credit = np.zeros(R)
    rows = np.arange(R)
    row_base = rows * U  # each replica holds exactly U valid pages: its cumulative counts span [r U, (r+1) U)
    programs = 0

    def open_new(r):
        """Close the (full) frontier of replicas r and open an erased block."""
        state[r, frontier[r]] = FULL
        new = np.argmax(state[r] == FREE, axis=1)
        if not (state[r, new] == FREE).all():
            raise RuntimeError("a die ran out of erased blocks: the pacing failed")
        state[r, new] = OPEN
        frontier[r] = new
        fill[r] = 0
        erased[r] -= 1

    def program(r, k):
        """k pages (k < N) of each replica in r into its frontier, a full one replaced first."""
        nonlocal programs
        room = N - fill[r]
        now = np.minimum(k, room)
        valid[r, frontier[r]] += now
        fill[r] += now
        over = k > room
        if over.any():
            o = r[over]
            open_new(o)
            valid[o, frontier[o]] += (k - now)[over]
            fill[o] += (k - now)[over]
        programs += int(k.sum())

    for _cap in range(capacities):
        start = programs
        for _ in range(U):
            # the host write makes a uniformly random valid page invalid
            hit = np.searchsorted(np.cumsum(flat), row_base + rng.integers(0, U, R), side="right")
            flat[hit] -= 1
            # a die down to its reserve picks its greedy victim
            pick = np.nonzero((victim < 0) & (erased <= reserve))[0]
            if len(pick):
                v = np.argmin(np.where(state[pick] == FULL, valid[pick], 1 << 40), axis=1)
                victim[pick] = v
                state[pick, v] = VICTIM
                nv = valid[pick, v]
                ratio[pick] = nv / np.maximum(N - nv - 1, 1)
                credit[pick] = 0.0
            # this host page's share of the copies, then the victim erased once it is empty
            act = np.nonzero(victim >= 0)[0]
            if len(act):
                credit[act] += ratio[act]
                k = np.floor(credit[act]).astype(np.int64)
                credit[act] -= k
                k = np.minimum(k, valid[act, victim[act]])
                program(act, k)
                valid[act, victim[act]] -= k
                empty = act[valid[act, victim[act]] == 0]
                if len(empty):
                    state[empty, victim[empty]] = FREE
                    erased[empty] += 1
                    victim[empty] = -1
            # the host page itself
            program(rows, np.ones(R, np.int64))
        yield (programs - start) / (R * U)


def steady_mean(per_capacity, changes: int = 3, tolerance: float = 0.005, measure: int = 3):
    """Steady (docs/reference-ssd.md): once the WA of ``changes`` successive capacities written
    each differs from the one before by less than ``tolerance``; returns (the mean WA of the
    ``measure`` capacities after that point, the capacities written before it, every value), or
    None for the first if the iterator ends first."""
    seen: list[float] = []
    steady_at = None
    for wa in per_capacity:
        seen.append(wa)
        if steady_at is None:
            if len(seen) > changes and all(abs(seen[j] / seen[j - 1] - 1) < tolerance
                                           for j in range(len(seen) - changes, len(seen))):
                steady_at = len(seen)
        elif len(seen) - steady_at >= measure:
            return float(np.mean(seen[steady_at:])), steady_at, seen
    return None, steady_at, seen
