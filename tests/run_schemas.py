"""A run directory against the JSON Schemas of its files (schemas/*.schema.json, draft 2020-12):
manifest.json, every line of steps.jsonl, summary.json, and quick.json or replay.json where the run
has one. Shared by the schema tests and the integration tests that make real runs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

SCHEMAS = Path(__file__).parents[1] / "schemas"
FILES = {"manifest.json": "manifest", "summary.json": "summary", "quick.json": "quick", "replay.json": "replay"}


def validators() -> dict:
    import jsonschema

    out = {}
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        out[path.name.removesuffix(".schema.json")] = jsonschema.Draft202012Validator(schema)
    return out


def run_documents(run: Path) -> list[tuple[str, str, object]]:
    """(schema name, where, document) for each file of a run directory that has a schema."""
    docs: list[tuple[str, str, object]] = [(schema, name, json.loads((run / name).read_text(encoding="utf-8")))
                                           for name, schema in FILES.items() if (run / name).exists()]
    steps = run / "steps.jsonl"
    text = steps.read_text(encoding="utf-8") if steps.exists() else \
        gzip.decompress((run / "steps.jsonl.gz").read_bytes()).decode() if (run / "steps.jsonl.gz").exists() else ""
    docs += [("step", f"steps.jsonl:{n}", json.loads(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    return docs


def schema_errors(docs: list[tuple[str, str, object]], checks: dict | None = None) -> list[str]:
    checks = checks or validators()
    return [f"{where}{err.json_path.removeprefix('$')}: {err.message[:200]}"
            for schema, where, doc in docs for err in checks[schema].iter_errors(doc)]


def assert_run_matches_schemas(run: Path) -> None:
    docs = run_documents(run)
    names = {schema for schema, _, _ in docs}
    # a PTS run: manifest, steps and summary; a quick or replay run: manifest and its figures file
    assert "manifest" in names and ({"summary", "step"} <= names or names & {"quick", "replay"}), f"{run}: files missing"
    errors = schema_errors(docs)
    assert not errors, f"{run} against schemas/: " + "; ".join(errors[:20])
