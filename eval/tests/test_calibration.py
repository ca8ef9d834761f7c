"""The calibration report: values judged against the expectation, the reliability table and its
expected calibration error, and what a `structure_min_confidence` makes of each answer."""

import unittest

import _path  # noqa: F401

from structure_eval import calibration

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
}
CASES = {
    "full": {"id": "full", "schema": "p", "prompt": "Ada, 36", "expected": {"name": "Ada", "age": 36, "tags": ["x"]}},
    "lacking": {"id": "lacking", "schema": "p", "prompt": "Ada", "absent": "age"},
}


def entry(case, data, confidences):
    sources = [{"pointer": p, "confidence": c} for p, c in confidences.items()]
    return {"case": case, "outcome": {"status": "ok", "data": data, "valid": True, "detail": {"sources": sources}}}


ENTRIES = [
    entry("full", {"name": "Ada", "age": 37, "tags": ["x", "y"]},
          {"/name": 0.95, "/age": 0.35, "/tags/0": 0.9, "/tags/1": 0.2}),
    entry("lacking", {"name": "Ada", "age": 30}, {"/name": 0.9, "/age": 0.15}),
]


class Calibration(unittest.TestCase):
    def test_values_are_judged_against_the_expectation(self):
        judged = calibration.values(CASES, {"p": SCHEMA}, ENTRIES)
        self.assertEqual(judged, [(0.95, True), (0.35, False), (0.9, True), (0.2, False), (0.15, False)])

    def test_reliability_by_decile_and_its_error(self):
        rows, ece = calibration.reliability([(0.95, True), (0.35, False), (0.9, True), (0.2, False)])
        self.assertEqual([(band, n) for band, n, _, _ in rows], [("0.2–0.3", 1), ("0.3–0.4", 1), ("0.9–1.0", 2)])
        self.assertAlmostEqual(ece, (0.2 + 0.35 + 2 * 0.075) / 4)

    def test_a_threshold_drops_optional_values_and_asks_for_required_ones(self):
        schemas = {"p": SCHEMA}
        self.assertEqual(calibration.held(CASES["full"], SCHEMA, ENTRIES[0]["outcome"], 0.3),
                         ("ok", {"name": "Ada", "age": 37, "tags": ["x"]}))
        self.assertEqual(calibration.held(CASES["full"], SCHEMA, ENTRIES[0]["outcome"], 0.5),
                         ("need-more-input", None))
        rows = calibration.sweep(CASES, schemas, ENTRIES, [0.0, 0.3])
        self.assertEqual([(r["need_recall"], r["need_precision"], r["abstentions"]) for r in rows],
                         [(0.0, None, 0), (1.0, 1.0, 1)])


    def test_a_documents_values_are_judged_as_the_benchmark_pairs_them(self):
        case = {"id": "d", "document": True, "schema": "nda", "prompt": "...",
                "expected": {"party": ["Nike_Inc."], "term": ["2_years"]}}
        data = {"party": ["NIKE, Inc.", "Acme"], "term": {"count": 2, "unit": "years"}, "jurisdiction": "Oregon"}
        judged = [calibration.correct(case, {}, data, p)
                  for p in ["/party/0", "/party/1", "/term/count", "/jurisdiction"]]
        self.assertEqual(judged, [True, False, True, False])


if __name__ == "__main__":
    unittest.main()
