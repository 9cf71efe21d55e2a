# SPDX-License-Identifier: ISC
"""The OAuth (auth/*) client scenarios, for tests/conformance/client.

mcpd is the client under test; this module plays the user and the
browser.  While `mcpctl load` (or a later `mcpctl call`) waits, a thread
polls `mcpctl --json auth status NAME`; each new `authorization_url` it
shows is fetched as a browser would: GET it (the harness's authorization
server approves at once and answers 302 to the redirect_uri, mcpd's
listener on 127.0.0.1), then GET that Location.  Nothing else reaches
into mcpd: discovery, registration, PKCE, the iss check and the token
requests are all mcpd's own.

The expectations per scenario are in AUTH; they come from the harness
0.2.0-alpha.12 (dist/index.js, `auth/...` classes):

- "fails": the scenario wants mcpd to refuse (resource mismatch, a wrong
  or missing iss, metadata of another issuer, a scope that never
  suffices): the load must fail, and its error must contain this text;
- "visits": how many authorization URLs the browser must have opened
  (the iss scenarios need the authorization endpoint reached once);
- "prereg": the scenario gives a pre-registered client in
  MCP_CONFORMANCE_CONTEXT (client_id, client_secret, issuer).

Every other scenario must load, list test-tool and call it ("test").
"""

import json
import os
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

# The client ID metadata document URL the harness expects (auth/basic-cimd);
# mcpd is started with it as --oauth-client-metadata-url.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MCPCTL = os.path.join(os.path.abspath(os.environ.get("MCPD_BUILD")
                                      or os.path.join(REPO, "build")),
                      "mcpctl")
NAME = "auth"                   # the server's name in every auth scenario
LOAD_TIMEOUT_MS = 20000
CALL_TIMEOUT_MS = 20000
SECRET_NAME = "conformance.client_secret"

AUTH = {
    "auth/metadata-default": {},
    "auth/metadata-var1": {},
    "auth/metadata-var2": {},
    "auth/metadata-var3": {},
    "auth/basic-cimd": {},
    "auth/scope-from-www-authenticate": {},
    "auth/scope-from-scopes-supported": {},
    "auth/scope-omitted-when-undefined": {},
    "auth/scope-step-up": {"visits": 2},
    "auth/scope-retry-limit": {
        "fails": "which mcpd was granted already; it does not ask again"},
    "auth/token-endpoint-auth-basic": {},
    "auth/token-endpoint-auth-post": {},
    "auth/token-endpoint-auth-none": {},
    "auth/pre-registration": {"prereg": True},
    "auth/2025-03-26-oauth-metadata-backcompat": {},
    "auth/2025-03-26-oauth-endpoint-fallback": {},
    "auth/resource-mismatch": {
        "fails": "is for https://evil.example.com/mcp, not for this server",
        "visits": 0},
    "auth/offline-access-scope": {},
    "auth/offline-access-not-supported": {},
    "auth/authorization-server-migration": {"visits": 2},
    "auth/iss-supported": {},
    "auth/iss-not-advertised": {},
    "auth/iss-supported-missing": {
        "fails": "says it sends iss (authorization_response_iss_parameter_supported) but its response has none",
        "visits": 1},
    "auth/iss-wrong-issuer": {
        "fails": "names another issuer (iss) than the authorization server's",
        "visits": 1},
    "auth/iss-unexpected": {
        "fails": "names another issuer (iss) than the authorization server's",
        "visits": 1},
    "auth/iss-normalized": {
        "fails": "names another issuer (iss) than the authorization server's",
        "visits": 1},
    "auth/metadata-issuer-mismatch": {
        "fails": "names the issuer https://attacker.example.com, not",
        "visits": 0},
}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A browser's first hop only: the 302 is read, not followed."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Browser:
    """Plays the user's browser for each authorization URL mcpd shows."""

    def __init__(self, d, name, log):
        self.d, self.name, self.log = d, name, log
        self.seen = set()
        self.visits = []        # (authorization status, callback status)
        self.errors = []
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_event.set()
        self.thread.join(timeout=15)

    def _run(self):
        while not self.stop_event.is_set():
            try:
                rc, res, _ = self.d.ctl("auth", "status", self.name,
                                        timeout_s=10)
            except Exception as e:      # mcpd may be between states
                rc, res = 1, None
                self.errors.append(f"auth status: {e}")
            url = (res or {}).get("authorization_url") if rc == 0 else None
            if url and url not in self.seen:
                self.seen.add(url)
                try:
                    self._visit(url)
                except Exception as e:
                    self.errors.append(f"visiting {url}: {e!r}")
                    self.log(f"browser: visiting the authorization URL "
                             f"failed: {e!r}")
            self.stop_event.wait(0.05)

    def _visit(self, url):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        self.log(f"browser: opening the authorization URL (client_id "
                 f"{query.get('client_id')}, scope {query.get('scope')}, "
                 f"resource {query.get('resource')})")
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            r = opener.open(url, timeout=10)
            status, location = r.status, None
        except urllib.error.HTTPError as e:
            status, location = e.code, e.headers.get("Location")
        if location is None:
            self.visits.append((status, None))
            self.log(f"browser: the authorization server answered "
                     f"{status} without a redirect")
            return
        target = urllib.parse.urlsplit(location)
        if target.hostname != "127.0.0.1":
            raise RuntimeError(f"the redirect goes to {location}, not to "
                               "mcpd's loopback listener")
        try:
            r = urllib.request.urlopen(location, timeout=10)
            cb_status, body = r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            cb_status, body = e.code, e.read().decode(errors="replace")
        self.visits.append((status, cb_status))
        self.log(f"browser: authorization {status}, mcpd's listener "
                 f"answered {cb_status}: {body.strip()}")


def _secret_set(d, name, value, timeout_s=10):
    argv = [MCPCTL, "-s", d.sock, "secret", "set", name]
    r = subprocess.run(argv, input=value.encode(), capture_output=True,
                       timeout=timeout_s)
    if r.returncode != 0:
        raise RuntimeError(f"mcpctl secret set failed: "
                           f"{r.stderr.decode(errors='replace')}")


def mcpd_args(d):
    """What mcpd runs with in the auth scenarios: the CIMD URL the harness
    expects, and a secret key of the run's own (never the user's)."""
    return ["--oauth-client-metadata-url", CIMD_URL,
            "--secrets-key", os.path.join(d.dir, "secrets.key")]


def run(url, scenario, ctx, version, d, status, log, Failure):
    """One auth scenario through mcpd and mcpctl; raises Failure."""
    want = AUTH.get(scenario)
    if want is None:
        raise Failure(f"no expectations for {scenario} in auth_browser.AUTH")
    d.start(os.environ.get("MCPD_CONFORMANCE_PIDFILE"))
    load = ["load", "--allow-local", "--name", NAME, "--timeout",
            str(LOAD_TIMEOUT_MS)]
    if want.get("prereg"):
        for k in ("client_id", "client_secret", "issuer"):
            if not ctx.get(k):
                raise Failure(f"{scenario}: the harness gave no {k}")
        _secret_set(d, SECRET_NAME, ctx["client_secret"])
        load += ["--oauth-client-id", ctx["client_id"],
                 "--oauth-client-secret", SECRET_NAME,
                 "--oauth-issuer", ctx["issuer"]]
    browser = Browser(d, NAME, log).start()
    try:
        rc, res, err = d.ctl(*load, url,
                             timeout_s=LOAD_TIMEOUT_MS / 1000 + 10)
        status["load"] = res
        shown = json.dumps(res) if res is not None else err
        if want.get("fails"):
            if rc == 0:
                raise Failure(f"the load succeeded, but mcpd must refuse: "
                              f"{shown}")
            if want["fails"] not in shown:
                raise Failure(f"the load failed, but not saying "
                              f"{want['fails']!r}: {shown}")
            log(f"load refused as it must be: {shown}")
        else:
            if rc != 0:
                raise Failure(f"mcpctl load failed (exit {rc}): {shown}")
            log(f"loaded: {shown}")
            listed = d.must("tools", NAME, timeout_s=10)
            tools = [t.get("name") for t in (listed or {}).get("tools", [])]
            if tools != ["test-tool"]:
                raise Failure(f"mcpd lists {tools}, not ['test-tool']")
            rc, out, err = d.ctl("call", NAME, "test-tool", "--args-json",
                                 "{}", "--timeout", str(CALL_TIMEOUT_MS),
                                 timeout_s=CALL_TIMEOUT_MS / 1000 + 10)
            shown = json.dumps(out) if out is not None else err
            text = "".join(c.get("text", "") for c in (out or {}).get(
                "content", []) if isinstance(c, dict))
            if rc != 0 or text != "test":
                raise Failure(f"call test-tool (exit {rc}): {shown}")
            log(f"call test-tool: {shown}")
            st = d.must("auth", "status", NAME, timeout_s=10)
            if st.get("state") != "authorized":
                raise Failure(f"auth status says {st.get('state')!r}, not "
                              f"authorized: {json.dumps(st)}")
    finally:
        browser.stop()
    visits = len(browser.visits)
    expected = want.get("visits", 1)
    if visits != expected:
        raise Failure(f"the browser opened {visits} authorization URLs, "
                      f"not {expected}: {browser.visits} {browser.errors}")
    log(f"browser visits: {browser.visits}")
    log(f"unload: {json.dumps(d.must('unload', NAME, timeout_s=20))}")
    d.shutdown()
    log("mcpd shut down")
