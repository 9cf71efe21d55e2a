#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""An HTTP server on loopback that answers with redirects, for the
integration tests.

    redirector.py LOCATION [STATUS] [--on-call] [--slow-initialized MS]

Without --on-call every request is answered STATUS (default 302) with
"Location: LOCATION". With --on-call it is a minimal Streamable HTTP MCP
server (initialize, tools/list with one tool "echo", 202 for
notifications, 405 for GET, 200 for DELETE) that answers STATUS only to
tools/call. Like server-everything, it has its tool only once
notifications/initialized was handled, and --slow-initialized makes that
handling take MS milliseconds (before the 202). Binds 127.0.0.1 on a free port, prints "listening on PORT" on
stdout, then one JSON line per request: {"verb", "path", "rpc" (the
JSON-RPC method or null), "headers" (names in lower case)}. Python standard
library only; it runs until it is killed."""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCATION = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9/"
STATUS = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() \
    else 302
ON_CALL = "--on-call" in sys.argv
SLOW_MS = (int(sys.argv[sys.argv.index("--slow-initialized") + 1])
           if "--slow-initialized" in sys.argv else 0)
INITIALIZED = threading.Event()
SESSION = "redirector-session-1"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body=None, headers=()):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def note(self, rpc=None):
        print(json.dumps({
            "verb": self.command, "path": self.path, "rpc": rpc,
            "headers": {k.lower(): v for k, v in self.headers.items()}}),
            flush=True)

    def redirect(self):
        self.reply(STATUS, headers=[("Location", LOCATION)])

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def do_POST(self):
        msg = self.body()
        method = msg.get("method") if isinstance(msg, dict) else None
        self.note(method)
        if not ON_CALL or method == "tools/call":
            return self.redirect()
        if method == "initialize":
            return self.reply(200, {
                "jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "redirector", "version": "1"}}},
                headers=[("Mcp-Session-Id", SESSION)])
        if method == "notifications/initialized":
            time.sleep(SLOW_MS / 1000)
            INITIALIZED.set()
            return self.reply(202)
        if method == "tools/list":
            tools = [{"name": "echo", "inputSchema": {"type": "object"}}]
            return self.reply(200, {
                "jsonrpc": "2.0", "id": msg["id"], "result": {
                    "tools": tools if INITIALIZED.is_set() else []}})
        if isinstance(msg, dict) and "id" in msg and method is not None:
            return self.reply(200, {
                "jsonrpc": "2.0", "id": msg["id"],
                "error": {"code": -32601, "message": "not here"}})
        return self.reply(202)

    def do_GET(self):
        self.note()
        if not ON_CALL:
            return self.redirect()
        return self.reply(405)

    def do_DELETE(self):
        self.note()
        if not ON_CALL:
            return self.redirect()
        return self.reply(200)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
