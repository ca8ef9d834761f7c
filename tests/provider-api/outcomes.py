#!/usr/bin/env python3
"""Writes outcomes.json: the outcome a structured-output client must read from every recorded
response and error body (samples/ and corpus/), classified from each provider's documented
rules (see SUBSETS.md and the provider sections of README.md), independently of the Rust code.

Outcomes: text, truncated, refusal, blocked, invalid-response (e.g. a call of some other tool),
provider-error:<status>. Run from this folder: python3 outcomes.py
"""
import json, os, re

ANSWER_TOOL = "__structured_output__"
GEMINI_BLOCKING = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "LANGUAGE",
                   "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"}

def chat(body):
    choice = body["choices"][0]
    message = choice.get("message") or {}
    if message.get("refusal"):
        return "refusal"
    if choice.get("finish_reason") == "length":
        return "truncated"
    if choice.get("finish_reason") == "content_filter":
        return "blocked"
    if message.get("tool_calls"):
        return "invalid-response"
    return "text" if isinstance(message.get("content"), str) else "invalid-response"

def responses(body):
    if body.get("status") == "incomplete":
        reason = (body.get("incomplete_details") or {}).get("reason")
        return "blocked" if reason == "content_filter" else "truncated"
    output = body.get("output") or []
    if any(item.get("type") == "function_call" for item in output):
        return "invalid-response"
    messages = [item for item in output if item.get("type") == "message"]
    if not messages:
        return "invalid-response"
    parts = messages[-1].get("content") or []
    if any(part.get("type") == "refusal" for part in parts):
        return "refusal"
    return "text"

def anthropic(body):
    stop = (body.get("stop_reason") or "").lower()
    if stop == "refusal":
        return "refusal"
    if stop in ("max_tokens", "model_context_window_exceeded", "stop_sequence"):
        return "truncated"
    if stop == "pause_turn":
        return "invalid-response"
    if any(block.get("type") == "tool_use" for block in body.get("content") or []):
        return "invalid-response"
    return "text"

def gemini(body):
    candidates = body.get("candidates") or []
    if not candidates:
        return "blocked" if (body.get("promptFeedback") or {}).get("blockReason") else "invalid-response"
    finish = candidates[0].get("finishReason", "STOP")
    if finish == "MAX_TOKENS":
        return "truncated"
    if finish in GEMINI_BLOCKING:
        return "blocked"
    if finish != "STOP":
        return "invalid-response"
    parts = (candidates[0].get("content") or {}).get("parts") or []
    if any("functionCall" in part for part in parts):
        return "invalid-response"
    return "text"

CLASSIFY = {"openai-chat": chat, "openai-responses": responses, "anthropic": anthropic, "gemini": gemini}

def provider_of(path):
    parts = path.split("/")
    if parts[0] == "samples":
        return {"anthropic": "anthropic", "gemini": "gemini"}.get(parts[1]) or \
            ("openai-responses" if parts[2] == "responses" else "openai-chat")
    return {"chat-completions": "openai-chat", "responses": "openai-responses",
            "anthropic": "anthropic", "google": "gemini"}[parts[2]]

def error_status(path, body):
    """The HTTP status of an error body: in the file name for samples, in the SDK's wrapper text
    ("Error: 400 …", "Error: ApiError: {…}") for the corpus."""
    name = os.path.basename(path)
    if re.match(r"^\d{3}_", name):
        return int(name[:3])
    wrapped = body.get("error")
    if isinstance(wrapped, str):
        found = re.match(r"^Error: (\d{3}) ", wrapped)
        if found:
            return int(found.group(1))
        inner = json.loads(wrapped[wrapped.index("{"):])
        return inner["error"]["code"]
    raise ValueError(path)

def main():
    table = {}
    for root in ("samples", "corpus"):
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                path = os.path.join(folder, name)
                if not name.endswith(".json") or name.endswith(".request.json") or name.startswith("."):
                    continue
                body = json.load(open(path))
                provider = provider_of(path)
                if "/errors/" in path or name == "error.json":
                    outcome = f"provider-error:{error_status(path, body)}"
                else:
                    outcome = CLASSIFY[provider](body)
                table[path] = {"provider": provider, "outcome": outcome}
    json.dump(table, open("outcomes.json", "w"), indent=1, sort_keys=True)
    counts = {}
    for entry in table.values():
        counts[entry["outcome"]] = counts.get(entry["outcome"], 0) + 1
    print(len(table), "bodies:", counts)

main()
