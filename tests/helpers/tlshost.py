#!/usr/bin/env python3
"""tlshost.py — the HTTPS servers of the TLS injection test's test host
(tests/integration/inject_tls.sh; run inside the test's own network
namespace, never anything else).

  tlshost.py DIR

DIR holds what the test made with the openssl CLI (a test CA and the
certificates below, each NAME.pem + NAME.key), the secret's real value in
DIR/value (the test host is where the value belongs) and a bare git
repository DIR/repo.git (after `git update-server-info`). Serves, until
killed, HTTP/1.1 (keep-alive, Content-Length and chunked bodies) behind TLS on:

  * :443  — good.pem (svc.test, signed by the test CA); a ClientHello with
    SNI other.test gets other.pem (other.test, same CA) instead;
  * :8444 — expired.pem (svc.test, test CA, validity wholly in the past);
  * :8445 — wrong.pem (wrong.test only, test CA): a hostname mismatch;
  * :8446 — self.pem (svc.test, self-signed).

Every request: the port, the SNI, the request line and the headers are
appended to DIR/tls.log ("--" after each), the body's length and whether
the real value is in it ("body-value yes"), its framing ("body-framing
length", "chunked" — read strictly — or "bad") and its SHA-256
("body-sha256 HEX", of the de-chunked body), so a test sees what went on
the wire. Answers:

  * /value...     — 200, body "value=<the real value>" and then the echo:
    a host that reflects the credential (the run must see it scrubbed);
  * /repo.git/... — a git repository behind Basic auth that accepts any
    user with the real value as password only (401 with WWW-Authenticate
    otherwise): smart HTTP (clone and push, git http-backend) and dumb
    HTTP files (404 for a missing one);
  * /partial-value — a 206 holding the value without its first byte;
  * /ws, /ws-deflate — WebSocket upgrades (see the code: the value split
    over two frames, a frame ending in its first byte; a compressed one);
  * /chunked-value — the same value split one byte per chunk (chunked);
  * /gzip-value   — "value=<value>" gzip-compressed (Content-Encoding);
  * /gzip-badhead — the same after a head ringfence cannot parse (a
    Content-Length of 20 digits);
  * /cut-value    — "value=" + the value without its last 3 bytes;
  * /pause-value-K — "value=" + the value, its first K bytes, then 0.5 s
    later the rest (Content-Length: the egress process's hold times out);
  * /slow-body... — a Content-Length body of up to 64 MiB, read only 1 s
    after the head (the sender's buffers toward the host fill up first:
    the egress process then moves the body in its slowest rhythm);
  * anything else — 200, body "echo\\n" + request line and headers +
    "body-length N".

Writes DIR/tls-ready once every socket is listening.
"""
import base64
import gzip
import hashlib
import os
import socket
import ssl
import subprocess
import sys
import threading
import time

d = sys.argv[1]
with open(os.path.join(d, "value"), "rb") as f:
    value = f.read().strip()
repo_root = os.path.realpath(os.path.join(d, "repo.git"))
MAX_HEAD = 65536
MAX_BODY = 1 << 20
log_lock = threading.Lock()


def log(text):
    with log_lock, open(os.path.join(d, "tls.log"), "a") as f:
        f.write(text + "\n")


def answer(c, status, body, extra=b""):
    c.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n" + extra + b"\r\n" + body)


def git_smart(c, method, path, headers, body):
    """The smart HTTP protocol (clone and push) through git-http-backend."""
    pi, _, qs = path.partition("?")
    env = {"GIT_PROJECT_ROOT": d, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": pi,
           "QUERY_STRING": qs, "REQUEST_METHOD": method, "REMOTE_USER": "x",
           "CONTENT_TYPE": headers.get("content-type", ""), "CONTENT_LENGTH": str(len(body)),
           "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    r = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True,
                       timeout=30)
    head, _, out = r.stdout.partition(b"\r\n\r\n")
    status, extra = b"200 OK", b""
    for line in head.split(b"\r\n"):
        k, _, v = line.partition(b":")
        if k.lower() == b"status":
            status = v.strip()
        elif k and k.lower() != b"content-length":
            extra += k + b": " + v.strip() + b"\r\n"
    answer(c, status, out, extra)


def git_file(c, path, headers, method="GET", body=b""):
    auth = headers.get("authorization", "")
    ok = False
    if auth[:6].lower() == "basic ":
        try:
            user_pass = base64.b64decode(auth[6:].strip(), validate=True)
            ok = user_pass.partition(b":")[2] == value
        except ValueError:
            ok = False
    if not ok:
        answer(c, b"401 Unauthorized", b"credentials needed\n",
               b'WWW-Authenticate: Basic realm="git"\r\n')
        return
    if "service=git-" in path or path.split("?", 1)[0].endswith(("/git-upload-pack",
                                                                   "/git-receive-pack")):
        git_smart(c, method, path, headers, body)
        return
    rel = path.split("?", 1)[0][len("/repo.git/"):]
    p = os.path.realpath(os.path.join(repo_root, rel))
    if not p.startswith(repo_root + "/") or not os.path.isfile(p):
        answer(c, b"404 Not Found", b"no such file\n")
        return
    with open(p, "rb") as f:
        answer(c, b"200 OK", f.read())


def http_conn(c, port):
    sni = getattr(c, "rf_sni", None)
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                if len(buf) > MAX_HEAD:
                    return
                data = c.recv(65536)
                if not data:
                    return
                buf += data
            head, buf = buf.split(b"\r\n\r\n", 1)
            text = head.decode("latin-1")
            lines = text.split("\r\n")
            headers = {}
            for line in lines[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            if headers.get("transfer-encoding", "").lower() == "chunked":
                # strictly: hex size CRLF data CRLF ..., 0 CRLF, trailers, CRLF
                framing, body, buf = "chunked", b"", buf
                while True:
                    while b"\r\n" not in buf:
                        data = c.recv(65536)
                        if not data or len(buf) > MAX_HEAD:
                            return
                        buf += data
                    line, buf = buf.split(b"\r\n", 1)
                    size = line.split(b";", 1)[0]
                    if not size or any(ch not in b"0123456789abcdefABCDEF" for ch in size):
                        log("port=%d sni=%s\n%s\nbody-framing bad\n--" % (port, sni, text))
                        return
                    n = int(size, 16)
                    if n == 0:
                        while True:  # trailers up to the empty line
                            while b"\r\n" not in buf:
                                data = c.recv(65536)
                                if not data:
                                    return
                                buf += data
                            line, buf = buf.split(b"\r\n", 1)
                            if not line:
                                break
                        break
                    while len(buf) < n + 2:
                        data = c.recv(65536)
                        if not data:
                            return
                        buf += data
                    if buf[n:n + 2] != b"\r\n" or len(body) + n > 8 * MAX_BODY:
                        log("port=%d sni=%s\n%s\nbody-framing bad\n--" % (port, sni, text))
                        return
                    body, buf = body + buf[:n], buf[n + 2:]
            else:
                framing = "length"
                length = int(headers.get("content-length", "0") or 0)
                slow = (lines[0].split(" ") + ["", ""])[1].startswith("/slow-body")
                if length > (64 * MAX_BODY if slow else MAX_BODY):
                    return
                if slow:
                    time.sleep(1)
                while len(buf) < length:
                    data = c.recv(65536)
                    if not data:
                        return
                    buf += data
                body, buf = buf[:length], buf[length:]
            log("port=%d sni=%s\n%s\nbody-length %d\nbody-value %s\nbody-framing %s\n"
                "body-sha256 %s\n--"
                % (port, sni, text, len(body), "yes" if value in body else "no", framing,
                   hashlib.sha256(body).hexdigest()))
            path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 2 else "/"
            if path.startswith("/repo.git/"):
                git_file(c, path, headers, lines[0].split(" ")[0], body)
                continue
            echo = ("echo\n" + text + "\nbody-length %d\n" % len(body)).encode("latin-1")
            if path.startswith("/partial-value"):
                # a 206 although no Range reached it: a slice of the value
                answer(c, b"206 Partial Content", value[1:], b"Content-Range: bytes 1-%d/%d\r\n"
                       % (len(value) - 1, len(value)))
                continue
            if path.startswith("/ws") and headers.get("upgrade", "").lower() == "websocket":
                # a WebSocket: /ws sends the value split over two frames (a
                # fragmented text message), then a frame ending with the
                # value's first byte and nothing after it; /ws-deflate
                # answers with permessage-deflate and a frame with RSV1 set
                deflate = path.startswith("/ws-deflate")
                c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                          b"Connection: Upgrade\r\n" +
                          (b"Sec-WebSocket-Extensions: permessage-deflate\r\n" if deflate else b"")
                          + b"\r\n")

                def frame(fin, op, payload, rsv1=False):
                    b0 = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | op
                    return bytes([b0, len(payload)]) + payload
                if deflate:
                    c.sendall(frame(True, 1, b"value=" + value, rsv1=True))
                else:
                    half = len(value) // 2
                    c.sendall(frame(False, 1, b"value=" + value[:half]) +
                              frame(True, 0, value[half:] + b"\n"))
                    c.sendall(frame(True, 1, b"end=" + value[:1]))
                try:
                    while c.recv(4096):
                        pass
                except OSError:
                    pass
                return
            if path.startswith("/chunked-value"):
                # the value split by chunk framing: one chunk per byte of it
                parts = [b"value="] + [value[i:i + 1] for i in range(len(value))] + [b"\n" + echo]
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                          b"Transfer-Encoding: chunked\r\n\r\n" +
                          b"".join(b"%x\r\n%s\r\n" % (len(x), x) for x in parts) + b"0\r\n\r\n")
                continue
            if path.startswith("/gzip-value"):
                # compressed although asked for identity: the value hidden in it
                answer(c, b"200 OK", gzip.compress(b"value=" + value + b"\n"),
                       b"Content-Encoding: gzip\r\n")
                continue
            if path.startswith("/gzip-badhead"):
                # the same behind a head the egress process's parser refuses
                body = gzip.compress(b"value=" + value + b"\n")
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                          b"Content-Length: %020d\r\n\r\n" % len(body) + body)
                continue
            if path.startswith("/pause-value-"):
                # a value split by a pause longer than the egress process holds
                k = int(path.split("-")[-1].split("?")[0])
                body = b"value=" + value + b"\n"
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                          b"Content-Length: %d\r\n\r\n" % len(body) + body[:6 + k])
                time.sleep(0.5)
                c.sendall(body[6 + k:])
                continue
            if path.startswith("/cut-value"):
                # a response that ends inside the value (a Range on a reflecting endpoint)
                answer(c, b"200 OK", b"value=" + value[:len(value) - 3])
                continue
            if path.startswith("/value"):
                echo = b"value=" + value + b"\n" + echo
            answer(c, b"200 OK", echo)
    except (OSError, ValueError):
        pass
    finally:
        c.close()


def context(name):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, name + ".pem"), os.path.join(d, name + ".key"))
    return ctx


def serve(port, ctx, by_sni=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(64)
    if by_sni:
        def pick(sock, name, _ctx):
            sock.rf_sni_seen = name
            if name in by_sni:
                sock.context = by_sni[name]
        ctx.sni_callback = pick
    else:
        def note(sock, name, _ctx):
            sock.rf_sni_seen = name
        ctx.sni_callback = note

    def run(c):
        try:
            t = ctx.wrap_socket(c, server_side=True)
        except (ssl.SSLError, OSError) as e:
            log("port=%d handshake failed: %s\n--" % (port, e))
            c.close()
            return
        t.rf_sni = getattr(t, "rf_sni_seen", None)
        http_conn(t, port)

    def loop():
        while True:
            c, _ = s.accept()
            threading.Thread(target=run, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()


serve(443, context("good"), {"other.test": context("other")})
serve(8444, context("expired"))
serve(8445, context("wrong"))
serve(8446, context("self"))
open(os.path.join(d, "tls-ready"), "w").close()
threading.Event().wait()
