"""Tables of a run's figures (markdown, for the terminal and EVAL.md). Standard library only."""

from __future__ import annotations

from .scoring import TARGETS


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def figures(summary: dict) -> list[tuple[str, str]]:
    s = summary
    records = [
        ("records returned exactly (recall)", f"{s['records_matched']}/{s['records_expected']}"),
        ("records returned (exact ones: precision)", f"{s['records_found']} ({s['records_matched']})"),
    ] if s.get("records_expected") else []
    return records + [
        ("exact (complete cases)", f"{s['exact']}/{s['complete']}"),
        ("field accuracy", _pct(s["field_accuracy"])),
        ("schema-valid answers", f"{s['schema_valid']}/{s['answers_checked']}"),
        ("need-more-input precision", _pct(s["need_precision"])),
        ("need-more-input recall", _pct(s["need_recall"])),
        ("invented (absent cases)", f"{s['invented_absent']}/{s['absent']}"),
        ("invented fields (complete cases)", str(s["invented_complete_fields"])),
        ("outcomes", ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items()))),
        ("LLM calls per case", f"{s['llm_calls_per_case']:.2f}" if s["llm_calls_per_case"] is not None else "n/a"),
        ("tokens per case (prompt + completion)",
         f"{s['prompt_tokens_per_case']:.0f} + {s['completion_tokens_per_case']:.0f}" if s["cases"] else "n/a"),
        ("wall time (total, per case)", f"{s['wall_seconds']:.0f} s, {s['wall_seconds_per_case']:.2f} s" if s["cases"] else "n/a"),
    ]


def table(systems: dict[str, dict]) -> str:
    """One row per figure, one column per system, and a column of the targets; each `structure`
    system's figure says whether it meets its target."""
    names = list(systems)
    rows = {name: dict(figures(systems[name]["summary"])) for name in names}
    labels = [label for label, _ in figures(systems[names[0]]["summary"])]
    by_label = {
        "exact": "exact (complete cases)",
        "need precision": "need-more-input precision",
        "need recall": "need-more-input recall",
        "invented (absent cases)": "invented (absent cases)",
        "LLM calls per case": "LLM calls per case",
    }
    goals = {by_label[name]: (goal, check) for name, goal, check in TARGETS}
    header = "| figure | " + " | ".join(names) + " | target |"
    lines = [header, "|" + "---|" * (len(names) + 2)]
    for label in labels:
        cells = []
        for name in names:
            cell = rows[name][label]
            if label in goals and name.startswith("structure"):
                cell += " met" if goals[label][1](systems[name]["summary"]) else " MISSED"
            cells.append(cell)
        goal = goals[label][0] if label in goals else ""
        lines.append("| " + " | ".join([label, *cells, goal]) + " |")
    return "\n".join(lines)
