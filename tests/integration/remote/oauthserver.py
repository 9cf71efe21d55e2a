#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""An MCP server that asks for OAuth, and its authorization server, on
loopback, for the integration tests (tests/integration/test_oauth.py).

    oauthserver.py [--expires-in S] [--refresh-fails] [--as-url URL]
                   [--issuer ISSUER] [--token-redirect URL]

One port serves both (Python standard library only):

- /mcp: Streamable HTTP (initialize, tools/list with the tool "whoami",
  tools/call, 202 for notifications, 405 for GET, 200 for DELETE); every
  request needs "Authorization: Bearer <a live access token>", else 401
  with WWW-Authenticate: Bearer resource_metadata=".../.well-known/
  oauth-protected-resource/mcp";
- /.well-known/oauth-protected-resource/mcp: the resource metadata, whose
  authorization_servers is --as-url (default: this server);
- /.well-known/oauth-authorization-server: the metadata, whose issuer is
  --issuer (default: this server, as it must be);
- /revoke-access: every access token stops working (refresh tokens
  stay), as when a server revokes them; answers 204;
- /register (RFC 7591), /authorize (approves at once: 302 to the
  redirect_uri with code, state and iss), /token (authorization_code with
  PKCE S256, refresh_token; --refresh-fails refuses every refresh;
  --token-redirect answers every token request 307 to URL).

Access tokens live --expires-in seconds (default 3600); every token issued
is random. It prints "listening on PORT", then one JSON line per request:
{"verb", "path", "rpc", "bearer", "grant_type", "issued": {access_token,
refresh_token}}, so that a test knows every token value there is. It runs
until it is killed."""

import base64
import hashlib
import json
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit


def arg(name, default=None):
    return (sys.argv[sys.argv.index(name) + 1] if name in sys.argv
            else default)


EXPIRES_IN = int(arg("--expires-in", "3600"))
REFRESH_FAILS = "--refresh-fails" in sys.argv
AS_URL = arg("--as-url")
ISSUER = arg("--issuer")
TOKEN_REDIRECT = arg("--token-redirect")

LOCK = threading.Lock()
CODES = {}      # code -> (code_challenge, redirect_uri, resource, client)
ACCESS = {}     # access token -> expiry (monotonic)
REFRESH = set()
CLIENTS = set()


def out(record):
    with LOCK:
        print(json.dumps(record), flush=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def base(self):
        return f"http://{self.headers.get('Host')}"

    def reply(self, status, body=None, headers=(), ctype="application/json"):
        data = (json.dumps(body).encode() if isinstance(body, (dict, list))
                else (body or b""))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if data:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def bearer(self):
        auth = self.headers.get("Authorization") or ""
        return auth[7:] if auth.startswith("Bearer ") else None

    # ---- GET

    def do_GET(self):
        u = urlsplit(self.path)
        out({"verb": "GET", "path": u.path, "bearer": self.bearer()})
        if u.path == "/.well-known/oauth-protected-resource/mcp":
            self.reply(200, {"resource": self.base() + "/mcp",
                             "authorization_servers": [AS_URL or self.base()],
                             "scopes_supported": ["mcp"]})
        elif u.path == "/.well-known/oauth-authorization-server":
            b = self.base()
            self.reply(200, {
                "issuer": ISSUER or b,
                "authorization_endpoint": b + "/authorize",
                "token_endpoint": b + "/token",
                "registration_endpoint": b + "/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code",
                                          "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True})
        elif u.path == "/authorize":
            self.authorize(parse_qs(u.query))
        elif u.path == "/revoke-access":
            ACCESS.clear()
            self.reply(204)
        elif u.path == "/mcp":
            if not self.authorized():
                return
            self.reply(405)
        else:
            self.reply(404, {"error": "not_found"})

    def authorize(self, q):
        one = {k: v[0] for k, v in q.items()}
        if (one.get("response_type") != "code" or
                one.get("code_challenge_method") != "S256" or
                one.get("client_id") not in CLIENTS or
                not one.get("resource")):
            self.reply(400, {"error": "invalid_request"})
            return
        code = secrets.token_hex(8)
        CODES[code] = (one["code_challenge"], one["redirect_uri"],
                       one["resource"], one["client_id"])
        target = one["redirect_uri"] + "?" + urlencode(
            {"code": code, "state": one.get("state", ""),
             "iss": ISSUER or self.base()})
        self.reply(302, headers=[("Location", target)])

    # ---- POST

    def do_POST(self):
        u = urlsplit(self.path)
        raw = self.body()
        if u.path == "/register":
            meta = json.loads(raw or b"{}")
            client = "client-" + secrets.token_hex(4)
            CLIENTS.add(client)
            out({"verb": "POST", "path": u.path, "metadata": meta})
            self.reply(201, {"client_id": client,
                             "redirect_uris": meta.get("redirect_uris", []),
                             "token_endpoint_auth_method": "none"})
        elif u.path == "/token":
            self.token({k: v[0] for k, v in parse_qs(raw.decode()).items()})
        elif u.path == "/mcp":
            self.mcp(raw)
        else:
            self.reply(404, {"error": "not_found"})

    def issue(self, rec):
        at, rt = "at-" + secrets.token_hex(16), "rt-" + secrets.token_hex(16)
        ACCESS[at] = time.monotonic() + EXPIRES_IN
        REFRESH.add(rt)
        rec["issued"] = {"access_token": at, "refresh_token": rt}
        out(rec)
        self.reply(200, {"access_token": at, "token_type": "Bearer",
                         "expires_in": EXPIRES_IN, "refresh_token": rt,
                         "scope": "mcp"})

    def token(self, form):
        rec = {"verb": "POST", "path": "/token",
               "grant_type": form.get("grant_type"),
               "resource": form.get("resource")}
        if TOKEN_REDIRECT:
            out(rec)
            self.reply(307, headers=[("Location", TOKEN_REDIRECT)])
            return
        if form.get("grant_type") == "authorization_code":
            entry = CODES.pop(form.get("code"), None)
            verifier = form.get("code_verifier", "").encode()
            challenge = base64.urlsafe_b64encode(
                hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
            if (entry is None or entry[0] != challenge or
                    entry[1] != form.get("redirect_uri") or
                    entry[2] != form.get("resource")):
                rec["refused"] = True
                out(rec)
                self.reply(400, {"error": "invalid_grant"})
                return
            self.issue(rec)
        elif form.get("grant_type") == "refresh_token":
            rt = form.get("refresh_token")
            if REFRESH_FAILS or rt not in REFRESH:
                rec["refused"] = True
                out(rec)
                self.reply(400, {"error": "invalid_grant",
                                 "error_description": "refresh refused"})
                return
            REFRESH.discard(rt)
            self.issue(rec)
        else:
            out(rec)
            self.reply(400, {"error": "unsupported_grant_type"})

    def authorized(self):
        at = self.bearer()
        if at is not None and ACCESS.get(at, 0) > time.monotonic():
            return True
        meta = self.base() + "/.well-known/oauth-protected-resource/mcp"
        self.reply(401, {"error": "invalid_token"}, headers=[
            ("WWW-Authenticate",
             f'Bearer error="invalid_token", resource_metadata="{meta}"')])
        return False

    def mcp(self, raw):
        msg = json.loads(raw or b"{}")
        method = msg.get("method")
        out({"verb": "POST", "path": "/mcp", "rpc": method,
             "bearer": self.bearer()})
        if not self.authorized():
            return
        if "id" not in msg:
            self.reply(202)
            return
        if method == "initialize":
            result = {"protocolVersion": "2025-06-18",
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "oauthserver", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami",
                                 "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "ok"}]}
        else:
            self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32601, "message": "Method not found"}})
            return
        self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def do_DELETE(self):
        self.reply(200)


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on {srv.server_address[1]}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
