#!/usr/bin/env python3
"""A local OpenAI-compatible model server for the eval: llama-cpp-python's server with the two
fixes this kind of machine needs.

1. The model is loaded with `use_extra_bufts=False`: llama.cpp's extra buffer types (weight
   repacking for AMX) fault on some virtual CPUs. `Llama()` has no argument for it, so the
   default model parameters are patched before the model loads.
2. OpenAI's `response_format: {"type": "json_schema", "json_schema": {"schema": ...}}` is
   rewritten to the `{"type": "json_object", "schema": ...}` form llama-cpp-python 0.3.36
   accepts (it answers HTTP 500 to the former). Clients that speak OpenAI's form (the baseline
   call, instructor, `structure`'s `openai-compatible` and `ollama` profiles) then get the same
   grammar-constrained decoding as the `llamacpp` profile.

Runs inside the eval's venv: python server.py --model FILE.gguf --port 8080 [--n-ctx 4096]
"""

import argparse
import json
import os


def rewrite_response_format(body):
    """`body` (a chat request) with a `json_schema` response format turned into `json_object`.

    Returns the body unchanged when there is nothing to rewrite."""
    fmt = body.get("response_format") if isinstance(body, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        body = dict(body)
        body["response_format"] = {"type": "json_object"}
        if schema is not None:
            body["response_format"]["schema"] = schema
    return body


class JsonSchemaRewrite:
    """ASGI middleware: buffers a chat-completions request body and rewrites its response format."""

    def __init__(self, app, log_requests=None):
        self.app = app
        self.log_requests = log_requests

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].endswith("/chat/completions"):
            return await self.app(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        try:
            raw = json.dumps(rewrite_response_format(json.loads(raw))).encode()
        except ValueError:
            pass  # not JSON: let the server answer its own 4xx
        if self.log_requests:
            with open(self.log_requests, "ab") as log:
                log.write(raw + b"\n")
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(raw)).encode()))
        scope = dict(scope, headers=headers)
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        return await self.app(scope, replay, send)


def disable_extra_buffer_types():
    """Loads models with `use_extra_bufts=False` (see the module docstring). `llama_cpp.llama`
    looks the defaults up on `llama_cpp.llama_cpp` at each load, so patching it there is enough."""
    import llama_cpp.llama_cpp as llama_lib

    defaults = llama_lib.llama_model_default_params

    def without_extra_bufts():
        params = defaults()
        params.use_extra_bufts = False
        return params

    llama_lib.llama_model_default_params = without_extra_bufts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the GGUF file")
    parser.add_argument("--model-alias", default="smollm2-135m-instruct")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--log-requests", metavar="FILE", help="append each chat request (JSON Lines) to FILE")
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2)))
    args = parser.parse_args()
    disable_extra_buffer_types()  # before any model loads
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    app = create_app(
        server_settings=ServerSettings(host=args.host, port=args.port),
        model_settings=[
            ModelSettings(
                model=args.model,
                model_alias=args.model_alias,
                n_ctx=args.n_ctx,
                n_threads=args.threads,
                n_threads_batch=args.threads,
                verbose=False,
            )
        ],
    )
    uvicorn.run(JsonSchemaRewrite(app, args.log_requests), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
