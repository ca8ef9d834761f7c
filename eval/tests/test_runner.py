import unittest

import _path  # noqa: F401

from structure_eval.cli import REFERENCE_TIME, SYSTEMS, parse, system_settings
from structure_eval.runner import Endpoint, baseline_system, document_max_tokens, fit_text, structure_command


class StructureCommand(unittest.TestCase):
    def test_the_embedded_engine_runs_the_model_file_with_no_server(self):
        endpoint = Endpoint("", "qwen2.5-coder-0.5b-instruct", model_file="/models/q.gguf",
                            structure_settings=["structure_context_tokens=8192"])
        command = structure_command("structure", "person.json", endpoint)
        self.assertEqual(command[:7], ["structure", "--store", "memory", "--model-file", "/models/q.gguf",
                                       "--set", "structure_model=local/qwen2.5-coder-0.5b-instruct"])
        self.assertNotIn("--base-url", command)
        self.assertNotIn("structure_provider_profile=llamacpp", command)
        self.assertIn("structure_context_tokens=8192", command)

    def test_the_endpoint_the_profile_and_the_settings_reach_the_command(self):
        endpoint = Endpoint("http://127.0.0.1:9/v1", "smol", profile="llamacpp", max_tokens=256, timeout=30,
                            structure_settings=["structure_max_loops=2"])
        command = structure_command("structure", "eval/schemas/person.json", endpoint,
                                    system_settings("structure-extractive", REFERENCE_TIME))
        self.assertEqual(command[:7], ["structure", "--store", "memory", "--model", "llamacpp/smol",
                                       "--base-url", "http://127.0.0.1:9/v1"])
        pairs = [command[i + 1] for i, part in enumerate(command) if part == "--set"]
        self.assertEqual(pairs, [
            "structure_provider_profile=llamacpp",
            "structure_max_output_tokens=256",
            "structure_request_timeout_ms=30000",
            "structure_extractive=true",
            f"structure_reference_time={REFERENCE_TIME}",
            "structure_max_loops=2",
        ])
        self.assertEqual(command[-3:], ["run", "--schema", "eval/schemas/person.json"])

    def test_defaults_and_profiles(self):
        self.assertEqual(system_settings("structure", "now"), [])
        self.assertEqual(Endpoint("u", "gpt-4.1-mini", profile="openai").structure_model(), "openai/gpt-4.1-mini")
        self.assertEqual(Endpoint("u", "m", profile="openai-compatible").temperature(), None)
        self.assertEqual(Endpoint("u", "m", profile="ollama").temperature(), 0.0)
        args = parse([])
        self.assertEqual(args.systems.split(","), list(SYSTEMS))
        self.assertEqual(args.reference_time, REFERENCE_TIME)
        self.assertEqual((args.n_ctx, args.limit, args.local_model), (8192, None, "qwen"))
        self.assertIsNone(args.model)
        self.assertEqual((parse(["--n-ctx", "2048", "--limit", "3"]).n_ctx, parse(["--limit", "3"]).limit), (2048, 3))

    def test_structure_runs_with_its_own_limits_unless_given(self):
        command = structure_command("structure", "nda.json", Endpoint("u", "m"))
        self.assertFalse(any(part.startswith(("structure_max_output_tokens", "structure_request_timeout_ms"))
                             for part in command), command)
        self.assertEqual(document_max_tokens(Endpoint("u", "m", n_ctx=8192)), 1024)

    def test_profile_auto_leaves_the_server_kind_to_structure(self):
        args = parse(["--profile", "auto", "--base-url", "http://127.0.0.1:9/v1", "--model", "smol"])
        endpoint = Endpoint(args.base_url, args.model, profile=args.profile)
        command = structure_command("structure", "nda.json", endpoint)
        self.assertEqual(command[3:7], ["--model", "openai/smol", "--base-url", "http://127.0.0.1:9/v1"])
        self.assertFalse(any(part.startswith("structure_provider_profile") for part in command), command)
        self.assertIsNone(endpoint.temperature())

    def test_a_document_case_from_its_pdf_is_given_to_structure_as_a_file(self):
        import pathlib
        from structure_eval.cli import run_system
        from structure_eval import cli
        args = parse(["--from-pdf", "/data/pdf"])
        self.assertEqual(args.from_pdf, pathlib.Path("/data/pdf"))
        command = structure_command("structure", "nda", Endpoint("u", "m"), file=pathlib.Path("/data/pdf/a.pdf"))
        self.assertEqual(command[-5:], ["run", "--schema", "nda", "--file", "/data/pdf/a.pdf"])
        seen = {}
        original = cli.run_structure
        cli.run_structure = lambda prompt, *rest, **named: seen.update(prompt=prompt, **named)
        try:
            case = {"id": "d", "document": True, "file": "a.pdf", "prompt": "the text"}
            run_system("structure", case, {}, "nda", None, "structure", Endpoint("u", "m"), "now",
                       pathlib.Path("/data/pdf"))
        finally:
            cli.run_structure = original
        self.assertEqual(seen, {"prompt": "", "file": pathlib.Path("/data/pdf/a.pdf")})


class CutToFit(unittest.TestCase):
    SCHEMA = {"type": "object", "properties": {"party": {"type": "array", "items": {"type": "string"}}}}

    def test_the_baseline_text_fits_the_window(self):
        endpoint = Endpoint("u", "m", max_tokens=1024, n_ctx=2048)
        max_tokens = document_max_tokens(endpoint)
        self.assertEqual(max_tokens, 512)
        system = baseline_system(self.SCHEMA)
        text = " ".join(f"word{i:05d}" for i in range(2000))  # 20,000 bytes
        cut = fit_text(text, system, 2048, max_tokens)
        budget = 3 * (2048 - 512) - len(system.encode())
        self.assertLessEqual((len(system.encode()) + len(cut.encode())) / 3 + max_tokens, 2048)
        self.assertGreater(len(cut.encode()), budget - 10, "no more than a word is lost")
        self.assertTrue(text.startswith(cut))
        self.assertEqual(text[len(cut)], " ", "cut at whitespace")
        self.assertRegex(cut.rsplit(" ", 1)[1], r"^word\d{5}$", "the last word whole")

    def test_a_short_text_is_sent_whole_and_a_multibyte_one_cut_whole(self):
        self.assertEqual(fit_text("a short NDA", "system", 4096, 1024), "a short NDA")
        self.assertEqual(document_max_tokens(Endpoint("u", "m", max_tokens=256, n_ctx=4096)), 256)
        cut = fit_text("é" * 10 + " " + "é" * 10, "", 10, 6)  # 12 bytes: six é, no whitespace before
        self.assertEqual(cut, "é" * 6)
        self.assertEqual(fit_text("ab cd ef", "", 3, 1), "ab cd")  # 6 bytes: the cut falls on a space


if __name__ == "__main__":
    unittest.main()
