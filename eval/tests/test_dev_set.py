"""The development set in eval/cases/dev.jsonl: well-formed, balanced, and its own schemas in the
subset every server takes (no `pattern`: llama-cpp-python's grammar converter crashes on some);
and the tune/test split (eval/cases/tune.jsonl, test.jsonl): one set of at least 200 cases over
at least 10 schemas, split once, with schemas as users write them (patterns too)."""

import collections
import json
import unittest

import _path  # noqa: F401

from structure_eval.cases import DEFAULT_CASES, DEFAULT_SCHEMAS, check_cases, load_cases, load_schema, violations

try:
    import jsonschema
except ImportError:  # CI runs with the standard library only
    jsonschema = None


class DevSet(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cases = load_cases(DEFAULT_CASES)
        cls.schemas = {c["schema"]: load_schema(c["schema"], DEFAULT_SCHEMAS) for c in cls.cases}

    def test_cases_pass_the_checks(self):
        self.assertEqual(check_cases(self.cases, self.schemas, violations if jsonschema else None), [])

    def test_size_and_balance(self):
        self.assertGreaterEqual(len(self.cases), 40)
        absent = [c for c in self.cases if "absent" in c]
        self.assertEqual(len(absent) * 3, len(self.cases), "a third lack a required value")
        per_schema = collections.Counter((c["schema"], "absent" in c) for c in self.cases)
        for name in self.schemas:
            self.assertEqual(per_schema[(name, False)], 4, name)
            self.assertEqual(per_schema[(name, True)], 2, name)

    def test_ids_name_schema_and_kind(self):
        for c in self.cases:
            self.assertTrue(c["id"].startswith(c["schema"] + "-"), c["id"])
            self.assertEqual(c["id"].endswith("-absent"), "absent" in c, c["id"])

    def test_own_schemas_are_closed_described_and_pattern_free(self):
        own = (DEFAULT_SCHEMAS / f"{name}.json" for name in sorted(self.schemas))
        for path in (path for path in own if path.exists()):  # the bundled one is the product's
            schema = json.loads(path.read_text())
            self.assertEqual(schema.get("additionalProperties"), False, path.name)
            self.assertNotIn('"pattern"', path.read_text(), path.name)
            for name, prop in schema["properties"].items():
                self.assertTrue(prop.get("description"), f"{path.name}: {name}")

    def test_expected_values_are_stated_in_the_prompt(self):
        # Strings (bar dates and enum values) must be copied from the text, not inferred: a
        # check against typos in the expectations.
        from structure_eval.scoring import leaves, occurs_in, schema_at

        for c in self.cases:
            if "absent" in c:
                continue
            schema = self.schemas[c["schema"]]
            for pointer, value in leaves(c["expected"]).items():
                sub = schema_at(schema, pointer)
                if sub.get("format") in ("date", "date-time") or "enum" in sub or isinstance(value, bool):
                    continue
                if pointer == "/action":  # user-action-record: snake_case by the schema's rule
                    continue
                self.assertTrue(occurs_in(value, c["prompt"]), f"{c['id']} {pointer}={value!r}")


class TuneTestSplit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cases_dir = DEFAULT_CASES.parent
        cls.halves = {name: load_cases(cases_dir / f"{name}.jsonl") for name in ("tune", "test")}
        every = [c for half in cls.halves.values() for c in half]
        cls.schemas = {c["schema"]: load_schema(c["schema"], DEFAULT_SCHEMAS) for c in every}

    def test_each_half_passes_the_checks(self):
        for name, cases in self.halves.items():
            self.assertEqual(check_cases(cases, self.schemas, violations if jsonschema else None), [], name)

    def test_the_set_is_large_wide_and_split_once(self):
        tune, test = self.halves["tune"], self.halves["test"]
        self.assertGreaterEqual(len(tune) + len(test), 200)
        self.assertGreaterEqual(len(self.schemas), 10)
        self.assertFalse({c["id"] for c in tune} & {c["id"] for c in test}, "no case in both halves")
        self.assertFalse({c["prompt"] for c in tune} & {c["prompt"] for c in test}, "no text in both halves")
        for name, cases in self.halves.items():
            absent = sum("absent" in c for c in cases)
            self.assertGreater(absent, len(cases) // 5, f"{name}: cases lacking a required value")
            self.assertEqual({c["schema"] for c in cases}, set(self.schemas), f"{name}: every schema in each half")

    def test_every_schema_requires_something(self):
        for name, schema in self.schemas.items():
            self.assertTrue(schema.get("required"), name)


if __name__ == "__main__":
    unittest.main()
