"""Case files and their schemas: loading, and the checks a development set must pass.

A case file is JSON Lines, one case per line:

    {"id": "person-01", "schema": "person", "prompt": "...", "expected": {...}}
    {"id": "person-05-absent", "schema": "person", "prompt": "...", "expected": null, "absent": "age"}
    {"id": "records-01", "schema": "person", "records": true, "prompt": "...", "expected": [{...}, ...],
     "incomplete": 1}

A records case (`structure --records`) expects the list of every complete record the text holds;
`incomplete` counts the records it gives without a required value (listed apart, never in `data`).

A document case file (Kleister-NDA: a line with `text` and an `expected` object of lists, no
`schema`) is read as cases on the `nda` schema, marked `document` (see documents.py).

`schema` names `<schemas dir>/<name>.json`, or else a schema in `structure`'s registry (the
bundled ones live in the repository's `schemas/`). A case with `absent` lacks the value of that
required field (a property name or a JSON pointer): the right outcome is `need-more-input`.
"""

from __future__ import annotations

import json
import pathlib
from collections import Counter
from typing import Any, Callable

from .documents import KEYS, document_case, is_document_line
from .scoring import absent_pointer, pointer_tokens

REPO = pathlib.Path(__file__).resolve().parents[2]
EVAL = REPO / "eval"
DEFAULT_CASES = EVAL / "cases" / "dev.jsonl"
DEFAULT_SCHEMAS = EVAL / "schemas"
BUNDLED = REPO / "schemas"


def load_cases(path: pathlib.Path) -> list[dict]:
    cases = []
    for number, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON: {error}") from None
        cases.append(document_case(raw) if is_document_line(raw) else raw)
    return cases


def schema_file(name: str, schemas_dir: pathlib.Path) -> pathlib.Path | None:
    """The file holding schema `name`: the case set's own, else a bundled one."""
    for candidate in (pathlib.Path(schemas_dir) / f"{name}.json", BUNDLED / f"{name}.json"):
        if candidate.is_file():
            return candidate
    return None


def load_schema(name: str, schemas_dir: pathlib.Path, lookup: Callable[[str], Any] | None = None) -> Any:
    """Schema `name` as JSON; `lookup` asks `structure`'s registry for names without a file."""
    path = schema_file(name, schemas_dir)
    if path is not None:
        return json.loads(path.read_text())
    if lookup is not None:
        return lookup(name)
    raise FileNotFoundError(f"schema {name!r}: no {name}.json in {schemas_dir} or {BUNDLED}")


def schema_validator(schema: Any):
    """A `jsonschema` validator for `schema` in its own draft, formats asserted (imported here:
    the scorer's unit tests run without the venv)."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def violations(schema: Any, instance: Any) -> list[str]:
    """The messages of every way `instance` breaks `schema`."""
    return [error.message for error in schema_validator(schema).iter_errors(instance)]


def required_path(schema: dict, pointer: str) -> bool:
    """Whether every step of `pointer` names a required property (so its absence means the text
    cannot be turned into a valid object)."""
    sub = schema
    for part in pointer_tokens(pointer):
        if part not in sub.get("properties", {}) or part not in sub.get("required", []):
            return False
        sub = sub["properties"][part]
    return True


def _opening(prompt: Any) -> Any:
    """A prompt as a problem quotes it: a document's text runs to pages, its start says which."""
    return prompt[:80] + "…" if isinstance(prompt, str) and len(prompt) > 80 else prompt


def check_cases(cases: list[dict], schemas: dict[str, Any], validate: Callable[[Any, Any], list[str]] | None = None) -> list[str]:
    """Problems of a case set (empty when it is fine). `validate(schema, instance)` returns the
    violations of an instance; without it expected objects are not validated."""
    problems = []
    ids = Counter(c.get("id") for c in cases)
    problems += [f"duplicate id {i!r}" for i, n in ids.items() if n > 1]
    prompts = Counter(c.get("prompt") for c in cases)
    problems += [f"duplicate prompt {_opening(p)!r}" for p, n in prompts.items() if n > 1]
    documents = sum(bool(c.get("document")) for c in cases)
    if 0 < documents < len(cases):
        problems.append(f"{documents} document cases mixed with {len(cases) - documents} others: "
                        "they are scored apart, so run them as a set of their own")
    for case in cases:
        cid = case.get("id", "<no id>")
        allowed = {"id", "schema", "prompt", "expected", "absent", "note", "records", "incomplete", "document", "file"}
        if set(case) - allowed:
            problems.append(f"{cid}: unknown keys {sorted(set(case) - allowed)}")
        schema = schemas.get(case.get("schema"))
        if schema is None:
            problems.append(f"{cid}: unknown schema {case.get('schema')!r}")
            continue
        if not isinstance(case.get("prompt"), str) or not case["prompt"].strip():
            problems.append(f"{cid}: empty prompt")
        if case.get("document"):
            problems += _document_problems(cid, case["expected"])
            continue
        if case.get("records"):
            expected = case.get("expected")
            if not isinstance(expected, list) or not all(isinstance(r, dict) for r in expected):
                problems.append(f"{cid}: a records case needs an expected list of objects")
            elif validate is not None:
                problems += [f"{cid}: expected record {i} is invalid: {v}"
                             for i, record in enumerate(expected) for v in validate(schema, record)]
            continue
        if "absent" in case:
            if case.get("expected") is not None:
                problems.append(f"{cid}: a case with 'absent' has expected null")
            if not required_path(schema, absent_pointer(case["absent"])):
                problems.append(f"{cid}: absent {case['absent']!r} is not a required field")
        elif not isinstance(case.get("expected"), dict):
            problems.append(f"{cid}: a complete case needs an expected object")
        elif validate is not None:
            problems += [f"{cid}: expected is invalid: {v}" for v in validate(schema, case["expected"])]
    return problems


def _document_problems(cid: str, expected: dict) -> list[str]:
    """A document case's expectation is the benchmark's: lists of strings under its keys (not an
    object of the schema, so it is not validated against it)."""
    problems = [f"{cid}: unknown expected key {key!r}" for key in expected if key not in KEYS]
    problems += [f"{cid}: expected {key} holds a value that is not a non-empty string"
                 for key, values in expected.items()
                 if not all(isinstance(v, str) and v.strip() for v in values)]
    return problems
