#!/usr/bin/env python3
"""Summarises what bench/run measured beside the side-by-side: validation native vs in wasm, the
component's size, the JavaScript bundle's size, and callgrind's instruction counts.

    python3 bench/summary.py target/bench
"""

import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lines(path):
    return {row["schema"]: row for row in map(json.loads, path.read_text().splitlines()) if row}


def size(path):
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, 9))


def main(out: Path):
    native, wasm = lines(out / "validation-native.jsonl"), lines(out / "validation-wasm.jsonl")
    print("### Validation: native and in wasm\n")
    print("| schema | step | native | in wasm | wasm ÷ native |")
    print("|---|---|---:|---:|---:|")
    for schema, row in native.items():
        for key, step in [("compileNs", "compile a new schema (meta-schema check)"),
                          ("compileCheckedNs", "compile a stored schema"), ("validNs", "validate a valid instance"),
                          ("invalidWithViolationsNs", "validate an invalid one, with violations")]:
            n, w = row[key], wasm[schema][key]
            print(f"| {schema} | {step} | {n / 1000:.2f} µs | {w / 1000:.2f} µs | {w / n:.2f}× |")

    print("\n### Sizes\n")
    print("| artefact | bytes | gzip -9 |")
    print("|---|---:|---:|")
    artefacts = [("component (target/component/structure.wasm)", ROOT / "target/component/structure.wasm")]
    web = ROOT / "js/dist/web"
    if web.exists():
        artefacts += [(f"jco browser build: {p.name}", p) for p in sorted(web.glob("*.wasm")) + [web / "structure.js"]]
    demo = ROOT / "js/dist/demo/app.js"
    if demo.exists():
        artefacts.append(("demo page bundle (esbuild, minified JS)", demo))
    for label, path in artefacts:
        if path.exists():
            raw, packed = size(path)
            print(f"| {label} | {raw:,} | {packed:,} |")

    counts = []
    for prefix, label in [("callgrind.", "fresh instance"), ("callgrind.reused.", "reused instance")]:
        totals = {}
        for calls in (5, 25):
            path = out / f"{prefix}{calls}"
            found = path.exists() and re.search(r"^summary:\s*(\d+)", path.read_text(errors="replace"), re.M)
            if found:
                totals[calls] = int(found.group(1))
        if len(totals) == 2:
            counts.append((label, (totals[25] - totals[5]) // 20))
    if counts:
        print("\n### Instructions per valid call (callgrind: host, component and the in-process mock)\n")
        print("| mode | instructions |")
        print("|---|---:|")
        for label, count in counts:
            print(f"| {label} | {count:,} |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "target/bench"))
