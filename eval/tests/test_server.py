import unittest

import _path  # noqa: F401

from server import rewrite_response_format


class ResponseFormatRewrite(unittest.TestCase):
    def test_json_schema_becomes_json_object_with_the_schema(self):
        schema = {"type": "object"}
        body = {"model": "m", "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": True}}}
        out = rewrite_response_format(body)
        self.assertEqual(out["response_format"], {"type": "json_object", "schema": schema})
        self.assertEqual(body["response_format"]["type"], "json_schema", "the input is not modified")

    def test_other_bodies_pass_unchanged(self):
        for body in ({"model": "m"}, {"response_format": {"type": "json_object", "schema": {}}}, [], "x"):
            self.assertEqual(rewrite_response_format(body), body)


if __name__ == "__main__":
    unittest.main()
