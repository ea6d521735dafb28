"""WAF end to end on the reference SSD, as a proof that can fail.

ssdpts's write amplification of a test is what its report shows: report/datasheet.py's ``waf_of``
over the run directory as the results reader gives it (the drive's media bytes over its host bytes,
from the snapshot before the test's first step to the one after its last). The simulator's is the
flash pages its truth log says it programmed over the same span (refssd/src/truth.rs, intervals at
the two edges counted pro rata) over the host pages its io log shows written then (every write
command's bytes, one line per command, refssd/src/serve.rs). ssdpts reads the drive's ctl counters
at its step boundaries; the host side of the simulator's figure is not a counter at all, so a WAF
read from the wrong counter, the wrong span or the wrong unit shows.
"""

from __future__ import annotations

import json
from pathlib import Path

from ssdpts.report.context import RunContext
from ssdpts.report.datasheet import waf_of
from ssdpts.results.reader import read_run

from .proofs import BYTES_REL, Drive, Verdict, rel_diff

# ssdpts's WAF of a test against the simulator's over the same span: 1%. What the
# measurement itself allows is far less: a snapshot's time is taken just before its ctl read (well
# under a millisecond of writes at the edges), and the truth's edge intervals (10 ms) are counted
# pro rata; over a WSAT of a minute both are under 0.05%.
WAF_REL = 0.01


def steps(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "steps.jsonl").read_text().splitlines() if x.strip()]


def ssdpts_waf(run: Path, records: list[dict] | None = None) -> dict[str, dict]:
    """Per summary part: ssdpts's WAF as its datasheet computes it, and the span it covers (the
    times of the snapshots used), from the run directory (or from ``records`` in place of its
    steps.jsonl: a mutation)."""
    ctx = RunContext(read_run(run, steps=True, records=records))
    out = {}
    for pid, p in ctx.parts.items():
        recs = ctx.records.get((p.test, p.part), [])
        w = waf_of(recs)
        tel = [r.telemetry for r in recs if isinstance(r.telemetry, dict)]
        has = [t for t in tel if isinstance(t.get("before"), dict) and "physical_media_written_bytes" in t["before"]]
        if w is None or not has:
            out[pid] = {"waf": None}
            continue
        last = [t for t in tel if isinstance(t.get("after"), dict) and "physical_media_written_bytes" in t["after"]][-1]
        out[pid] = {"waf": w.value, "t0": has[0]["before"]["t_unix_s"], "t1": last["after"]["t_unix_s"],
                    "host_bytes": last["after"]["data_written_bytes"] - has[0]["before"]["data_written_bytes"],
                    "fio_write_bytes": sum(r.measurement.write.io_bytes for r in recs if r.measurement)}
    return out


def host_pages(drive: Drive, t0: float, t1: float) -> float:
    """Host pages written in [t0, t1] from the drive's io log: every write command's bytes, by
    completion time, over the page size (not the model's counters, which the ctl file and the
    truth's host_write_pages both come from)."""
    c = drive.commands()
    sel = (c["op"] == "W") & (c["done"] >= t0) & (c["done"] < t1)
    return float(c["bytes"][sel].sum()) / drive.p["page_bytes"]


def waf_proof(run: Path, drive: Drive, records: list[dict] | None = None, scale: float = 1.0) -> Verdict:
    """Every part with media writes: ssdpts's WAF (``scale`` times it: a mutation of the reported
    figure) within WAF_REL of the simulator's over its span, the flash pages from its truth log,
    the host pages from its io log where it kept one; and the drive's host bytes within BYTES_REL
    of what fio wrote in those steps."""
    v = Verdict("waf")
    man = json.loads((run / "manifest.json").read_text())
    tel = man.get("telemetry") or {}
    v.check("media source", str(tel.get("health", "")).startswith("refssd-ctl")
            and "refssd ctl" in str(tel.get("media_writes", "")),
            f"telemetry {tel}")
    parts = ssdpts_waf(run, records)
    v.check("a WAF per test", bool(parts) and all(p["waf"] is not None for p in parts.values()),
            f"{ {k: p['waf'] for k, p in parts.items()} }")
    for pid, p in parts.items():
        if p["waf"] is None:
            continue
        t0, t1 = p["t0"], p["t1"]
        host = host_pages(drive, t0, t1) if drive.io_log is not None else drive.truth.sum("host_write_pages", t0, t1)
        sim = drive.truth.sum("flash_prog_pages", t0, t1) / host
        waf = p["waf"] * scale
        d = rel_diff(waf, sim)
        v.check(f"WAF {pid}", abs(d) <= WAF_REL,
                f"ssdpts {waf:.4f}, simulator {sim:.4f} over {t1 - t0:.1f} s ({d:+.3%}; limit {WAF_REL:.0%})")
        v.margins.append({"check": f"WAF {pid}", "part": pid, "reported": waf, "simulator": sim, "difference": d,
                          "tolerance": [-WAF_REL, WAF_REL], "margin": WAF_REL - abs(d),
                          "host_pages_from": "io log" if drive.io_log is not None else "truth",
                          "outcome": "passed" if abs(d) <= WAF_REL else "failed"})
        hb = rel_diff(p["host_bytes"], p["fio_write_bytes"])
        v.check(f"host bytes {pid}", abs(hb) <= BYTES_REL,
                f"drive {p['host_bytes']:,} bytes, fio {p['fio_write_bytes']:,} ({hb:+.3%}; limit {BYTES_REL:.0%})")
        v.figures[pid] = {"ssdpts_waf": waf, "simulator_waf": sim, "difference": d, "span_s": t1 - t0,
                          "host_bytes_drive": p["host_bytes"], "host_bytes_fio": p["fio_write_bytes"],
                          "host_bytes_difference": hb}
    return v


# ---- mutations: steps.jsonl as a wrong ssdpts would have written it ------------------------------

def _first_two(recs: list[dict], test: str) -> tuple[dict, dict]:
    mine = sorted((r for r in recs if r["test"] == test), key=lambda r: r["index"])
    return mine[0], mine[1]


def host_from_wrong_span(recs: list[dict], test: str) -> list[dict]:
    """The host bytes taken from the second step's snapshot before instead of the first's: the
    first step's host writes are left out of the test's span (the media bytes are not)."""
    out = json.loads(json.dumps(recs))
    a, b = _first_two(out, test)
    a["telemetry"]["before"]["data_written_bytes"] = b["telemetry"]["before"]["data_written_bytes"]
    return out


def media_off_by_a_step(recs: list[dict], test: str) -> list[dict]:
    """The media counter one step late: the first step's snapshot before carries the second's."""
    out = json.loads(json.dumps(recs))
    a, b = _first_two(out, test)
    a["telemetry"]["before"]["physical_media_written_bytes"] = b["telemetry"]["before"]["physical_media_written_bytes"]
    return out
