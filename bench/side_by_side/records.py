#!/usr/bin/env python3
"""The records side-by-side: `structure run --records` and langextract on the same long texts,
against the same mock model that reads the orders of each text it is sent (mock-llm's
`/_mock/orders`), with the same fixed latency and four calls in flight: LLM calls, prompt tokens
(a token per four bytes of request), wall time, orders found, duplicates.

    python3 bench/side_by_side/records.py [--latency-ms 500] [--sizes 100000,1000000] [--out target/bench]

Needs `cargo build --release -p mock-llm -p structure-host` and target/bench-venv with
requirements.txt (run.py makes both). langextract runs twice: with its default chunk (1,000
characters) and with structure's default for hosted models (18,000 bytes of text).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TARGET = ROOT / "target"
PYTHON = TARGET / "bench-venv" / "bin" / "python"
CONCURRENT = 4

LANGEXTRACT = r"""
import json, sys, time
import langextract as lx
args = json.loads(sys.argv[1])
text = sys.stdin.read()
example = lx.data.ExampleData(
    text="Order ORD-9999 was placed by Example Person for 2 units.",
    extractions=[lx.data.Extraction(extraction_class="order", extraction_text="ORD-9999",
                                    attributes={"customer": "Example Person", "quantity": "2"})],
)
started = time.monotonic()
result = lx.extract(
    text_or_documents=text,
    prompt_description="Extract every order: its id, the customer who placed it and the quantity.",
    examples=[example],
    model_id="gpt-4.1-mini",
    api_key="sk-bench",
    language_model_params={"base_url": args["base_url"]},
    fence_output=False,
    use_schema_constraints=False,
    max_char_buffer=args["chunk"],
    batch_length=args["workers"],
    max_workers=args["workers"],
    show_progress=False,
    prompt_validation_level=lx.prompt_validation.PromptValidationLevel.OFF,
)
wall = time.monotonic() - started
orders = [e.extraction_text for e in result.extractions if e.extraction_class == "order"]
print(json.dumps({"orders": orders, "wall": wall}))
"""


def control(base: str, path: str, body: dict | None = None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base.replace("/v1", "") + f"/_mock/{path}", data=data,
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def prompt_tokens(base: str) -> tuple[int, int]:
    requests = control(base, "requests")
    return len(requests), sum(len(r["body"].encode()) for r in requests) // 4


def run_structure(base: str, text: str, schema: dict) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(schema, file)
    command = [str(TARGET / "release" / "structure"), "--store", "memory", "--model", "openai/gpt-4.1-mini",
               "--base-url", base, "--set", "structure_provider_profile=openai",
               "--set", "structure_max_prompt_bytes=8388608",
               "--set", f"structure_max_concurrent_calls={CONCURRENT}",
               "run", "--records", "--schema", file.name]
    started = time.monotonic()
    out = subprocess.run(command, input=text, capture_output=True, text=True,
                         env={**os.environ, "OPENAI_API_KEY": "sk-bench"}, check=False)
    wall = time.monotonic() - started
    os.unlink(file.name)
    result = json.loads(out.stdout)
    if result.get("status") != "ok":
        sys.exit(f"structure: {out.stdout[:500]} {out.stderr[:500]}")
    return {"orders": [record["order"] for record in result["data"]], "wall": wall}


def run_langextract(base: str, text: str, chunk: int) -> dict:
    args = json.dumps({"base_url": base, "chunk": chunk, "workers": CONCURRENT})
    out = subprocess.run([str(PYTHON), "-c", LANGEXTRACT, args], input=text, capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        sys.exit(f"langextract failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(base: str, form: str, latency_ms: int, run) -> dict:
    control(base, "reset", {})
    control(base, "orders", {"form": form, "latencyMs": latency_ms})
    result = run()
    calls, tokens = prompt_tokens(base)
    return {**result, "calls": calls, "prompt_tokens": tokens}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=int, default=500)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--out", type=Path, default=TARGET / "bench")
    args = parser.parse_args()
    mock = subprocess.Popen([str(TARGET / "release" / "mock-llm"), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        base = mock.stdout.readline().split("listening on ")[1].strip()
        rows = []
        for chars in [int(size) for size in args.sizes.split(",")]:
            planted = control(base, "orders/text", {"chars": chars, "orders": chars // 2500})
            text, expected = planted["text"], planted["planted"]
            systems = {
                "structure (records mode)": ("records", lambda: run_structure(base, text, planted["schema"])),
                "langextract (1,000-character chunks, its default)": (
                    "langextract", lambda: run_langextract(base, text, 1000)),
                "langextract (18,000-character chunks)": ("langextract", lambda: run_langextract(base, text, 18000)),
            }
            for name, (form, run) in systems.items():
                result = measure(base, form, args.latency_ms, run)
                orders = result["orders"]
                rows.append({
                    "chars": chars, "system": name, "planted": len(expected),
                    "found": len(set(orders) & set(expected)), "returned": len(orders),
                    "duplicates": len(orders) - len(set(orders)), "calls": result["calls"],
                    "prompt_tokens": result["prompt_tokens"], "wall_seconds": round(result["wall"], 2),
                })
                print(json.dumps(rows[-1]), flush=True)
    finally:
        mock.kill()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "records_side_by_side.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
