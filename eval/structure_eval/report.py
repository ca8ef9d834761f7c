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
    system's figure says whether it meets its target. A document case set has its own table."""
    names = list(systems)
    if systems[names[0]]["summary"].get("kind") == "documents":
        return document_table(systems)
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


def _per_doc(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def document_row(s: dict) -> list[str]:
    """A system's figures on a document case set, as `document_table` shows them."""
    uc, lenient = s["uc"], s["lenient"]
    decoys = f"{s['decoys_given']}/{s['decoys']}" + (
        f" ({100 * s['decoys_given_rate']:.0f}%)" if s["decoys_given_rate"] is not None else "")
    over = f"{s['calls_over_chunks']}/{s['docs_with_chunks']}" if s["docs_with_chunks"] else "n/a"
    return [
        _pct(uc["f1"]), _pct(lenient["f1"]), f"{_pct(uc['precision'])}/{_pct(uc['recall'])}", decoys,
        str(s["errors"]), _per_doc(s["llm_calls_per_doc"], 2), _per_doc(s["tokens_per_doc"], 0),
        _per_doc(s["wall_seconds_per_doc"], 1), over,
        ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items())),
    ]


DOCUMENT_COLUMNS = ["system", "F1(UC)", "lenient F1", "P/R (UC)", "decoys given a value", "errors", "calls/doc",
                    "tokens/doc", "s/doc", "calls > chunks+2", "outcomes"]


def document_table(systems: dict[str, dict]) -> str:
    """One row per system on a document case set (Kleister-NDA: see documents.py), then F1(UC) /
    lenient F1 per key."""
    lines = ["| " + " | ".join(DOCUMENT_COLUMNS) + " |", "|" + "---|" * len(DOCUMENT_COLUMNS)]
    for name, system in systems.items():
        lines.append("| " + " | ".join([name, *document_row(system["summary"])]) + " |")
    keys = list(next(iter(systems.values()))["summary"]["per_key"])
    lines += ["", "| system | " + " | ".join(f"{k} F1(UC) / lenient" for k in keys) + " |",
              "|" + "---|" * (len(keys) + 1)]
    for name, system in systems.items():
        per_key = system["summary"]["per_key"]
        cells = [f"{_pct(per_key[k]['uc']['f1'])} / {_pct(per_key[k]['lenient']['f1'])}" for k in keys]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return "\n".join(lines)
