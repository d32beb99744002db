#!/usr/bin/env python3
"""egress-client.py — what a test's run does through its egress proxy.

Speaks to the run's own listeners (127.0.0.1:3128 HTTP, 127.0.0.1:1080
SOCKS5) byte by byte, so a test controls exactly what the proxy sees.
Prints one result line first: the HTTP status line, "socks REP=N", "closed",
"echo ok", or "errno=NAME".

  get URL [HOST_HEADER]        one absolute-form GET (Host from the URL unless given)
  get2 URL1 URL2               two GETs on one keep-alive connection
  raw TEXT                     send TEXT (\\r\\n escapes) and print the answer's first line
  connect HOST:PORT SNI        CONNECT, then a TLS ClientHello naming SNI ("-" for none)
  connect-plain HOST:PORT      CONNECT, then "ping\\n", expect it echoed
  raw-all TEXT                 send TEXT (\\r\\n escapes) and print the whole answer
  socks HOST PORT              SOCKS5 CONNECT by name, then "ping\\n" echoed
  socks-ip IPV4 PORT           SOCKS5 CONNECT by IPv4 address, then "ping\\n" echoed
  socks-tls HOST PORT SNI      SOCKS5 CONNECT by name, then a TLS ClientHello naming SNI
  direct IP PORT               a plain TCP connect that bypasses the proxy
  connect-banner HOST:PORT     CONNECT, then read the line the server sends first
  socks-banner HOST PORT       SOCKS5 CONNECT by name, then the server's first line
  socks-many N SUFFIX          N SOCKS5 CONNECTs to h0.SUFFIX .. hN-1.SUFFIX port 443
"""
import errno
import os
import socket
import ssl
import sys


def first_line(data):
    return data.split(b"\r\n", 1)[0].decode("latin-1") if data else "closed"


def recv_head(s):
    """Bytes up to the end of a response head (a CONNECT answer has no body)."""
    out = b""
    s.settimeout(10)
    try:
        while b"\r\n\r\n" not in out:
            d = s.recv(1)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    return out


def recv_all(s, limit=65536):
    out = b""
    s.settimeout(20)  # beyond the proxy's 10 s connect deadline: a 504 arrives
    try:
        while len(out) < limit:
            d = s.recv(65536)
            if not d:
                break
            out += d
            if b"\r\n\r\n" in out:
                head, _, body = out.partition(b"\r\n\r\n")
                for line in head.split(b"\r\n")[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length" and len(body) >= int(v):
                        return out
    except socket.timeout:
        pass
    return out


def proxy():
    return socket.create_connection(("127.0.0.1", 3128), timeout=20)


def socks(addr, port):
    """SOCKS5 CONNECT to addr (ATYP and address bytes) and port; prints the
    reply code and returns the socket if the proxy connected, else None."""
    s = socket.create_connection(("127.0.0.1", 1080), timeout=10)
    s.sendall(b"\x05\x01\x00")
    if s.recv(2) != b"\x05\x00":
        print("socks greeting refused")
        return None
    s.sendall(b"\x05\x01\x00" + addr + port.to_bytes(2, "big"))
    rep = s.recv(10)
    print("socks REP=%d" % (rep[1] if len(rep) > 1 else -1))
    return s if len(rep) > 1 and rep[1] == 0 else None


def get_req(url, host=None):
    rest = url.split("://", 1)[1]
    authority = rest.split("/", 1)[0]
    return ("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (url, host or authority)).encode()


def main():
    cmd = sys.argv[1]
    try:
        if cmd == "get":
            s = proxy()
            s.sendall(get_req(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
            out = recv_all(s)
            print(first_line(out))
            sys.stdout.write(out.partition(b"\r\n\r\n")[2].decode("latin-1"))
        elif cmd == "get2":
            s = proxy()
            s.sendall(get_req(sys.argv[2]))
            print(first_line(recv_all(s)))
            s.sendall(get_req(sys.argv[3]))
            print(first_line(recv_all(s)))
        elif cmd == "raw":
            s = proxy()
            s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
            print(first_line(recv_all(s)))
        elif cmd == "raw-all":
            s = proxy()
            s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
            sys.stdout.write(recv_all(s).decode("latin-1"))
        elif cmd == "socks-ip":
            s = socks(b"\x01" + socket.inet_aton(sys.argv[2]), int(sys.argv[3]))
            if s:
                s.sendall(b"ping\n")
                print("echo ok" if s.recv(5) == b"ping\n" else "echo wrong")
        elif cmd == "connect":
            s = proxy()
            target = sys.argv[2]
            s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
            status = first_line(recv_head(s))
            print(status)
            if " 200 " not in status + " ":
                return
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            sni = sys.argv[3]
            try:
                ctx.wrap_socket(s, server_hostname=None if sni == "-" else sni)
                print("tls ok")
            except (ssl.SSLError, OSError) as e:
                print("tls failed: %s" % type(e).__name__)
        elif cmd == "connect-plain":
            s = proxy()
            target = sys.argv[2]
            s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
            status = first_line(recv_head(s))
            print(status)
            if " 200 " in status + " ":
                s.sendall(b"ping\n")
                got = s.recv(5)
                print("echo ok" if got == b"ping\n" else "closed" if not got else "echo wrong")
        elif cmd == "socks":
            host = os.fsencode(sys.argv[2])  # any bytes, as the test passed them
            s = socks(b"\x03" + bytes([len(host)]) + host, int(sys.argv[3]))
            if s:
                s.sendall(b"ping\n")
                print("echo ok" if s.recv(5) == b"ping\n" else "echo wrong")
        elif cmd == "socks-tls":
            host = sys.argv[2].encode()
            s = socks(b"\x03" + bytes([len(host)]) + host, int(sys.argv[3]))
            if s:
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                try:
                    ctx.wrap_socket(s, server_hostname=sys.argv[4])
                    print("tls ok")
                except (ssl.SSLError, OSError) as e:
                    print("tls failed: %s" % type(e).__name__)
        elif cmd == "connect-banner":
            s = proxy()
            target = sys.argv[2]
            s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
            status = first_line(recv_head(s))
            print(status)
            if " 200 " in status + " ":
                got = s.recv(64)
                print(got.decode("latin-1").strip() if got else "closed")
        elif cmd == "socks-banner":
            host = sys.argv[2].encode()
            s = socks(b"\x03" + bytes([len(host)]) + host, int(sys.argv[3]))
            if s:
                got = s.recv(64)
                print(got.decode("latin-1").strip() if got else "closed")
        elif cmd == "socks-many":
            for i in range(int(sys.argv[2])):
                host = ("h%d.%s" % (i, sys.argv[3])).encode()
                socks(b"\x03" + bytes([len(host)]) + host, 443)
        elif cmd == "direct":
            socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=5)
            print("connected")
        else:
            print("usage: see the header")
            sys.exit(2)
    except OSError as e:
        print("errno=%s" % errno.errorcode.get(e.errno, str(e.errno)) if e.errno else "closed")


main()
