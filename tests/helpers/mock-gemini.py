#!/usr/bin/env python3
"""mock-gemini.py — a stand-in for the Gemini API (generativelanguage),
for the agent tests (tests/integration/agents_inject.sh). Test networks
only.

  mock-gemini.py --listen ADDR:PORT --key-file FILE --reply TEXT --log FILE
                 [--cert PEM --certkey PEM] [--ready FILE]

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

Every request is logged to --log as one JSON line: method, path, the
x-goog-api-key header as received, the status answered.
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
args = ap.parse_args()

with open(args.key_file) as f:
    REAL_KEY = f.read().strip()
log_lock = threading.Lock()


def log(entry):
    with log_lock, open(args.log, "a") as f:
        f.write(json.dumps(entry) + "\n")


def candidate(text, last, n_words):
    c = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    out = {"candidates": [c], "modelVersion": "gemini-mock", "responseId": "mock"}
    if last:
        c["finishReason"] = "STOP"
        out["usageMetadata"] = {"promptTokenCount": 12, "candidatesTokenCount": n_words,
                                "totalTokenCount": 12 + n_words}
    return out


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
        words = args.reply.split(" ")
        if method == "generateContent":
            cfg = req.get("generationConfig") or {}
            if cfg.get("responseMimeType") == "application/json":
                text = json.dumps({"next_speaker": "user", "reasoning": "mock",
                                   "model_choice": "flash", "complexity_reasoning": "mock",
                                   "complexity_score": 1})
            else:
                text = args.reply
            self.send_json(200, candidate(text, True, len(words)), kind=method)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(b):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
            self.wfile.flush()

        for i, w in enumerate(words):
            text = w if i == 0 else " " + w
            data = json.dumps(candidate(text, i == len(words) - 1, len(words)),
                              separators=(",", ":"))
            chunk(("data: %s\r\n\r\n" % data).encode())
            time.sleep(0.02)
        chunk(b"")
        self.entry(200, kind=method, stream=True)


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
