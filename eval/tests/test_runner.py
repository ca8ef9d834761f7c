import unittest

import _path  # noqa: F401

from structure_eval.cli import REFERENCE_TIME, SYSTEMS, parse, system_settings
from structure_eval.runner import Endpoint, structure_command


class StructureCommand(unittest.TestCase):
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


if __name__ == "__main__":
    unittest.main()
