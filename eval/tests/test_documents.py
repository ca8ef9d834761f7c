"""Document cases (Kleister-NDA's kind), on tiny hand-made inputs: the dataset itself is never read."""

import json
import pathlib
import tempfile
import unittest

import _path  # noqa: F401

from structure_eval.cases import DEFAULT_SCHEMAS, check_cases, load_cases, load_schema
from structure_eval.documents import (DocumentScore, document_case, expected_pairs, is_document_line, lenient,
                                      pairs, score_document, summarise_documents, term_value)
from structure_eval.report import table
from structure_eval.scoring import Outcome

NDA = load_schema("nda", DEFAULT_SCHEMAS)


def doc(expected, text="This Agreement is made between Nike, Inc. and Jane Roe."):
    return document_case({"id": "d", "file": "d.pdf", "text": text, "expected": expected})


class Pairs(unittest.TestCase):
    def test_an_answer_becomes_the_benchmarks_pairs(self):
        data = {"effective_date": "2014-05-20", "jurisdiction": "New  York", "party": ["NIKE, Inc.", "Jane\nRoe"],
                "term": {"count": 3, "unit": "years"}}
        self.assertEqual(pairs(data), ["effective_date=2014-05-20", "jurisdiction=New_York",
                                       "party=NIKE,_Inc.", "party=Jane_Roe", "term=3_years"])

    def test_colons_become_underscores(self):
        self.assertEqual(pairs({"party": ["Acme: West"]}), ["party=Acme__West"])

    def test_term_takes_the_singular_for_one(self):
        self.assertEqual(term_value({"count": 1, "unit": "years"}), "1_year")
        self.assertEqual(term_value({"count": 1, "unit": "months"}), "1_month")
        self.assertEqual(term_value({"count": 2, "unit": "years"}), "2_years")
        self.assertEqual(term_value({"count": 12, "unit": "months"}), "12_months")
        self.assertEqual(term_value({"count": 2.0, "unit": "weeks"}), "2_weeks")

    def test_values_of_the_wrong_type_give_no_pair(self):
        self.assertEqual(term_value({"count": "two", "unit": "years"}), None)
        self.assertEqual(term_value({"count": True, "unit": "years"}), None)
        self.assertEqual(term_value("2 years"), None)
        self.assertEqual(pairs({"effective_date": 2014, "party": [None, "", "Acme"], "jurisdiction": None}),
                         ["party=Acme"])
        self.assertEqual(pairs(None), [])

    def test_expected_pairs(self):
        self.assertEqual(expected_pairs({"party": ["A", "B"], "term": ["1_year"]}), ["party=A", "party=B", "term=1_year"])


class Scores(unittest.TestCase):
    def test_a_comma_misses_under_f1_uc_but_hits_leniently(self):
        case = doc({"party": ["Nike_Inc."]})
        score = score_document(case, Outcome("ok", {"party": ["NIKE, Inc."]}, True))
        s = summarise_documents([score], [Outcome("ok")])
        self.assertEqual((s["hits_uc"], s["hits_lenient"]), (0, 1))
        self.assertEqual(s["uc"]["f1"], 0)
        self.assertEqual(s["lenient"]["f1"], 1)
        self.assertEqual(lenient("party=NIKE,_Inc."), lenient("party=Nike_Inc."))
        self.assertEqual(lenient("party=__A._&_B.__(C)"), "party=A_B_C")

    def test_what_a_question_comes_with_counts_and_a_stale_answer_gives_nothing(self):
        case = doc({"party": ["Acme_Corp"], "jurisdiction": ["Ohio"]})
        asking = Outcome("need-more-input", partial={"party": ["Acme Corp"]})
        self.assertEqual(score_document(case, asking).found, ["party=Acme_Corp"])
        self.assertEqual(score_document(case, Outcome("need-more-input")).found, [])
        self.assertEqual(score_document(case, Outcome("stale", {"party": ["Acme Corp"]})).found, [])

    def test_f1_uc_ignores_case_only_and_counts_a_multiset(self):
        case = doc({"party": ["Acme_Corp", "Jane_Roe"], "jurisdiction": ["New_York"]})
        outcome = Outcome("ok", {"party": ["ACME Corp", "acme corp", "John Doe"], "jurisdiction": "New York"}, True)
        s = summarise_documents([score_document(case, outcome)], [outcome])
        # 4 pairs given, 3 expected; Acme and New York hit (the second Acme matches nothing left).
        self.assertEqual((s["found"], s["expected"], s["hits_uc"]), (4, 3, 2))
        self.assertAlmostEqual(s["uc"]["precision"], 2 / 4)
        self.assertAlmostEqual(s["uc"]["recall"], 2 / 3)
        self.assertAlmostEqual(s["uc"]["f1"], 2 * 2 / 7)
        self.assertEqual(s["per_key"]["jurisdiction"]["uc"]["f1"], 1)
        self.assertAlmostEqual(s["per_key"]["party"]["uc"]["f1"], 2 * 1 / 5)
        self.assertIsNone(s["per_key"]["term"]["uc"]["f1"])

    def test_micro_average_over_documents(self):
        a = score_document(doc({"term": ["2_years"]}), Outcome("ok", {"term": {"count": 2, "unit": "years"}}))
        b = score_document(doc({"term": ["1_year"], "party": ["X"]}), Outcome("error"))
        s = summarise_documents([a, b], [Outcome("ok"), Outcome("error")])
        self.assertEqual((s["hits_uc"], s["expected"], s["found"]), (1, 3, 1))
        self.assertEqual(s["uc"]["precision"], 1)
        self.assertAlmostEqual(s["uc"]["recall"], 1 / 3)
        self.assertEqual(s["errors"], 1)
        self.assertEqual(s["statuses"], {"ok": 1, "error": 1})

    def test_decoys_given_a_value(self):
        # The document gives a jurisdiction and parties: effective_date and term are decoys.
        case = doc({"jurisdiction": ["Delaware"], "party": ["Acme"]})
        made_up = Outcome("ok", {"jurisdiction": "Delaware", "term": {"count": 1, "unit": "years"}}, True)
        score = score_document(case, made_up)
        self.assertEqual(score.decoys, ["effective_date", "term"])
        self.assertEqual(score.decoys_given, ["term"])
        quiet = score_document(case, Outcome("ok", {"party": ["Acme"], "effective_date": None}, True))
        self.assertEqual(quiet.decoys_given, [])
        s = summarise_documents([score, quiet], [made_up, Outcome("ok")])
        self.assertEqual((s["decoys_given"], s["decoys"], s["decoys_given_rate"]), (1, 4, 0.25))

    def test_costs_and_calls_beyond_the_chunks(self):
        case = doc({"party": ["Acme"]})
        outcomes = [
            Outcome("ok", {}, llm_calls=3, prompt_tokens=900, completion_tokens=100, wall_seconds=4,
                    detail={"chunks": 1}),
            Outcome("ok", {}, llm_calls=6, prompt_tokens=1100, completion_tokens=100, wall_seconds=2,
                    detail={"chunks": 3}),
            Outcome("error", llm_calls=1, detail="HTTP 500"),
        ]
        scores = [score_document(case, o) for o in outcomes]
        self.assertEqual([s.chunks for s in scores], [1, 3, None])
        s = summarise_documents(scores, outcomes)
        self.assertEqual((s["calls_over_chunks"], s["docs_with_chunks"]), (1, 2))
        self.assertAlmostEqual(s["llm_calls_per_doc"], 10 / 3)
        self.assertAlmostEqual(s["tokens_per_doc"], 2200 / 3)
        self.assertAlmostEqual(s["wall_seconds_per_doc"], 2)

    def test_the_table_has_a_row_per_system(self):
        case = doc({"party": ["Nike_Inc."], "jurisdiction": ["Oregon"]})
        systems = {}
        for name, outcome in {"baseline": Outcome("ok", {"party": ["Nike Inc."], "term": {"count": 1, "unit": "years"}}, llm_calls=1),
                              "structure": Outcome("ok", {"party": ["NIKE, Inc."]}, llm_calls=2, detail={"chunks": 1})}.items():
            score = score_document(case, outcome)
            systems[name] = {"summary": summarise_documents([score], [outcome])}
        lines = table(systems).splitlines()
        self.assertTrue(lines[0].startswith("| system | F1(UC) | lenient F1 | P/R (UC) | decoys given a value |"))
        self.assertTrue(lines[2].startswith("| baseline | 0.50 | 0.50 | 0.50/0.50 | 1/2 (50%) | 0 | 1.00 |"), lines[2])
        self.assertTrue(lines[3].startswith("| structure | 0.00 | 0.67 | 0.00/0.00 | 0/2 (0%) | 0 | 2.00 |"), lines[3])
        self.assertIn("| 0/1 |", lines[3])
        self.assertIn("| n/a |", lines[2])
        self.assertTrue(any(line.startswith("| structure | n/a / n/a | 0.00 / 0.00 | 0.00 / 1.00 | n/a / n/a |") for line in lines))


class Loading(unittest.TestCase):
    LINES = [
        {"id": "dev-0-000", "file": "a.pdf", "text": "NDA between Acme Corp and Jane Roe.", "expected": {"party": ["Acme_Corp", "Jane_Roe"]}},
        {"id": "dev-0-001", "file": "b.pdf", "text": "Mutual NDA, laws of Delaware.", "expected": {"jurisdiction": ["Delaware"], "term": ["2_years"]}},
    ]

    def load(self, lines):
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "cases.jsonl"
            path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
            return load_cases(path)

    def test_document_lines_become_nda_cases(self):
        cases = self.load(self.LINES)
        self.assertEqual(cases[0], {"id": "dev-0-000", "schema": "nda", "prompt": "NDA between Acme Corp and Jane Roe.",
                                    "expected": {"party": ["Acme_Corp", "Jane_Roe"]}, "document": True, "file": "a.pdf"})
        self.assertEqual(check_cases(cases, {"nda": NDA}), [])

    def test_ordinary_cases_are_not_document_cases(self):
        ordinary = {"id": "p", "schema": "person", "prompt": "Ada is 36.", "expected": {"name": "Ada", "age": 36}}
        self.assertFalse(is_document_line(ordinary))
        self.assertFalse(is_document_line({"id": "x", "text": "t", "expected": {"party": "Acme"}}))
        self.assertEqual(self.load([ordinary]), [ordinary])

    def test_the_checks_catch_bad_document_cases(self):
        cases = self.load(self.LINES + [{"id": "dev-0-000", "text": "x", "expected": {"parties": ["A"], "term": [""]}}])
        problems = check_cases(cases, {"nda": NDA})
        self.assertIn("duplicate id 'dev-0-000'", problems)
        self.assertIn("dev-0-000: unknown expected key 'parties'", problems)
        self.assertIn("dev-0-000: expected term holds a value that is not a non-empty string", problems)

    def test_a_set_mixing_documents_and_other_cases_is_refused(self):
        cases = self.load(self.LINES) + [{"id": "p", "schema": "nda", "prompt": "p", "expected": {}}]
        self.assertTrue(any("mixed" in p for p in check_cases(cases, {"nda": NDA})))

    def test_the_nda_schema_is_an_ordinary_form(self):
        self.assertEqual(NDA.get("required", []), [])
        self.assertEqual(NDA["additionalProperties"], False)
        self.assertEqual(sorted(NDA["properties"]), ["effective_date", "jurisdiction", "party", "term"])
        self.assertEqual(NDA["properties"]["term"]["required"], ["count", "unit"])


class ScoreRoundTrip(unittest.TestCase):
    def test_a_saved_score_loads_back(self):
        from dataclasses import asdict

        score = score_document(doc({"party": ["A"]}), Outcome("ok", {"party": ["A"]}))
        self.assertEqual(DocumentScore(**json.loads(json.dumps(asdict(score)))), score)


if __name__ == "__main__":
    unittest.main()
