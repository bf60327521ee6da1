"""A second MCP client implementation for test/mcp/python-sdk.test.ts: the
official Python SDK (`mcp` on PyPI, 1.x or 2.x) driving codeplane's /mcp.

Reads a plan as JSON on stdin:
  {"url": ..., "key": ..., "mode": "auto" | "legacy", "calls": [{"tool": ..., "arguments": {...}}, ...]}
opens one session with the key as its bearer, lists the tools, makes the
calls in order on that same session (so a call that fails must not end it),
and prints one JSON object: the SDK's version, the protocol version it
negotiated, the tools (name, annotations) and each call's result as the SDK
parsed it ({"result": <the result's wire form>} or {"exception": <what the
SDK raised>}). `mode` is the 2.x client's negotiation (`auto`: the current
revision, discovered; `legacy`: the initialize handshake); 1.x always
initializes.
"""

import asyncio
import importlib.metadata
import json
import sys
import traceback

VERSION = importlib.metadata.version("mcp")


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def exception_text(exc):
    # anyio task groups wrap what a transport raised: report the innermost errors, as a user would see them.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


async def run_calls(call_tool, list_tools, plan):
    tools = (await list_tools()).tools
    out = {"tools": [{"name": t.name, "annotations": dump(t.annotations) if t.annotations else None} for t in tools], "calls": []}
    for call in plan["calls"]:
        try:
            result = await call_tool(call["tool"], call.get("arguments", {}))
            out["calls"].append({"result": dump(result)})
        except Exception as exc:  # the SDK's own error for this call: what the test looks at
            out["calls"].append({"exception": exception_text(exc)})
    return out


async def main_v2(plan):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {plan['key']}"})
    async with http:
        async with Client(streamable_http_client(plan["url"], http_client=http), mode=plan.get("mode", "auto")) as client:
            out = await run_calls(client.call_tool, client.list_tools, plan)
            out["protocol"] = client.protocol_version
            return out


async def main_v1(plan):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(plan["url"], headers={"Authorization": f"Bearer {plan['key']}"}) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out = await run_calls(session.call_tool, session.list_tools, plan)
            out["protocol"] = init.protocolVersion
            return out


def main():
    plan = json.load(sys.stdin)
    try:
        out = asyncio.run(main_v2(plan) if VERSION.split(".")[0] != "1" else main_v1(plan))
    except BaseException as exc:  # the session itself failed: say how, for the test's message
        out = {"session_exception": exception_text(exc), "traceback": traceback.format_exc()}
    out["sdk"] = VERSION
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
