#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A 2026-07-28 MCP server on stdio whose one tool, `ask`, asks its caller
for input with input_required results, as its arguments say:

  requests   the inputRequests of each round (an object)
  rounds     how many rounds ask for input (default 1); then the result is
             complete, its text the JSON {"rounds", "state", "responses"}
             of the last retry
  no_state   when true, the rounds carry no requestState (else "round-N")

Every tools/call's params go to stderr as one line, "call: <json>", so that
a test reads what the server got through mcpd's logs."""

import json
import sys

VERSION = "2026-07-28"

TOOL = {
    "name": "ask",
    "description": "Asks for input with input_required results.",
    "inputSchema": {
        "type": "object",
        "properties": {"requests": {"type": "object"},
                       "rounds": {"type": "integer"},
                       "no_state": {"type": "boolean"}}},
}


def answer(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    meta = params.get("_meta") or {}
    if meta.get("io.modelcontextprotocol/protocolVersion") != VERSION:
        return {"error": {"code": -32022,
                          "message": "Unsupported protocol version",
                          "data": {"supported": [VERSION]}}}
    if method == "server/discover":
        return {"result": {"supportedVersions": [VERSION],
                           "capabilities": {"tools": {}},
                           "serverInfo": {"name": "asker", "version": "1"},
                           "resultType": "complete"}}
    if method == "tools/list":
        return {"result": {"tools": [TOOL], "resultType": "complete"}}
    if method != "tools/call":
        return {"error": {"code": -32601, "message": f"no {method}"}}
    print("call: " + json.dumps(params, sort_keys=True), file=sys.stderr,
          flush=True)
    args = params.get("arguments") or {}
    state = params.get("requestState")
    done = int(state.split("-")[1]) if isinstance(state, str) else 0
    if "inputResponses" in params and args.get("no_state"):
        done = args.get("rounds", 1)
    if done < args.get("rounds", 1):
        result = {"resultType": "input_required",
                  "inputRequests": args.get("requests") or {}}
        if not args.get("no_state"):
            result["requestState"] = f"round-{done + 1}"
        return {"result": result}
    text = json.dumps({"rounds": done, "state": state,
                       "responses": params.get("inputResponses")},
                      sort_keys=True)
    return {"result": {"content": [{"type": "text", "text": text}],
                       "resultType": "complete"}}


def main():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg or "method" not in msg:
            continue
        out = {"jsonrpc": "2.0", "id": msg["id"]}
        out.update(answer(msg))
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
