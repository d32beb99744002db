#!/usr/bin/env python3
"""mock-npm.py — a stand-in for a package index that needs a credential,
for tests/integration/npm_inject.sh and pip_inject.sh. Test networks only.

  mock-npm.py --listen ADDR:PORT --token-file FILE --log FILE
              --cert PEM --certkey PEM [--ready FILE] [--pip-user USER]

Serves HTTPS until killed. As an npm registry: GET /rf-test-pkg answers
the package document (one version, 1.2.3) only to `Authorization: Bearer
TOKEN` with the token in --token-file, else 401 as a registry does. With
--pip-user, as a pip simple index (PEP 503): GET /simple/rf-test-pkg/
answers a page of two files (1.2.3 and 2.0.0) only to `Authorization:
Basic base64(USER:TOKEN)`, else 401 with a Basic challenge. Anything else
404. Every request is logged to --log as one JSON line: method, path, the
Authorization header as received, the status answered.
"""
import argparse
import base64
import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--listen", required=True)
ap.add_argument("--token-file", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--cert", required=True)
ap.add_argument("--certkey", required=True)
ap.add_argument("--ready")
ap.add_argument("--pip-user")
args = ap.parse_args()
with open(args.token_file) as f:
    TOKEN = f.read().strip()
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def setup(self):
        self.request.settimeout(30)
        self.request.do_handshake()
        super().setup()

    def answer(self, status, obj, ctype="application/json", extra=()):
        body = obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()
        self.send_response(status)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with lock, open(args.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "authorization": self.headers.get("authorization"),
                                "status": status}) + "\n")

    def do_GET(self):
        if args.pip_user:
            return self.pip()
        if self.path.split("?")[0] != "/rf-test-pkg":
            self.answer(404, {"error": "Not found"})
        elif self.headers.get("authorization") != "Bearer " + TOKEN:
            self.answer(401, {"error": "authentication token not provided or invalid"})
        else:
            host = self.headers.get("host", "registry")
            self.answer(200, {"name": "rf-test-pkg", "dist-tags": {"latest": "1.2.3"},
                              "versions": {"1.2.3": {"name": "rf-test-pkg", "version": "1.2.3",
                                                     "dist": {"tarball": "https://%s/rf-test-pkg/-/rf-test-pkg-1.2.3.tgz" % host,
                                                              "shasum": "0" * 40}}}})

    def pip(self):
        want = "Basic " + base64.b64encode(("%s:%s" % (args.pip_user, TOKEN)).encode()).decode()
        if self.path.split("?")[0] != "/simple/rf-test-pkg/":
            self.answer(404, "not found", "text/plain")
        elif self.headers.get("authorization") != want:
            self.answer(401, "unauthorized", "text/plain",
                        [("WWW-Authenticate", 'Basic realm="index"')])
        else:
            links = "".join('<a href="../../files/rf_test_pkg-%s-py3-none-any.whl">'
                            'rf_test_pkg-%s-py3-none-any.whl</a><br>' % (v, v)
                            for v in ("1.2.3", "2.0.0"))
            self.answer(200, "<!DOCTYPE html><html><body>%s</body></html>" % links, "text/html")


host, _, port = args.listen.rpartition(":")
srv = ThreadingHTTPServer((host, int(port)), Handler)
srv.daemon_threads = True
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(args.cert, args.certkey)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
if args.ready:
    with open(args.ready, "w") as f:
        f.write("ready\n")
try:
    srv.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
