#!/usr/bin/env python3
"""End-to-end check of an MCP Streamable HTTP server with the OFFICIAL MCP Python SDK client.

usage: python tests/mcp/client_check.py <url> <token> [--mode auto|legacy|2026-07-28] [--skip-bad-token]
                                       [--calls FILE] [-v]

  url    e.g. http://127.0.0.1:8080/mcp
  token  bearer token the server accepts
  --mode how the SDK negotiates (default "auto" = what Client(url) does out of the box:
         probe server/discover at 2026-07-28, fall back to the initialize handshake).
         "legacy" forces initialize (2025-11-25); "2026-07-28" pins the stateless era.
  --calls a JSON file of further tools/call checks: [{"name", "arguments", "status"}], status
         "ok" (or another status) or "error:<kind>"; the SDK checks each result against the
         tool's outputSchema, and raises when it does not validate
  -v     log every HTTP exchange (method, status, content-type) to stderr

Requires the official SDK: pip install 'mcp>=2'. Prints one line per check; exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client  # the SDK's own default client factory

TIMEOUT_S = 60

failures = 0


def check(name: str, ok: bool, detail: str = "") -> bool:
    global failures
    if not ok:
        failures += 1
    print(f"[{'PASS' if ok else 'FAIL'}] {name}" + (f" -- {detail}" if detail else ""), flush=True)
    return ok


def make_http_client(token: str, verbose: bool) -> httpx2.AsyncClient:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    if verbose:

        async def log_request(request: httpx2.Request) -> None:
            hdrs = {k: v for k, v in request.headers.items() if k.lower().startswith("mcp") or k.lower() == "accept"}
            print(f"  >> {request.method} {request.url} {hdrs} {request.content[:300]!r}", file=sys.stderr)

        async def log_response(response: httpx2.Response) -> None:
            print(
                f"  << {response.status_code} {response.headers.get('content-type')}"
                f" www-authenticate={response.headers.get('www-authenticate')!r}",
                file=sys.stderr,
            )

        client.event_hooks = {"request": [log_request], "response": [log_response]}
    return client


def describe_exc(exc: BaseException) -> str:
    parts = [f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"]
    code = getattr(getattr(exc, "error", None), "code", None)
    if code is not None:
        parts.append(f"(JSON-RPC code {code})")
    subs = getattr(exc, "exceptions", None)
    if subs:
        parts.append("[" + "; ".join(describe_exc(e) for e in subs) + "]")
    return " ".join(parts)


async def further_calls(client: Any, calls: list[dict[str, Any]]) -> None:
    for call in calls:
        name = f"tools/call {call['name']}: the SDK accepts the result"
        try:
            res = await client.call_tool("structure", call["arguments"])
            sc: Any = res.structured_content or {}
            status: str = call["status"]
            if status.startswith("error:"):
                ok = res.is_error and sc.get("error", {}).get("kind") == status[len("error:"):]
            else:
                ok = not res.is_error and sc.get("status") == status
            check(name, ok, f"structuredContent={json.dumps(sc)[:300]}")
        except Exception as exc:
            check(name, False, describe_exc(exc))


async def good_token_checks(url: str, token: str, mode: str, verbose: bool, calls: list[dict[str, Any]]) -> None:
    async with make_http_client(token, verbose) as http:
        transport = streamable_http_client(url, http_client=http)
        try:
            client_cm = Client(transport, mode=mode)
            async with client_cm as client:
                info = client.server_info
                check(
                    "connect/initialize",
                    True,
                    f"protocol={client.protocol_version} server={info.name if info else None!r}"
                    f" {info.version if info else ''} caps.tools={client.server_capabilities.tools is not None}"
                    f" caps.resources={client.server_capabilities.resources is not None}"
                    f" instructions={'yes' if client.instructions else 'no'}",
                )

                # --- tools/list
                try:
                    tools = await client.list_tools()
                    by_name = {t.name: t for t in tools.tools}
                    tool = by_name.get("structure")
                    if check("tools/list has 'structure'", tool is not None, f"tools={sorted(by_name)}"):
                        props = (tool.input_schema or {}).get("properties", {})
                        check(
                            "structure.inputSchema has prompt+schema",
                            "prompt" in props and "schema" in props,
                            f"properties={sorted(props)} outputSchema={'yes' if tool.output_schema else 'no'}",
                        )
                except Exception as exc:
                    check("tools/list", False, describe_exc(exc))

                # --- tools/call
                try:
                    res = await client.call_tool(
                        "structure",
                        {"prompt": "Ada Lovelace, ada@example.com", "schema": "contact", "schemaMode": "named"},
                    )
                    text = " ".join(getattr(c, "text", "") for c in res.content)[:200]
                    check("tools/call isError is false", not res.is_error, f"content={text!r}")
                    sc: Any = res.structured_content
                    ok = isinstance(sc, dict) and sc.get("status") == "ok"
                    check("tools/call structuredContent.status == 'ok'", ok, f"structuredContent={json.dumps(sc)[:300]}")
                    name = sc.get("data", {}).get("name") if isinstance(sc, dict) and isinstance(sc.get("data"), dict) else None
                    check("tools/call structuredContent.data.name == 'Ada Lovelace'", name == "Ada Lovelace", f"name={name!r}")
                except Exception as exc:
                    check("tools/call structure", False, describe_exc(exc))

                # --- resources/list + resources/read
                try:
                    resources = await client.list_resources()
                    uris = [str(r.uri) for r in resources.resources]
                    contact = next((u for u in uris if u.endswith("/contact")), None)
                    if check("resources/list has .../contact", contact is not None, f"uris={uris}"):
                        rr = await client.read_resource(contact)
                        first = rr.contents[0] if rr.contents else None
                        text = getattr(first, "text", None)
                        try:
                            doc = json.loads(text) if text is not None else None
                        except ValueError as exc:
                            doc = None
                            text = f"{text[:100]!r} (not JSON: {exc})"
                        check(
                            "resources/read contact is JSON Schema with type=object",
                            isinstance(doc, dict) and doc.get("type") == "object",
                            f"mimeType={getattr(first, 'mime_type', None)!r} keys={sorted(doc) if isinstance(doc, dict) else text}",
                        )
                except Exception as exc:
                    check("resources/list+read", False, describe_exc(exc))

                await further_calls(client, calls)
        except Exception as exc:
            check("connect/initialize", False, describe_exc(exc))
            if verbose:
                traceback.print_exc()


async def bad_token_check(url: str, mode: str, verbose: bool) -> None:
    async with make_http_client("definitely-wrong-token", verbose) as http:
        try:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                await client.list_tools()
        except Exception as exc:  # MCPError expected (HTTP 401 mapped by the transport)
            check("wrong token is rejected", True, describe_exc(exc))
            return
    check("wrong token is rejected", False, "connection and tools/list succeeded with a wrong token")


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("token")
    ap.add_argument("--mode", default="auto")
    ap.add_argument("--skip-bad-token", action="store_true")
    ap.add_argument("--calls")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    calls = []
    if a.calls:
        with open(a.calls, encoding="utf-8") as file:
            calls = json.load(file)
    with anyio.fail_after(TIMEOUT_S):
        await good_token_checks(a.url, a.token, a.mode, a.verbose, calls)
    if not a.skip_bad_token:
        with anyio.fail_after(TIMEOUT_S):
            await bad_token_check(a.url, a.mode, a.verbose)
    print(f"{'OK' if failures == 0 else 'FAILED'}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main))
    except TimeoutError:
        print(f"[FAIL] timed out after {TIMEOUT_S}s")
        sys.exit(1)
