#!/usr/bin/env python3
"""Where a fresh call's CPU goes, stage by stage (issue 41's cost map in time).

Runs `structure-bench --callgrind --scenario S` (N calls of one scenario against the in-process
mock, a fresh instance each) under Linux `perf record` with call stacks, the component an
unstripped build run with wasmtime's perf map (`--perf-map`: its compiled functions named as its
name section names them), sampling only after the warm-up calls (`--perf-control`). Each sample
is given to the stage of the innermost frame a rule below names; samples no rule names are
split by where they ran (the host's wasmtime, its HTTP client and runtime, the kernel).

    CARGO_PROFILE_COMPONENT_STRIP=false cargo build -p structure --target wasm32-wasip2 \\
        --profile component --target-dir /tmp/sizes/target
    cargo build --release -p structure-bench
    python3 bench/stages.py [--component …/structure.wasm] [--scenario inline] [--calls 3000]

Prints a Markdown table (share of the samples, and microseconds a call from the bench's own
CPU time per call) for BENCHMARKS.md.
"""

import argparse
import collections
import os
import pathlib
import re
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent

# (stage, pattern on a frame's symbol): the innermost frame a stage names gives the sample to it.
STAGES = [
    ("settings", r"structure::settings::"),
    ("schema: compile and meta-check", r"structure::schema::(registry|root|checks|keywords|sense|rules|target)|structure::schema::validator::.*compile|jsonschema::(validator_for|options|compiler|meta)"),
    ("validate the answer", r"structure::schema::(validator|violation)|structure::content::check"),
    ("prompt", r"structure::content::(prompt|reason)"),
    ("provider transforms and request", r"structure::(provider|schema::subset|answer::format)"),
    ("parse the answer", r"structure::answer::"),
    ("grounding and confidence", r"structure::content::(grounding|confidence|evidence)"),
    ("result", r"structure::(outcome|api)|structure::content::judge"),
    ("guest HTTP and key-value glue", r"structure::wasi::"),
    ("instantiate", r"instantiate|InstancePre|Instance::new_started"),
]
# Where a sample no stage names ran, by its innermost frame.
ELSEWHERE = [
    ("guest: the call's own loop (content stage, JSON, allocation)", r"^structure::|^(core|alloc|serde|serde_json|hashbrown|dlmalloc|std|wit_bindgen)::|wasm-function|^memcpy|^memset|^memmove"),
    ("host: HTTP (hyper, wasi-http) and its runtime", r"hyper|h2::|http::|wasmtime_wasi_http|tokio|mio::|mock_llm|bytes::"),
    ("host: wasmtime (calls in and out, resources, memory)", r"wasmtime|cranelift|wasi|dlmalloc|malloc|free|memmove|memcpy|memset"),
]


def record(args, data: pathlib.Path) -> None:
    control = data.parent / "control"
    os.mkfifo(control)
    bench = [str(args.bench), "--component", str(args.component), "--perf-map", "--callgrind",
             "--scenario", args.scenario, "--calls", str(args.calls), "--perf-control", str(control)]
    command = ["perf", "record", "-q", "-F", str(args.frequency), "-e", "cpu-clock", "-g",
               "-D", "-1", "--control", f"fifo:{control}", "-o", str(data), "--"] + bench
    subprocess.run(command, check=True)


def samples(data: pathlib.Path):
    """Each sample's frames, innermost first, as (symbol, object)."""
    script = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,ip,sym,dso"],
                            check=True, capture_output=True, text=True).stdout
    frames = []
    for line in script.splitlines():
        if not line.strip():
            if frames:
                yield frames
            frames = []
            continue
        if not line.startswith((" ", "\t")):
            continue  # the sample's header
        match = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
        if match:
            # Rust's v0 names carry each crate's hash: `structure[9f…]::content::…`.
            symbol = re.sub(r"\[[0-9a-f]+\]", "", match.group(1))
            frames.append((symbol, match.group(2)))
    if frames:
        yield frames


def stage_of(frames) -> str:
    for symbol, _ in frames:
        for stage, pattern in STAGES:
            if re.search(pattern, symbol):
                return stage
    symbol, dso = frames[0]
    for stage, pattern in ELSEWHERE:
        if re.search(pattern, symbol):
            return stage
    return "kernel" if "kernel" in dso else "unnamed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--component", type=pathlib.Path,
                        default=pathlib.Path("/tmp/sizes/target/wasm32-wasip2/component/structure.wasm"))
    parser.add_argument("--bench", type=pathlib.Path, default=REPO / "target/release/structure-bench")
    parser.add_argument("--scenario", default="valid")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--frequency", type=int, default=20000)
    parser.add_argument("--top", type=int, default=0,
                        help="also list, for each stage, the innermost frames of ours most sampled")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = pathlib.Path(folder) / "perf.data"
        record(args, data)
        counted = collections.Counter()
        leaves = collections.Counter()
        total = 0
        for frames in samples(data):
            total += 1
            stage = stage_of(frames)
            counted[stage] += 1
            ours = next((symbol for symbol, _ in frames if symbol.startswith("structure::")), frames[0][0])
            leaves[(stage, ours)] += 1
    if not total:
        print("no samples: is perf allowed (kernel.perf_event_paranoid ≤ 2)?", file=sys.stderr)
        return 1
    interval_us = 1e6 / args.frequency
    print(f"{args.scenario}, fresh instance: {total} samples of {interval_us:.0f} µs over {args.calls} calls\n")
    print("| stage | share | µs a call |")
    print("|---|---:|---:|")
    for stage, count in counted.most_common():
        print(f"| {stage} | {count / total:.1%} | {count * interval_us / args.calls:.1f} |")
    print(f"| **all** | 100% | {total * interval_us / args.calls:.1f} |")
    if args.top:
        print()
        for stage, _ in counted.most_common():
            print(f"\n{stage}:")
            top = [(symbol, n) for (at, symbol), n in leaves.most_common() if at == stage][:args.top]
            for symbol, count in top:
                print(f"{count:6d}  {symbol[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
