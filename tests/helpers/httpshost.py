#!/usr/bin/env python3
"""httpshost.py — an HTTPS echo server for the HTTP-rules test
(tests/integration/http_rules.sh; run inside the test's own network
namespace, never anything else).

  httpshost.py DIR

DIR holds leaf.pem and leaf.key (a certificate for svc.test signed by a
test CA the test made with the openssl CLI; the run's egress process
trusts that CA through --upstream-ca). Serves, until killed, HTTP/1.1
(keep-alive, Content-Length bodies) behind TLS on :443: every request is
answered 200 with a body "echo " + its request line, and its request
line is appended to DIR/https.log, so a test sees what reached the host.

Writes DIR/https-ready once listening.
"""
import os
import socket
import ssl
import sys
import threading

d = sys.argv[1]
MAX_HEAD = 65536
MAX_BODY = 1 << 20
lock = threading.Lock()


def log(text):
    with lock, open(os.path.join(d, "https.log"), "a") as f:
        f.write(text + "\n")


def conn(c):
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
            lines = head.decode("latin-1").split("\r\n")
            length = 0
            for line in lines[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip() or 0)
            if length > MAX_BODY:
                return
            while len(buf) < length:
                data = c.recv(65536)
                if not data:
                    return
                buf += data
            buf = buf[length:]
            log(lines[0])
            body = ("echo " + lines[0] + "\n").encode("latin-1")
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                      + str(len(body)).encode() + b"\r\n\r\n" + body)
    except (OSError, ValueError):
        pass
    finally:
        c.close()


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "leaf.pem"), os.path.join(d, "leaf.key"))
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 443))
    s.listen(64)
    open(os.path.join(d, "https-ready"), "w").close()

    def handle(raw):
        try:
            raw.settimeout(30)
            t = ctx.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        conn(t)

    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


main()
