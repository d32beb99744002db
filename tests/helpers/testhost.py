#!/usr/bin/env python3
"""testhost.py — the servers of a test host (run inside the test's own
network namespace; never anything else).

  testhost.py LOG_DIR DNS_TABLE

serves, until killed:
  * HTTP on :8080 — answers every request 200 with a body that echoes the
    request line and headers (so a test sees what the proxy forwarded), and
    appends the request line and headers to LOG_DIR/http.log;
  * TCP on :4443 — accepts, logs "connection" to LOG_DIR/tcp.log, echoes
    what it reads (a tunnel test writes a line and reads it back);
  * TCP on :5432 — a plain line echo (a database-like port): logs
    "connection" to LOG_DIR/plain.log on accept and "data N" for each read
    of N bytes, so a test sees whether any byte of a refused stream arrived;
  * TCP on :2525 — a server that speaks first ("220 banner\n"), then echoes;
  * TLS on :8443 — the HTTP server of :8080 behind TLS, when LOG_DIR/cert.pem
    and LOG_DIR/key.pem exist (a test makes them with openssl);
  * TCP on :8082 — a listener whose accept queue is kept full (backlog 0,
    never accepted), so a new connection to it is never answered;
  * DNS on UDP :53 — answers A queries from DNS_TABLE (lines "name address",
    or "name a1,a2,...": each A query gets the next one, a rebinding
    resolver; "name servfail": SERVFAIL; "name noanswer": no answer at
    all), NXDOMAIN for other names, and logs every query name to
    LOG_DIR/dns.log.
Writes LOG_DIR/ready once every socket is listening.
"""
import os
import socket
import ssl
import struct
import sys
import threading

log_dir, table_path = sys.argv[1], sys.argv[2]
table = {}
with open(table_path) as f:
    for line in f:
        parts = line.split()
        if len(parts) == 2:
            # "NAME A1,A2,...": each query gets the next address in turn
            # (a rebinding resolver)
            table[parts[0].lower().rstrip(".")] = parts[1].split(",")
rotation = {}


def log(name, text):
    with open(os.path.join(log_dir, name), "a") as f:
        f.write(text + "\n")


def http_conn(c):
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            text = head.decode("latin-1")
            log("http.log", text + "\n--")
            length = 0
            for line in text.split("\r\n")[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            while len(buf) < length:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            buf = buf[length:]
            body = ("echo\n" + text + "\n").encode()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                      + str(len(body)).encode() + b"\r\n\r\n" + body)
    except OSError:
        pass
    finally:
        c.close()


def tcp_conn(c):
    log("tcp.log", "connection")
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)
    except OSError:
        pass
    c.close()


def plain_conn(c):
    log("plain.log", "connection")
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            log("plain.log", "data %d" % len(d))
            c.sendall(d)
    except OSError:
        pass
    c.close()


def banner_conn(c):
    try:
        c.sendall(b"220 banner\n")
        tcp_conn(c)
    except OSError:
        c.close()


def serve_tcp(port, handler, tls=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(64)

    def run(c):
        if tls:
            try:
                c = tls.wrap_socket(c, server_side=True)
            except (ssl.SSLError, OSError):
                c.close()
                return
        handler(c)

    def loop():
        while True:
            c, _ = s.accept()
            threading.Thread(target=run, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()


def serve_full(port):
    """A listener that never accepts, its queue filled: SYNs go unanswered."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(0)
    fillers = []
    for _ in range(2):  # backlog 0 queues one; the next is left in SYN-SENT
        f = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        f.setblocking(False)
        try:
            f.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(f)
    return s, fillers


def dns_name(msg, off):
    labels = []
    while True:
        n = msg[off]
        off += 1
        if n == 0:
            return ".".join(labels), off
        labels.append(msg[off:off + n].decode("latin-1"))
        off += n


def serve_dns():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 53))

    def loop():
        while True:
            msg, peer = s.recvfrom(2048)
            try:
                qid, flags, qd = struct.unpack(">HHH", msg[:6])
                name, end = dns_name(msg, 12)
                qtype, qclass = struct.unpack(">HH", msg[end:end + 4])
            except (struct.error, IndexError):
                continue
            log("dns.log", name)
            question = msg[12:end + 4]
            addrs = table.get(name.lower())
            addr = None
            if addrs:
                k = rotation.get(name.lower(), 0)
                addr = addrs[k % len(addrs)]
                if qtype == 1:  # A queries turn the wheel, AAAA ones do not
                    rotation[name.lower()] = k + 1
            if addr == "noanswer":
                continue
            answers = b""
            rcode = 0 if addr else 3
            if addr == "servfail":
                addr, rcode = None, 2
            if addr and qtype == 1:
                answers = (b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4)
                           + socket.inet_aton(addr))
            head = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1,
                               1 if answers else 0, 0, 0)
            s.sendto(head + question + answers, peer)
    threading.Thread(target=loop, daemon=True).start()


serve_tcp(8080, http_conn)
serve_tcp(4443, tcp_conn)
serve_tcp(5432, plain_conn)
serve_tcp(2525, banner_conn)
if os.path.exists(os.path.join(log_dir, "cert.pem")):
    tls_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls_ctx.load_cert_chain(os.path.join(log_dir, "cert.pem"), os.path.join(log_dir, "key.pem"))
    serve_tcp(8443, http_conn, tls_ctx)
full = serve_full(8082)
serve_dns()
open(os.path.join(log_dir, "ready"), "w").close()
threading.Event().wait()
