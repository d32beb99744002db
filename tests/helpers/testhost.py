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
  * DNS on UDP :53 — answers A queries from DNS_TABLE (lines "name address",
    or "name a1,a2,...": each A query gets the next one, a rebinding
    resolver), NXDOMAIN for other names, and logs every query name to
    LOG_DIR/dns.log.
Writes LOG_DIR/ready once every socket is listening.
"""
import os
import socket
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


def serve_tcp(port, handler):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(64)

    def loop():
        while True:
            c, _ = s.accept()
            threading.Thread(target=handler, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()


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
            answers = b""
            rcode = 0 if addr else 3
            if addr and qtype == 1:
                answers = (b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4)
                           + socket.inet_aton(addr))
            head = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1,
                               1 if answers else 0, 0, 0)
            s.sendto(head + question + answers, peer)
    threading.Thread(target=loop, daemon=True).start()


serve_tcp(8080, http_conn)
serve_tcp(4443, tcp_conn)
serve_dns()
open(os.path.join(log_dir, "ready"), "w").close()
threading.Event().wait()
