#!/usr/bin/env python3
"""mock-gemini.py — a stand-in for the Gemini API (generativelanguage),
for the agent tests (tests/integration/agents_inject.sh). Test networks
only.

  mock-gemini.py --listen ADDR:PORT --key-file FILE --reply TEXT --log FILE
                 [--cert PEM --certkey PEM] [--ready FILE] [--tool-command CMD]

Serves HTTP/1.1 (keep-alive), over TLS when --cert/--certkey are given
(a certificate for generativelanguage.googleapis.com from the test's CA),
until killed:

  * POST /v1beta/models/MODEL:streamGenerateContent (?alt=sse) — the reply
    as the real API streams it: one `data: {candidates: ...}` event per
    word of --reply, the last with finishReason STOP and usageMetadata.
  * POST /v1beta/models/MODEL:generateContent — one JSON response. When the
    request asks for JSON (generationConfig.responseMimeType
    application/json: the CLI's own routing and next-speaker checks), the
    text is a JSON object that ends the turn and answers its model router
    ({"next_speaker": "user", "model_choice": "flash",
    "complexity_score": 1, ...}).
  * POST /v1beta/models/MODEL:countTokens — {"totalTokens": N}.
  * GET /v1beta/models... — an empty model list.
  Only a request whose x-goog-api-key (or ?key=) is the key in --key-file
  is answered; any other: 400 API_KEY_INVALID as the real API says it.
  Anything else: 404.

With --tool-command CMD the mock is a model that makes one shell tool
call and then answers. A generateContent / streamGenerateContent request
that declares the CLI's shell tool (a functionDeclaration named
run_shell_command, or else one whose name holds "shell" and that takes a
"command") and whose contents hold no functionResponse part yet is
answered (streamed as above, or as one JSON response) with one candidate
whose part is {"functionCall": {"name": TOOL, "args": {"command": CMD,
...}}} (a "description" too when the tool declares one, and any other
required string parameter ""), finishReason STOP. Once the contents hold a
functionResponse part, the answer is --reply + " | tool output: " + the
first 200 characters of the last function response's output (its
response.output as the CLI sent it; the whole response as JSON if it has
no string "output"). Requests declaring no such tool (the CLI's routing
and next-speaker checks) get the usual answers.

Every request is logged to --log as one JSON line: method, path, the
x-goog-api-key header as received, the status answered; with
--tool-command also "tool" (the tool's name) when a call was sent and
"tool_output" (the 200 characters quoted) when a response arrived.
"""
import argparse
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MAX_BODY = 8 << 20

ap = argparse.ArgumentParser()
ap.add_argument("--listen", required=True)
ap.add_argument("--key-file", required=True)
ap.add_argument("--reply", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--cert")
ap.add_argument("--certkey")
ap.add_argument("--ready")
ap.add_argument("--tool-command")
args = ap.parse_args()

with open(args.key_file) as f:
    REAL_KEY = f.read().strip()
log_lock = threading.Lock()


def log(entry):
    with log_lock, open(args.log, "a") as f:
        f.write(json.dumps(entry) + "\n")


def candidate(text, last, n_words, part=None):
    c = {"content": {"parts": [part or {"text": text}], "role": "model"}, "index": 0}
    out = {"candidates": [c], "modelVersion": "gemini-mock", "responseId": "mock"}
    if last:
        c["finishReason"] = "STOP"
        out["usageMetadata"] = {"promptTokenCount": 12, "candidatesTokenCount": n_words,
                                "totalTokenCount": 12 + n_words}
    return out


def shell_tool(req):
    """The CLI's shell tool as declared in req: (name, declaration) or None."""
    decls = [d for t in req.get("tools") or [] if isinstance(t, dict)
             for d in t.get("functionDeclarations") or [] if isinstance(d, dict)]
    for d in decls:
        if d.get("name") == "run_shell_command":
            return d
    for d in decls:
        props = (d.get("parametersJsonSchema") or d.get("parameters") or {}).get("properties") or {}
        if "shell" in str(d.get("name", "")).lower() and "command" in props:
            return d
    return None


def tool_args(decl):
    schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
    props = schema.get("properties") or {}
    a = {"command": args.tool_command}
    if "description" in props:
        a["description"] = "Run the mock's test command."
    for r in schema.get("required") or []:
        if r not in a:
            a[r] = ""
    return a


def function_output(req):
    """The output of the last functionResponse part in req's contents, or None."""
    last = None
    for c in req.get("contents") or []:
        for p in (c.get("parts") if isinstance(c, dict) else None) or []:
            if isinstance(p, dict) and "functionResponse" in p:
                last = p["functionResponse"]
    if last is None:
        return None
    resp = last.get("response") if isinstance(last, dict) else None
    if isinstance(resp, dict) and isinstance(resp.get("output"), str):
        return resp["output"]
    return json.dumps(resp if resp is not None else last)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-gemini"

    def log_message(self, fmt, *a):
        pass

    def setup(self):
        self.request.settimeout(30)
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()
        super().setup()

    def entry(self, status, **extra):
        e = {"method": self.command, "path": self.path,
             "x-goog-api-key": self.headers.get("x-goog-api-key"), "status": status}
        e.update(extra)
        log(e)

    def send_json(self, status, obj, **extra):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.entry(status, **extra)

    def error(self, status, reason, message):
        self.send_json(status, {"error": {"code": status, "message": message,
                                          "status": "INVALID_ARGUMENT" if status == 400 else "NOT_FOUND",
                                          "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                                       "reason": reason,
                                                       "domain": "googleapis.com"}]}})

    def key_ok(self):
        key = self.headers.get("x-goog-api-key")
        if key is None:
            key = (parse_qs(urlsplit(self.path).query).get("key") or [None])[0]
        return key == REAL_KEY

    def do_GET(self):
        path = urlsplit(self.path).path
        if not path.startswith("/v1beta/models"):
            self.error(404, "NOT_FOUND", "Not found")
            return
        if not self.key_ok():
            self.error(400, "API_KEY_INVALID", "API key not valid. Please pass a valid API key.")
            return
        self.send_json(200, {"models": []})

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            self.error(400, "TOO_LARGE", "Request too large")
            return
        body = self.rfile.read(n) if n else b""
        path = urlsplit(self.path).path
        if not path.startswith("/v1beta/models/") or ":" not in path:
            self.error(404, "NOT_FOUND", "Not found")
            return
        method = path.rsplit(":", 1)[1]
        if method not in ("streamGenerateContent", "generateContent", "countTokens"):
            self.error(404, "NOT_FOUND", "Not found")
            return
        if not self.key_ok():
            self.error(400, "API_KEY_INVALID", "API key not valid. Please pass a valid API key.")
            return
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            self.error(400, "INVALID_JSON", "body is not JSON")
            return
        if method == "countTokens":
            self.send_json(200, {"totalTokens": 12})
            return
        reply, call, extra = args.reply, None, {}
        cfg = req.get("generationConfig") or {}
        decl = shell_tool(req) if args.tool_command is not None else None
        if decl is not None and cfg.get("responseMimeType") != "application/json":
            out = function_output(req)
            if out is None:
                call = {"functionCall": {"name": decl["name"], "args": tool_args(decl)}}
                extra["tool"] = decl["name"]
            else:
                reply = "%s | tool output: %s" % (args.reply, out[:200])
                extra["tool_output"] = out[:200]
        words = reply.split(" ")
        if method == "generateContent":
            if call is not None:
                text = None
            elif cfg.get("responseMimeType") == "application/json":
                text = json.dumps({"next_speaker": "user", "reasoning": "mock",
                                   "model_choice": "flash", "complexity_reasoning": "mock",
                                   "complexity_score": 1})
            else:
                text = reply
            self.send_json(200, candidate(text, True, len(words), call), kind=method, **extra)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(b):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
            self.wfile.flush()

        if call is not None:
            events = [candidate(None, True, 1, call)]
        else:
            events = [candidate(w if i == 0 else " " + w, i == len(words) - 1, len(words))
                      for i, w in enumerate(words)]
        for ev in events:
            data = json.dumps(ev, separators=(",", ":"))
            chunk(("data: %s\r\n\r\n" % data).encode())
            time.sleep(0.02)
        chunk(b"")
        self.entry(200, kind=method, stream=True, **extra)


host, _, port = args.listen.rpartition(":")
srv = ThreadingHTTPServer((host, int(port)), Handler)
srv.daemon_threads = True
if args.cert:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.certkey)
    ctx.set_alpn_protocols(["http/1.1"])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
if args.ready:
    with open(args.ready, "w") as f:
        f.write("%d\n" % srv.server_address[1])
try:
    srv.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
