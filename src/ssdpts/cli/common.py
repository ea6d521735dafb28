"""Options shared by run, plan and demo, and the steps from parsed options to a validated run."""

from __future__ import annotations

import argparse

from ssdpts.run.cpus import check_list
from ssdpts.run.request import check_path
from ..errors import UserError
from ..pts.runspec import (CHOICES, HIR_BURSTS, LATMON_MS, OCP_JUDGED, OCP_LIMIT_PCT, OCP_PAIRS, OCP_PROBE_GAP_MS,
                           OCP_TRIM_MIB_S_PER_TB, OP_MID_RULES, OUTLIER_MS, PRECONDITIONS, PTS_STEP_SECONDS,
                           WSAT_PATTERNS, XSR_RECOVERY_RULES, XSR_RECOVERY_TOLERANCE_PCT,
                           RunSpec)
from ..pts.units import parse_size


def add_run_options(p: argparse.ArgumentParser, *, target_required: bool = True, many: bool = False,
                    fio_path: bool = True) -> None:
    """``many``: --target and --destroy-data-on repeat (``ssdpts run`` on several devices at once);
    ``fio_path``: --fio PATH chooses the fio (``ssdpts plan`` has its own --fio, and previews with
    the fio a run would choose without one)."""
    if target_required:
        p.add_argument("tests", nargs="+", metavar="TEST", help=f"tests to run: {CHOICES}")
        if many:
            p.add_argument("--target", action="append", metavar="PATH",
                           help="block device (e.g. /dev/nvme0n1) or file to test; files are created by ssdpts; "
                                "repeat it to test several devices at the same time, each its own run")
        else:
            p.add_argument("--target", required=True, metavar="PATH",
                           help="block device (e.g. /dev/nvme0n1) or file to test; files are created by ssdpts")
    g = p.add_argument_group("PTS parameters")
    g.add_argument("--profile", choices=("enterprise", "client"), default="enterprise",
                   help="PTS 2.0.2 parameter set (default: enterprise: WCD, AR 100%%, TC4/QD32; client: WCE, AR 75%%, TC2/QD16)")
    g.add_argument("--threads", type=int, metavar="TC", help="thread count TC for IOPS and WSAT (default: profile's)")
    g.add_argument("--iodepth", type=int, metavar="QD", help="outstanding IOs per thread QD (default: profile's)")
    g.add_argument("--active-range", type=float, metavar="PCT", help="active range, %% of the target's LBAs (default: profile's)")
    g.add_argument("--step-seconds", type=float, default=PTS_STEP_SECONDS, metavar="S",
                   help="length of one PTS step in seconds (default: 60, the PTS minute; anything else is a "
                        "time-compressed run, marked not PTS compliant)")
    g.add_argument("--max-rounds", type=int, default=25, metavar="N", help="rounds before giving up on steady state (default: 25)")
    g.add_argument("--wsat-hours", type=float, default=24.0, metavar="H",
                   help="WSAT length in hours of PTS minutes, i.e. H x 60 steps (default: 24)")
    g.add_argument("--wsat-capacity-multiple", type=float, default=4.0, metavar="X",
                   help="WSAT stops after X x user capacity written (default: 4)")
    _precondition_option(g)
    g.add_argument("--pts-version", choices=("2.0.2", "1.1"), default="2.0.2",
                   help="2.0.2: IOPS tracks three variables; 1.1: RND 4KiB write only (default: 2.0.2)")
    g.add_argument("--seed", type=int, default=RunSpec.__dataclass_fields__["seed"].default,
                   help="base seed of fio's random LBAs and data (recorded; default: %(default)s)")
    g.add_argument("--wsat-pattern", choices=WSAT_PATTERNS, default="rnd4k-w",
                   help="WSAT access pattern (PTS 2.0 options; default: rnd4k-w, RND 4KiB 0/100)")
    g.add_argument("--ar-segments", type=int, default=0, metavar="N",
                   help="client: spread the test active range over N random, non-adjacent segments (PTS-C: 2048; "
                        "fio can hold at most 100 equal ones, see docs/methodology.md; default: off)")
    g.add_argument("--ar-amount", metavar="SIZE", help="client: the test active range amount the segments hold "
                   "(PTS-C 1.x: 8G or 16G; default: the whole active range)")
    _outlier_option(g)
    g.add_argument("--latmon-ms", default=",".join(map(str, LATMON_MS)), metavar="A,B,C,D|off",
                   help="OCP latency monitor (NVMe drives with log page C3h; docs/ocp.md): set these four thresholds "
                        "(ms, 5-ms steps) before each test and report the drive's bucket counts and worst latencies "
                        "after it; the configuration found is set again at the end (default: %(default)s; off: not "
                        "used)")
    x = p.add_argument_group("extended tests (HIR, XSR, CBW/ECW, DIRTH; [?] = not confirmed by a source, disclosed)")
    x.add_argument("--hir-bursts", type=int, default=HIR_BURSTS, metavar="N",
                   help=f"HIR: 5-s write bursts per wait state and 5-s samples per return to baseline (default: {HIR_BURSTS})")
    x.add_argument("--xsr-minutes", default="480,360,480", metavar="G1,G2,G3",
                   help="XSR: PTS minutes of the SEQ 1024KiB W, RND 8KiB W and SEQ 1024KiB W groups (default: 480,360,480)")
    x.add_argument("--xsr-recovery", choices=XSR_RECOVERY_RULES, default="g1-mean",
                   help="XSR [?]: group 3 has recovered at its first minute at G1's mean MB/s (g1-mean, default) or at "
                        "the mean of G1's last 5 minutes (g1-final)")
    x.add_argument("--xsr-recovery-tolerance", type=float, default=XSR_RECOVERY_TOLERANCE_PCT, metavar="PCT",
                   help=f"XSR [?]: a G3 minute within PCT %% below the recovery level counts as recovered "
                        f"(default: {XSR_RECOVERY_TOLERANCE_PCT:g})")
    x.add_argument("--op-ceiling-ms", type=float, default=5.0, metavar="MS",
                   help="CBW/DIRTH [?]: Max operating point = highest IOPS with mean response time below this (default: 5)")
    x.add_argument("--op-mid", choices=OP_MID_RULES, default="iops-midpoint",
                   help="CBW/DIRTH [?]: Mid operating point = IOPS nearest (Max+Min)/2 (iops-midpoint, default) or TOIO "
                        "nearest the geometric middle (toio-midpoint)")
    x.add_argument("--dirth-block-size", default="8K", metavar="SIZE", help="DIRTH [?]: RND block size, 512..64K (default: 8K)")
    x.add_argument("--dirth-read-pct", type=int, default=65, metavar="PCT", help="DIRTH [?]: read percentage (default: 65)")
    _ocp_options(p)
    e = p.add_argument_group("engine and safety")
    e.add_argument("--ioengine", default=None, help="fio ioengine (default: io_uring where the kernel has it, else libaio)")
    e.add_argument("--purge", default="auto", metavar="auto|none|METHOD", action=PurgeOption)
    if fio_path:
        fio_option(e)
    e.add_argument("--cpus", metavar="LIST", default="",
                   help="pin fio to these CPUs, e.g. 0-3 (fio cpus_allowed; default: any)")
    e.add_argument("--realtime", action="store_true",
                   help="run ssdpts's schedule and fio at real-time priority (SCHED_FIFO 1) while the tests run, so a "
                        "busy host cannot stretch the idle between steps (docs/methodology.md); a CPU-bound fio "
                        "then leaves the rest of the host 5%% of the CPUs")
    add_run_directory_options(e, many=many)


def _precondition_option(g) -> None:
    g.add_argument("--precondition", default="pts", metavar="pts|sprandom[:OP]",
                   help="pts: the PTS's preconditioning (default); sprandom: one physical fill by fio's sprandom in "
                        "place of the WIPC (fio 3.41: make fio), OP the drive's over-provisioning as a fraction "
                        "(0.07) or a percentage (7%%), else from the drive model of an earlier WSAT of the drive; "
                        "not PTS compliant (docs/methodology.md#preconditioning-by-sprandom)")


def fio_option(p) -> None:
    """--fio PATH: the fio a command runs (engine/fiobin.py)."""
    p.add_argument("--fio", dest="fio_path", metavar="PATH",
                   help="the fio to run (default: the one 'make fio' built in build/fio/bin/fio, else the "
                        "system's; 'ssdpts doctor' names it; docs/methodology.md#fio)")


def _ocp_options(p: argparse.ArgumentParser) -> None:
    o = p.add_argument_group("OCP tests (ocp-trim: TRIM-6, ocp-idle-gc: TRIM-7 of the OCP Datacenter NVMe SSD "
                             "Specification 2.0, section 4.10; docs/ocp.md gives each default's source)")
    o.add_argument("--ocp-limit", type=float, default=OCP_LIMIT_PCT, metavar="PCT",
                   help="largest change, up or down, of the judged read latency statistics against the baseline "
                        f"(default: {OCP_LIMIT_PCT:g}, TRIM-6/7: \"shall not change more than 5%% from baseline\"); "
                        "pass when the change's 95%% interval over the pairs lies within it, fail when it lies "
                        "outside, inconclusive when it straddles it")
    o.add_argument("--ocp-judge", default=",".join(OCP_JUDGED), metavar="STAT[,STAT...]",
                   help="the statistics held to --ocp-limit: mean, p99, p99.9, max (default: "
                        f"{','.join(OCP_JUDGED)}; the others are reported)")
    o.add_argument("--ocp-pairs", type=int, default=OCP_PAIRS, metavar="N",
                   help="baseline and interference phases alternate N times; the change's uncertainty comes from the "
                        f"pairs' spread (default: {OCP_PAIRS}, at least 2)")
    o.add_argument("--ocp-read-s", type=float, default=60.0, metavar="S",
                   help="seconds of QD1 reads per phase, before time compression (default: 60)")
    o.add_argument("--ocp-trim-size", default="1M", metavar="SIZE",
                   help="ocp-trim: size of each deallocated range (default: 1M; 64M or 3G: the large trims of OCP "
                        "2.0 A.3)")
    o.add_argument("--ocp-trim-rate", type=float, default=None, metavar="N",
                   help="ocp-trim: deallocations a second, 0 = as fast as the drive takes them (default: from the "
                        "capacity as OCP 2.0 A.2.1 gives it: --ocp-trim-mib-s-per-tb MiB/s x capacity / 10^12 bytes, in "
                        "ranges of --ocp-trim-size, at least 1 a second)")
    o.add_argument("--ocp-trim-mib-s-per-tb", type=float, default=OCP_TRIM_MIB_S_PER_TB, metavar="MIBS",
                   help=f"ocp-trim: deallocation bandwidth per TB of capacity (default: {OCP_TRIM_MIB_S_PER_TB:g}, "
                        "OCP 2.0 A.2.1 \"TRIM BW per TB\" of 4K_L2R6DWPD_wTRIM; 156 is 4K_L2R9DWPD_wTRIM's)")
    o.add_argument("--ocp-burst-s", type=float, default=60.0, metavar="S",
                   help="ocp-idle-gc: seconds of the random-write burst, before time compression (default: 60)")
    o.add_argument("--ocp-probe-gap-ms", type=float, default=OCP_PROBE_GAP_MS, metavar="MS",
                   help="ocp-idle-gc: after the burst the drive gets no host IO but sparse probe reads, this many ms "
                        f"apart (no IO in between; real time, not compressed; default: {OCP_PROBE_GAP_MS:g}); the "
                        "report gives the probes' duty cycle")
    o.add_argument("--ocp-settle-s", type=float, default=60.0, metavar="S",
                   help="seconds with no IO before the first baseline and after each interference phase, before "
                        "time compression (default: 60)")


def _outlier_option(g) -> None:
    g.add_argument("--outlier-ms", default=",".join(f"{t:g}" for t in OUTLIER_MS), metavar="MS[,MS...]",
                   help="latency outliers: count the IOs slower than each of these response times (ms, up to 4; "
                        "default: %(default)s, OCP Datacenter NVMe SSD 2.0 Appendix A.4's outlier limits; docs/report.md)")


def add_run_directory_options(p, *, many: bool = False) -> None:
    """The options of every command that writes to a target and keeps a run directory (run, quick,
    trace replay): the destruction confirmation, a file target's size, the description, --out."""
    p.add_argument("--destroy-data-on", metavar="SERIAL_OR_PATH", action="append" if many else "store",
                   help="confirm that every byte on the target may be destroyed: its serial number or path"
                        + ("; once per target when there are several" if many else ""))
    p.add_argument("--size", metavar="SIZE", help="size of a file target to create, e.g. 4G (files only)")
    p.add_argument("--describe", metavar="FILE",
                   help="TOML or JSON file with what no tool can read (NAND type, channels, DRAM, sponsor, notes); stored with the run")
    p.add_argument("--out", default="ssdpts-runs", metavar="DIR", help="where run directories go (default: ./ssdpts-runs)")


class PurgeOption(argparse.Action):
    """--purge NAME, whose help names every method of the purge registry (device/purge/registry.py),
    read only when the help is shown: importing the registry would slow every command's start by 70 ms."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)

    @property
    def help(self) -> str:
        from ..device.purge.registry import method_names

        return ("purge before each test (default: auto = the strongest method the device supports; 'ssdpts plan' "
                "names those of the device). METHOD: " + ", ".join(m for m in method_names() if m not in ("auto", "none")))

    @help.setter
    def help(self, _value) -> None:  # argparse sets it; the text above is the registry's
        pass


def _size(option: str, text: str | None) -> int:
    if not text:
        return 0
    try:
        return parse_size(text)
    except ValueError as exc:
        raise UserError(f"{option}: {exc}") from None


def _minutes(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.replace(" ", "").split(","))
    except ValueError:
        raise UserError(f"--xsr-minutes {text!r} is not three whole numbers: give e.g. 480,360,480") from None


def _thresholds(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise UserError(f"--outlier-ms {text!r} is not a list of numbers: give e.g. 10,15") from None


def _latmon(text: str) -> tuple[int, ...]:
    if text.strip().lower() in ("off", "none", ""):
        return ()
    try:
        return tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise UserError(f"--latmon-ms {text!r} is not four whole numbers of ms: give e.g. 10,15,30,100, or off") from None


def _judged(text: str | None) -> tuple[str, ...]:
    """--ocp-judge: statistic names as the report labels them (p99.9) or as the tables key them (p999)."""
    if text is None:
        return OCP_JUDGED
    return tuple("p999" if x == "p99.9" else x for x in text.replace(" ", "").lower().split(",") if x)


def parse_precondition(text: str | None) -> tuple[str, float | None]:
    """--precondition: ("pts", None), ("sprandom", None: OP from an earlier WSAT's drive model) or
    ("sprandom", OP), OP given as a fraction in (0, 1) (0.07) or a percentage in (0, 100) (7%)."""
    raw = (text or "pts").strip()
    method, sep, op_text = raw.partition(":")
    method = method.strip().lower()
    how = ("give pts, sprandom, or sprandom:OP with OP the drive's over-provisioning as a fraction (sprandom:0.07) "
           "or a percentage (sprandom:7%) (docs/methodology.md#preconditioning-by-sprandom)")
    if method not in PRECONDITIONS or (sep and method != "sprandom"):
        raise UserError(f"--precondition {raw!r} is not known: {how}")
    if not sep:
        return method, None
    op_text = op_text.strip()
    pct = op_text.endswith("%")
    try:
        op = float(op_text[:-1] if pct else op_text) / (100.0 if pct else 1.0)
    except ValueError:
        raise UserError(f"--precondition {raw!r}: OP {op_text!r} is not a number: {how}") from None
    if not 0 < op < 1:
        raise UserError(f"--precondition {raw!r}: OP {op_text} is out of range: {how}")
    return method, op


def build_spec(args: argparse.Namespace, tests: tuple[str, ...], cpus: str) -> RunSpec:
    """The RunSpec the options ask for (``cpus``: --cpus, or this device's share of --cpus-per-device)."""
    from ..engine.fio import default_ioengine

    method, op = parse_precondition(getattr(args, "precondition", None))
    return RunSpec(precondition=method, spr_op=op, spr_op_source="given by --precondition" if op is not None else "",
        tests=tests, profile=args.profile, threads=args.threads, iodepth=args.iodepth,
        active_range_pct=args.active_range, step_seconds=args.step_seconds, max_rounds=args.max_rounds,
        wsat_hours=args.wsat_hours, wsat_capacity_multiple=args.wsat_capacity_multiple,
        ioengine=args.ioengine or default_ioengine(), purge=args.purge, pts_version=args.pts_version, seed=args.seed,
        hir_bursts=args.hir_bursts, xsr_minutes=_minutes(args.xsr_minutes), xsr_recovery=args.xsr_recovery,
        xsr_recovery_tolerance_pct=args.xsr_recovery_tolerance,
        op_ceiling_ms=args.op_ceiling_ms, op_mid=args.op_mid,
        dirth_block_size=_size("--dirth-block-size", args.dirth_block_size), dirth_read_pct=args.dirth_read_pct,
        wsat_pattern=args.wsat_pattern, ar_segments=args.ar_segments,
        ar_amount_bytes=_size("--ar-amount", args.ar_amount), cpus=check_list(cpus) if cpus else "",
        realtime=bool(getattr(args, "realtime", False)),
        ocp_limit_pct=args.ocp_limit, ocp_judge=_judged(getattr(args, "ocp_judge", None)), ocp_read_s=args.ocp_read_s, ocp_trim_size=_size("--ocp-trim-size", args.ocp_trim_size),
        ocp_trim_rate=args.ocp_trim_rate, ocp_burst_s=args.ocp_burst_s, ocp_settle_s=args.ocp_settle_s,
        ocp_pairs=args.ocp_pairs, ocp_trim_mib_s_per_tb=args.ocp_trim_mib_s_per_tb,
        ocp_probe_gap_ms=args.ocp_probe_gap_ms,
        outlier_ms=_thresholds(getattr(args, "outlier_ms", "") or ",".join(map(str, OUTLIER_MS))),
        latmon_ms=_latmon(getattr(args, "latmon_ms", None) or ",".join(map(str, LATMON_MS))),
    )


def size_option(args: argparse.Namespace) -> int | None:
    """--size in bytes (None when not given)."""
    if getattr(args, "size", None) is None:
        return None
    try:
        return parse_size(args.size)
    except ValueError as exc:
        raise UserError(f"--size: {exc}") from None


# The path options of the commands that make a run, as the messages name them. Those in FIO_PATHS
# reach fio's job file (the target's name; the run directory, where a replay's read_iolog and the job
# files lie); the others reach the run directory's records and messages only.
PATH_OPTIONS = {"target": "--target", "out": "--out", "describe": "--describe", "trace": "--trace",
                "targets_from": "--targets-from", "device": "--device"}
FIO_PATHS = ("target", "out")


def check_paths(args: argparse.Namespace, labels: dict[str, str] | None = None,
                fio: tuple[str, ...] = FIO_PATHS) -> None:
    """Every path option of a command that makes a run (PATH_OPTIONS; ``labels``: other names for
    them), checked by :func:`check_path` before anything is opened or written, those in ``fio`` as
    values of fio's job file, --out among them also as the absolute path the run directory gets
    (the current directory is part of it). A target is checked again as opened
    (:func:`open_target_option`: symbolic links followed, or as its host resolved it). An empty
    --out where run directories go is refused first."""
    import os

    out = getattr(args, "out", None)
    if "out" in fio and isinstance(out, str) and not out.strip():
        raise UserError("--out is empty: give the directory where run directories go (default: ./ssdpts-runs)")

    names = {**PATH_OPTIONS, **(labels or {})}
    for dest, label in names.items():
        value = getattr(args, dest, None)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str):
                resolved = os.path.abspath(v) if dest == "out" and dest in fio and v.strip() else None
                check_path(label, v, fio=dest in fio, resolved=resolved)


def open_target_option(args: argparse.Namespace, target=None):
    """--target (or TARGET) and --size: the target and the size of a file to create (None).
    ``target``: the target already opened where it is (a device on another host, device/remote/remote.py)."""
    from ssdpts.run.launch import open_target_at

    size = size_option(args)
    return open_target_at(args.target, size, target), size
