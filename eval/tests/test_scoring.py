import unittest

import _path  # noqa: F401

from structure_eval.scoring import (
    CaseScore,
    Outcome,
    canon,
    invented_fields,
    leaves,
    norm_text,
    occurs_in,
    same,
    score_case,
    summarise,
)

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "email": {"type": "string", "format": "email"},
        "status": {"type": "string", "enum": ["open", "closed"]},
        "vip": {"type": "boolean"},
    },
    "required": ["name", "age"],
}
AUDIT = {
    "type": "object",
    "$defs": {"when": {"type": "string", "format": "date-time"}},
    "properties": {
        "at": {"$ref": "#/$defs/when"},
        "day": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "steps": {"type": "array", "items": {"type": "string"}},
        "customer": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
    },
    "required": ["at", "customer"],
}


class Normalisation(unittest.TestCase):
    def test_strings_are_trimmed_collapsed_casefolded_and_unquoted(self):
        self.assertEqual(norm_text("  Login   page\ttimes OUT "), "login page times out")
        self.assertEqual(norm_text('"Login page times out"'), "login page times out")
        self.assertEqual(norm_text("\u201cStraße\u201d"), "strasse")
        self.assertEqual(norm_text("ﬁle"), "file")  # NFKC
        self.assertEqual(norm_text("'a\""), "'a\"")  # unmatched quotes stay

    def test_numbers_compare_numerically_but_never_equal_booleans(self):
        self.assertTrue(same(3, 3.0))
        self.assertFalse(same(1, True))
        self.assertFalse(same(0, False))
        self.assertFalse(same(3, "3"))

    def test_dates_and_instants_are_canonicalised_by_format(self):
        self.assertTrue(same({"at": "2025-01-05T09:15:00Z", "customer": {"email": "a"}},
                             {"at": "2025-01-05T10:15:00+01:00", "customer": {"email": "a"}}, AUDIT))
        self.assertTrue(same({"at": "2025-01-05T09:15:00.000Z"}, {"at": "2025-01-05t09:15:00z"}, AUDIT))
        self.assertFalse(same({"at": "2025-01-05T09:15:00"}, {"at": "2025-01-05T09:15:00Z"}, AUDIT))
        self.assertEqual(canon({"day": "2025-04-14"}, AUDIT), {"day": "2025-04-14"})
        self.assertFalse(same({"day": "14 April 2025"}, {"day": "2025-04-14"}, AUDIT))
        # Without a format, a date-looking string is only a string.
        self.assertFalse(same("2025-01-05T09:15:00Z", "2025-01-05T10:15:00+01:00"))

    def test_arrays_are_sets_only_with_unique_items(self):
        self.assertTrue(same({"tags": ["b", "A", "a"]}, {"tags": ["a", "b"]}, AUDIT))
        self.assertFalse(same({"steps": ["b", "a"]}, {"steps": ["a", "b"]}, AUDIT))
        self.assertTrue(same({"steps": ["A ", "b"]}, {"steps": ["a", "b"]}, AUDIT))

    def test_null_means_absent_and_extra_fields_differ(self):
        self.assertTrue(same({"name": "Ada", "age": 3, "email": None}, {"name": "ada", "age": 3}, PERSON))
        self.assertFalse(same({"name": "Ada", "age": 3, "email": ""}, {"name": "Ada", "age": 3}, PERSON))
        self.assertFalse(same({"name": "Ada", "age": 3, "vip": False}, {"name": "Ada", "age": 3}, PERSON))

    def test_leaves_are_pointers_with_arrays_whole(self):
        self.assertEqual(
            leaves({"a": {"b/c": 1, "d": None}, "t": ["x"], "e": ""}),
            {"/a/b~1c": 1, "/t": ["x"], "/e": ""},
        )


class Invention(unittest.TestCase):
    TEXT = "Maria Lopez is a 34-year-old architect, reachable at maria@example.com."

    def test_values_from_the_text_are_not_invented(self):
        self.assertTrue(occurs_in("maria lopez", self.TEXT))
        self.assertTrue(occurs_in(34, self.TEXT))
        self.assertFalse(occurs_in(3, self.TEXT))  # a number token, not a digit inside one
        self.assertFalse(occurs_in(4, "version 3.4"))
        self.assertTrue(occurs_in(["architect", "Maria"], self.TEXT))
        self.assertFalse(occurs_in(["architect", "nurse"], self.TEXT))

    def test_wrong_or_extra_fields_not_in_the_text_are_invented_but_judgements_are_not(self):
        expected = {"name": "Maria Lopez", "age": 34}
        data = {"name": "Maria", "age": 35, "email": "maria@example.com", "status": "open", "vip": True}
        # "Maria" occurs (a partial value is wrong, not invented); 35 does not; the email is an
        # extra field stated in the text; enum and boolean values are judgements.
        self.assertEqual(invented_fields(data, expected, PERSON, self.TEXT), ["/age"])


def case(**kw):
    base = {"id": "c", "schema": "person", "prompt": "Maria Lopez is a 34-year-old architect."}
    base.update(kw)
    return base


class CaseScoring(unittest.TestCase):
    def test_an_exact_answer(self):
        c = case(expected={"name": "Maria Lopez", "age": 34})
        s = score_case(c, PERSON, Outcome("ok", {"name": "maria lopez", "age": 34.0}, valid=True))
        self.assertTrue(s.exact)
        self.assertEqual((s.fields_right, s.fields_total), (2, 2))
        self.assertEqual(s.invented, [])

    def test_an_invalid_answer_is_never_exact(self):
        c = case(expected={"name": "Maria Lopez", "age": 34})
        s = score_case(c, PERSON, Outcome("ok", {"name": "Maria Lopez", "age": 34}, valid=False))
        self.assertFalse(s.exact)
        self.assertEqual(s.fields_right, 2)

    def test_an_extra_field_spoils_exactness_but_not_field_accuracy(self):
        c = case(expected={"name": "Maria Lopez", "age": 34})
        s = score_case(c, PERSON, Outcome("ok", {"name": "Maria Lopez", "age": 34, "email": "x@y.z"}, valid=True))
        self.assertFalse(s.exact)
        self.assertEqual(s.fields_right, 2)
        self.assertEqual(s.invented, ["/email"])

    def test_no_answer_on_a_complete_case_scores_zero_fields(self):
        c = case(expected={"name": "Maria Lopez", "age": 34})
        s = score_case(c, PERSON, Outcome("need-more-input"))
        self.assertEqual((s.exact, s.fields_right, s.fields_total, s.abstained), (False, 0, 2, True))

    def test_absent_cases(self):
        c = case(prompt="Laura Chen is a pharmacist.", expected=None, absent="age")
        self.assertEqual(score_case(c, PERSON, Outcome("ok", {"name": "Laura Chen", "age": 30}, True)).invented, ["/age"])
        self.assertEqual(score_case(c, PERSON, Outcome("ok", {"name": "Laura Chen", "age": None}, False)).invented, [])
        self.assertTrue(score_case(c, PERSON, Outcome("need-more-input")).abstained)
        nested = case(expected=None, absent="/customer/email")
        s = score_case(nested, AUDIT, Outcome("ok", {"at": "x", "customer": {"email": "e@x.y"}}, True))
        self.assertEqual(s.invented, ["/customer/email"])
        self.assertEqual(score_case(nested, AUDIT, Outcome("stale")).invented, [])

    def test_summary_figures(self):
        complete = case(expected={"name": "Maria Lopez", "age": 34})
        absent = case(id="a", expected=None, absent="age")
        outcomes = [
            Outcome("ok", {"name": "Maria Lopez", "age": 34}, True, llm_calls=1, prompt_tokens=100, completion_tokens=10, wall_seconds=1),
            Outcome("need-more-input", llm_calls=1, prompt_tokens=100, completion_tokens=10, wall_seconds=1),
            Outcome("need-more-input", llm_calls=2, prompt_tokens=200, completion_tokens=20, wall_seconds=2),
            Outcome("ok", {"name": "X", "age": 1}, True, llm_calls=2, prompt_tokens=200, completion_tokens=20, wall_seconds=2),
        ]
        cases = [complete, complete, absent, absent]
        scores = [score_case(c, PERSON, o) for c, o in zip(cases, outcomes)]
        s = summarise(scores, outcomes)
        self.assertEqual((s["exact"], s["complete"], s["absent"]), (1, 2, 2))
        self.assertEqual(s["field_accuracy"], 0.5)
        self.assertEqual(s["need_precision"], 0.5)
        self.assertEqual(s["need_recall"], 0.5)
        self.assertEqual(s["invented_absent"], 1)
        self.assertEqual(s["llm_calls_per_case"], 1.5)
        self.assertEqual(s["prompt_tokens_per_case"], 150)
        self.assertEqual((s["schema_valid"], s["answers_checked"]), (2, 2))
        self.assertEqual(s["statuses"], {"ok": 2, "need-more-input": 2})

    def test_no_abstention_means_no_precision(self):
        s = summarise([CaseScore("a", True, "ok")], [Outcome("ok")])
        self.assertIsNone(s["need_precision"])
        self.assertEqual(s["need_recall"], 0)


if __name__ == "__main__":
    unittest.main()


class RecordsScoring(unittest.TestCase):
    CASE = {"id": "r", "schema": "person", "records": True, "prompt": "Ada is 36. Alan is 41.",
            "expected": [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]}

    def test_every_record_matched_is_exact(self):
        outcome = Outcome("ok", data=[{"name": "Ada", "age": 36}, {"name": "alan", "age": 41}], valid=True)
        score = score_case(self.CASE, PERSON, outcome)
        self.assertEqual((score.records_matched, score.records_found, score.exact), (2, 2, True))
        self.assertEqual((score.fields_right, score.fields_total), (4, 4))

    def test_a_missed_and_a_made_up_record_count_apart(self):
        outcome = Outcome("ok", data=[{"name": "Ada", "age": 35}, {"name": "Bob", "age": 1}], valid=True)
        score = score_case(self.CASE, PERSON, outcome)
        self.assertEqual((score.records_matched, score.records_found, score.exact), (0, 2, False))
        self.assertEqual(score.fields_right, 1, "Ada's name, not her age; Bob matches no one")
        summary = summarise([score], [outcome])
        self.assertEqual((summary["records_expected"], summary["records_matched"]), (2, 0))

    def test_no_answer_scores_nothing(self):
        score = score_case(self.CASE, PERSON, Outcome("error"))
        self.assertEqual((score.records_found, score.records_matched, score.fields_right), (0, 0, 0))
