#!/usr/bin/env bash
# http_rules.sh — HTTP rules on terminated hosts (--allow-http,
# network.http; src/policy/httprule.h): on a host and port an HTTP rule
# names, every request — plaintext or TLS (terminated with the run CA),
# proxied or captured — must match one of the host's rules, else 403
# naming the method, the path and the rules, and egress.deny. Paths a
# server could read differently from their bytes (dot-segments, encoded
# '/', '.' or '\', backslashes, empty segments) are refused before any
# matching. Hosts without rules are unaffected. A rule whose host no allow
# rule reaches is refused at start.
#
# The test host: egress-net.bash's testhost.py (plain HTTP echo on :8080)
# and tests/helpers/httpshost.py (HTTPS echo on :443 with a leaf of a test
# CA made here with the openssl CLI; the egress process trusts it through
# --upstream-ca). Both log what reached them: a refused request must not
# be there, its control must. The run's client (hc.py, written below)
# sends each request byte for byte on a connection of its own, through
# the proxy (absolute form, or CONNECT then TLS) or captured (straight to
# the name), so the paths are exactly the ones under test.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own)"
for c in ip nsenter python3 openssl; do
	command -v "$c" >/dev/null || skip_all "needs ip, nsenter, python3 and openssl ($c is missing)"
done
new_workspace
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

# ---- the test CA and the HTTPS test host --------------------------------------------------------
P=$TH/https
mkdir -p "$P"
ossl() { openssl "$@" >>"$P/openssl.log" 2>&1 || bail_out "openssl $1 failed: $(tail -n 3 "$P/openssl.log")"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/ca.key" \
	-out "$P/ca.pem" -days 2 -subj "/O=ringfence tests/CN=http_rules test CA" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/leaf.key" \
	-subj /CN=svc.test -out "$P/leaf.csr"
printf 'subjectAltName=DNS:svc.test\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >"$P/leaf.ext"
ossl x509 -req -in "$P/leaf.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" -CAcreateserial \
	-days 2 -sha256 -extfile "$P/leaf.ext" -out "$P/leaf.pem"
ip netns exec "$HNS" python3 "$RF_SRC/tests/helpers/httpshost.py" "$P" >"$P/host.err" 2>&1 &
register_pid $!
for _ in $(seq 1 100); do [ -e "$P/https-ready" ] && break; sleep 0.05; done
[ -e "$P/https-ready" ] || bail_out "the HTTPS test host did not start: $(cat "$P/host.err")"

# hc.py MODE HOST PORT METHOD PATH [METHOD PATH...] — one request per
# connection, each answered on one line: "METHOD PATH -> STATUS-LINE | BODY"
# MODE: proxy (absolute form to 127.0.0.1:3128), cap (origin form straight
# to HOST), tproxy (CONNECT, then TLS), tcap (TLS straight to HOST),
# ctunnel (CONNECT, then plain HTTP in the tunnel). TLS
# trusts the run's bundle (SSL_CERT_FILE: the host's roots + the run CA).
cat >"$WS/hc.py" <<'PY'
import os, socket, ssl, sys

mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
reqs = sys.argv[4:]


def read_all(s):
    out = b""
    s.settimeout(10)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
            if b"\r\n\r\n" in out:
                head, _, body = out.partition(b"\r\n\r\n")
                cl = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if cl and len(body) >= int(cl[0].split(b":")[1]):
                    break
    except (OSError, ssl.SSLError):
        pass
    return out


for i in range(0, len(reqs), 2):
    method, path = reqs[i], reqs[i + 1]
    try:
        if mode in ("proxy", "tproxy", "ctunnel"):
            s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        else:
            s = socket.create_connection((host, port), timeout=10)
        if mode in ("tproxy", "ctunnel"):
            s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
            r = b""
            while b"\r\n\r\n" not in r:
                d = s.recv(1)
                if not d:
                    break
                r += d
            if not r.startswith(b"HTTP/1.1 200"):
                print("%s %s -> CONNECT %s" % (method, path, r.split(b"\r\n")[0].decode()))
                continue
        if mode in ("tproxy", "tcap"):
            ctx = ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE"))
            s = ctx.wrap_socket(s, server_hostname=host)
        target = path if mode != "proxy" else "http://%s:%d%s" % (host, port, path)
        hosthdr = host if port in (80, 443) else "%s:%d" % (host, port)
        s.sendall(("%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (method, target, hosthdr)).encode("latin-1"))
        out = read_all(s)
        head, _, body = out.partition(b"\r\n\r\n")
        line = head.split(b"\r\n")[0].decode("latin-1") if out else "closed"
        print("%s %s -> %s | %s" % (method, path, line, body.decode("latin-1").replace("\n", " ")[:600]))
        s.close()
    except (OSError, ssl.SSLError) as e:
        print("%s %s -> error %s" % (method, path, e))
PY

NET=(--add-host "svc.test:$net.2" --add-host "other.test:$net.2" --allow-host svc.test
	--allow-host other.test --upstream-ca "$P/ca.pem")
# svc.test:443 (TLS) and svc.test:8080 (plain) are ruled; other.test is not
RULES=(--allow-http 'svc.test GET,HEAD /ok/**' --allow-http 'svc.test POST /ok/submit'
	--allow-http 'svc.test:8080 head,GET /ok/**' --allow-http 'svc.test:8080 POST /ok/submit')
TRULES='svc.test GET,HEAD /ok/\*\*; svc.test POST /ok/submit'
PRULES='svc.test:8080 GET,HEAD /ok/\*\*; svc.test:8080 POST /ok/submit'
httpslog() { cat "$P/https.log" 2>/dev/null; }
httplog() { cat "$TH/http.log" 2>/dev/null; }
# last_deny ERE — the last egress.deny record matching ERE
last_deny() { records | grep '"egress.deny"' | grep -E -- "$1" | tail -n 1; }
CAPTURE=0
er "${NET[@]}" -- getent ahostsv4 svc.test
case "$RF_OUT" in 198.18.*) CAPTURE=1 ;; *) diag "no capture: getent ahostsv4 svc.test: $RF_OUT $RF_ERR" ;; esac

# ---- refused at start, accepted at start -------------------------------------------------------
er --allow-http 'svc.test GET /**' --add-host "svc.test:$net.2" --allow-host other.test -- true
is "$RF_RC" 125 "an HTTP rule whose host no allow rule reaches: refused at start (125)"
like "$RF_ERR" 'no allow rule lets the run reach svc\.test:443' "... naming the host and port"
er --allow-http 'svc.test:8080 GET /**' --add-host "svc.test:$net.2" --allow-host svc.test:443 -- true
is "$RF_RC" 125 "an HTTP rule on a port the allow rule does not name: refused at start (125)"
er --allow-http 'svc.test GET /a/../b' "${NET[@]}" -- true
is "$RF_RC" 125 "an HTTP rule whose glob holds a dot-segment: refused (125)"
like "$RF_ERR" 'dot-segment' "... saying why"
er --allow-http 'svc.test FETCH /x' "${NET[@]}" -- true
is "$RF_RC" 125 "an HTTP rule with an unknown method: refused (125)"
cat >"$WS/bad.json" <<'JSON'
{"version": 1,
 "network": {"allow": ["svc.test"],
             "http": ["svc.test GET /ok/**",
                      "svc.test GET /a//b"]}}
JSON
er -p "$WS/bad.json" -- true
is "$RF_RC" 125 "network.http with a bad rule: refused (125)"
like "$RF_ERR" 'bad\.json:4:23.*network\.http\[1\].*empty segment' "... with file:line:col, the key path and why"
er "${NET[@]}" "${RULES[@]}" -- sh -c 'test -s /run/ringfence/run-ca.crt && echo have-run-ca'
is "$RF_RC" 0 "HTTP rules without any injection: the run starts"
like "$RF_OUT" 'have-run-ca' "... with a run CA (the ruled host is terminated)"

# ---- plaintext, proxied (absolute form) -----------------------------------------------------------
# one case per run: refusals to one host:port are coalesced into one record per 10 s
# case_run MODE LABEL METHOD PATH WANT-ERE RECORD-ERE — a control GET /ok/control, then the request
case_run() {
	local mode=$1 label=$2 method=$3 path=$4 want=$5 rec=$6 port host log
	case $mode in proxy | cap) port=8080 log=httplog ;; *) port=443 log=httpslog ;; esac
	rm -f "$TH/http.log" "$P/https.log"
	local n0
	n0=$(records | grep -c '"egress.deny"')
	er "${NET[@]}" "${RULES[@]}" -- "${NP[@]}" python3 hc.py "$mode" svc.test "$port" \
		GET /ok/control "$method" "$path"
	like "$(sed -n 1p <<<"$RF_OUT")" '-> HTTP/1\.1 200 .*echo.*GET /ok/control' "$label: the control (GET /ok/control) is served"
	like "$(sed -n 2p <<<"$RF_OUT")" "-> HTTP/1\.1 403 .*$want" "$label: $method $path: 403, $want"
	unlike "$($log)" " $(printf '%s' "$path" | sed 's/[][\\.*^$?+(){}|]/\\&/g') " "$label: ... nothing of it reached the host"
	is "$(($(records | grep -c '"egress.deny"') - n0))" 1 "$label: ... one egress.deny recorded"
	like "$(last_deny '"port":'"$port")" "$rec" "$label: ... saying why"
}
NP=(env)
M=proxy
L="plain, proxied"
case_run $M "$L" DELETE /ok/x "no HTTP rule allows DELETE /ok/x.*rule $PRULES" \
	'"reason":"no HTTP rule allows DELETE /ok/x"'
like "$(last_deny '"port":8080')" '"rule":"svc\.test:8080 GET,HEAD /ok/\*\*; svc\.test:8080 POST /ok/submit"' "$L: ... the record names the host's rules (canonical)"
case_run $M "$L" GET /elsewhere "no HTTP rule allows GET /elsewhere" '"reason":"no HTTP rule allows GET /elsewhere"'
case_run $M "$L" GET /ok/../admin 'dot-segment' '"reason":"GET /ok/\.\./admin: the path holds a dot-segment'
case_run $M "$L" GET /ok/%2e%2e/admin "encoded '/', '\.' or" '"reason":"GET /ok/%2e%2e/admin: the path holds an encoded'
case_run $M "$L" GET /ok/a%2Fb "encoded '/', '\.' or" '"reason":"GET /ok/a%2Fb: the path holds an encoded'
case_run $M "$L" GET '/ok/a\b' 'backslash' 'the path holds a backslash'
case_run $M "$L" GET /ok//x 'empty segment' 'the path holds an empty segment'
case_run $M "$L" GET '/ok/..;x=1/admin' 'dot-segment' 'the path holds a dot-segment'

# POST is allowed on one path only; the query is not matched; HEAD on /ok/**
rm -f "$TH/http.log"
er "${NET[@]}" "${RULES[@]}" -- python3 hc.py proxy svc.test 8080 POST /ok/submit POST /ok/other \
	GET '/ok/q?x=../../%2f' HEAD /ok/h
like "$(sed -n 1p <<<"$RF_OUT")" '-> HTTP/1\.1 200' "plain, proxied: POST /ok/submit (its own rule): served"
like "$(sed -n 2p <<<"$RF_OUT")" '-> HTTP/1\.1 403 .*no HTTP rule allows POST /ok/other' "... POST /ok/other: 403"
like "$(sed -n 3p <<<"$RF_OUT")" '-> HTTP/1\.1 200' "... GET /ok/q?x=../../%2f: served (the query is not judged)"
like "$(sed -n 4p <<<"$RF_OUT")" '-> HTTP/1\.1 200' "... HEAD /ok/h: served"
like "$(httplog)" 'GET /ok/q\?x=\.\./\.\./%2f HTTP/1\.1' "... the query went up as sent"

# a host without HTTP rules is unaffected (other.test), and so is another port of a ruled host
er "${NET[@]}" "${RULES[@]}" -- python3 hc.py proxy other.test 8080 DELETE /x GET /a/../b
like "$(sed -n 1p <<<"$RF_OUT")" '-> HTTP/1\.1 200' "a host without HTTP rules: DELETE /x served"
like "$(sed -n 2p <<<"$RF_OUT")" '-> HTTP/1\.1 200' "... GET /a/../b too (not ours to judge)"

# ---- plaintext, captured (origin form) -------------------------------------------------------------
NP=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
	-u NO_PROXY -u no_proxy)
if [ "$CAPTURE" = 1 ]; then
	M=cap
	L="plain, captured"
	case_run $M "$L" PUT /ok/x "no HTTP rule allows PUT /ok/x" '"reason":"no HTTP rule allows PUT /ok/x".*"via":"capture"'
	case_run $M "$L" GET /nope "no HTTP rule allows GET /nope" '"reason":"no HTTP rule allows GET /nope"'
	case_run $M "$L" GET /ok/./x 'dot-segment' 'the path holds a dot-segment'
	case_run $M "$L" GET /ok/%5c 'encoded' 'the path holds an encoded'
	case_run $M "$L" GET '/ok\..\admin' 'backslash' 'the path holds a backslash'
	case_run $M "$L" GET /ok/a//b 'empty segment' 'the path holds an empty segment'
else
	for _ in $(seq 1 24); do skip "plain, captured" "this build does not capture"; done
fi

# ---- TLS, terminated: proxied (CONNECT) ---------------------------------------------------------
NP=(env)
M=tproxy
L="TLS, proxied"
case_run $M "$L" DELETE /ok/x "no HTTP rule allows DELETE /ok/x.*rule $TRULES" \
	'"proto":"https","reason":"no HTTP rule allows DELETE /ok/x"'
case_run $M "$L" POST /ok/x "no HTTP rule allows POST /ok/x" '"reason":"no HTTP rule allows POST /ok/x"'
case_run $M "$L" GET /other 'no HTTP rule allows GET /other' '"reason":"no HTTP rule allows GET /other"'
case_run $M "$L" GET /ok/.. 'dot-segment' 'the path holds a dot-segment'
case_run $M "$L" GET /ok/%2E%2E/x 'encoded' 'the path holds an encoded'
case_run $M "$L" GET /ok/a%2fb 'encoded' 'the path holds an encoded'
case_run $M "$L" GET '/ok/a\b' 'backslash' 'the path holds a backslash'
case_run $M "$L" GET //ok/x 'empty segment' 'the path holds an empty segment'
like "$(records | grep '"egress.tls"' | tail -n 2 | tr '\n' ' ')" '"side":"client".*"side":"upstream"|"side":"upstream".*"side":"client"' "TLS, proxied: terminated (egress.tls for both sides)"

# keep-alive: an allowed request, then a refused one on the same TLS connection (curl)
if command -v curl >/dev/null; then
	rm -f "$P/https.log"
	er "${NET[@]}" "${RULES[@]}" -- sh -c 'curl -sS -m 10 https://svc.test/ok/one https://svc.test/nope/two; echo "rc=$?"'
	like "$RF_OUT" 'echo GET /ok/one' "curl, keep-alive: the first request (allowed) is served"
	like "$RF_OUT" 'no HTTP rule allows GET /nope/two' "... the second (outside the rules) gets its 403"
	unlike "$(httpslog)" '/nope/two' "... and never reached the host"
else
	for _ in 1 2 3; do skip "curl keep-alive" "no curl"; done
fi

# ---- TLS, terminated: captured ---------------------------------------------------------------------
NP=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
	-u NO_PROXY -u no_proxy)
if [ "$CAPTURE" = 1 ]; then
	M=tcap
	L="TLS, captured"
	case_run $M "$L" PATCH /ok/x "no HTTP rule allows PATCH /ok/x" '"reason":"no HTTP rule allows PATCH /ok/x".*"via":"capture"'
	case_run $M "$L" GET /x 'no HTTP rule allows GET /x' '"reason":"no HTTP rule allows GET /x"'
	case_run $M "$L" GET /ok/../../x 'dot-segment' 'the path holds a dot-segment'
	case_run $M "$L" GET /ok/%2e 'encoded' 'the path holds an encoded'
	case_run $M "$L" GET '/ok/\' 'backslash' 'the path holds a backslash'
	case_run $M "$L" GET /ok//x 'empty segment' 'the path holds an empty segment'
else
	for _ in $(seq 1 24); do skip "TLS, captured" "this build does not capture"; done
fi

# ---- no way around the rules ------------------------------------------------------------------------
# allow rules that name the port: a tunnel there may carry plain TCP, a
# captured stream on it may be plain TCP — but not to a ruled host
NET2=(--add-host "svc.test:$net.2" --add-host "other.test:$net.2" --allow-host svc.test:8080
	--allow-host other.test:8080)
RULES2=(--allow-http 'svc.test:8080 GET /ok/**')
# a CONNECT tunnel to a ruled host and port is terminated: plain HTTP inside it is refused
rm -f "$TH/http.log"
er "${NET2[@]}" "${RULES2[@]}" -- python3 hc.py ctunnel svc.test 8080 GET /admin
like "$RF_OUT" '-> (closed|error)' "a CONNECT tunnel to svc.test:8080 (ruled) carrying plain HTTP: closed"
unlike "$(httplog)" 'GET /admin' "... nothing of it reached the host"
like "$(last_deny '"port":8080')" 'not TLS' "... egress.deny: only TLS (terminated) passes there"
er "${NET2[@]}" "${RULES2[@]}" -- python3 hc.py ctunnel other.test 8080 GET /admin
like "$RF_OUT" '-> HTTP/1\.1 200' "the control: a tunnel to other.test:8080 (no HTTP rule) carries it"
# a captured stream that does not open like HTTP (a lower-case method) to a
# ruled port: it must not pass as plain TCP
if [ "$CAPTURE" = 1 ]; then
	rm -f "$TH/http.log"
	NP=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
		-u NO_PROXY -u no_proxy)
	er "${NET2[@]}" "${RULES2[@]}" -- "${NP[@]}" python3 hc.py cap svc.test 8080 get /admin
	unlike "$(httplog)" 'get /admin' "captured, a lower-case request line to svc.test:8080 (ruled): nothing reached the host"
	er "${NET2[@]}" "${RULES2[@]}" -- "${NP[@]}" python3 hc.py cap other.test 8080 get /admin
	like "$RF_OUT" '-> HTTP/1\.1 200' "... the control: to other.test:8080 (no HTTP rule) it is plain TCP, passed"
else
	skip "captured plain TCP to a ruled port" "this build does not capture"
	skip "captured plain TCP to a ruled port (control)" "this build does not capture"
fi

# ---- the policy form ------------------------------------------------------------------------------
cat >"$WS/rules.json" <<JSON
{"version": 1,
 "network": {"allow": ["svc.test"], "hosts": {"svc.test": "$net.2"},
             "upstream_ca": "$P/ca.pem",
             "http": ["SVC.test get /ok/**"]}}
JSON
rm -f "$P/https.log"
er -p "$WS/rules.json" -- python3 hc.py tproxy svc.test 443 GET /ok/p POST /ok/p
like "$(sed -n 1p <<<"$RF_OUT")" '-> HTTP/1\.1 200 .*echo GET /ok/p' "network.http in a policy: GET /ok/p served"
like "$(sed -n 2p <<<"$RF_OUT")" '-> HTTP/1\.1 403 .*no HTTP rule allows POST /ok/p.*svc\.test GET /ok/\*\*' "... POST /ok/p: 403 naming the canonical rule"
like "$(last_deny '"port":443')" '"reason":"no HTTP rule allows POST /ok/p","rule":"svc\.test GET /ok/\*\*"' "... egress.deny with the canonical rule"

done_testing
