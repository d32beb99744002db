#!/usr/bin/env python3
"""mock-openai.py — a stand-in for the OpenAI Responses API, for the agent
tests (tests/integration/agents_inject.sh). Test networks only.

  mock-openai.py --listen ADDR:PORT --key-file FILE --reply TEXT --log FILE
                 [--ws accept|decline] [--cert PEM --certkey PEM] [--ready FILE]
                 [--tool-command CMD]

Serves HTTP/1.1 (keep-alive), over TLS when --cert/--certkey are given
(a certificate for api.openai.com from the test's CA), until killed:

  * POST /v1/responses — the Responses API. Only "Authorization: Bearer
    KEY" with the key in --key-file is answered; with "stream": true as
    the real API streams it (text/event-stream: response.created,
    response.in_progress, response.output_item.added,
    response.content_part.added, response.output_text.delta per word of
    --reply, response.output_text.done, response.content_part.done,
    response.output_item.done, response.completed), else as one JSON
    response object. Any other key: 401 with the API's error JSON
    ({"error":{"message":...,"type":"invalid_request_error","code":"invalid_api_key"}}).
  * GET /v1/responses with "Upgrade: websocket" — the Responses API over
    a WebSocket. --ws accept (the default): after the same key check the
    upgrade is answered 101 (RFC 6455, no extensions) and every
    {"type":"response.create",...} text message the client sends is
    answered with the events above, one JSON text message each. --ws
    decline: the upgrade is answered 426 Upgrade Required, as a server
    without the WebSocket endpoint would (the client falls back to SSE).
  * GET /v1/models — a list with the request's model names (key checked).
  * anything else: 404 with an error JSON.

--tool-command CMD: the mock acts as a model that makes one shell tool
call, then answers. A response request (POST or WebSocket) whose input
holds no tool output yet (no item of type function_call_output,
custom_tool_call_output or local_shell_call_output) and whose "tools"
offer a shell tool is answered with a call of that tool running CMD —
"shell" {"command": ["bash", "-lc", CMD]}, "shell_command" {"command":
CMD}, "exec_command" {"cmd": CMD} (what Codex 0.171 offers), or a
"local_shell" tool (a local_shell_call item), the first of these the
request offers (events: response.created, response.in_progress,
response.output_item.added, response.function_call_arguments.delta,
response.function_call_arguments.done, response.output_item.done,
response.completed). A request whose input holds a tool output is
answered with the text --reply + " | tool output: " + the first 200
characters of that output (the last one in the input) as the client sent
it. A request offering no shell tool, or with "generate": false (Codex's
WebSocket prewarm), gets the plain --reply. Without --tool-command every
request gets the plain --reply.

Every request is logged to --log as one JSON line: method, path, the
Authorization header as received, the Upgrade header and the status
answered; each WebSocket message received is logged as {"ws": TYPE}. The
test reads it to see which key arrived (the real one, never the
placeholder) and whether the WebSocket was used. With --tool-command a
response request's line also has "tool": the tool name when a call was
sent, "tool_output": the output text when one arrived.
"""
import argparse
import base64
import hashlib
import json
import ssl
import struct
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 8 << 20  # a request body or WebSocket message larger than this ends the connection
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

ap = argparse.ArgumentParser()
ap.add_argument("--listen", required=True)
ap.add_argument("--key-file", required=True)
ap.add_argument("--reply", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--ws", choices=("accept", "decline"), default="accept")
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


SHELL_TOOLS = ("shell", "shell_command", "exec_command", "local_shell")
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def output_text(o):
    """A tool output item's "output" as text: a string, a list of content
    items ({"type": "input_text", "text": ...}), or {"content": ...}."""
    if isinstance(o, str):
        return o
    if isinstance(o, list):
        return "".join(p.get("text") or "" if isinstance(p, dict) else str(p) for p in o)
    if isinstance(o, dict):
        return output_text(o.get("content", o.get("output", "")))
    return "" if o is None else json.dumps(o)


def plan(req):
    """What to answer one response request with: (text, None, None, extra)
    for a text reply, (None, tool_name, arguments, extra) for a tool call;
    extra holds the log fields ("tool", "tool_output")."""
    if args.tool_command is None or req.get("generate") is False:
        return args.reply, None, None, {}  # generate false: Codex's WebSocket prewarm
    outs = [i for i in req.get("input") or [] if isinstance(i, dict)
            and i.get("type") in OUTPUT_TYPES]
    if outs:
        out = output_text(outs[-1].get("output"))
        return (args.reply + " | tool output: " + out[:200], None, None,
                {"tool_output": out})
    offered = {}
    for t in req.get("tools") or []:
        if isinstance(t, dict):
            name = "local_shell" if t.get("type") == "local_shell" else t.get("name")
            offered.setdefault(name, t)
    cmd = args.tool_command
    for name in SHELL_TOOLS:
        if name in offered:
            a = {"shell": {"command": ["bash", "-lc", cmd]}, "shell_command": {"command": cmd},
                 "exec_command": {"cmd": cmd},
                 "local_shell": {"command": ["bash", "-lc", cmd]}}[name]
            return None, name, a, {"tool": name}
    return args.reply, None, None, {}


def events(req, p=None):
    """The Responses API's stream events for one request, in order (each
    a dict with "type" and "sequence_number"); p: plan(req)."""
    text, tool, targs, _ = p or plan(req)
    model = req.get("model", "gpt-mock")
    rid = "resp_mock" + uuid.uuid4().hex[:16]
    now = int(time.time())
    base = {"id": rid, "object": "response", "created_at": now, "model": model,
            "status": "in_progress", "output": [], "error": None, "incomplete_details": None,
            "instructions": None, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "usage": None}
    if tool is not None:
        return tool_events(base, tool, targs)
    iid = "msg_mock" + uuid.uuid4().hex[:16]
    words = text.split(" ")
    out = []
    out.append({"type": "response.created", "response": dict(base)})
    out.append({"type": "response.in_progress", "response": dict(base)})
    item = {"id": iid, "type": "message", "status": "in_progress", "role": "assistant",
            "content": []}
    out.append({"type": "response.output_item.added", "output_index": 0, "item": item})
    out.append({"type": "response.content_part.added", "item_id": iid, "output_index": 0,
                "content_index": 0, "part": {"type": "output_text", "text": "",
                                             "annotations": []}})
    for i, w in enumerate(words):
        out.append({"type": "response.output_text.delta", "item_id": iid, "output_index": 0,
                    "content_index": 0, "delta": w if i == 0 else " " + w, "logprobs": []})
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    out.append({"type": "response.output_text.done", "item_id": iid, "output_index": 0,
                "content_index": 0, "text": text, "logprobs": []})
    out.append({"type": "response.content_part.done", "item_id": iid, "output_index": 0,
                "content_index": 0, "part": part})
    done_item = {"id": iid, "type": "message", "status": "completed", "role": "assistant",
                 "content": [part]}
    out.append({"type": "response.output_item.done", "output_index": 0, "item": done_item})
    usage = {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": len(words), "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 12 + len(words)}
    out.append({"type": "response.completed",
                "response": dict(base, status="completed", output=[done_item], usage=usage)})
    for n, e in enumerate(out):
        e["sequence_number"] = n
    return out


def tool_events(base, tool, targs):
    """The stream events of a response whose output is one call of tool."""
    cid = "call_mock" + uuid.uuid4().hex[:16]
    out = [{"type": "response.created", "response": dict(base)},
           {"type": "response.in_progress", "response": dict(base)}]
    if tool == "local_shell":
        iid = "lsh_mock" + uuid.uuid4().hex[:16]
        action = {"type": "exec", "command": targs["command"], "timeout_ms": None,
                  "working_directory": None, "env": None, "user": None}
        item = {"type": "local_shell_call", "id": iid, "call_id": cid,
                "status": "in_progress", "action": action}
        out.append({"type": "response.output_item.added", "output_index": 0, "item": item})
        done_item = dict(item, status="completed")
    else:
        iid = "fc_mock" + uuid.uuid4().hex[:16]
        a = json.dumps(targs)
        item = {"type": "function_call", "id": iid, "call_id": cid, "name": tool,
                "arguments": "", "status": "in_progress"}
        out.append({"type": "response.output_item.added", "output_index": 0, "item": item})
        out.append({"type": "response.function_call_arguments.delta", "item_id": iid,
                    "output_index": 0, "delta": a})
        out.append({"type": "response.function_call_arguments.done", "item_id": iid,
                    "output_index": 0, "arguments": a})
        done_item = dict(item, arguments=a, status="completed")
    out.append({"type": "response.output_item.done", "output_index": 0, "item": done_item})
    usage = {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 8, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 20}
    out.append({"type": "response.completed",
                "response": dict(base, status="completed", output=[done_item], usage=usage)})
    for n, e in enumerate(out):
        e["sequence_number"] = n
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-openai"

    def log_message(self, fmt, *a):  # no stderr noise
        pass

    def setup(self):
        # the TLS handshake in this connection's thread, bounded
        self.request.settimeout(60)
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()
        super().setup()

    def entry(self, status, **extra):
        e = {"method": self.command, "path": self.path,
             "authorization": self.headers.get("authorization"),
             "upgrade": self.headers.get("upgrade"), "status": status}
        e.update(extra)
        log(e)

    def send_json(self, status, obj, **extra):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", "req_mock" + uuid.uuid4().hex[:16])
        self.end_headers()
        self.wfile.write(body)
        self.entry(status, **extra)

    def error(self, status, message, code=None, kind="invalid_request_error"):
        self.send_json(status, {"error": {"message": message, "type": kind, "param": None,
                                          "code": code}})

    def key_ok(self):
        auth = self.headers.get("authorization") or ""
        return auth.lower().startswith("bearer ") and auth[7:].strip() == REAL_KEY

    def auth_error(self):
        self.error(401, "Incorrect API key provided. You can find your API key at your "
                   "account page.", "invalid_api_key")

    def read_body(self):
        n = int(self.headers.get("content-length") or 0)
        if n < 0 or n > MAX_BODY:
            return None
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if (self.headers.get("upgrade") or "").lower() == "websocket":
            if path != "/v1/responses" or args.ws == "decline":
                self.close_connection = True
                self.error(426, "WebSocket is not supported on this endpoint")
                return
            if not self.key_ok():
                self.close_connection = True
                self.auth_error()
                return
            self.websocket()
            return
        if path == "/v1/models":
            if not self.key_ok():
                self.auth_error()
                return
            self.send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "mock"}
                for m in ("gpt-5", "gpt-5-codex", "gpt-5.1-codex")]})
            return
        self.error(404, "Not found", "not_found")

    def do_POST(self):
        body = self.read_body()
        if body is None:
            self.close_connection = True
            self.error(413, "Request too large")
            return
        path = self.path.split("?", 1)[0]
        if path != "/v1/responses":
            self.error(404, "Not found", "not_found")
            return
        if not self.key_ok():
            self.auth_error()
            return
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            self.error(400, "We could not parse the JSON body of your request.")
            return
        p = plan(req)
        evs = events(req, p)
        if not req.get("stream"):
            self.send_json(200, evs[-1]["response"], stream=False, **p[3])
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-request-id", "req_mock" + uuid.uuid4().hex[:16])
        self.end_headers()
        for e in evs:
            b = ("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e))).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
            self.wfile.flush()
            if e["type"] == "response.output_text.delta":
                time.sleep(0.02)  # deltas apart: the stream is relayed as it comes
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.entry(200, stream=True, **p[3])

    # ---- RFC 6455, server side: no extensions, text/ping/close ----------------------------

    def websocket(self):
        key = self.headers.get("sec-websocket-key") or ""
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        self.entry(101)
        self.close_connection = True
        self.request.settimeout(120)
        try:
            while True:
                op, msg = self.ws_recv()
                if op is None or op == 8:
                    self.ws_send(8, b"\x03\xe8")
                    return
                if op == 9:
                    self.ws_send(10, msg)
                    continue
                if op != 1:
                    continue
                try:
                    req = json.loads(msg)
                except ValueError:
                    req = {}
                p = plan(req) if req.get("type") == "response.create" else (None,) * 3 + ({},)
                log(dict({"ws": req.get("type"), "model": req.get("model")}, **p[3]))
                if req.get("type") != "response.create":
                    continue
                for e in events(req, p):
                    self.ws_send(1, json.dumps(e).encode())
                    if e["type"] == "response.output_text.delta":
                        time.sleep(0.02)
        except (OSError, ValueError):
            return

    def ws_recv(self):
        """One whole message (continuations joined): (opcode, payload), or
        (None, None) at the end of the stream."""
        data, first_op = b"", None
        while True:
            h = self.rfile.read(2)
            if len(h) < 2:
                return None, None
            fin, op = h[0] & 0x80, h[0] & 0x0F
            masked, n = h[1] & 0x80, h[1] & 0x7F
            if n == 126:
                n = struct.unpack("!H", self.rfile.read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self.rfile.read(8))[0]
            if n > MAX_BODY or len(data) + n > MAX_BODY:
                raise ValueError("message too large")
            mask = self.rfile.read(4) if masked else b"\0\0\0\0"
            p = bytearray(self.rfile.read(n))
            if len(p) < n:
                return None, None
            for i in range(n):
                p[i] ^= mask[i & 3]
            if op >= 8:  # a control frame may come between fragments
                if op == 9:
                    self.ws_send(10, bytes(p))
                    continue
                return op, bytes(p)
            if first_op is None:
                first_op = op
            data += p
            if fin:
                return first_op, data

    def ws_send(self, op, payload):
        n = len(payload)
        if n < 126:
            h = struct.pack("!BB", 0x80 | op, n)
        elif n < 65536:
            h = struct.pack("!BBH", 0x80 | op, 126, n)
        else:
            h = struct.pack("!BBQ", 0x80 | op, 127, n)
        self.wfile.write(h + payload)
        self.wfile.flush()


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
