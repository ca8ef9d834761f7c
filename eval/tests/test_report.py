import unittest

import _path  # noqa: F401

from structure_eval.report import table
from structure_eval.scoring import Outcome, score_case, summarise

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


class Table(unittest.TestCase):
    def test_one_column_per_system_and_targets_checked_for_structure(self):
        cases = [{"id": "x", "prompt": "a is b", "expected": {"a": "b"}}, {"id": "y", "prompt": "?", "expected": None, "absent": "a"}]
        systems = {}
        for name, outcomes in {
            "baseline": [Outcome("ok", {"a": "b"}, True, 1), Outcome("ok", {"a": "c"}, True, 1)],
            "structure": [Outcome("ok", {"a": "b"}, True, 1), Outcome("need-more-input", llm_calls=1)],
        }.items():
            scores = [score_case(c, SCHEMA, o) for c, o in zip(cases, outcomes)]
            systems[name] = {"summary": summarise(scores, outcomes)}
        text = table(systems)
        lines = text.splitlines()
        self.assertEqual(lines[0], "| figure | baseline | structure | target |")
        self.assertIn("| exact (complete cases) | 1/1 | 1/1 met | >= 16/28 of complete cases |", lines)
        self.assertIn("| invented (absent cases) | 1/1 | 0/1 met | <= 1 |", lines)
        self.assertIn("| need-more-input precision | n/a | 1.00 met | >= 0.8 |", lines)
        self.assertIn("| LLM calls per case | 1.00 | 1.00 met | <= 1.5 |", lines)


if __name__ == "__main__":
    unittest.main()
