"""The two systems under test, each turning one case into a scoring.Outcome:

* `baseline`: one plain chat-completions call with `response_format` `json_schema` (the case's
  schema, unchanged) and the schema in the system prompt; the answer is whatever JSON comes back.
  No loop, no need path, no repair.
* `structure`: the `structure` command (`structure run --schema ...`), with its own prompt,
  envelope, grounding, validation and feedback loop; `structure-extractive` the same with
  `structure_extractive=true` (plain strings and numbers offered as the text writes them).

On a document case (a long text) the baseline's one call gets the text cut to fit the model's
context window (`fit_text`), as a plain call on a small local model must; `structure` gets it whole.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable

from .scoring import Outcome

BASELINE_MAX_TOKENS = 1024
BASELINE_TIMEOUT = 900.0
# How long the eval waits for one `structure` command when no request timeout is given: longer
# than its own call timeout, so that structure's limits are the ones that bind.
STRUCTURE_PROCESS_TIMEOUT = 3600.0

BASELINE_SYSTEM = (
    "Extract the information in the user's text as one JSON object that conforms to this JSON "
    "Schema:\n{schema}\nAnswer with the JSON object only."
)


@dataclass
class Endpoint:
    """An OpenAI-compatible server and how `structure` should talk to it. `profile` "auto" leaves
    the server's kind for `structure` to find out; `n_ctx` is the model's context window, tokens."""

    base_url: str
    model: str
    profile: str = "llamacpp"
    api_key: str | None = None
    # `None`: the baseline's own (BASELINE_MAX_TOKENS, BASELINE_TIMEOUT) and structure's defaults.
    max_tokens: int | None = None
    timeout: float | None = None
    structure_settings: list[str] = field(default_factory=list)
    n_ctx: int = 8192
    # The eval's own local model server (its kind is known even when `structure` is left to
    # find it out).
    local_server: bool = False
    # `structure`'s key-value store for the run: what it learns of the server (its kind, its
    # window, its tokens' size) is kept from one case to the next, as a user's store keeps it.
    store: str = "memory"
    # A GGUF file `structure` runs in process (`eval/run --embedded`): no server, no base URL.
    model_file: str | None = None

    def structure_model(self) -> str:
        # `structure` picks its profile from the provider prefix; openai-compatible servers go
        # through `openai/` with a base URL (the profile is forced below in any case, but "auto").
        prefix = {"llamacpp": "llamacpp", "ollama": "ollama", "vllm": "vllm"}.get(self.profile, "openai")
        return f"{prefix}/{self.model}"

    def temperature(self) -> float | None:
        # As `structure`'s profiles do: 0 for local servers, the provider default elsewhere.
        local = self.profile in ("llamacpp", "ollama", "vllm") or self.local_server
        return 0.0 if local else None


def records_schema(schema: Any) -> dict:
    """The one-call baseline's schema for a records case: `{"records": [<schema>, ...]}`."""
    item = {k: v for k, v in schema.items() if k != "$schema"}
    return {"type": "object", "properties": {"records": {"type": "array", "items": item}}, "required": ["records"]}


def baseline_system(schema: Any) -> str:
    """The baseline's system prompt: the instruction and the schema."""
    return BASELINE_SYSTEM.format(schema=json.dumps(schema))


def document_max_tokens(endpoint: Endpoint) -> int:
    """The answer's token limit on a document: a quarter of the window at most, so that most of it
    is left for the text."""
    return min(endpoint.max_tokens or BASELINE_MAX_TOKENS, endpoint.n_ctx // 4)


def fit_text(text: str, system: str, n_ctx: int, max_tokens: int) -> str:
    """The longest start of `text`, cut at whitespace, such that the prompt and the answer fit the
    window at three bytes a token: (system bytes + text bytes) / 3 + max_tokens <= n_ctx."""
    budget = 3 * (n_ctx - max_tokens) - len(system.encode())
    raw = text.encode()
    if len(raw) <= budget:
        return text
    if budget <= 0:
        return ""
    head = raw[:budget].decode(errors="ignore")
    if text[len(head)].isspace():
        return head.rstrip()
    last_space = re.search(r"\s\S*$", head)
    return head[:last_space.start()].rstrip() if last_space else head


def run_document_baseline(text: str, schema: Any, endpoint: Endpoint, validate: Callable[[Any], bool] | None) -> Outcome:
    """The baseline on a document: one call on the start of the text that fits the window."""
    max_tokens = document_max_tokens(endpoint)
    cut = fit_text(text, baseline_system(schema), endpoint.n_ctx, max_tokens)
    outcome = run_baseline(cut, schema, dataclasses.replace(endpoint, max_tokens=max_tokens), validate)
    detail = outcome.detail if isinstance(outcome.detail, dict) else {"error": outcome.detail}
    outcome.detail = {**detail, "text_chars_sent": len(cut), "text_chars": len(text)}
    return outcome


def run_baseline(prompt: str, schema: Any, endpoint: Endpoint, validate: Callable[[Any], bool] | None,
                 records: bool = False) -> Outcome:
    if records:
        outcome = run_baseline(prompt, records_schema(schema), endpoint, None)
        found = outcome.data.get("records") if isinstance(outcome.data, dict) else None
        if outcome.status == "ok" and isinstance(found, list):
            outcome.data = found
            outcome.valid = all(validate(r) for r in found) if validate else None
        elif outcome.status == "ok":
            outcome.status, outcome.data = "error", None
        return outcome
    body: dict[str, Any] = {
        "model": endpoint.model,
        "messages": [
            {"role": "system", "content": baseline_system(schema)},
            {"role": "user", "content": prompt},
        ],
        # strict: false, since a case schema need not be in OpenAI's strict subset.
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "extraction", "schema": schema, "strict": False},
        },
        "max_tokens": endpoint.max_tokens or BASELINE_MAX_TOKENS,
    }
    if endpoint.temperature() is not None:
        body["temperature"] = endpoint.temperature()
    headers = {"content-type": "application/json"}
    if endpoint.api_key:
        headers["authorization"] = f"Bearer {endpoint.api_key}"
    request = urllib.request.Request(
        f"{endpoint.base_url.rstrip('/')}/chat/completions", data=json.dumps(body).encode(), headers=headers
    )
    start = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=endpoint.timeout or BASELINE_TIMEOUT) as response:
            reply = json.load(response)
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")[:500]
        return Outcome("error", llm_calls=1, wall_seconds=time.monotonic() - start, detail=f"HTTP {error.code}: {detail}")
    except (OSError, ValueError) as error:
        return Outcome("error", llm_calls=1, wall_seconds=time.monotonic() - start, detail=str(error))
    wall = time.monotonic() - start
    usage = reply.get("usage") or {}
    outcome = Outcome(
        "error",
        llm_calls=1,
        prompt_tokens=usage.get("prompt_tokens", 0),
        completion_tokens=usage.get("completion_tokens", 0),
        wall_seconds=wall,
    )
    try:
        content = reply["choices"][0]["message"]["content"]
        data = json.loads(content)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        outcome.detail = f"no JSON answer: {error}"
        return outcome
    outcome.detail = {"content": content}
    if not isinstance(data, dict):
        outcome.detail["error"] = "not an object"
        return outcome
    outcome.status, outcome.data = "ok", data
    outcome.valid = validate(data) if validate else None
    return outcome


def structure_command(binary: str, schema_arg: str, endpoint: Endpoint, settings: list[str] = (),
                      records: bool = False, file: os.PathLike | None = None) -> list[str]:
    if endpoint.model_file is not None:
        # The embedded engine: the model named by its file, its window given as the server's is.
        command = [binary, "--store", endpoint.store, "--model-file", endpoint.model_file,
                   "--set", f"structure_model=local/{endpoint.model}"]
    else:
        command = [binary, "--store", endpoint.store, "--model", endpoint.structure_model(), "--base-url", endpoint.base_url]
    if endpoint.profile != "auto" and endpoint.model_file is None:
        command += ["--set", f"structure_provider_profile={endpoint.profile}"]
    if endpoint.max_tokens is not None:
        command += ["--set", f"structure_max_output_tokens={endpoint.max_tokens}"]
    if endpoint.timeout is not None:
        command += ["--set", f"structure_request_timeout_ms={int(endpoint.timeout * 1000)}"]
    for setting in [*settings, *endpoint.structure_settings]:
        command += ["--set", setting]
    command += ["run", "--schema", schema_arg] + (["--records"] if records else [])
    return command + (["--file", str(file)] if file is not None else [])


def run_structure(prompt: str, schema_arg: str, binary: str, endpoint: Endpoint,
                  validate: Callable[[Any], bool] | None, settings: list[str] = (), records: bool = False,
                  file: os.PathLike | None = None) -> Outcome:
    env = dict(os.environ)
    env.pop("OPENAI_API_KEY", None)
    if endpoint.api_key:
        env["OPENAI_API_KEY"] = endpoint.api_key
    start = time.monotonic()
    process = subprocess.run(
        structure_command(binary, schema_arg, endpoint, settings, records, file), input=prompt, capture_output=True, text=True, env=env,
        timeout=endpoint.timeout * 10 if endpoint.timeout else STRUCTURE_PROCESS_TIMEOUT,
    )
    wall = time.monotonic() - start
    try:
        result = json.loads(process.stdout)
    except ValueError:
        return Outcome("error", wall_seconds=wall, detail=f"exit {process.returncode}: {process.stderr.strip()[:500]}")
    if "error" in result:
        usage = result["error"].get("usage") or {}
        status, detail = "error", result["error"]
    else:
        usage = result.get("usage") or {}
        status = result.get("status", "error")
        detail = {k: result.get(k) for k in ("need", "errors", "iterations", "incomplete")}
        trace = result.get("trace") or {}
        detail.update(feedback=trace.get("feedback"), repairs=trace.get("repairs"))
        # Each value's confidence, for the calibration report (eval/run --calibration).
        detail["sources"] = [{"pointer": s["pointer"], "confidence": s.get("confidence")}
                             for s in result.get("sources") or []]
        if trace.get("lowConfidence"):
            detail["lowConfidence"] = trace["lowConfidence"]
        if trace.get("secondLooks"):
            detail["secondLooks"] = trace["secondLooks"]
        if trace.get("inDoubt"):
            detail["inDoubt"] = trace["inDoubt"]
        if trace.get("formConfidence") is not None:
            detail["formConfidence"] = trace["formConfidence"]
        if trace.get("leftOut"):
            detail["leftOut"] = trace["leftOut"]
        if "chunks" in trace:
            detail["chunks"] = trace["chunks"]
    outcome = Outcome(
        status,
        llm_calls=usage.get("llmCalls", 0),
        prompt_tokens=usage.get("promptTokens", 0),
        completion_tokens=usage.get("completionTokens", 0),
        wall_seconds=wall,
        detail=detail,
    )
    if status == "ok":
        outcome.data = result.get("data")
        if records:
            outcome.valid = all(validate(r) for r in outcome.data) if validate else None
        else:
            outcome.valid = validate(outcome.data) if validate else None
    elif status == "need-more-input":
        outcome.partial = result.get("partial")
    return outcome
