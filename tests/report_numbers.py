"""Recompute the numbers a report prints, independently of ssdpts' own code.

Every numeric table cell of the HTML report names its statistic (``data-ref``, docs/report.md
"Numbers"): ``<part>:<cell key>:<statistic>`` for a window statistic of a cell,
``<part>:ss<i>:average|range|excursion|r<round>`` for a tracking variable,
``<part>:m<minute>:<statistic>`` for a WSAT sample, ``wsat:fob_iops|final_iops|drop_pct``,
``wsat:model:steady_iops|steady_wa|effective_spare`` for the drive model's arithmetic figures.
:class:`Recompute` computes each one from raw per-step data: fio's json+ output of the step (real
runs) or the measurement recorded in steps.jsonl (FakeExecutor runs, which have no fio output),
using only the definitions of docs/methodology.md — not ssdpts' functions.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np


# docs/methodology.md "Rates as the device did them": a step's rates are fio's IO count and bytes over
# the block layer's span where fio's run time differs from it by more than 1% of the run time and
# more than 1 ms; the rule, redone here from the step record and fio's own output
RATE_TOLERANCE_PCT, RATE_TOLERANCE_MS = 1.0, 1.0


def device_timed(rec: dict, job: dict) -> dict:
    """fio's json+ job of a step with its rates as the device did them (a copy where they change)."""
    dev = rec.get("device") or {}
    a, b = dev.get("first_issue_unix_s"), dev.get("last_complete_unix_s")
    runtime = max(job["read"].get("runtime", 0), job["write"].get("runtime", 0)) / 1000.0
    if rec.get("beside") or a is None or b is None or b <= a or runtime <= 0:
        return job
    span = b - a
    if abs(span - runtime) <= max(RATE_TOLERANCE_PCT / 100 * runtime, RATE_TOLERANCE_MS / 1000):
        return job
    out = {**job}
    for d in ("read", "write"):
        x = dict(job[d])
        if x["total_ios"]:
            x["iops"], x["bw_bytes"] = x["total_ios"] / span, x["io_bytes"] / span
        out[d] = x
    return out


def raw_from_step(rec: dict) -> dict:
    """A step's raw numbers from its steps.jsonl measurement (FakeExecutor runs)."""
    m = rec["measurement"]
    out = {"usr": m.get("cpu_usr_pct"), "sys": m.get("cpu_sys_pct")}
    for d in ("read", "write"):
        x = m[d]
        out[d] = {"iops": x["iops"], "bw_bytes": x["bw_bytes_per_s"], "ios": x["ios"], "io_bytes": x["io_bytes"],
                  "mean_ns": x["lat_mean_ns"], "max_ns": x["lat_max_ns"],
                  "bins": {int(k): int(v) for k, v in x["lat_bins_ns"].items()}}
    return out


def fio_jobs(run: Path, rel: str) -> list[dict]:
    """fio's json+ as fio wrote it, decoded without ssdpts' parser."""
    text = (run / rel).read_text()
    start = 0 if text.startswith("{") else text.index("\n{") + 1
    return json.JSONDecoder().raw_decode(text[start:])[0]["jobs"]


def raw_from_fio(run: Path):
    """A function step record -> its raw numbers, read from the fio json+ file the step names."""
    cache: dict[str, list[dict]] = {}

    def get(rec: dict) -> dict:
        rel = rec["fio_json"]
        if rel not in cache:
            cache[rel] = fio_jobs(run, rel)
        j = device_timed(rec, cache[rel][rec["fio_job_index"]])
        out = {"usr": j.get("usr_cpu"), "sys": j.get("sys_cpu")}
        for d in ("read", "write"):
            x = j[d]
            lat = x.get("lat_ns") or {}
            n = x["total_ios"]
            out[d] = {"iops": x["iops"], "bw_bytes": x["bw_bytes"], "ios": n, "io_bytes": x["io_bytes"],
                      "mean_ns": lat.get("mean", 0.0) if n else 0.0, "max_ns": lat.get("max", 0) if n else 0.0,
                      "bins": {int(k): int(v) for k, v in (lat.get("bins") or {}).items()}}
        return out

    return get


def percentile(bins: dict[int, int], pct: float) -> float:
    """fio's rule (stat.c): the first bin whose cumulative count reaches pct % of all IOs."""
    total = sum(bins.values())
    need = pct / 100.0 * total
    cum = 0
    for v in sorted(bins):
        cum += bins[v]
        if cum >= need:
            return float(v)
    return float(max(bins))


def fio_plat_idx(ns: int) -> int:
    """fio stat.c plat_val_to_idx, transcribed: the histogram bin index of a response time."""
    msb = ns.bit_length() - 1 if ns else 0
    if msb <= 6:
        return ns
    error_bits = msb - 6
    return min((error_bits + 1) * 64 + ((ns >> error_bits) & 63), 29 * 64 - 1)


def outlier_counts(bins: dict[int, int], max_ns: float, threshold_ns: int) -> tuple[int, int]:
    """(at least, at most) IOs slower than the threshold in one step. The bin of threshold + 1 ns
    and every bin after it may hold slower IOs (at most); the bins after it certainly do, and so
    does that bin itself when the threshold lies in the bin below (at least). None when the step's
    maximum is not above the threshold; at least one when it is."""
    first = fio_plat_idx(threshold_ns + 1)
    start = first if fio_plat_idx(threshold_ns) != first else first + 1
    if max_ns <= threshold_ns:
        return 0, 0
    least = sum(n for v, n in bins.items() if fio_plat_idx(v) >= start)
    most = sum(n for v, n in bins.items() if fio_plat_idx(v) >= first)
    return max(least, 1), most


def _key_of_variable(name: str) -> tuple[str, str]:
    """'RND 4KiB 0/100 IOPS' -> ('rand-4096-0', 'iops'); 'SEQ 1024KiB 0/100 MB/s' -> write MB/s;
    '... mean response time' -> mean."""
    kind, bs, mix = name.split()[:3]
    size = int(float(bs.replace("KiB", "")) * 1024)
    key = f"{'rand' if kind == 'RND' else 'seq'}-{size}-{mix.split('/')[0]}"
    if name.endswith("IOPS"):
        return key, "iops"
    if name.endswith("MB/s"):
        return key, "read_mb_per_s" if mix == "100/0" else "write_mb_per_s"
    return key, "lat_mean_us"


class Recompute:
    def __init__(self, run: Path, raw=None, targets: dict | None = None):
        self.run = Path(run)
        self.summary = json.loads((self.run / "summary.json").read_text())
        self.manifest = json.loads((self.run / "manifest.json").read_text())
        self.steps = [json.loads(ln) for ln in (self.run / "steps.jsonl").read_text().splitlines() if ln.strip()]
        self.raw = raw or raw_from_step
        self.targets = targets or {}

    # ---- per step ------------------------------------------------------------------------------
    def step_value(self, rec: dict, stat: str) -> float:
        r = self.raw(rec)
        rd, wr = r["read"], r["write"]
        n = rd["ios"] + wr["ios"]
        if stat == "iops":
            return rd["iops"] + wr["iops"]
        if stat == "ios":
            return float(n)
        if stat == "read_mb_per_s":
            return rd["bw_bytes"] / 1e6
        if stat == "write_mb_per_s":
            return wr["bw_bytes"] / 1e6
        if stat == "lat_mean_us":
            return (rd["mean_ns"] * rd["ios"] + wr["mean_ns"] * wr["ios"]) / n / 1e3
        if stat == "lat_max_us":
            return max(rd["max_ns"], wr["max_ns"]) / 1e3
        if stat.startswith("p") and stat.endswith("_us"):
            bins = dict(rd["bins"])
            for k, v in wr["bins"].items():
                bins[k] = bins.get(k, 0) + v
            return min(percentile(bins, float(stat[1:-3])), max(rd["max_ns"], wr["max_ns"])) / 1e3
        raise KeyError(stat)

    def part(self, pid: str) -> dict:
        return self.summary["parts"][pid]

    def window(self, pid: str, key: str) -> list[dict]:
        p = self.part(pid)
        if p.get("steady_state") is None:  # one fixed round (the OCP tests): the cell's last step, or
            # every pair's step of a phase named without its pair ("trim": trim-1, trim-2, ...)
            last = {}
            for s in self.steps:
                base, _, n = s["key"].rpartition("-")
                if (s["test"] == p["test"] and s["part"] == p["part"] and s["phase"] == "round"
                        and (s["key"] == key or (base == key and n.isdigit()))):
                    last[s["key"]] = s
            return list(last.values())
        rounds = p["steady_state"]["window_rounds"]
        return [s for s in self.steps if s["test"] == p["test"] and s["part"] == p["part"] and s["phase"] == "round"
                and s["round"] in rounds and s["key"] == key]

    def cell(self, pid: str, key: str, stat: str) -> float:
        # the OCP tests' phase statistics (pts/ocp.STATS) are the same statistics of one step
        stat = {"mean": "lat_mean_us", "p99": "p99_us", "p999": "p99.9_us", "max": "lat_max_us"}.get(stat, stat)
        steps = self.window(pid, key)
        assert steps, f"no window steps for {pid} {key}"
        raws = [self.raw(s) for s in steps]
        if stat in ("iops", "read_mb_per_s", "write_mb_per_s", "lat_mean_us"):
            return float(np.mean([self.step_value(s, stat) for s in steps]))
        if stat == "lat_max_us":
            return max(self.step_value(s, "lat_max_us") for s in steps)
        if stat == "cpu_pct":
            return float(np.mean([r["usr"] + r["sys"] for r in raws]))
        bins: dict[int, int] = {}
        for r in raws:
            for d in ("read", "write"):
                for k, v in r[d]["bins"].items():
                    bins[k] = bins.get(k, 0) + v
        if stat == "ios":
            return float(sum(bins.values()))
        m = re.fullmatch(r"over_([0-9.]+)ms_(least|most)", stat)
        if m:
            t = int(round(float(m.group(1)) * 1e6))
            counts = []
            for r in raws:
                b: dict[int, int] = {}
                for d in ("read", "write"):
                    for k, v in r[d]["bins"].items():
                        b[k] = b.get(k, 0) + v
                counts.append(outlier_counts(b, max(r["read"]["max_ns"], r["write"]["max_ns"]), t))
            return float(sum(c[0 if m.group(2) == "least" else 1] for c in counts))
        if stat.startswith("p") and stat.endswith("_us"):
            mx = max(max(r["read"]["max_ns"], r["write"]["max_ns"]) for r in raws)
            return min(percentile(bins, float(stat[1:-3])), mx) / 1e3
        raise KeyError(stat)

    def tracking(self, pid: str, i: int) -> tuple[list[int], list[float]]:
        p = self.part(pid)
        var = p["steady_state"]["variables"][i]
        key, stat = _key_of_variable(var["variable"])
        rounds = var["rounds"]
        vals = []
        for r in rounds:
            (s,) = [s for s in self.steps if s["test"] == p["test"] and s["part"] == p["part"]
                    and s["phase"] == "round" and s["round"] == r and s["key"] == key]
            vals.append(self.step_value(s, stat))
        return rounds, vals

    def wsat(self, pid: str) -> list[tuple[dict, float]]:
        p = self.part(pid)
        recs = sorted((s for s in self.steps if s["test"] == "wsat" and s["part"] == p["part"] and s["phase"] == "round"),
                      key=lambda s: s["index"])
        written = np.cumsum([self.raw(s)["write"]["io_bytes"] for s in recs])
        return list(zip(recs, written))

    def waf(self, pid: str) -> float:
        """The drive's media writes over its host writes (both its own counters) from the snapshot
        before the part's first step to the one after its last (steps.jsonl telemetry)."""
        p = self.part(pid)
        recs = sorted((s for s in self.steps if s["test"] == p["test"] and s["part"] == p["part"]),
                      key=lambda s: s["index"])
        for media, host in (("physical_media_written_bytes", "data_written_bytes"),
                            ("nand_program_pages", "host_program_pages")):
            befores = [s["telemetry"].get("before") or {} for s in recs]
            afters = [s["telemetry"].get("after") or {} for s in recs]
            a = [x for x in befores if media in x and host in x][:1]
            b = [x for x in afters if media in x and host in x][-1:]
            if a and b:
                return (b[0][media] - a[0][media]) / (b[0][host] - a[0][host])
        raise KeyError(f"{pid}:waf")

    def model(self, pid: str, stat: str) -> float:
        """The drive model's figures that follow from the samples by arithmetic (docs/methodology.md
        "Drive model"): the steady level (the final 5 samples' mean), the steady WA from the drive's
        media and host counters over those samples, the effective spare (GC onset - 1)."""
        samples = [s for s, _ in self.wsat(pid)][-5:]
        if stat == "steady_iops":
            return float(np.mean([self.step_value(s, "iops") for s in samples]))
        if stat == "steady_wa":
            a, b = samples[0]["telemetry"]["before"], samples[-1]["telemetry"]["after"]
            return (b["physical_media_written_bytes"] - a["physical_media_written_bytes"]) / \
                (b["data_written_bytes"] - a["data_written_bytes"])
        if stat == "effective_spare":
            return self.part(pid)["model"]["gc_onset_capacity_multiple"] - 1.0
        raise KeyError(f"{pid}:model:{stat}")

    def boundaries(self, pid: str, rno: int, stat: str) -> float:
        """A round's step boundaries (docs/methodology.md "Step boundaries"), from the steps' own
        start and end times in steps.jsonl: each step against the part's step recorded before it,
        boundaries into a later session left out; idle beyond the planned idle (HIR)."""
        p = self.part(pid)
        recs = [s for s in self.steps if s["test"] == p["test"] and s["part"] == p["part"]]
        idles, recorded, overlaps, over = [], [], [], 0
        for a, b in zip(recs, recs[1:]):
            if b["phase"] != "round" or b["round"] != rno or a.get("session", 0) != b.get("session", 0):
                continue
            timeline = (float(b["start_time"]) - float(a["end_time"])) * 1000.0
            # the device's view where the run traced it: the block layer's gap (steps.jsonl "device")
            device = (b.get("device") or {}).get("gap_ms")
            gap, res = (float(device), 0.001) if device is not None else (timeline, 1.0)
            idle, overlap = round(max(gap, 0.0), 3), round(max(-gap, 0.0), 3)
            planned = round(float(a.get("planned_idle_after_s") or 0.0) * 1000.0, 3)
            qd1 = any(int(r["workload"]["threads"]) * int(r["workload"]["iodepth"]) == 1 for r in (a, b))
            allowed = 0.0 if qd1 else self.step_value(a, "lat_max_us") / 1e3
            idles.append(round(max(0.0, idle - planned), 3))
            recorded.append(round(max(0.0, max(timeline, 0.0) - planned), 3))
            overlaps.append(overlap)
            busy = device is not None and int(b["workload"]["threads"]) * int(b["workload"]["iodepth"]) == 1 \
                and int((b.get("device") or {}).get("busy_issues") or 0) > 0
            if a["phase"] != "purge":
                over += (idle - planned > 10.0 + res or (planned and idle < planned - res) or overlap > allowed + res
                         or busy)
        if stat == "boundaries":
            return float(len(idles))
        if stat == "over_limit":
            return float(over)
        if stat == "recorded_idle_worst":
            return round(float(max(recorded)), 3)
        vals = idles if stat.startswith("idle") else overlaps
        return round(float(np.median(vals) if stat.endswith("median") else max(vals)), 3)

    # ---- a reference ---------------------------------------------------------------------------
    def value(self, ref: str) -> float:
        parts = ref.split(":")
        if parts[-1] == "target_delta_pct":
            fid = parts[0]
            from ssdpts.report.datasheet import figure  # the figure's definition: which cell it is

            f = figure(fid)
            v = self.value(f"{f.part}:{f.key}:{f.stat}" if f.key else f"{f.part}:{f.stat}")
            limit = self.targets[fid]
            return 100 * (v - limit) / limit
        if len(parts) == 2 and parts[1] == "waf":
            return self.waf(parts[0])
        if len(parts) == 2 and parts[1] == "effective_spare_pct":
            return 100 * self.model(parts[0], "effective_spare")
        if len(parts) == 2:  # wsat:fob_iops / final_iops / drop_pct
            pid, stat = parts
            samples = self.wsat(pid)
            iops = [self.step_value(s, "iops") for s, _ in samples]
            fob, final = iops[0], float(np.mean(iops[-5:]))
            return {"fob_iops": fob, "final_iops": final, "drop_pct": 100 * (1 - final / fob)}[stat]
        pid, mid, stat = parts
        if mid == "model":
            return self.model(pid, stat)
        if mid.startswith("b") and mid[1:].isdigit():
            return self.boundaries(pid, int(mid[1:]), stat)
        if mid.startswith("ss"):
            rounds, vals = self.tracking(pid, int(mid[2:]))
            if stat == "average":
                return float(np.mean(vals))
            if stat == "range":
                return max(vals) - min(vals)
            if stat == "excursion":
                return abs(np.polyfit(rounds, vals, 1)[0]) * (rounds[-1] - rounds[0])
            return vals[rounds.index(int(stat[1:]))]
        if mid.startswith("m") and mid[1:].isdigit():
            minute = int(mid[1:])
            cap = self.manifest["target"]["size_bytes"]
            for s, written in self.wsat(pid):
                if s["index"] == minute:
                    if stat == "tgbw_gb":
                        return written / 1e9
                    if stat == "drive_fills":
                        return written / cap
                    return self.step_value(s, stat)
            raise KeyError(ref)
        return self.cell(pid, mid, stat)


def html_numbers(doc: str) -> list[tuple[str, float, str, str]]:
    """(table id, data-value, data-ref, class) of every table cell of the report that carries a value."""
    out = []
    for fig in re.finditer(r'<figure class="table" id="([^"]+)">(.*?)</figure>', doc, re.S):
        for td in re.finditer(r"<td([^>]*)>", fig.group(2)):
            attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', td.group(1)))
            if "data-value" in attrs:
                out.append((fig.group(1), float(attrs["data-value"]), html.unescape(attrs.get("data-ref", "")),
                            attrs.get("class", "")))
    return out
