"""Every run 'ssdpts status' sees, as metrics a lab's dashboards scrape (docs/status.md "Live
metrics"): the Prometheus text format or OpenMetrics, written once, kept current in a file for
node_exporter's textfile collector, or served on /metrics.

prometheus_client (the Prometheus project's own Python client) writes the formats, the file (whole
or not at all) and the HTTP server; this module only says what each run's numbers are. Every
series of a run carries the labels ``run`` (its directory's name), ``run_id`` (the id the results
library gives it), ``host``, ``device`` (the target's path) and ``serial``.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
import time
from typing import TYPE_CHECKING, Any, Iterable

from ssdpts.results.records import Live
from ssdpts.store import LIVE

if TYPE_CHECKING:
    from ssdpts.status import RunStatus

STATES = ("running", "interrupted", "failed", "complete", "damaged")
LABELS = ("run", "run_id", "host", "device", "serial")
RANGE_LIMIT, EXCURSION_LIMIT = 0.20, 0.10  # PTS 2.0.2 §2.1.24 (docs/pts-reference.md#steady-state)
LIVE_FRESH_S = 10.0  # a live sample older than this is not shown: the run stopped measuring


@dataclass
class _Family:
    name: str
    help: str
    unit: str = ""
    labels: tuple[str, ...] = ()


FAMILIES = {f.name: f for f in (
    _Family("ssdpts_run_info", "a run 'ssdpts status' sees (value 1): its kind, tests and device model",
            labels=("kind", "tests", "model")),
    _Family("ssdpts_run_state", "1 for the run's state, 0 for the others", labels=("state",)),
    _Family("ssdpts_run_alive", "1 while a process holds the run's lock"),
    _Family("ssdpts_run_elapsed_seconds", "time since the run started (to its end once it ended)", "seconds"),
    _Family("ssdpts_run_left_seconds", "time left at the run's pace: soonest (steady state at the first "
            "window) and latest (every round allowed)", "seconds", ("bound",)),
    _Family("ssdpts_run_parts_done", "parts of the run finished"),
    _Family("ssdpts_run_parts", "parts of the run"),
    _Family("ssdpts_run_round", "round in progress (WSAT: sample)", labels=("part",)),
    _Family("ssdpts_run_step", "step of the round in progress, 1-based", labels=("part",)),
    _Family("ssdpts_run_steps_in_round", "steps of the round in progress", labels=("part",)),
    _Family("ssdpts_tracking_value", "a steady-state tracking variable's value in the last round",
            labels=("part", "variable", "unit")),
    _Family("ssdpts_tracking_range_ratio", "range of the tracking variable over the last 5 rounds, a fraction "
            "of their average (steady when at most ssdpts_tracking_range_limit_ratio)", labels=("part", "variable")),
    _Family("ssdpts_tracking_range_limit_ratio", "the PTS's limit on the range (PTS 2.0.2 §2.1.24)",
            labels=("part", "variable")),
    _Family("ssdpts_tracking_excursion_ratio", "excursion of the best-fit line over the last 5 rounds, a "
            "fraction of their average", labels=("part", "variable")),
    _Family("ssdpts_tracking_excursion_limit_ratio", "the PTS's limit on the slope's excursion (PTS 2.0.2 §2.1.24)",
            labels=("part", "variable")),
    _Family("ssdpts_tracking_steady", "1 when the last 5 rounds pass both steady-state tests, 0 when not "
            "(absent before 5 rounds)", labels=("part", "variable")),
    _Family("ssdpts_live_iops", "IOPS of the step in flight over the last second", labels=("part",)),
    _Family("ssdpts_live_bytes_per_second", "bytes per second of the step in flight over the last second",
            "bytes_per_second", ("part",)),
)}


def _run_labels(st: RunStatus) -> dict[str, str]:
    return {"run": st.name, "run_id": st.run_id or "", "host": st.host or "", "device": st.target or "",
            "serial": st.serial or ""}


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def samples(runs: Iterable[RunStatus], *, now: float | None = None) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Each family's samples (labels, value) for ``runs`` (status.scan)."""
    now = time.time() if now is None else now
    out: dict[str, list[tuple[dict[str, str], float]]] = {n: [] for n in FAMILIES}

    def put(name: str, base: dict[str, str], value: float | int | bool | None, **labels: str) -> None:
        if value is not None:
            out[name].append(({**base, **labels}, float(value)))

    for st in runs:
        base = _run_labels(st)
        put("ssdpts_run_info", base, 1, kind=st.kind, tests=",".join(st.tests), model=st.model or "")
        for state in STATES:
            put("ssdpts_run_state", base, st.state == state, state=state)
        put("ssdpts_run_alive", base, bool(st.alive))
        put("ssdpts_run_elapsed_seconds", base, st.elapsed_s)
        if st.eta_s is not None:
            put("ssdpts_run_left_seconds", base, st.eta_s[0], bound="soonest")
            put("ssdpts_run_left_seconds", base, st.eta_s[1], bound="latest")
        put("ssdpts_run_parts_done", base, st.parts_done)
        put("ssdpts_run_parts", base, st.parts_total)
        part = st.part_id or ""
        if st.state == "running":
            put("ssdpts_run_round", base, st.round, part=part)
            put("ssdpts_run_step", base, st.step, part=part)
            put("ssdpts_run_steps_in_round", base, st.steps_in_round, part=part)
        for t in st.tracking:
            put("ssdpts_tracking_value", base, t.value, part=part, variable=t.name, unit=t.unit)
            if t.range_pct is not None:
                put("ssdpts_tracking_range_ratio", base, t.range_pct / 100, part=part, variable=t.name)
                put("ssdpts_tracking_range_limit_ratio", base, RANGE_LIMIT, part=part, variable=t.name)
            if t.excursion_pct is not None:
                put("ssdpts_tracking_excursion_ratio", base, t.excursion_pct / 100, part=part, variable=t.name)
                put("ssdpts_tracking_excursion_limit_ratio", base, EXCURSION_LIMIT, part=part, variable=t.name)
            if t.reached is not None:
                put("ssdpts_tracking_steady", base, t.reached, part=part, variable=t.name)
        doc = _read(Path(st.path) / LIVE) if st.state == "running" else {}
        live = Live.from_dict(doc)
        if doc and now - live.t_unix_s <= LIVE_FRESH_S:
            put("ssdpts_live_iops", base, live.iops, part=live.part or part)
            put("ssdpts_live_bytes_per_second", base, live.bw_bytes_per_s, part=live.part or part)
    return out


class Collector:
    """A prometheus_client collector: every run under ``dirs`` as status reads them, at each scrape."""

    def __init__(self, dirs: list[str]):
        self.dirs = dirs

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        from ssdpts.status import scan

        got = samples(scan(self.dirs))
        for name, fam in FAMILIES.items():
            g = GaugeMetricFamily(name, fam.help, labels=(*LABELS, *fam.labels), unit=fam.unit)
            for labels, value in got[name]:
                g.add_metric([labels.get(k, "") for k in (*LABELS, *fam.labels)], value)
            yield g

    def describe(self):
        return []  # collected at each scrape: no fixed series to announce


def registry(dirs: list[str]):
    from prometheus_client import CollectorRegistry

    reg = CollectorRegistry(auto_describe=False)
    reg.register(Collector(dirs))
    return reg


def exposition(dirs: list[str], *, openmetrics: bool = True) -> bytes:
    """The metrics as OpenMetrics text (or, ``openmetrics=False``, the Prometheus text format 0.0.4)."""
    if openmetrics:
        from prometheus_client.openmetrics.exposition import generate_latest
    else:
        from prometheus_client import generate_latest
    return generate_latest(registry(dirs))


def write_textfile(path: str, dirs: list[str]) -> None:
    """The file node_exporter's textfile collector reads (Prometheus text format), replaced whole."""
    from prometheus_client import write_to_textfile

    write_to_textfile(path, registry(dirs))


def serve(address: str, dirs: list[str]) -> tuple[Any, Any]:
    """Answer /metrics on ADDR:PORT (each scrape reads the runs afresh); returns the server and its thread."""
    from prometheus_client import start_http_server

    host, _, port = address.rpartition(":")
    return start_http_server(int(port), addr=host or "0.0.0.0", registry=registry(dirs))
