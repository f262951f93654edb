"""A real MCP client (the official Python SDK) against Kenning.

    python mcp_client.py stdio KEN_BINARY HOME REPO SYMBOL QUERY
    python mcp_client.py http URL TOKEN REPO SYMBOL QUERY

Lists the tools, calls search_code, find_symbol, read_range, impact,
callers, who_knows, repo_status, ask and index_repository, plus a call
the engine refuses, and prints the transcript as one JSON object on stdout
(the Rust test checks it).
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def field(obj, snake, camel):
    """An attribute by its name in SDK 2.x (snake_case) or 1.x (camelCase)."""
    v = getattr(obj, snake, None)
    return getattr(obj, camel, None) if v is None else v


def as_json(result):
    """A tool result as the JSON the server sent (structured, else the text)."""
    structured = field(result, "structured_content", "structuredContent")
    if structured is not None:
        return structured
    texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
    return json.loads(texts[0]) if texts else None


def is_error(result):
    return bool(field(result, "is_error", "isError"))


async def session_calls(session, repo, symbol, query):
    out = {}
    await session.initialize()
    tools = await session.list_tools()
    out["tools"] = sorted(t.name for t in tools.tools)
    out["schemas"] = {t.name: field(t, "input_schema", "inputSchema") for t in tools.tools}
    out["descriptions"] = {t.name: t.description for t in tools.tools}

    async def call(name, args):
        r = await session.call_tool(name, args)
        return {"error": is_error(r), "value": as_json(r)}

    out["search_code"] = await call("search_code", {"query": query, "repo": repo, "n": 3})
    out["find_symbol"] = await call("find_symbol", {"name": symbol, "repo": repo})
    first = (out["search_code"]["value"] or {}).get("results", [{}])[0]
    out["read_range"] = await call(
        "read_range",
        {
            "repo": repo,
            "path": first.get("path", ""),
            "start_line": first.get("start_line", 1),
            "end_line": first.get("end_line", 1),
        },
    )
    out["impact"] = await call("impact", {"symbol": symbol, "repo": repo, "depth": 3})
    out["callers"] = await call("callers", {"symbol": symbol, "repo": repo})
    out["find_references"] = await call("find_references", {"symbol": symbol, "repo": repo})
    out["who_knows"] = await call("who_knows", {"query": symbol, "repo": repo})
    out["repo_status"] = await call("repo_status", {})
    out["ask"] = await call("ask", {"question": f"what does {symbol} do?", "repo": repo})
    out["index_repository"] = await call("index_repository", {"repo": repo})
    out["missing_repo"] = await call("search_code", {"query": query, "repo": "no-such-repo"})
    out["bad_path"] = await call("read_range", {"repo": repo, "path": "no/such/file.py"})
    return out


async def over_stdio(ken, home, repo, symbol, query):
    params = StdioServerParameters(
        command=ken,
        args=["--home", home, "mcp"],
        env={"KEN_EMBEDDER": "off", "PATH": "/usr/bin:/bin", "HOME": home},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            return await session_calls(session, repo, symbol, query)


async def over_http(url, token, repo, symbol, query):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                return await session_calls(session, repo, symbol, query)


def main():
    mode = sys.argv[1]
    if mode == "stdio":
        _, _, ken, home, repo, symbol, query = sys.argv
        out = anyio.run(over_stdio, ken, home, repo, symbol, query)
    else:
        _, _, url, token, repo, symbol, query = sys.argv
        out = anyio.run(over_http, url, token, repo, symbol, query)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
