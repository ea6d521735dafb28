"""ssdpts verify RUN_DIR...: check run directories against what was recorded as each was written:
every raw file's size and SHA-256, each round's step lines, every step recomputed from fio's output,
the summary from the steps, each field of manifest.json against its digest, a complete run's rounds
against its stop rules; the seal, with the lab's key; and what the results library recorded when it
added the run. Reads only. Exit 0 when every run is intact, 1 when one is damaged, 2 when one is not
a run. See docs/results-format.md "Integrity records"."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="check run directories for missing, truncated, altered or edited files",
                       description=__doc__)
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories made by 'ssdpts run'")
    p.add_argument("--json", action="store_true", help="print the result as JSON (one object per run)")
    p.add_argument("--seal-key", metavar="FILE",
                   help="the lab's seal key to check seals with (default: the file $SSDPTS_SEAL_KEY names)")
    p.add_argument("--require-seal", action="store_true",
                   help="a run not sealed with the key is damaged (a lab that seals every run: an unsealed "
                        "copy cannot be told from an edited one)")
    p.add_argument("--db", metavar="PATH",
                   help="the results library to compare with (default: $SSDPTS_DB, else "
                        "$XDG_DATA_HOME/ssdpts/results.db, else ~/.local/share/ssdpts/results.db, when it exists)")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from ..errors import UserError
    from ..library.db import compare_with_library
    from ..results import seal
    from ..results.verify import integrity

    key = seal.load_key(args.seal_key, "--seal-key") if args.seal_key else seal.configured_key()
    if args.require_seal and key is None:
        raise UserError(f"--require-seal needs the key: give --seal-key FILE or set {seal.ENV_KEY}")
    results = []
    for d in args.run_dirs:
        res = integrity.check(d, key=key)
        if args.require_seal and (res.seal_check is None or res.seal_check.state != "sealed"):
            state = res.seal_check.text if res.seal_check else "made before integrity records: not sealed"
            res.problems.append(integrity.Problem("manifest.json", f"is not sealed with the key given ({state})",
                                                  "--require-seal: an unsealed run cannot be told from an edited copy"))
        problems, note = compare_with_library(res, args.db)
        res.problems += problems
        if note:
            res.notes.append(note)
        results.append(res)
    for res in results:
        if args.json:
            print(integrity.to_json(res))
            continue
        print(res.summary_line())
        for p in res.problems:
            print(f"  {p.line()}")
        for note in res.notes:
            print(f"  note: {note}")
    return 0 if all(r.intact for r in results) else 1
