"""One Python contender of the side-by-side, measured in a process of its own.

run.py starts this file once per contender with the bench venv's interpreter:

    python contenders.py CONTENDER --base-url http://127.0.0.1:PORT/v1 --calls N --warmup W
        --result FILE [--floor-body FILE] [--baml-client DIR]

and reads one JSON object from FILE: {"rows": [...], "probe": {...}, "peakRssBytes": N}. (Not
stdout: BAML logs there.) One process per
contender because `time.process_time()` counts every thread of the process: BAML's runtime
threads must not show up in instructor's figures, nor one library's imports in another's.

CONTENDER is one of:
  floor       httpx2 (the HTTP client the openai SDK uses) posting instructor's request body on a
              kept-alive connection, then json.loads of the response and of the message content.
  instructor  instructor 1.17 over the openai SDK, TOOLS mode; scenarios valid and one violation.
  baml        the BAML client generated from baml_src/ (run.py generates it); scenario valid.
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import os
import resource
import statistics
import sys
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

PROMPT = "mike_42 broke the build on 30 November 2026 at 14:30 UTC (tags: ci, build)."
VALID = {
    "userId": "mike_42",
    "action": "broke_build",
    "timestamp": "2026-11-30T14:30:00Z",
    "status": "failure",
    "tags": ["ci", "build"],
}
INVALID = dict(VALID, timestamp="today at 2:30 pm")


# --- the mock's control API -----------------------------------------------------------------


class Mock:
    """The mock LLM's control API over a stdlib connection of its own, so scripting the mock
    shares nothing (pool, client state) with the client being measured."""

    def __init__(self, base_url: str):
        url = urllib.parse.urlsplit(base_url)
        self.connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        payload = None if body is None else json.dumps(body)
        headers = {} if payload is None else {"content-type": "application/json"}
        self.connection.request(method, path, body=payload, headers=headers)
        response = self.connection.getresponse()
        text = response.read()
        if response.status != 200:
            raise RuntimeError(f"mock control {method} {path}: {response.status} {text[:200]!r}")
        return json.loads(text)

    def reset(self) -> None:
        self._call("POST", "/_mock/reset")

    def queue(self, body: str) -> None:
        self._call(
            "POST",
            "/_mock/replies",
            {"status": 200, "headers": [["content-type", "application/json"]], "body": body, "delayMs": 0},
        )

    def requests(self) -> list[dict]:
        return self._call("GET", "/_mock/requests")


def completion(message: dict, finish_reason: str) -> str:
    """A Chat Completions response body, shaped like mock_llm::Reply's."""
    return json.dumps(
        {
            "id": "chatcmpl-mock",
            "object": "chat.completion",
            "created": 1_767_225_600,
            "model": "mock",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "total_tokens": 120,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        }
    )


def text_reply(answer: dict) -> str:
    """The model answers with the JSON as message content (what BAML and the floor read)."""
    return completion({"role": "assistant", "content": json.dumps(answer), "refusal": None}, "stop")


def tool_reply(function: str, answer: dict) -> str:
    """The model calls `function` with the JSON as arguments (what instructor's TOOLS mode reads)."""
    call = {"id": "call_mock", "type": "function", "function": {"name": function, "arguments": json.dumps(answer)}}
    return completion({"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}, "tool_calls")


def bytes_sent(request: dict) -> int:
    """Request line, headers and body: the formula structure-bench uses."""
    headers = sum(len(name) + len(value) + 4 for name, value in request["headers"])
    return len(request["method"]) + len(request["path"]) + 11 + headers + 2 + len(request["body"])


# --- measuring ------------------------------------------------------------------------------


def percentile(samples: list[float], percent: float) -> float:
    """Nearest rank, as structure-bench's measure::percentile."""
    ordered = sorted(samples)
    rank = round(percent / 100 * (len(ordered) - 1))
    return ordered[min(rank, len(ordered) - 1)]


def measure(
    mock: Mock,
    scenario: str,
    replies: list[str],
    call: Callable[[], Any],
    check: Callable[[Any], None],
    calls: int,
    warmup: int,
) -> dict:
    """Runs `call` warmup + calls times. Before each call (outside the timed window) the mock is
    given exactly `replies`: an extra request would get a 500 and fail the run, so the LLM-call
    count is checked as well as measured."""

    def scripted_call() -> Any:
        for reply in replies:
            mock.queue(reply)
        return call()

    for _ in range(warmup):
        check(scripted_call())
    mock.reset()
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(calls):
        for reply in replies:
            mock.queue(reply)
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        result = call()
        cpu_end, wall_end = time.process_time(), time.perf_counter()
        wall.append(wall_end - wall_start)
        cpu.append(cpu_end - cpu_start)
        check(result)
    sent = mock.requests()
    ms = 1000.0
    return {
        "scenario": scenario,
        "calls": calls,
        "wallP50Ms": round(percentile(wall, 50) * ms, 3),
        "wallP99Ms": round(percentile(wall, 99) * ms, 3),
        "cpuMeanMs": round(statistics.fmean(cpu) * ms, 3),
        "cpuP50Ms": round(percentile(cpu, 50) * ms, 3),
        "llmCallsPerCall": len(sent) / calls,
        "bytesSentPerCall": sum(bytes_sent(request) for request in sent) / calls,
    }


# --- the contenders -------------------------------------------------------------------------


def run_floor(mock: Mock, args: argparse.Namespace) -> dict:
    import httpx2

    with open(args.floor_body) as file:
        sent = json.load(file)
    body = sent["body"].encode()
    url = args.base_url.rstrip("/") + "/chat/completions"
    client = httpx2.Client(headers={"content-type": "application/json", "authorization": "Bearer sk-bench"})

    def call() -> dict:
        response = client.post(url, content=body)
        response.raise_for_status()
        completion = json.loads(response.content)
        return json.loads(completion["choices"][0]["message"]["content"])

    def check(answer: dict) -> None:
        assert answer == VALID, answer

    row = measure(mock, "valid", [text_reply(VALID)], call, check, args.calls, args.warmup)
    return {"rows": [row]}


def run_instructor(mock: Mock, args: argparse.Namespace) -> dict:
    import datetime
    from typing import Annotated, Literal

    import instructor
    from openai import OpenAI
    from pydantic import AfterValidator, BaseModel, ConfigDict, Field

    def unique(tags: list[str]) -> list[str]:
        if len(set(tags)) != len(tags):
            raise ValueError("tags must be unique")
        return tags

    class UserActionRecord(BaseModel):
        """The user-action-record schema: same keywords, enforced by pydantic."""

        model_config = ConfigDict(extra="forbid")
        userId: str = Field(pattern=r"^[a-zA-Z0-9_-]{3,16}$")
        action: str = Field(description="verb-phrase, snake-case, past tense")
        timestamp: datetime.datetime
        status: Literal["success", "failure"]
        tags: Annotated[list[str], AfterValidator(unique), Field(json_schema_extra={"uniqueItems": True})] | None = None

    # max_retries=0 on the SDK: a scripting mistake (a 500 from an empty queue) fails at once
    # instead of sleeping through the SDK's backoff; the happy path is the same either way.
    client = instructor.from_openai(OpenAI(base_url=args.base_url, api_key="sk-bench", max_retries=0))

    def extract(max_retries: int) -> Callable[[], UserActionRecord]:
        return lambda: client.chat.completions.create(
            model="gpt-4.1-mini",
            response_model=UserActionRecord,
            messages=[{"role": "user", "content": PROMPT}],
            max_retries=max_retries,
        )

    def check(record: UserActionRecord) -> None:
        assert record.model_dump(mode="json") == VALID, record

    # Learn the function name instructor gives the tool, and the body it sends, from one probe call
    # (served a text reply; it fails, which is fine: the request is what we want).
    mock.reset()
    mock.queue(text_reply(VALID))
    logging.disable(logging.CRITICAL)  # instructor logs the failure it is about to have
    try:
        extract(0)()
    except Exception:
        pass
    logging.disable(logging.NOTSET)
    probe = mock.requests()[-1]
    function = json.loads(probe["body"])["tool_choice"]["function"]["name"]

    rows = [
        measure(mock, "valid", [tool_reply(function, VALID)], extract(0), check, args.calls, args.warmup),
        # max_retries=1 in instructor 1.17 is one retry after the first attempt: two LLM calls.
        measure(
            mock,
            "one violation",
            [tool_reply(function, INVALID), tool_reply(function, VALID)],
            extract(1),
            check,
            args.calls,
            args.warmup,
        ),
    ]
    return {"rows": rows, "probe": {"function": function, "request": probe}}


def run_baml(mock: Mock, args: argparse.Namespace) -> dict:
    os.environ["MOCK_LLM_BASE_URL"] = args.base_url
    sys.path.insert(0, args.baml_client)
    from baml_client import b

    def call() -> Any:
        return b.ExtractUserAction(PROMPT)

    def check(record: Any) -> None:
        assert record.model_dump(mode="json") == VALID, record

    row = measure(mock, "valid", [text_reply(VALID)], call, check, args.calls, args.warmup)
    return {"rows": [row]}


CONTENDERS = {"floor": run_floor, "instructor": run_instructor, "baml": run_baml}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("contender", choices=sorted(CONTENDERS))
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--calls", type=int, required=True)
    parser.add_argument("--warmup", type=int, required=True)
    parser.add_argument("--result", required=True, help="where to write the JSON result")
    parser.add_argument("--floor-body", help="floor: a JSON file holding a recorded request to replay")
    parser.add_argument("--baml-client", help="baml: the folder holding the generated baml_client")
    args = parser.parse_args()
    mock = Mock(args.base_url)
    result = CONTENDERS[args.contender](mock, args)
    result["peakRssBytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with open(args.result, "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main()
