"""`eval/run`: the extraction-quality eval, end to end (see EVAL.md and docs/evaluation.md)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict

from . import calibration, report, setup
from .cases import (DEFAULT_CASES, DEFAULT_SCHEMAS, EVAL, check_cases, load_cases, load_schema, schema_file,
                    schema_validator, violations)
from .documents import DocumentScore, hits, score_document, summarise_documents
from .runner import Endpoint, run_baseline, run_document_baseline, run_structure
from .scoring import CaseScore, Outcome, score_case, summarise

# `structure` with its defaults, and with the extractive mode meant for small local models.
SYSTEMS = ("baseline", "structure", "structure-extractive")
SYSTEM_SETTINGS = {"structure": [], "structure-extractive": ["structure_extractive=true"]}
# Relative dates are resolved against this instant (structure_reference_time): the prompt then
# stays the same from run to run, and so do a temperature-0 model's answers.
REFERENCE_TIME = "2025-06-01T12:00:00Z"


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="eval/run",
        description="Score `structure` and a one-call json_schema baseline on a case set, against a local "
        "model (started here: Qwen2.5-Coder-0.5B-Instruct by default, or SmolLM2-135M) or any "
        "OpenAI-compatible endpoint.",
    )
    p.add_argument("--cases", type=pathlib.Path, default=DEFAULT_CASES, help="JSON Lines case file (default: %(default)s)")
    p.add_argument("--schemas", type=pathlib.Path, default=DEFAULT_SCHEMAS, help="directory of <name>.json schemas")
    p.add_argument("--base-url", help="an OpenAI-compatible endpoint (…/v1); default: start the local model server")
    p.add_argument("--embedded", action="store_true",
                   help="run the local model in `structure` itself (its embedded engine): no server; structure systems only")
    p.add_argument("--local-model", default=setup.DEFAULT_LOCAL_MODEL, choices=sorted(setup.LOCAL_MODELS),
                   help="the local model to start when no --base-url is given (default: %(default)s)")
    p.add_argument("--model", help="the model name the endpoint knows (default: the local model's)")
    p.add_argument("--profile", default="llamacpp",
                   choices=["llamacpp", "ollama", "vllm", "openai-compatible", "openai", "auto"],
                   help="structure's provider profile for the endpoint (default: %(default)s); auto: "
                   "`openai/<model>` with the base URL and no profile, for structure to find the server's kind")
    p.add_argument("--api-key-env", help="environment variable holding the endpoint's API key (e.g. OPENAI_API_KEY)")
    p.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated: baseline, structure, structure-extractive (default: all)")
    p.add_argument("--reference-time", default=REFERENCE_TIME,
                   help="structure_reference_time for structure (default: %(default)s; 'now' for the clock)")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                   help="an extra structure setting (repeatable), e.g. structure_max_loops=2")
    p.add_argument("--max-tokens", type=int,
                   help="output token limit per call (default: the baseline 1024, structure its own default)")
    p.add_argument("--n-ctx", type=int, default=8192,
                   help="the model's context window, tokens: the local server's (structure is told it with "
                   "structure_context_tokens, as a user of a server that states none must), and the one a "
                   "document case's baseline cuts its text to fit (default: %(default)s)")
    p.add_argument("--timeout", type=float,
                   help="seconds per LLM request (default: the baseline 900, structure its own default)")
    p.add_argument("--only", action="append", default=[], help="run only cases whose id contains this (repeatable)")
    p.add_argument("--limit", type=int, metavar="N", help="run only the first N cases (after --only)")
    p.add_argument("--from-pdf", type=pathlib.Path, metavar="DIR",
                   help="document cases: give `structure` the case's PDF from DIR (`--file`) instead of its text")
    p.add_argument("--structure-bin", help="a built `structure` command (default: cargo build it)")
    p.add_argument("--port", type=int, help="port for the local model server (default: a free one)")
    p.add_argument("--label", default="", help="a name for this run, kept in the results file")
    p.add_argument("--out", type=pathlib.Path, help="results file (default: eval/results/<time>-<label>.json)")
    p.add_argument("--report", nargs="+", type=pathlib.Path, metavar="RESULTS",
                   help="print the table of earlier results files and exit")
    p.add_argument("--check-cases", action="store_true", help="check the case set and exit")
    p.add_argument("--calibration", nargs="+", type=pathlib.Path, metavar="RESULTS",
                   help="print how calibrated structure's per-value confidence is in earlier results files, "
                   "and what each structure_min_confidence would make of them, and exit")
    return p.parse_args(argv)


def system_settings(system: str, reference_time: str) -> list[str]:
    """The `--set` settings a `structure` system runs with."""
    settings = list(SYSTEM_SETTINGS[system])
    if reference_time != "now":
        settings.append(f"structure_reference_time={reference_time}")
    return settings


def registry_lookup(binary: str | None):
    """Looks a schema name up in `structure`'s registry (bundled or registered)."""

    def lookup(name: str):
        if binary is None:
            raise FileNotFoundError(f"schema {name!r} has no file and no structure command to ask")
        out = subprocess.run([binary, "schemas", "show", name], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)["schema"]

    return lookup


def run_system(system: str, case: dict, schema, schema_arg: str, validate, binary: str | None,
               endpoint: Endpoint, reference_time: str, pdf_dir: pathlib.Path | None = None) -> Outcome:
    """One system's outcome on one case; with `pdf_dir`, `structure` reads a document case's PDF."""
    records = bool(case.get("records"))
    if system == "baseline" and case.get("document"):
        return run_document_baseline(case["prompt"], schema, endpoint, validate)
    if system == "baseline":
        return run_baseline(case["prompt"], schema, endpoint, validate, records)
    settings = system_settings(system, reference_time)
    if pdf_dir is not None and case.get("document") and case.get("file"):
        return run_structure("", schema_arg, binary, endpoint, validate, settings, records,
                             file=pdf_dir / case["file"])
    return run_structure(case["prompt"], schema_arg, binary, endpoint, validate, settings, records)


def verdict(score: CaseScore | DocumentScore) -> str:
    """A case's score in a word or two, for the progress line."""
    if isinstance(score, DocumentScore):
        return f"{hits(score.expected, score.found)}/{len(score.expected)} hit"
    if not score.absent:
        return "exact" if score.exact else "wrong"
    return "abstained" if score.abstained else "INVENTED" if score.invented else "-"


def summary(results: list[dict], documents: bool) -> dict:
    """The figures of one system's results (each a case's outcome and score, as saved)."""
    outcomes = [Outcome(**r["outcome"]) for r in results]
    if documents:
        return summarise_documents([DocumentScore(**r["score"]) for r in results], outcomes)
    return summarise([CaseScore(**r["score"]) for r in results], outcomes)


def main(argv: list[str]) -> int:
    args = parse(argv)
    if args.report:
        for path in args.report:
            run = json.loads(path.read_text())
            print(f"\n{path.name} ({run.get('label') or 'no label'}, {run['config']['model']})\n")
            print(report.table(run["systems"]))
        return 0
    if args.calibration:
        for path in args.calibration:
            run = json.loads(path.read_text())
            cases = {c["id"]: c for c in load_cases(pathlib.Path(run["config"]["cases"]))}
            names = sorted({c["schema"] for c in cases.values()})
            schemas = {name: load_schema(name, args.schemas) for name in names}
            print(f"\n{path.name} ({run.get('label') or 'no label'})\n")
            print(calibration.report(run, cases, schemas))
        return 0
    local = args.base_url is None and not args.check_cases and not args.embedded
    if not setup.in_venv():
        # Everything below runs in the eval's venv (jsonschema, and the model server's packages).
        setup.ensure_venv(local_model=local)
        python = str(setup.venv_python())
        os.execv(python, [python, str(EVAL / "run"), *argv])
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        sys.exit(f"eval/run: unknown systems {sorted(unknown)}; use {', '.join(SYSTEMS)}")
    if args.embedded:
        # The one-call baseline needs a server: with --embedded only structure's systems run.
        systems = [s for s in systems if s.startswith("structure")]

    cases = load_cases(args.cases)
    if args.only:
        cases = [c for c in cases if any(part in c["id"] for part in args.only)]
    if args.limit is not None:
        cases = cases[:args.limit]
    documents = any(c.get("document") for c in cases)
    binary = None
    if any(s.startswith("structure") for s in systems) and not args.check_cases:
        binary = args.structure_bin or str(setup.structure_binary())
    names = sorted({c["schema"] for c in cases})
    schemas = {name: load_schema(name, args.schemas, registry_lookup(binary)) for name in names}
    problems = check_cases(cases, schemas, violations)
    if problems:
        print("The case set has problems:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    if args.check_cases and documents:
        print(f"{len(cases)} document cases, schema {', '.join(names)}: OK")
        return 0
    if args.check_cases:
        absent = sum("absent" in c for c in cases)
        print(f"{len(cases)} cases ({len(cases) - absent} complete, {absent} lacking a required value), "
              f"{len(schemas)} schemas: OK")
        return 0
    validators = {name: schema_validator(schema).is_valid for name, schema in schemas.items()}
    # A file of the case set is passed as a file; a registry name as the name (with its manual).
    schema_args = {}
    for name in names:
        path = schema_file(name, args.schemas)
        own = path is not None and path.parent.resolve() == args.schemas.resolve()
        schema_args[name] = str(path) if own else name

    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not api_key:
        sys.exit(f"eval/run: {args.api_key_env} is not set")
    started = dt.datetime.now(dt.timezone.utc)
    results_dir = EVAL / "results"
    out = args.out or results_dir / f"{started:%Y%m%d-%H%M%S}{'-' + args.label if args.label else ''}.json"
    local_model = setup.LOCAL_MODELS[args.local_model]
    model = args.model or local_model.alias
    server = setup.local_server(local_model, args.port, n_ctx=args.n_ctx) if local else None
    base_url = args.base_url
    results = {s: [] for s in systems}
    with (server if server else _nothing()) as running:
        process = None
        if running:
            base_url, process = running
        store = tempfile.TemporaryDirectory(prefix="structure-eval-store-")
        settings = list(args.settings)
        if (local or args.embedded) and not any(s.startswith("structure_context_tokens=") for s in settings):
            # llama-cpp-python states no window over HTTP: its user tells structure (README).
            settings.append(f"structure_context_tokens={args.n_ctx}")
        endpoint = Endpoint(base_url=base_url, model=model, profile=args.profile, api_key=api_key,
                            max_tokens=args.max_tokens, timeout=args.timeout, structure_settings=settings,
                            n_ctx=args.n_ctx, local_server=local,
                            store=str(pathlib.Path(store.name) / "store.db"),
                            model_file=str(setup.model_file(local_model)) if args.embedded else None)
        for index, case in enumerate(cases, 1):
            if process is not None and process.poll() is not None:
                # Every later case would score as an error: stop and say why.
                sys.exit(f"eval/run: the model server exited ({process.returncode}) before case {case['id']}; "
                         f"see {EVAL / 'results' / 'server.log'}")
            line = [f"{index:>3}/{len(cases)} {case['id']:<28}"]
            for system in systems:
                schema = schemas[case["schema"]]
                outcome = run_system(system, case, schema, schema_args[case["schema"]], validators[case["schema"]],
                                     binary, endpoint, args.reference_time, args.from_pdf)
                score = score_document(case, outcome) if documents else score_case(case, schema, outcome)
                results[system].append({"case": case["id"], "outcome": asdict(outcome), "score": asdict(score)})
                line.append(f"{system} {outcome.status:<15} {verdict(score):<9} {outcome.llm_calls} call(s)")
            print(" | ".join(line), file=sys.stderr, flush=True)
    run = {
        "label": args.label,
        "started": started.isoformat(),
        "config": {
            "cases": str(args.cases), "model": model, "profile": args.profile,
            "base_url": args.base_url or (f"embedded {local_model.title} (structure's engine)" if args.embedded
                                          else f"local {local_model.title} (llama-cpp-python)"),
            "settings": endpoint.structure_settings, "max_tokens": args.max_tokens, "reference_time": args.reference_time,
            "n_ctx": args.n_ctx, "limit": args.limit, "only": args.only, "commit": _git_commit(),
        },
        "systems": {},
    }
    for system in systems:
        run["systems"][system] = {"summary": summary(results[system], documents), "cases": results[system]}
        if documents:
            # The dataset's gold values stay in the dataset: a results file keeps what was found.
            for result in results[system]:
                result["score"].pop("expected", None)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(run, indent=1))
    print(report.table(run["systems"]))
    print(f"\nresults: {out}", file=sys.stderr)
    return 0


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=EVAL)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], capture_output=True, text=True, cwd=EVAL)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return None
