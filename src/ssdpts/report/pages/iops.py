"""The IOPS test's pages (docs/pts-reference.md#iops): convergence of every block size at 0/100 and of the tracking
variables, the steady-state window, and the window's IOPS table, 2D and 3D plots, QoS and CPU."""

from __future__ import annotations

from ...pts.iops import IopsTable
from ...pts.units import fmt_block_size
from ...pts.workload import cell_key
from ...results.records import PartResult
from ..compare_parts import DELTA_NOTE, matrix, repeat_long, repeat_matrix
from ..context import RunContext
from ..doc import Cell, Plot, Table
from .common import cell_refs, cpu_table, qos_table, three_sections, tracking, window_outliers
from .kind import Details, Figure, ReportKind

QOS_CELLS = ((100, "RND 4KiB 100/0"), (65, "RND 4KiB 65/35"), (0, "RND 4KiB 0/100"))


def sections(ctx: RunContext, pids: list[str]) -> list:
    out = []
    for pid in pids:
        part = ctx.parts[pid]
        table = part.table
        out += three_sections(part, "iops", "IOPS", convergence(ctx, part),
                              results(ctx, part, table) if isinstance(table, IopsTable) else None)
    return out


def convergence(ctx: RunContext, part: PartResult) -> list:
    cells = ctx.cells_by_round(part)
    if not cells:
        return []
    window = list(part.window_rounds)
    sid = part.id
    # every block size at R/W 0/100, per round; smallest block (highest IOPS) first, as the lines stack
    by_bs: dict[int, tuple[list[int], list[float], list[str]]] = {}
    for rno, rc in cells.items():
        for c in rc.values():
            if c.workload.read_pct == 0:
                xs, ys, ns = by_bs.setdefault(c.workload.block_size_bytes, ([], [], []))
                xs.append(rno)
                ys.append(c.measurement.iops)
                ns.append(f"step {c.index} of round {rno} ({c.label})")
    series = {fmt_block_size(bs): by_bs[bs][:2] for bs in sorted(by_bs)}
    notes = {fmt_block_size(bs): by_bs[bs][2] for bs in sorted(by_bs)}
    temps, temps_note = ctx.temperatures("iops", part.part)
    out: list = [Plot(f"{sid}-convergence-bs", "IOPS convergence: every block size at R/W 0/100",
                      "IOPS of each block size, RND 100% write, per round; the shaded band is the "
                      "measurement window" + ("; dashed grey, right axis: the device's highest "
                                              "temperature in each round." if temps else "."),
                      "rounds_lines", {"panels": [("RND 0/100 by block size", series, "IOPS", True)], "window": window,
                                       "reached": bool(part.reached), "notes": notes, "temperature": temps},
                      size=(10, 4.4))]
    if temps_note:
        out.append(temps_note)
    tvars = tracking(part)
    out.append(Plot(f"{sid}-convergence-tracking", "IOPS convergence: tracking variables",
                    "Each tracking variable per round; all must pass in the same window (PTS 2.0.2).",
                    "tracking_convergence", {"variables": tvars, "window": window, "reached": bool(part.reached)},
                    size=(10, 1.3 + 1.25 * max(1, len(tvars)))))
    return out


def results(ctx: RunContext, part: PartResult, table: IopsTable) -> list:
    sid = part.id
    suffix = ctx.ss_suffix(part)
    note = ctx.not_reached_note(part)
    mixes = list(table.mixes)
    rows_sorted = sorted(table.rows, key=lambda r: r.block_size_bytes)
    make = cell_refs(ctx, part, "iops")
    rows = [[Cell(fmt_block_size(r.block_size_bytes))] +
            [make(cell_key("rand", r.block_size_bytes, m.split("/")[0]), r.values.get(m), "IOPS") for m in mixes]
            for r in rows_sorted]
    out: list = [Table(f"{sid}-table", "Average IOPS vs block size and R/W mix" + suffix,
                       ["Block size ↓ / R/W mix →", *mixes], rows,
                       note=note + " Each value links to its rounds, histogram and fio job (HTML).")]
    bss = [r.block_size_bytes for r in rows_sorted]
    z = [[r.values.get(m) for m in mixes] for r in rows_sorted]
    out.append(Plot(f"{sid}-2d", "IOPS vs block size, one line per R/W mix" + suffix, note,
                    "iops_vs_bs", {"bss": bss, "mixes": mixes, "z": z}, size=(10, 4.6)))
    # largest block (fewest IOPS) in front, so that no bar hides another
    out.append(Plot(f"{sid}-3d", "IOPS 3D plot: R/W mix × block size" + suffix, note,
                    "bars3d", {"xlabels": mixes, "ylabels": [fmt_block_size(b) for b in bss][::-1], "z": z[::-1],
                               "zlabel": "IOPS", "xname": "R/W mix", "yname": "block size"}, size=(9, 5.6)))
    qos_keys = [(k, lab) for k, lab in ((cell_key("rand", 4096, pct), lab) for pct, lab in QOS_CELLS)
                if ctx.window_steps(part, k)]
    if qos_keys:
        out.append(qos_table(ctx, part, qos_keys, f"{sid}-qos", f"Response-time QoS at {ctx.toio('iops')} (µs)"))
        out += window_outliers(ctx, part, qos_keys, f"{sid}-outliers", f"Latency outliers at {ctx.toio('iops')}")
    out += cpu_table(ctx, part, [(cell_key("rand", bs, m.split("/")[0]), "") for bs in bss for m in mixes],
                     f"{sid}-cpu", "fio CPU utilisation per cell (usr + sys, %)" + suffix, matrix=(bss, mixes))
    return out


# ---- the IOPS test as a kind (pages/kind.py) ------------------------------------------------------

def compare_blocks(cmp, p) -> list:
    """Its comparison: the IOPS of every run against block size, then each run's deltas and values."""
    labels = cmp.labels
    vals = [{(r.block_size_bytes, r.mix): r.values[i] for r in p.rows} for i in range(len(labels))]
    out: list = [Plot(f"{p.part}-overlay", "IOPS vs block size, every run",
                      "Log-log. One line per run, one panel per R/W mix (100/0, 65/35, 0/100); dashed: "
                      "steady state NOT reached. Missing points: block sizes the run does not have.",
                      "iops_overlay", {"labels": labels, "values": vals, "ss": p.ss_reached}, size=(10.0, 4.0))]
    out += [matrix(p, i, "delta", cmp) for i in range(1, len(labels))]
    out += [matrix(p, i, "values", cmp) for i in range(len(labels))]
    out[-1].note = DELTA_NOTE
    return out


def repeat_blocks(rep, p) -> list:
    return [repeat_matrix(rep, p, "median"), repeat_matrix(rep, p, "rse"),
            repeat_long(rep, p, p.rows, f"{p.part}-all", "Every run's IOPS")]


FIGURES = (
    Figure("rnd4k_read_iops", "RND 4KiB read IOPS (100/0)", "IOPS", "higher", "iops", cell_key("rand", 4096, 100), "iops",
           10),
    Figure("rnd4k_write_iops", "RND 4KiB write IOPS (0/100)", "IOPS", "higher", "iops", cell_key("rand", 4096, 0), "iops",
           11),
    Figure("rnd4k_mixed_iops", "RND 4KiB mixed IOPS, 65/35 (the PTS mix nearest 70/30)", "IOPS", "higher", "iops",
           cell_key("rand", 4096, 65), "iops", 12),
)
OUTLIER_CELLS = ((20, "rnd4k_read", "RND 4KiB read at the IOPS test's TC × QD", "iops", cell_key("rand", 4096, 100)),
                 (21, "rnd4k_write", "RND 4KiB write at the IOPS test's TC × QD", "iops", cell_key("rand", 4096, 0)))


def figure_value(_ctx: RunContext, part: PartResult, f: Figure, window: str) -> tuple | None:
    """A figure's IOPS: its cell of the matrix."""
    if f.stat != "iops":
        return None
    bs, pct = int(f.key.split("-")[1]), f.key.split("-")[2]
    row = next((r for r in getattr(part.table, "rows", ()) if r.block_size_bytes == bs), None)
    mix = f"{pct}/{100 - int(pct)}"
    return (row.values.get(mix) if row else None), "", part.reached, window


STIMULUS = ("RND; R/W mix 100/0, 95/5, 65/35, 50/50, 35/65, 5/95, 0/100 (outer) × block size 1024, 128, 64, "
            "32, 16, 8, 4, 0.5 KiB (inner)")
KINDS = {"iops": ReportKind(sections, "IOPS Test (REQUIRED) – Report Page", lambda *_: STIMULUS,
                            details=Details(lambda m, _w: m.iops, "IOPS", "IOPS"), compare=compare_blocks, repeats=repeat_blocks,
                            figures=FIGURES, outlier_cells=OUTLIER_CELLS, figure_value=figure_value)}
