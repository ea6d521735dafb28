"""The throughput test's pages (docs/pts-reference.md#tp): per block size its convergence, steady-state window and
window MB/s, then all block sizes side by side."""

from __future__ import annotations

from ...pts.tp import TpTable
from ...pts.units import fmt_block_size
from ...pts.workload import cell_key
from ...results.records import PartResult
from ..compare_parts import long_table
from ..context import RunContext
from ..doc import Cell, Plot, Section, Table
from .common import cell_refs, cpu_table, one_section
from .kind import Details, Figure, ReportKind


def sections(ctx: RunContext, pids: list[str]) -> list:
    out = []
    summary_rows: list[tuple[TpTable, PartResult]] = []
    for pid in pids:
        part = ctx.parts[pid]
        name = part.part or pid
        sec = one_section(part, pid, f"Throughput {name}", "tp", convergence(ctx, part, name))
        tab = part.table
        if isinstance(tab, TpTable):
            bs = tab.block_size_bytes
            sec.blocks.append(Table(f"{pid}-table", f"Average MB/s, SEQ {name}" + ctx.ss_suffix(part),
                                    ["Block size", "Read MB/s", "Write MB/s"], [mbps_row(ctx, part, tab)],
                                    note=ctx.not_reached_note(part) + " MB/s = 10⁶ bytes per second."))
            sec.blocks += cpu_table(ctx, part, [(cell_key("seq", bs, 100), f"SEQ {name} read"),
                                                (cell_key("seq", bs, 0), f"SEQ {name} write")],
                                    f"{pid}-cpu", f"fio CPU utilisation, SEQ {name} (usr + sys, %)")
            summary_rows.append((tab, part))
        out.append(sec)
    if summary_rows:
        out.append(all_block_sizes(ctx, summary_rows))
    return out


def mbps_row(ctx: RunContext, part: PartResult, tab: TpTable, label: str = "") -> list[Cell]:
    make = cell_refs(ctx, part, "")
    bs = tab.block_size_bytes
    return [Cell(label or fmt_block_size(bs)),
            make(cell_key("seq", bs, 100), tab.read_mb_per_s, "MB/s", stat="read_mb_per_s"),
            make(cell_key("seq", bs, 0), tab.write_mb_per_s, "MB/s", stat="write_mb_per_s")]


def convergence(ctx: RunContext, part: PartResult, name: str) -> list:
    cells = ctx.cells_by_round(part)
    if not cells:
        return []
    rs: dict[int, float] = {}
    ws: dict[int, float] = {}
    notes: dict[str, list[str]] = {f"SEQ {name} read": [], f"SEQ {name} write": []}
    for rno, rc in cells.items():
        for c in rc.values():
            if c.workload.read_pct == 100:
                rs[rno] = c.measurement.read.bw_bytes_per_s / 1e6
                notes[f"SEQ {name} read"].append(f"step {c.index} of round {rno}")
            elif c.workload.read_pct == 0:
                ws[rno] = c.measurement.write.bw_bytes_per_s / 1e6
                notes[f"SEQ {name} write"].append(f"step {c.index} of round {rno}")
    series = {f"SEQ {name} read": (list(rs), list(rs.values())),
              f"SEQ {name} write": (list(ws), list(ws.values()))}
    temps, temps_note = ctx.temperatures("tp", part.part)
    out: list = [Plot(f"{part.id}-convergence", f"Throughput {name}: convergence, read and write",
                      "MB/s (base 10) per round of the SEQ read and SEQ write steps; steady state is "
                      "tracked on write. The shaded band is the measurement window.",
                      "rounds_lines", {"panels": [(f"SEQ {name}", series, "MB/s", False)],
                                       "window": list(part.window_rounds), "reached": bool(part.reached),
                                       "notes": notes, "temperature": temps}, size=(10, 3.8))]
    if temps_note:
        out.append(temps_note)
    return out


def all_block_sizes(ctx: RunContext, summary_rows: list[tuple[TpTable, PartResult]]) -> Section:
    summary_rows.sort(key=lambda tp: tp[0].block_size_bytes)
    sec = Section("tp-results", "Throughput: all block sizes", 3, "tp")
    rows = [mbps_row(ctx, p, t, fmt_block_size(t.block_size_bytes) + ctx.ss_suffix(p)) for t, p in summary_rows]
    sec.blocks.append(Table("tp-table", "Average MB/s vs block size and R/W", ["Block size", "Read MB/s",
                                                                              "Write MB/s"], rows,
                            note="Each block size has its own purge, WIPC and steady-state window. "
                                 "MB/s = 10⁶ bytes per second."))
    missed = any(not p.reached for _, p in summary_rows)
    sec.blocks.append(Plot("tp-2d", "Throughput vs block size" + (" — steady state NOT reached" if missed else ""),
                           "Average read and write MB/s of each block size over its measurement window.",
                           "tp_bars", {"labels": [fmt_block_size(t.block_size_bytes) for t, _ in summary_rows],
                                       "read": [t.read_mb_per_s for t, _ in summary_rows],
                                       "write": [t.write_mb_per_s for t, _ in summary_rows],
                                       "flags": [not p.reached for _, p in summary_rows]},
                           size=(10, 3.8)))
    return sec


# ---- the throughput test as a kind (pages/kind.py) ------------------------------------------------

def stimulus(ctx: RunContext, _test: str, pids: list[str]) -> str:
    return "SEQ, per block size " + ", ".join(ctx.parts[p].part or p for p in pids) + ": 100/0 then 0/100"


def toio(ctx: RunContext) -> tuple:
    """Its demand intensity before any round recorded one: the profile's (docs/pts-reference.md#tests)."""
    return ctx.profile.get("tp_threads"), ctx.profile.get("tp_iodepth")


def mb_per_s(m, w) -> float:
    """A step's MB/s in its direction (its cells' details)."""
    return (m.read if w.read_pct == 100 else m.write).bw_bytes_per_s / 1e6


def compare_blocks(cmp, p) -> list:
    """Its comparison: every run's read and write MB/s as bars, and the table."""
    groups = [(r.label, r.values) for r in p.rows]
    return [Plot(f"{p.part}-overlay", "Throughput, every run",
                 "SEQ read and write MB/s (10⁶ B/s), one bar per run; hatched: steady state NOT reached.",
                 "runs_bars", {"labels": cmp.labels, "groups": groups, "ss": p.ss_reached, "ylabel": "MB/s (10⁶ B/s)"},
                 size=(10.0, 3.6)),
            long_table(cmp, p, p.rows, f"{p.part}-table", "Throughput (MB/s)")]


FIGURES = tuple(
    Figure(f"seq{bs // 1024}k_{rw}_mbps", f"SEQ {bs // 1024}KiB {rw} MB/s", "MB/s", "higher", f"tp-{bs // 1024}KiB",
           cell_key("seq", bs, pct), f"{rw}_mb_per_s", order)
    for order, (bs, rw, pct) in enumerate(((131072, "read", 100), (131072, "write", 0), (1048576, "read", 100),
                                           (1048576, "write", 0)), start=20))


def figure_value(_ctx: RunContext, part: PartResult, f: Figure, window: str) -> tuple | None:
    """A figure's MB/s: its direction of the part's table."""
    if f.stat not in ("read_mb_per_s", "write_mb_per_s"):
        return None
    tab = part.table if isinstance(part.table, TpTable) else None
    return (getattr(tab, f.stat) if tab else None), "", part.reached, window


KINDS = {"tp": ReportKind(sections, "Throughput Test (REQUIRED) – Report Page", stimulus, toio=toio,
                          details=Details(mb_per_s, "MB/s", "MB/s"), compare=compare_blocks, full_labels=True,
                          figures=FIGURES, figure_value=figure_value)}
