#!/usr/bin/env python3
"""ws-client.py — a minimal WebSocket client for inject_tls.sh, run inside
a ringfence run: opens wss://HOST/PATH through the run's trust (the
default context: SSL_CERT_FILE), sends the upgrade with
"Authorization: Bearer $TOKEN" and an offer of permessage-deflate, prints
the 101's status line and each server frame's payload (text messages
joined) until the server stops sending for 2 s or closes.

  ws-client.py HOST PATH
"""
import os
import socket
import ssl
import sys

host, path = sys.argv[1], sys.argv[2]
ctx = ssl.create_default_context()
s = ctx.wrap_socket(socket.create_connection((host, 443), timeout=10), server_hostname=host)
s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
           "Sec-WebSocket-Extensions: permessage-deflate\r\n"
           "Authorization: Bearer %s\r\n\r\n" % (path, host, os.environ["TOKEN"])).encode())
buf = b""
try:
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
except OSError as e:
    print("error:", e)
head, _, buf = buf.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode("latin-1"))
s.settimeout(2)
msg = b""
try:
    while True:
        while len(buf) < 2:
            d = s.recv(4096)
            if not d:
                raise EOFError
            buf += d
        n = buf[1] & 0x7f
        while len(buf) < 2 + n:
            d = s.recv(4096)
            if not d:
                raise EOFError
            buf += d
        fin, payload, buf = buf[0] & 0x80, buf[2:2 + n], buf[2 + n:]
        msg += payload
        if fin:
            print("frame:", msg.decode("latin-1").strip(), flush=True)
            msg = b""
except (EOFError, OSError):
    pass
print("closed")
