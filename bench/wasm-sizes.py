#!/usr/bin/env python3
"""Where the component's bytes go: its core module's code by crate (and, for our own crate, by
top-level module) and its data, from twiggy's list of every function and data segment.

Needs an unstripped build (the shipped `component` profile strips the names twiggy reads) and
twiggy (`cargo install twiggy`):

    CARGO_PROFILE_COMPONENT_STRIP=false cargo build -p structure --target wasm32-wasip2 \\
        --profile component --target-dir /tmp/sizes
    python3 bench/wasm-sizes.py /tmp/sizes/wasm32-wasip2/component/structure.wasm

Names are attributed to the first crate path they name (`<jsonschema::X as core::Y>::f` is
jsonschema's): generic code instantiated for our types counts for the crate that wrote it.

The shipped component is also run through Binaryen (component-build's `optimize`), which this
build skips: for the map after it, give the script the unstripped core module after
`wasm-opt -Os -g --enable-simd --enable-bulk-memory --enable-reference-types --enable-multivalue
--enable-nontrapping-float-to-int --enable-sign-ext` (`cargo install wasm-opt --version 0.116`,
the same Binaryen as the build's), which keeps the names.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import subprocess
import sys
from collections import Counter

# `crate[hash]::` as rustc's v0 names print, or `crate::`.
CRATE = re.compile(r"([a-z_][a-z0-9_]*)(?:\[[0-9a-f]+\])?::")
# What stripping removes: the name section, debug sections.
STRIPPED = re.compile(r"subsection|custom section")


def core_module(component: bytes) -> bytes:
    """The largest core module a component embeds (section id 1), or the bytes of a module."""
    if component[4:8] == b"\x01\x00\x00\x00":
        return component

    def leb(at: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            byte = component[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value, at

    best, at = (0, 0), 8
    while at < len(component):
        section = component[at]
        size, start = leb(at + 1)
        if section == 1 and size > best[1]:
            best = (start, size)
        at = start + size
    return component[best[0]:best[0] + best[1]]


def owner(name: str) -> str:
    """The crate (or `structure::<module>`) a twiggy item belongs to."""
    if name.startswith("data[") or name.startswith("data segment"):
        return f"data: {name.removeprefix('data segment ')}"
    found = CRATE.search(name.lstrip("<&*("))
    if not found:
        return "other (no crate path: glue, intrinsics, tables)"
    crate = found.group(1)
    if crate == "structure":
        module = re.search(r"structure(?:\[[0-9a-f]+\])?::([a-z_][a-z0-9_]*)", name)
        return f"structure::{module.group(1)}" if module else "structure"
    return crate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wasm", help="an unstripped component (or core module)")
    parser.add_argument("--top", type=int, default=30, help="rows to print")
    args = parser.parse_args()
    module = core_module(open(args.wasm, "rb").read())
    core = "/tmp/wasm-sizes-core.wasm"
    open(core, "wb").write(module)
    listed = subprocess.run(["twiggy", "top", "-n", "1000000", "--format", "csv", core],
                            capture_output=True, text=True, check=True).stdout
    sizes: Counter[str] = Counter()
    for row in csv.DictReader(io.StringIO(listed)):
        name = row.get("Name") or row.get("Item") or ""
        if name.startswith("Σ") or name.startswith("...") or STRIPPED.search(name):
            continue
        sizes[owner(name)] += int(row.get("ShallowSize") or row.get("Shallow Bytes") or 0)
    total = sum(sizes.values())
    print(f"| where | bytes | share |\n|---|---:|---:|")
    shown = 0
    for where, size in sizes.most_common(args.top):
        print(f"| {where} | {size:,} | {100 * size / total:.1f} % |")
        shown += size
    print(f"| the rest ({len(sizes) - min(args.top, len(sizes))} more) | {total - shown:,} | "
          f"{100 * (total - shown) / total:.1f} % |")
    print(f"| **core module** | **{total:,}** | 100 % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
