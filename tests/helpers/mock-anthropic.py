#!/usr/bin/env python3
"""mock-anthropic.py — a stand-in for the Anthropic Messages API, for the
agent tests (tests/integration/agents_inject.sh). Test networks only.

  mock-anthropic.py --listen ADDR:PORT --key-file FILE --reply TEXT --log FILE
                    [--cert PEM --certkey PEM] [--ready FILE] [--tool-command CMD]

Serves HTTP/1.1 (keep-alive), over TLS when --cert/--certkey are given
(a certificate for api.anthropic.com from the test's CA), until killed:

  * POST /v1/messages — the Messages API. Only a request whose x-api-key
    (or "Authorization: Bearer") is the key in --key-file is answered: with
    "stream": true as the real API streams it (text/event-stream:
    message_start, content_block_start, ping, content_block_delta per word
    of --reply, 20 ms apart (or metadata.mock_delay_s of the request, at
    most 2 s), content_block_stop, message_delta, message_stop), else as
    one JSON message. Any other key: 401 with the API's error JSON
    ({"type":"error","error":{"type":"authentication_error",...}}).
    With --tool-command, a model that makes one tool call: a request that
    offers the Bash tool and whose last message holds no tool_result is
    answered with a tool_use of Bash running CMD (stop_reason "tool_use");
    one whose last message holds a tool_result is answered with --reply,
    " | tool output: " and the first 200 characters of that result.
    Requests that offer no Bash tool (the CLI's side calls) get --reply.
  * POST /v1/messages/count_tokens — {"input_tokens": N} (same key check).
  * GET /api/hello, /v1/oauth/hello — 200 {"message": "hello"}, no key
    needed: the reachability checks Claude Code's TUI makes before its
    first screen (api.anthropic.com and platform.claude.com).
  * a WebSocket upgrade on any path is declined: 426 with an error JSON
    (this API has no WebSocket endpoint; the OpenAI mock is the one that
    accepts an upgrade).
  * anything else: 404 with the API's not_found_error JSON.

Every request is logged to --log as one JSON line: method, path, the
x-api-key and Authorization headers as received, the Upgrade header, the
status answered, and for /v1/messages whether it streamed. The test reads
it to see which key arrived (the real one, never the placeholder).
"""
import argparse
import json
import ssl
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 8 << 20  # a request body larger than this is refused (413)

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


def sse(event, data):
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data, separators=(",", ":")))).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-anthropic"

    def log_message(self, fmt, *a):  # no stderr noise
        pass

    def setup(self):
        # the TLS handshake in this connection's thread, bounded
        self.request.settimeout(30)
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()
        super().setup()

    def entry(self, status, **extra):
        e = {"method": self.command, "path": self.path,
             "x-api-key": self.headers.get("x-api-key"),
             "authorization": self.headers.get("authorization"),
             "upgrade": self.headers.get("upgrade"), "status": status}
        e.update(extra)
        log(e)

    def send_json(self, status, obj, **extra):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_mock_" + uuid.uuid4().hex[:20])
        self.end_headers()
        self.wfile.write(body)
        self.entry(status, **extra)

    def error(self, status, kind, message):
        self.send_json(status, {"type": "error", "error": {"type": kind, "message": message},
                                "request_id": "req_mock_" + uuid.uuid4().hex[:20]})

    def read_body(self):
        n = int(self.headers.get("content-length") or 0)
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            return None
        return self.rfile.read(n) if n else b""

    def key_ok(self):
        key = self.headers.get("x-api-key")
        auth = self.headers.get("authorization") or ""
        if key is None and auth.lower().startswith("bearer "):
            key = auth[7:].strip()
        return key == REAL_KEY

    def do_GET(self):
        if (self.headers.get("upgrade") or "").lower() == "websocket":
            self.close_connection = True
            self.error(426, "invalid_request_error", "WebSocket is not supported here")
            return
        if self.path.split("?", 1)[0] in ("/api/hello", "/v1/oauth/hello"):
            # the reachability check Claude Code's TUI makes at start
            self.send_json(200, {"message": "hello"})
            return
        self.error(404, "not_found_error", "Not found")

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.entry(200)

    def do_POST(self):
        body = self.read_body()
        if body is None:
            self.error(413, "request_too_large", "Request exceeds the maximum allowed size")
            return
        path = self.path.split("?", 1)[0]
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self.error(404, "not_found_error", "Not found")
            return
        if not self.key_ok():
            self.error(401, "authentication_error", "invalid x-api-key")
            return
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            self.error(400, "invalid_request_error", "body is not JSON")
            return
        if path == "/v1/messages/count_tokens":
            self.send_json(200, {"input_tokens": 12})
            return
        self.messages(req)

    def start_stream(self):
        """The 200 of a streamed answer (chunked text/event-stream); returns
        the function that writes one chunk (b"" ends the stream)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", "req_mock_" + uuid.uuid4().hex[:20])
        self.end_headers()

        def chunk(b):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
            self.wfile.flush()
        return chunk

    def tool_turn(self, req):
        """With --tool-command: ("call", None) for a request that offers
        Bash and holds no tool result yet, ("result", TEXT) for one whose
        last message holds a tool_result, else None."""
        if not args.tool_command:
            return None
        msgs = req.get("messages") or []
        last = msgs[-1] if msgs and isinstance(msgs[-1], dict) else {}
        content = last.get("content")
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                c = b.get("content")
                if isinstance(c, list):
                    c = "".join(x.get("text", "") for x in c if isinstance(x, dict))
                return ("result", c if isinstance(c, str) else "")
        names = [t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)]
        return ("call", None) if "Bash" in names else None

    def messages(self, req):
        model = req.get("model", "claude-mock")
        mid = "msg_mock" + uuid.uuid4().hex[:16]
        turn = self.tool_turn(req)
        reply = args.reply
        if turn and turn[0] == "result":
            reply = args.reply + " | tool output: " + turn[1][:200]
            log({"tool_output": turn[1][:200]})
        if turn and turn[0] == "call":
            self.tool_call(req, model, mid)
            return
        words = reply.split(" ")
        usage = {"input_tokens": 12, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0, "output_tokens": len(words)}
        if not req.get("stream"):
            self.send_json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                 "content": [{"type": "text", "text": reply}],
                                 "stop_reason": "end_turn", "stop_sequence": None,
                                 "usage": usage}, stream=False)
            return
        chunk = self.start_stream()

        # a test client may ask for slower deltas (metadata.mock_delay_s,
        # at most 2 s) to see them relayed one by one
        try:
            delay = min(max(float((req.get("metadata") or {}).get("mock_delay_s", 0.02)), 0), 2)
        except (TypeError, ValueError, AttributeError):
            delay = 0.02
        start_usage = dict(usage, output_tokens=1)
        chunk(sse("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": start_usage}}))
        chunk(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "text", "text": ""}}))
        chunk(sse("ping", {"type": "ping"}))
        for i, w in enumerate(words):
            # a delta per word, flushed apart: the stream is relayed as it comes
            chunk(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta",
                                                        "text": w if i == 0 else " " + w}}))
            time.sleep(delay)
        chunk(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        chunk(sse("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                    "usage": {"output_tokens": len(words)}}))
        chunk(sse("message_stop", {"type": "message_stop"}))
        chunk(b"")
        self.entry(200, stream=True)

    def tool_call(self, req, model, mid):
        """One tool_use of Bash running --tool-command, streamed or not."""
        tid = "toolu_mock" + uuid.uuid4().hex[:16]
        inp = {"command": args.tool_command, "description": "Run the test command"}
        usage = {"input_tokens": 12, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0, "output_tokens": 8}
        log({"tool": "Bash"})
        if not req.get("stream"):
            self.send_json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                 "content": [{"type": "tool_use", "id": tid, "name": "Bash",
                                              "input": inp}],
                                 "stop_reason": "tool_use", "stop_sequence": None,
                                 "usage": usage}, stream=False)
            return
        chunk = self.start_stream()

        chunk(sse("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=1)}}))
        chunk(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "tool_use", "id": tid,
                                                            "name": "Bash", "input": {}}}))
        chunk(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(inp)}}))
        chunk(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        chunk(sse("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                    "usage": {"output_tokens": 8}}))
        chunk(sse("message_stop", {"type": "message_stop"}))
        chunk(b"")
        self.entry(200, stream=True)


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
