#!/usr/bin/env python3
"""The side-by-side: client CPU per call of structure, instructor and BAML against the mock LLM,
for the same schema (user-action-record) and the same answers, with each one's overhead above a
raw HTTP client of its own language.

    python3 bench/side_by_side/run.py [--calls 500] [--warmup 20] [--out target/bench] [--quick]
                                      [--build] [--profile release|debug]

What it does, in order:
  1. (--build) cargo build --release of mock-llm, structure-bench and structure-host.
  2. Creates target/bench-venv with requirements.txt (again whenever that file changes) and
     generates the BAML client from baml_src/ into target/bench-baml/.
  3. structure-bench (release if built, else debug): our figures and our floor, a raw Rust HTTP
     client. It serves itself from the mock_llm crate in-process (the same code as the mock-llm
     binary, on a thread of its own).
  4. Starts the mock-llm binary and runs each Python contender (contenders.py) in a fresh process
     against it: instructor, a raw httpx2 floor replaying instructor's request, BAML.
  5. Start-up of each Python library: import and make the client (fresh interpreters, median).
  6. Prints the table and writes OUT/side_by_side.{json,md} and OUT/overhead.png (plot.py); the
     raw results stay beside them: structure-bench.{json,txt}, instructor.json, floor.json,
     baml.json and instructor-request.json (the request the Python floor replays).

Only the standard library is used here, so any python3 >= 3.10 runs it; the contenders run in the
venv.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TARGET = ROOT / "target"
VENV = TARGET / "bench-venv"
BAML_DIR = TARGET / "bench-baml"
REQUIREMENTS = HERE / "requirements.txt"

RUST_FLOOR = "raw floor (Rust, hyper)"
PY_FLOOR = "raw floor (Python, httpx2)"
INSTRUCTOR = "instructor (TOOLS)"
BAML = "BAML"

# What a program pays before its first call, timed in a fresh interpreter: the import alone, and
# the import plus making the client ("ready"), which the table shows. The difference matters:
# instructor imports lazily (`import instructor` is ~10 ms; the openai SDK and instructor's
# internals load on `from openai import OpenAI` and `from_openai`).
STARTUP = {
    PY_FLOOR: {"import": "import httpx2", "ready": "import httpx2; httpx2.Client()"},
    INSTRUCTOR: {
        "import": "import instructor",
        "ready": "import instructor; from openai import OpenAI; instructor.from_openai(OpenAI(api_key='sk-bench'))",
    },
    # The generated client: loads baml_py and its runtime from the inlined .baml files; `b` is made
    # at import.
    BAML: {"import": "import baml_client", "ready": "from baml_client import b"},
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500, help="measured calls per scenario (default 500)")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured calls first (default 20)")
    parser.add_argument("--out", type=Path, default=TARGET / "bench", help="output folder (default target/bench)")
    parser.add_argument("--quick", action="store_true", help="5 calls, 2 warm-up, 2 start-up runs: a smoke test")
    parser.add_argument(
        "--build",
        action="store_true",
        help="cargo build --release -p mock-llm -p structure-bench -p structure-host first",
    )
    parser.add_argument(
        "--profile",
        choices=["release", "debug"],
        help="which target/ folder to take the Rust binaries from (default: release where built, else debug)",
    )
    args = parser.parse_args()
    if args.quick:
        args.calls, args.warmup = 5, 2
    args.import_runs = 2 if args.quick else 5
    if args.calls < 1 or args.warmup < 0:
        parser.error("--calls must be at least 1 and --warmup at least 0")
    args.out = args.out if args.out.is_absolute() else Path.cwd() / args.out
    return args


# --- preparing ------------------------------------------------------------------------------


def binary(name: str, wanted: str | None) -> tuple[Path, str]:
    """target/WANTED/NAME; without WANTED, target/release/NAME if built, else target/debug/NAME."""
    for profile in [wanted] if wanted else ["release", "debug"]:
        path = TARGET / profile / name
        if path.is_file() and os.access(path, os.X_OK):
            return path, profile
    where = f"target/{wanted}/{name}" if wanted else f"target/release/{name} nor target/debug/{name}"
    sys.exit(f"run.py: no {where}; build it (or pass --build)")


def ensure_venv() -> Path:
    """The bench venv, (re)installed when requirements.txt changed since it was made."""
    python = VENV / "bin" / "python"
    stamp = VENV / ".requirements.sha256"
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if python.exists() and stamp.exists() and stamp.read_text() == digest:
        return python
    log(f"creating {VENV.relative_to(ROOT)} from {REQUIREMENTS.relative_to(ROOT)} ...")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
        check=True,
    )
    stamp.write_text(digest)
    return python


def generate_baml() -> Path:
    """Generates baml_client from a copy of baml_src/ under target/, so nothing generated lands in
    the source tree (the generator writes next to its baml_src)."""
    shutil.rmtree(BAML_DIR, ignore_errors=True)
    shutil.copytree(HERE / "baml_src", BAML_DIR / "baml_src")
    generated = subprocess.run(
        [str(VENV / "bin" / "baml-cli"), "generate", "--from", "baml_src"],
        cwd=BAML_DIR,
        capture_output=True,
        text=True,
    )
    if generated.returncode != 0 or not (BAML_DIR / "baml_client" / "__init__.py").exists():
        sys.exit(f"run.py: baml-cli generate failed:\n{generated.stdout}{generated.stderr}")
    return BAML_DIR


class MockServer:
    """The mock-llm binary on a free port, for as long as the `with` block lasts."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> str:
        self.process = subprocess.Popen([str(self.path), "--port", "0"], stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()  # "mock-llm listening on http://127.0.0.1:PORT/v1"
        if "listening on " not in line:
            self.process.kill()
            sys.exit(f"run.py: mock-llm did not start (said {line!r})")
        return line.split("listening on ", 1)[1].strip()

    def __exit__(self, *_) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def python_env() -> dict:
    env = dict(os.environ)
    # BAML logs every call (prompt, reply, parsed result) at its default level, on stdout; that
    # would bury the run's progress (it costs ~0.01 ms a call to /dev/null, more to a terminal).
    # Warnings and errors still show.
    env["BAML_LOG"] = "warn"
    env.pop("PYTHONPATH", None)
    return env


# --- measuring ------------------------------------------------------------------------------


def run_structure_bench(args: argparse.Namespace, out: Path) -> tuple[dict, str]:
    bench, profile = binary("structure-bench", args.profile)
    command = [
        str(bench),
        "--calls",
        str(args.calls),
        "--warmup",
        str(args.warmup),
        "--json",
        str(out / "structure-bench.json"),
    ]
    cli = TARGET / profile / "structure"
    if cli.is_file():
        command += ["--cli", str(cli)]
    log(f"structure-bench ({profile}): {args.calls} calls per scenario ...")
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        sys.exit(f"run.py: structure-bench failed:\n{finished.stdout}{finished.stderr}")
    (out / "structure-bench.txt").write_text(finished.stdout)
    return json.loads((out / "structure-bench.json").read_text()), profile


def run_contender(python: Path, name: str, base_url: str, args: argparse.Namespace, *extra: str) -> dict:
    log(f"{name}: {args.calls} calls per scenario ...")
    result = args.out / f"{name}.json"
    command = [str(python), str(HERE / "contenders.py"), name, "--base-url", base_url, "--result", str(result)]
    command += ["--calls", str(args.calls), "--warmup", str(args.warmup), *extra]
    if subprocess.run(command, env=python_env()).returncode != 0:
        sys.exit(f"run.py: the {name} contender failed (its output is above)")
    return json.loads(result.read_text())


def startup_ms(python: Path, statement: str, runs: int) -> float:
    """Median over `runs` fresh interpreters, after one unmeasured run (which may write .pyc files)."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    times = []
    for attempt in range(runs + 1):
        finished = subprocess.run(
            [str(python), "-c", code], cwd=BAML_DIR, env=python_env(), capture_output=True, text=True, check=True
        )
        if attempt > 0:
            times.append(float(finished.stdout.strip()) * 1000)
    return round(statistics.median(times), 1)


def versions(python: Path) -> dict:
    packages = ["instructor", "openai", "pydantic", "httpx2", "baml-py"]
    code = "import importlib.metadata as m, json, sys; print(json.dumps({p: m.version(p) for p in sys.argv[1:]}))"
    return json.loads(
        subprocess.run([str(python), "-c", code, *packages], capture_output=True, text=True, check=True).stdout
    )


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


# --- the table ------------------------------------------------------------------------------


def row(
    contender: str,
    source: dict,
    floor: dict,
    startup: float | None,
    startup_kind: str | None,
) -> dict:
    # The Python contenders' CPU is their whole process's already; structure-bench measures its
    # calling thread and, apart, the whole process but the in-process mock's server thread.
    process = source.get("processCpuMeanMs", source["cpuMeanMs"])
    process_floor = floor.get("processCpuMeanMs", floor["cpuMeanMs"])
    floor_cpu = floor["cpuMeanMs"]
    return {
        "contender": contender,
        "scenario": source["scenario"],
        "calls": source["calls"],
        "wallP50Ms": source["wallP50Ms"],
        "wallP99Ms": source["wallP99Ms"],
        "cpuMeanMs": source["cpuMeanMs"],
        "cpuP50Ms": source["cpuP50Ms"],
        "cpuAboveFloorMs": round(source["cpuMeanMs"] - floor_cpu, 3),
        "processAboveFloorMs": round(process - process_floor, 3),
        "llmCallsPerCall": source["llmCallsPerCall"],
        "bytesSentPerCall": source["bytesSentPerCall"],
        "startupMs": startup,
        "startup": startup_kind,
    }


def build_rows(ours: dict, python: dict, ready: dict) -> list[dict]:
    bench_rows = ours["rows"]
    rust_floor = next(r for r in bench_rows if r["scenario"] == "floor (raw HTTP)")
    py_floor = python["floor"]["rows"][0]
    cli = ours.get("cliStartToFirstRequestMs")
    cli = round(cli, 1) if cli is not None else None

    rows = [
        row(RUST_FLOOR, dict(rust_floor, scenario="valid"), rust_floor, None, None),
        row(PY_FLOOR, py_floor, py_floor, ready[PY_FLOOR], "import and client"),
    ]
    # The peers always give their schema inline (a Pydantic model, a BAML class): structure's
    # inline-schema scenario is compared with their valid one.
    for scenario in ("valid", "inline schema", "one violation"):
        for source in bench_rows:
            if source["scenario"] == scenario:
                rows.append(row(f"structure ({source['mode']})", source, rust_floor, cli, "CLI start to first request"))
        if scenario == "inline schema":
            continue
        for name, key in ((INSTRUCTOR, "instructor"), (BAML, "baml")):
            for source in python[key]["rows"]:
                if source["scenario"] == scenario:
                    rows.append(row(name, source, py_floor, ready[name], "import and client"))

    # Our overhead over theirs, same scenario: below 1 means structure costs less CPU per call.
    def overhead(contender: str, scenario: str, key: str) -> float | None:
        scenario = "valid" if scenario == "inline schema" else scenario
        match = [r for r in rows if r["contender"] == contender and r["scenario"] == scenario]
        return match[0][key] if match else None

    for r in rows:
        ours = r["contender"].startswith("structure")
        for name, other, key in (
            ("oursOverBaml", BAML, "cpuAboveFloorMs"),
            ("oursOverInstructor", INSTRUCTOR, "cpuAboveFloorMs"),
            ("processOursOverBaml", BAML, "processAboveFloorMs"),
        ):
            theirs = overhead(other, r["scenario"], key)
            r[name] = round(r[key] / theirs, 3) if ours and theirs and theirs > 0 else None
    return rows


COLUMNS = [
    ("contender", "contender", "<"),
    ("scenario", "scenario", "<"),
    ("calls", "calls", ">"),
    ("wall p50 (ms)", "wallP50Ms", ">"),
    ("CPU/call (ms)", "cpuMeanMs", ">"),
    ("above floor (ms)", "cpuAboveFloorMs", ">"),
    ("ours ÷ BAML", "oursOverBaml", ">"),
    ("ours ÷ instructor", "oursOverInstructor", ">"),
    ("process above floor (ms)", "processAboveFloorMs", ">"),
    ("process: ours ÷ BAML", "processOursOverBaml", ">"),
    ("LLM calls", "llmCallsPerCall", ">"),
    ("bytes sent", "bytesSentPerCall", ">"),
    ("startup (ms)", "startupMs", ">"),
]


def cell(key: str, value) -> str:
    if value is None:
        return "–"
    if key in ("oursOverBaml", "oursOverInstructor", "processOursOverBaml"):
        return f"{value:.2f}×"
    if key == "llmCallsPerCall":
        return f"{value:.2f}"
    if key == "bytesSentPerCall":
        return f"{value:.0f}"
    if key == "startupMs":
        return f"{value:.1f}"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def text_table(rows: list[dict]) -> str:
    cells = [[title for title, _, _ in COLUMNS]] + [[cell(key, r[key]) for _, key, _ in COLUMNS] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = []
    for line in cells:
        lines.append(
            "  ".join(f"{c:{align}{w}}" for c, w, (_, _, align) in zip(line, widths, COLUMNS, strict=True)).rstrip()
        )
    return "\n".join(lines)


def markdown(rows: list[dict], meta: dict) -> str:
    header = "| " + " | ".join(title for title, _, _ in COLUMNS) + " |"
    rule = "|" + "|".join("---" if align == "<" else "---:" for _, _, align in COLUMNS) + "|"
    body = ["| " + " | ".join(cell(key, r[key]) for _, key, _ in COLUMNS) + " |" for r in rows]
    v = meta["versions"]
    notes = f"""
{meta["calls"]} measured calls per scenario after {meta["warmup"]} warm-up calls; {meta["cpu"]}; \
structure-bench and mock-llm built `{meta["profile"]}`; Python {meta["python"]}, instructor {v["instructor"]} \
(openai {v["openai"]}, pydantic {v["pydantic"]}), baml-py {v["baml-py"]}.

- *CPU/call*: mean CPU time per call; the Python contenders' is the whole process's \
(`time.process_time()`, so BAML's Rust threads count), structure's the calling thread's (its host \
does the call's work on that thread; the mock it runs in-process is on another).
- *above floor*: CPU/call minus the raw floor of the same language (a kept-alive HTTP client \
posting a request and parsing the response and its content as JSON: hyper for structure, httpx2 \
replaying instructor's request for instructor and BAML). A two-LLM-call scenario still subtracts one floor.
- *ours ÷ X*: structure's above-floor CPU over X's in the same scenario (below 1: structure costs less).
- *process above floor*: the whole process's CPU per call above the floor's, the in-process mock's \
server thread left out: whatever structure's host does on other threads counts (the Python \
contenders' figure is the same as above floor); *process: ours ÷ BAML* compares those.
- *inline schema*: structure given user-action-record inline (checked against its meta-schema \
and compiled in the call) instead of by name; compared with the peers' *valid*, whose schema is \
always their own inline model.
- *startup*: for Python, the median time in a fresh interpreter (its own start-up not included) \
to import the library and make its client (`{STARTUP[INSTRUCTOR]["ready"]}`; \
`{STARTUP[BAML]["ready"]}` of the generated client); for structure, the `structure` command's \
start to its first request (warm compiled-component cache).
- *one violation*: the first answer's timestamp is not a date-time; instructor re-asks with \
`max_retries=1`, structure with its repair loop. BAML has no re-ask, so it runs only *valid*.
"""
    return "\n".join([header, rule, *body]) + "\n" + notes


# --- main -----------------------------------------------------------------------------------


def main() -> None:
    args = parse_args()
    started = time.monotonic()
    if args.build:
        command = ["cargo", "build", "--release", "-p", "mock-llm", "-p", "structure-bench", "-p", "structure-host"]
        subprocess.run(command, cwd=ROOT, check=True)
        args.profile = args.profile or "release"
    args.out.mkdir(parents=True, exist_ok=True)
    python = ensure_venv()
    generate_baml()

    ours, profile = run_structure_bench(args, args.out)
    mock, mock_profile = binary("mock-llm", args.profile)
    with MockServer(mock) as base_url:
        results = {"instructor": run_contender(python, "instructor", base_url, args)}
        # The floor replays instructor's own request: same bytes on the wire, no library around it.
        probe = args.out / "instructor-request.json"
        probe.write_text(json.dumps(results["instructor"]["probe"]["request"]))
        results["floor"] = run_contender(python, "floor", base_url, args, "--floor-body", str(probe))
        results["baml"] = run_contender(python, "baml", base_url, args, "--baml-client", str(BAML_DIR))

    log(f"start-up times ({args.import_runs} fresh interpreters each) ...")
    startup = {
        name: {kind: startup_ms(python, statement, args.import_runs) for kind, statement in statements.items()}
        for name, statements in STARTUP.items()
    }

    rows = build_rows(ours, results, {name: times["ready"] for name, times in startup.items()})
    meta = {
        "calls": args.calls,
        "warmup": args.warmup,
        "profile": profile if profile == mock_profile else f"{profile} (mock-llm {mock_profile})",
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "versions": versions(python),
        "instructorFunctionName": results["instructor"]["probe"]["function"],
        "date": time.strftime("%Y-%m-%d"),
    }
    report = {
        "meta": meta,
        "rows": rows,
        "pythonStartupMs": startup,
        "pythonStartupStatements": STARTUP,
        "peakRssBytes": {
            "structure-bench": ours.get("peakRssBytes"),
            **{key: results[key].get("peakRssBytes") for key in ("floor", "instructor", "baml")},
        },
        "structureBench": ours,
    }
    (args.out / "side_by_side.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "side_by_side.md").write_text(markdown(rows, meta))

    plotted = subprocess.run(
        [str(python), str(HERE / "plot.py"), str(args.out / "side_by_side.json"), str(args.out / "overhead.png")]
    )
    if plotted.returncode != 0:
        log("run.py: plot.py failed; the JSON and Markdown are written")

    print(text_table(rows))
    print(
        f"\n{args.calls} calls after {args.warmup} warm-up, {meta['profile']} binaries; "
        f"ours ÷ X < 1 means structure spends less CPU above its floor than X."
    )
    print(f"wrote {args.out}/side_by_side.json, side_by_side.md, overhead.png ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
