#!/usr/bin/env python3
"""chunked-client.py — a request with a chunked body cut where a test says
(tests/integration/inject.sh, inject_tls.sh; run inside a ringfence run).

  chunked-client.py URL VAR [PAD]

POSTs to URL (http:// or https://; through HTTP_PROXY / HTTPS_PROXY when
the run has them: a CONNECT tunnel for https, the absolute form for http;
else straight to the host, which a run captures) a chunked body built from
the environment variable VAR (the run's placeholder):

  chunk 1  "a=" + VAR[:10]                       (with an extension ";x=1")
  chunk 2  VAR[10:] + "&pad=" + PAD x "p"         (PAD default 40000)
  chunk 3  "&end=" + VAR
  last     "0", a trailer "X-Trailer: t", the empty line

with a 0.3 s pause after each chunk, so the placeholder is cut between two
chunks and between two reads of the proxy. Prints "code=NNN" and the
answer's body. Plain sockets and ssl only: no library re-frames it.
"""
import os
import socket
import ssl
import sys
import time
import urllib.parse

url, var = sys.argv[1], sys.argv[2]
pad = int(sys.argv[3]) if len(sys.argv) > 3 else 40000
u = urllib.parse.urlsplit(url)
tls = u.scheme == "https"
port = u.port or (443 if tls else 80)
ph = os.environ[var].encode()
pieces = [b"a=" + ph[:10], ph[10:] + b"&pad=" + b"p" * pad, b"&end=" + ph]

proxy = os.environ.get("HTTPS_PROXY" if tls else "HTTP_PROXY", "")
target = u.path or "/"
if proxy:
    p = urllib.parse.urlsplit(proxy)
    s = socket.create_connection((p.hostname, p.port), timeout=10)
    if tls:
        s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n"
                  % (u.hostname.encode(), port, u.hostname.encode(), port))
        head = b""
        while b"\r\n\r\n" not in head:
            d = s.recv(4096)
            if not d:
                sys.exit("CONNECT: no answer")
            head += d
        if not head.startswith(b"HTTP/1.1 200"):
            print(head.decode("latin-1"))
            sys.exit(1)
    else:
        target = url
else:
    s = socket.create_connection((u.hostname, port), timeout=10)
if tls:
    ctx = ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE"))
    s = ctx.wrap_socket(s, server_hostname=u.hostname)
s.sendall(b"POST %s HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n"
          b"Content-Type: application/x-www-form-urlencoded\r\nConnection: close\r\n\r\n"
          % (target.encode(), u.netloc.encode()))
try:
    for i, c in enumerate(pieces):
        s.sendall(b"%x%s\r\n" % (len(c), b";x=1" if i == 0 else b"") + c + b"\r\n")
        time.sleep(0.3)
    s.sendall(b"0\r\nX-Trailer: t\r\n\r\n")
except OSError:
    pass  # refused part way: the answer says why
resp = b""
while True:
    try:
        d = s.recv(65536)
    except OSError:
        break
    if not d:
        break
    resp += d
head, _, body = resp.partition(b"\r\n\r\n")
line = head.split(b"\r\n", 1)[0].decode("latin-1")
print("code=" + (line.split(" ")[1] if len(line.split(" ")) > 1 else "none"))
print(body.decode("latin-1"))
