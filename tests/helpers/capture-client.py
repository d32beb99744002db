#!/usr/bin/env python3
"""capture-client.py — what a test's run does on the captured path
(issue 14): plain sockets to names and addresses, no proxy at all.

Prints one result line: the data received (first line), "tls ok",
"tls alert NAME", "errno=NAME" (the connect or the read failed with it),
"closed" (EOF before any byte), or "yes"/"no" for `pool`.

  pool                          does the run hold its pool address 198.18.0.1?
  tcp HOST PORT [TEXT]          connect, send TEXT (\\n escapes) if given, print the first answer
  wait HOST PORT                connect, send nothing, print what comes (a refusal: a reset)
  http HOST PORT HOST_HEADER    one origin-form GET with that Host, print the status line
  http-body HOST PORT HOST_HEADER  the same GET, read to the end: the status line and the
                                body on one line ("STATUS | BODY", newlines as spaces)
  tls HOST PORT SNI CAFILE      a TLS handshake naming SNI, verified against CAFILE
  repeat N MODE ARGS...         MODE N times, one result line each (one process: no
                                interpreter start between the connections)
"""
import errno
import os
import socket
import ssl
import sys


def err(e):
    n = e.errno if isinstance(e, OSError) and e.errno else None
    return "errno=%s" % errno.errorcode.get(n, str(e)) if n else "error %s" % e


def conn(host, port):
    s = socket.create_connection((host, int(port)), timeout=10)
    s.settimeout(10)
    return s


def first(s):
    d = s.recv(65536)
    return d.decode("latin-1").splitlines()[0] if d else "closed"


def http_body(host, port, hosthdr):
    s = conn(host, port)
    s.sendall(("GET /cap HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % hosthdr).encode())
    d = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            d += b
    except OSError as e:
        if not d:
            raise
        return "%s (then %s)" % (body_line(d), err(e))
    return body_line(d) if d else "closed"


def body_line(d):
    head, _, body = d.decode("latin-1").partition("\r\n\r\n")
    return "%s | %s" % (head.split("\r\n", 1)[0], " ".join(body.split("\n")).strip())


def main(a):
    if a[0] == "repeat":
        for _ in range(int(a[1])):
            one(a[2:])
    else:
        one(a)
    sys.stdout.flush()
    os._exit(0)


def one(a):
    try:
        if a[0] == "pool":
            s = socket.socket()
            try:
                s.bind(("198.18.0.1", 0))
                print("yes")
            except OSError:
                print("no")
        elif a[0] == "tcp":
            s = conn(a[1], a[2])
            if len(a) > 3:
                s.sendall(a[3].encode().decode("unicode_escape").encode("latin-1"))
            print(first(s))
        elif a[0] == "wait":
            print(first(conn(a[1], a[2])))
        elif a[0] == "http":
            s = conn(a[1], a[2])
            s.sendall(("GET /cap HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % a[3]).encode())
            print(first(s))
        elif a[0] == "http-body":
            print(http_body(a[1], a[2], a[3]))
        elif a[0] == "tls":
            ctx = ssl.create_default_context(cafile=a[4])
            ctx.check_hostname = False  # the SNI is the point, not the name check
            s = conn(a[1], a[2])
            try:
                t = ctx.wrap_socket(s, server_hostname=a[3])
                t.close()
                print("tls ok")
            except ssl.SSLError as e:
                print("tls alert %s" % (e.reason or e))
    except OSError as e:
        print(err(e))
    sys.stdout.flush()


main(sys.argv[1:])
