"""Is `structure`'s per-value confidence calibrated, and what would `structure_min_confidence` do?
Standard library only. Read from a results file (`eval/run --calibration RESULTS`).

* A value: each source of an `ok` answer that carries a confidence. Correct on a complete case
  when it equals the expected value at its pointer (an array item: when the expected array holds
  it); on an absent case only the value at the absent pointer is judged — wrong, it was invented;
  on a document case (Kleister-NDA) when the pair its key makes is one of the document's
  (lenient, as documents.py scores), a value for a key the document lacks being wrong.
* Reliability: the values by confidence decile, each with its share correct; the expected
  calibration error (ECE) is the mean gap between confidence and share correct, weighted by the
  values in each decile.
* Threshold: what `structure_min_confidence = t` makes of each answer, as the product does it: a
  value below t that the answer needs (its property required, and so each object holding it)
  makes the case `need-more-input`; any other value below t is dropped, with the optional
  object that requires it if it is required there. Recall, precision and exact answers are then counted as the scorer
  counts them (scoring.py).
"""

from __future__ import annotations

import copy
from typing import Any

from . import documents
from .scoring import (absent_pointer, escape_token, pointer_tokens, same, schema_at,
                      value_at)


def _parent(pointer: str) -> tuple[str, str]:
    head, _, last = pointer.rpartition("/")
    return head, last


def correct_in_document(case: dict, data: Any, pointer: str) -> bool | None:
    """A document case's value, judged the benchmark's way (lenient pairs): the pair its key
    makes is one of the document's, or the key is a decoy (any value is wrong)."""
    key = (pointer_tokens(pointer) or [""])[0]
    if key == "term":
        value = {"term": data.get("term")} if isinstance(data, dict) else {}
    elif key == "party":
        value = {"party": [value_at(data, pointer)]}
    else:
        value = {key: value_at(data, pointer)}
    made = documents.pairs(value)
    if not made:
        return None
    wanted = documents.expected_pairs({key: case["expected"].get(key, [])})
    return documents.hits(wanted, made, documents.lenient) == len(made)


def correct(case: dict, schema: Any, data: Any, pointer: str) -> bool | None:
    """Whether the value at `pointer` of `data` is right for `case`; None when not judged."""
    if case.get("document"):
        return correct_in_document(case, data, pointer)
    if "absent" in case:
        return False if pointer == absent_pointer(case["absent"]) else None
    expected = case["expected"]
    got = value_at(data, pointer)
    parent, last = _parent(pointer)
    want_parent = value_at(expected, parent) if parent else expected
    if isinstance(want_parent, list) and last.isdigit():
        return any(same(got, item, schema_at(schema, parent).get("items")) for item in want_parent)
    want = value_at(expected, pointer)
    return want is not None and same(got, want, schema_at(schema, pointer))


def values(cases: dict[str, dict], schemas: dict[str, Any], entries: list[dict]) -> list[tuple[float, bool]]:
    """(confidence, correct) for every judged value of every `ok` answer in `entries`."""
    out = []
    for entry in entries:
        outcome = entry["outcome"]
        case = cases[entry["case"]]
        if outcome["status"] != "ok":
            continue
        for source in (outcome.get("detail") or {}).get("sources") or []:
            if source.get("confidence") is None:
                continue
            verdict = correct(case, schemas[case["schema"]], outcome["data"], source["pointer"])
            if verdict is not None:
                out.append((source["confidence"], verdict))
    return out


def reliability(judged: list[tuple[float, bool]]) -> tuple[list[tuple[str, int, float, float]], float | None]:
    """Rows (decile, values, mean confidence, share correct) and the ECE."""
    rows, gap = [], 0.0
    for decile in range(10):
        low, high = decile / 10, (decile + 1) / 10
        inside = [(c, ok) for c, ok in judged if low <= c < high or (decile == 9 and c == 1.0)]
        if not inside:
            continue
        mean = sum(c for c, _ in inside) / len(inside)
        share = sum(ok for _, ok in inside) / len(inside)
        rows.append((f"{low:.1f}–{high:.1f}", len(inside), mean, share))
        gap += len(inside) * abs(mean - share)
    return rows, (gap / len(judged) if judged else None)


def _required_here(schema: Any, pointer: str) -> bool:
    """Whether the object holding `pointer`'s property requires it (an array item: no)."""
    parent, last = _parent(pointer)
    holder = schema_at(schema, parent) if parent else schema
    required = holder.get("required") if isinstance(holder, dict) else None
    return isinstance(required, list) and any(escape_token(name) == last for name in required)


def _droppable(schema: Any, pointer: str) -> str | None:
    """The nearest of `pointer` and the objects holding it that the answer may lack (an unsure
    `count` goes with the optional `term` that requires it), as the product finds it; None when
    every one is required."""
    at = pointer
    while at:
        if not _required_here(schema, at):
            return at
        at = _parent(at)[0]
    return None


def _required(schema: Any, pointer: str) -> bool:
    return _droppable(schema, pointer) is None


def _drop(data: Any, pointer: str) -> None:
    parts = pointer_tokens(pointer)
    node = data
    if not parts:
        return
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)] if part.isdigit() and int(part) < len(node) else None
        elif isinstance(node, dict):
            node = node.get(part)
        if node is None or not isinstance(node, (list, dict)):
            return
    last = parts[-1]
    if isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node.pop(int(last))
    elif isinstance(node, dict):
        node.pop(last, None)


def held(case: dict, schema: Any, outcome: dict, threshold: float,
         optional_only: bool = False) -> tuple[str, Any]:
    """(status, data) of `outcome` once held to `threshold`; with `optional_only`, a required
    value below it stays (only the values the answer may lack are dropped)."""
    if outcome["status"] != "ok":
        return outcome["status"], None
    data = copy.deepcopy(outcome["data"])
    low = [s["pointer"] for s in (outcome.get("detail") or {}).get("sources") or []
           if s.get("confidence") is not None and s["confidence"] < threshold]
    if optional_only:
        low = [pointer for pointer in low if not _required(schema, pointer)]
    if any(_required(schema, pointer) for pointer in low):
        return "need-more-input", None
    # Last first, so that dropping an array's later item leaves its earlier ones in place.
    for pointer in sorted(low, key=lambda p: [int(t) if t.isdigit() else -1 for t in pointer_tokens(p)],
                          reverse=True):
        _drop(data, _droppable(schema, pointer))
    return "ok", data


def sweep(cases: dict[str, dict], schemas: dict[str, Any], entries: list[dict],
          thresholds: list[float], optional_only: bool = False) -> list[dict]:
    """Need recall, precision and exact answers at each threshold (0: off)."""
    rows = []
    for threshold in thresholds:
        abstained = true = exact = absent = complete = 0
        for entry in entries:
            case = cases[entry["case"]]
            schema = schemas[case["schema"]]
            status, data = held(case, schema, entry["outcome"], threshold, optional_only)
            if "absent" in case:
                absent += 1
                true += status == "need-more-input"
            else:
                complete += 1
                exact += status == "ok" and entry["outcome"].get("valid") is not False and same(
                    data, case["expected"], schema)
            abstained += status == "need-more-input"
        rows.append({
            "threshold": threshold,
            "exact": exact, "complete": complete,
            "need_recall": true / absent if absent else None,
            "need_precision": true / abstained if abstained else None,
            "abstentions": abstained,
        })
    return rows


def report(run: dict, cases: dict[str, dict], schemas: dict[str, Any], system: str = "structure") -> str:
    entries = run["systems"][system]["cases"]
    judged = values(cases, schemas, entries)
    rows, ece = reliability(judged)
    lines = [f"{len(judged)} values with a confidence ({sum(ok for _, ok in judged)} correct)",
             "", "| confidence | values | mean confidence | correct |", "|---|---|---|---|"]
    lines += [f"| {band} | {n} | {mean:.2f} | {share:.2f} |" for band, n, mean, share in rows]
    lines += ["", f"expected calibration error: {ece:.3f}" if ece is not None else "no values", "",
              "| min confidence | exact | need recall | need precision | abstentions | judged values at or above it: right / wrong | exact, optional values only |",
              "|---|---|---|---|---|---|---|"]
    thresholds = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    optional = sweep(cases, schemas, entries, thresholds, optional_only=True)
    for row, only in zip(sweep(cases, schemas, entries, thresholds), optional):
        recall = "–" if row["need_recall"] is None else f"{row['need_recall']:.2f}"
        precision = "–" if row["need_precision"] is None else f"{row['need_precision']:.2f}"
        name = "off" if row["threshold"] == 0 else f"{row['threshold']:.1f}"
        kept = [ok for confidence, ok in judged if confidence >= row["threshold"]]
        lines.append(f"| {name} | {row['exact']}/{row['complete']} | {recall} | {precision} | {row['abstentions']} "
                     f"| {sum(kept)} / {len(kept) - sum(kept)} | {only['exact']}/{only['complete']} |")
    return "\n".join(lines)
