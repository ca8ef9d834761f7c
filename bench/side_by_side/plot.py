#!/usr/bin/env python3
"""Bar chart of CPU per call above each contender's own raw-HTTP floor, from run.py's JSON.

    python bench/side_by_side/plot.py OUT/side_by_side.json OUT/overhead.png

Needs matplotlib (in target/bench-venv, which run.py creates; run.py calls this itself).
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on CI or over SSH
import matplotlib.pyplot as plt

COLOURS = {"structure": "#2b7bba", "instructor": "#e08a1e", "BAML": "#6a3d9a"}


def colour(contender: str) -> str:
    return next((c for prefix, c in COLOURS.items() if contender.startswith(prefix)), "#888888")


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, target = sys.argv[1], sys.argv[2]
    with open(source) as file:
        report = json.load(file)
    meta = report["meta"]
    # The floors are zero above themselves by definition.
    rows = [r for r in report["rows"] if not r["contender"].startswith("raw floor")]
    labels = [f"{r['contender']}\n{r['scenario']}" for r in rows]
    values = [max(r["cpuAboveFloorMs"], 0.0) for r in rows]

    fig, ax = plt.subplots(figsize=(9, 0.6 * len(rows) + 1.8))
    positions = list(range(len(rows)))[::-1]  # first row on top
    ax.barh(positions, values, color=[colour(r["contender"]) for r in rows])
    ax.set_yticks(positions, labels, fontsize=9)
    positive = [v for v in values if v > 0]
    # Contenders differ by orders of magnitude in a debug build or with retries; a linear axis
    # would flatten the small bars to nothing.
    log_scale = bool(positive) and max(positive) / min(positive) > 20
    if log_scale:
        ax.set_xscale("log")
        ax.set_xlim(min(positive) / 2, max(positive) * 4)
    else:
        ax.set_xlim(0, max(values + [0.001]) * 1.25)
    for position, value in zip(positions, values, strict=True):
        ax.annotate(
            f" {value:.3f} ms", (value, position), va="center", fontsize=9, xytext=(2, 0), textcoords="offset points"
        )
    scale = ", log scale" if log_scale else ""
    ax.set_xlabel(f"client CPU per call above the raw HTTP floor of its language (ms, mean{scale})")
    ax.set_title(
        f"user-action-record against the mock LLM: {meta['calls']} calls, structure {meta['profile']} build",
        fontsize=10,
    )
    ax.grid(axis="x", which="both", alpha=0.3)
    ax.set_axisbelow(True)
    fig.tight_layout()
    fig.savefig(target, dpi=120)


if __name__ == "__main__":
    main()
