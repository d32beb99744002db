#!/usr/bin/env bash
# inject_tls.sh — credential injection over HTTPS (issue 15, TLS
# termination): toward an injection host the egress process terminates the
# run's TLS with a leaf of a per-run CA (ECDSA P-256, name-constrained to
# the injection hosts), opens its own verified TLS connection upstream and
# puts the value in the request headers there; every other HTTPS
# connection stays a blind tunnel.
#
# The test host (tests/helpers/tlshost.py beside egress-net.bash's
# testhost.py) serves HTTPS with certificates of a test CA made here with
# the openssl CLI: svc.test:443 (good; other.test by SNI), :8444 expired,
# :8445 for a wrong name, :8446 self-signed. It logs the request line and
# headers it received (what went on the wire: the value) and echoes them
# (what the run sees: scrubbed to the placeholder); /value answers the
# value itself; /repo.git is a dumb-HTTP git repository behind Basic auth
# that takes the value as password only.
#
# Asserts: the run's trust (environment, bundle, run CA, leaf, Java store)
# and none of it in a run without an injection (one with HOST:PORT has it:
# TLS on that port is terminated too); replacement for curl (proxy and
# captured), Python urllib and requests, Node https.get and fetch, Java 17
# HttpClient, git clone with the placeholder as password; keep-alive;
# Accept-Encoding; the records (egress.tls, secret.inject); upstream
# certificate failures (502 + egress.deny); a client pinned to the real CA
# fails its handshake; exfiltration over TLS (URL, body, on both paths; a
# ClientHello naming another host; a blind tunnel to another host sees
# only the worthless placeholder); the value — or its base64 at any
# offset, as echoed Basic credentials carry it — in no output, process
# environment, file or memory of the run (read from the host side:
# tests/helpers/memscan.py), nor in the state dir; the supervisor maps no
# OpenSSL (a helper makes the run CA), the egress process does. Every
# attack next to its control.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own, reading a run's memory)"
for c in ip nsenter python3 curl openssl; do
	command -v "$c" >/dev/null || skip_all "needs ip, nsenter, python3, curl and openssl ($c is missing)"
done
new_workspace
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

NP=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
	-u NO_PROXY -u no_proxy)
VAL=rfv$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s' "$VAL" | "$RF_BIN" secret set --state-dir "$RF_STATE" api >/dev/null 2>&1 ||
	bail_out "secret set failed"
HEXVAL=$(printf '%s' "$VAL" | od -An -tx1 | tr -d ' \n')

# ---- the test CA and the test host's certificates (openssl CLI) --------------------------------
P=$TH/tls
mkdir -p "$P"
printf '%s\n' "$VAL" >"$P/value"
ossl() { openssl "$@" >>"$P/openssl.log" 2>&1 || bail_out "openssl $1 failed: $(tail -n 3 "$P/openssl.log")"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/testca.key" \
	-out "$P/testca.pem" -days 2 -subj "/O=ringfence tests/CN=inject_tls test CA" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
# leaf NAME SAN-HOST [openssl ca date options...] — NAME.pem/NAME.key signed by the test CA
cat >"$P/ca.cnf" <<CNF
[ca]
default_ca = t
[t]
database = $P/index.txt
new_certs_dir = $P
certificate = $P/testca.pem
private_key = $P/testca.key
serial = $P/serial
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
[any]
commonName = supplied
CNF
: >"$P/index.txt"
echo 1000 >"$P/serial"
leaf() {
	local name=$1 host=$2
	shift 2
	ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/$name.key" \
		-subj "/CN=$host" -addext "subjectAltName=DNS:$host" -addext extendedKeyUsage=serverAuth \
		-out "$P/$name.csr"
	ossl ca -batch -config "$P/ca.cnf" -notext -in "$P/$name.csr" -out "$P/$name.pem" "$@"
}
leaf good svc.test -days 2
leaf other other.test -days 2
leaf wrong wrong.test -days 2
leaf expired svc.test -startdate 20200101000000Z -enddate 20200201000000Z
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/self.key" \
	-out "$P/self.pem" -days 2 -subj /CN=svc.test -addext subjectAltName=DNS:svc.test
cp "$P/testca.pem" "$WS/testca.pem"
UCA=(--upstream-ca "$P/testca.pem")

# a bare repository for dumb HTTP (git clone https://x:$TOKEN@svc.test/repo.git)
HAVE_GIT=0
if command -v git >/dev/null; then
	git init -q --bare "$P/repo.git" &&
		git init -q "$P/src" &&
		printf 'hello from the test host\n' >"$P/src/README" &&
		git -C "$P/src" add README &&
		git -C "$P/src" -c user.name=t -c user.email=t@t commit -q -m first &&
		git -C "$P/src" push -q "$P/repo.git" HEAD:refs/heads/main 2>/dev/null &&
		git -C "$P/repo.git" symbolic-ref HEAD refs/heads/main &&
		git -C "$P/repo.git" update-server-info && HAVE_GIT=1
fi
[ -d "$P/repo.git" ] || mkdir -p "$P/repo.git"

ip netns exec "$HNS" python3 "$RF_SRC/tests/helpers/tlshost.py" "$P" >"$P/tlshost.err" 2>&1 &
register_pid $!
for _ in $(seq 1 100); do [ -e "$P/tls-ready" ] && break; sleep 0.05; done
[ -e "$P/tls-ready" ] || bail_out "the TLS test host did not start: $(cat "$P/tlshost.err")"

tlslog() { cat "$P/tls.log" 2>/dev/null; }
# ncount ERE... — audit records matching every ERE
ncount() {
	local out
	out=$(records)
	for e in "$@"; do out=$(grep -E -- "$e" <<<"$out"); done
	[ -n "$out" ] && wc -l <<<"$out" || echo 0
}
# last_rec ERE... — the last audit record matching every ERE
last_rec() {
	local out
	out=$(records)
	for e in "$@"; do out=$(grep -E -- "$e" <<<"$out"); done
	tail -n 1 <<<"$out"
}
# b64leak TEXT — "leak" if TEXT holds the value inside base64 at any offset
# (a host echoing Basic credentials), else "clean"
b64leak() {
	printf '%s' "$1" | V=$VAL python3 -c '
import base64, os, re, sys
v = os.environ["V"].encode()
for w in re.findall(r"[A-Za-z0-9+/]{16,}={0,2}", sys.stdin.read()):
    for cut in range(4):
        try:
            if v in base64.b64decode(w[cut:] + "=" * (-len(w[cut:]) % 4)):
                print("leak"); sys.exit(0)
        except ValueError:
            pass
print("clean")'
}
# hostcurl ARGS... — curl in the client namespace, outside ringfence (the test host's own checks)
hostcurl() {
	ip netns exec "$CNS" curl -sS -m 10 --resolve "svc.test:443:$net.2" \
		--resolve "svc.test:8444:$net.2" --resolve "svc.test:8445:$net.2" \
		--resolve "svc.test:8446:$net.2" --resolve "other.test:443:$net.2" "$@"
}

# ---- the test host itself, outside ringfence: each certificate does what it is for -------------
out=$(hostcurl --cacert "$P/testca.pem" https://svc.test/direct 2>&1)
like "$out" 'GET /direct HTTP/1.1' "setup: svc.test:443 verifies against the test CA (curl outside ringfence)"
out=$(hostcurl --cacert "$P/testca.pem" https://other.test/direct 2>&1)
like "$out" 'GET /direct HTTP/1.1' "setup: other.test:443 (by SNI) verifies against the test CA"
out=$(hostcurl --cacert "$P/testca.pem" https://svc.test:8444/ 2>&1)
like "$out" 'expired' "setup: svc.test:8444 has an expired certificate"
out=$(hostcurl --cacert "$P/testca.pem" https://svc.test:8445/ 2>&1)
like "$out" "(no alternative certificate subject name matches|does not match)" "setup: svc.test:8445's certificate names another host"
out=$(hostcurl --cacert "$P/testca.pem" https://svc.test:8446/ 2>&1)
like "$out" 'self.signed' "setup: svc.test:8446's certificate is self-signed"
out=$(hostcurl --cacert "$P/testca.pem" -H "Authorization: Basic $(printf 'x:%s' "$VAL" | base64 -w0)" \
	https://svc.test/repo.git/info/refs 2>&1)
hostcurl --cacert "$P/testca.pem" -o /dev/null -w '%{http_code}' https://svc.test/repo.git/info/refs >"$P/code" 2>&1
if [ "$HAVE_GIT" = 1 ]; then
	like "$out" 'refs/heads/main' "setup: the dumb-HTTP repository answers with the value as password"
	is "$(cat "$P/code")" 401 "setup: ... and 401 without it"
else
	skip "setup: the dumb-HTTP repository" "no git"
	skip "setup: the dumb-HTTP repository (401)" "no git"
fi
rm -f "$P/tls.log"

NET=(--add-host "svc.test:$net.2" --add-host "other.test:$net.2" --allow-host svc.test
	--allow-host other.test)
INJ=(--inject "TOKEN=store:api@svc.test" "${NET[@]}" "${UCA[@]}")
CAPTURE=0
er "${NET[@]}" -- getent ahostsv4 svc.test
case "$RF_OUT" in 198.18.*) CAPTURE=1 ;; *) diag "no capture: getent ahostsv4 svc.test: $RF_OUT $RF_ERR" ;; esac

# ---- accepted at start ---------------------------------------------------------------------------
er "${INJ[@]}" -- true
is "$RF_RC" 0 "--inject TOKEN=store:api@svc.test (a bare host: HTTPS on 443) with --upstream-ca: the run starts"
er --inject "TOKEN=store:api@svc.test:8446" "${NET[@]}" "${UCA[@]}" -- true
is "$RF_RC" 0 "--inject ...@svc.test:8446 (a TLS port named): the run starts"

# ---- refused at start: trust the run's CA could not be made from -------------------------------
# a missing upstream CA file: refused before anything of the run exists
rm -f "$WS/ran"
er --inject "TOKEN=store:api@svc.test" "${NET[@]}" --upstream-ca "$P/missing.pem" -- touch ran
is "$RF_RC" 125 "--upstream-ca of a missing file: exit 125"
like "$RF_ERR" "cannot read the host's CA bundle .* or the upstream CA file $P/missing.pem: No such file" \
	"... saying which file and why"
is "$(wc -l <<<"$RF_ERR")" 1 "... in one line"
check "... and the command never ran" test ! -e "$WS/ran"
# a file with no certificate in it: the helper that makes the run CA fails
# while the run starts (run_tls.c), so the run is refused before its command
printf 'not a certificate\n' >"$P/nocert.pem"
er --inject "TOKEN=store:api@svc.test" "${NET[@]}" --upstream-ca "$P/nocert.pem" -- touch ran
is "$RF_RC" 125 "--upstream-ca of a file without a certificate: exit 125"
like "$RF_ERR" "credential injection: cannot read the host's CA bundle .* or the upstream CA file $P/nocert.pem: no certificate in it" \
	"... saying which file and why"
is "$(wc -l <<<"$RF_ERR")" 1 "... in one line"
check "... and the command never ran" test ! -e "$WS/ran"
# a FIFO where the upstream CA file should be: refused at once, nothing
# blocks on it (the supervisor and the helper open trust files O_NONBLOCK)
mkfifo "$P/fifo.pem"
rm -f "$WS/ran"
er --inject "TOKEN=store:api@svc.test" "${NET[@]}" --upstream-ca "$P/fifo.pem" -- touch ran
is "$RF_RC" 125 "--upstream-ca naming a FIFO: exit 125, at once"
like "$RF_ERR" "upstream CA file $P/fifo.pem: Invalid argument" "... saying which file"
check "... and the command never ran" test ! -e "$WS/ran"
# --detach: a run refused for its trust never prints a run id
rm -f "$WS/ran"
er --detach --inject "TOKEN=store:api@svc.test" "${NET[@]}" --upstream-ca "$P/nocert.pem" -- touch ran
is "$RF_RC" 125 "--detach with an upstream CA file without a certificate: exit 125"
unlike "$RF_OUT" '[0-9a-f]{8}-[0-9a-f]{4}-' "... and no run id printed (the caller is let go only once the trust is made)"
like "$RF_ERR" "no certificate in it" "... saying why"
# the upstream CA in the workspace, rewritten by the run after it started:
# the egress process, started by the run's first connection, still trusts
# what the file held when the run started (a snapshot), never the run's
# version of it
cp "$P/testca.pem" "$WS/upstream-ca.pem"
er --inject "TOKEN=store:api@svc.test" "${NET[@]}" --upstream-ca "$WS/upstream-ca.pem" -- sh -c \
	'echo "not a certificate" >upstream-ca.pem; curl -sS -m 10 -o /dev/null -w "%{http_code}\n" -H "Authorization: Bearer $TOKEN" https://svc.test/value'
is "$RF_OUT" 200 "the run rewrote its upstream CA file, then connected: still verified against the file as it was (200)"
is "$(head -c 17 "$WS/upstream-ca.pem")" "not a certificate" "... control: the run did rewrite the file"

# ---- the run's trust ----------------------------------------------------------------------------
TRUSTVARS="SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO PIP_CERT AWS_CA_BUNDLE NODE_EXTRA_CA_CERTS"
# shellcheck disable=SC2016
SHOWTRUST='for v in '"$TRUSTVARS"'; do printf "%s=%s\n" "$v" "$(printenv "$v")"; done
	rm -f bundle.out runca.out runbundle.out cacerts.out
	cat /etc/ssl/certs/ca-certificates.crt >bundle.out 2>/dev/null
	cat /run/ringfence/run-ca.crt >runca.out 2>/dev/null
	cat /run/ringfence/ca-certificates.crt >runbundle.out 2>/dev/null && echo have-run-bundle
	[ -e /etc/ssl/certs/java/cacerts ] && cat /etc/ssl/certs/java/cacerts >cacerts.out
	[ -w /etc/ssl/certs/ca-certificates.crt ] && echo bundle-writable || echo bundle-readonly'
er "${INJ[@]}" -- sh -c "$SHOWTRUST"
for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO PIP_CERT AWS_CA_BUNDLE; do
	is "$(grep "^$v=" <<<"$RF_OUT")" "$v=/run/ringfence/ca-certificates.crt" "in the run $v=/run/ringfence/ca-certificates.crt"
done
is "$(grep "^NODE_EXTRA_CA_CERTS=" <<<"$RF_OUT")" "NODE_EXTRA_CA_CERTS=/run/ringfence/run-ca.crt" "in the run NODE_EXTRA_CA_CERTS=/run/ringfence/run-ca.crt"
like "$RF_OUT" 'bundle-readonly' "/etc/ssl/certs/ca-certificates.crt is read-only in the run"
HB=/etc/ssl/certs/ca-certificates.crt
if [ -s "$WS/runca.out" ] && [ -s "$WS/bundle.out" ]; then
	check "the run's /etc/ssl/certs/ca-certificates.crt begins with the host's bundle, byte for byte" \
		cmp -s -n "$(stat -c %s "$HB")" "$HB" "$WS/bundle.out"
	check "... and /run/ringfence/ca-certificates.crt is the same file" cmp -s "$WS/bundle.out" "$WS/runbundle.out"
	tailpem=$(tail -c +"$(($(stat -c %s "$HB") + 1))" "$WS/bundle.out" | openssl x509 2>/dev/null)
	is "$tailpem" "$(openssl x509 <"$WS/runca.out" 2>/dev/null)" "... followed by the run CA (/run/ringfence/run-ca.crt)"
	catext=$(openssl x509 -in "$WS/runca.out" -noout -text 2>/dev/null)
	like "$catext" 'ASN1 OID: prime256v1' "the run CA: ECDSA P-256"
	like "$catext" 'X509v3 Name Constraints: critical' "... name constraints, critical"
	like "$(sed -n '/Name Constraints/,/X509v3 [A-Z][a-z]* [A-Z]/p' <<<"$catext")" 'Permitted:[[:space:]]+DNS:svc\.test' "... permitting svc.test"
	unlike "$(sed -n '/Permitted/,/Excluded/p' <<<"$catext")" 'DNS:other\.test' "... and not other.test (allowed, no injection)"
	like "$catext" 'CA:TRUE' "... a CA certificate"
	check "the run CA does not verify the test host's certificate (it is not the test CA)" \
		sh -c "! openssl verify -CAfile '$WS/runca.out' '$P/good.pem' >/dev/null 2>&1"
else
	for _ in 1 2 3 4 5 6 7 8; do not_ok "the run's bundle and run CA" "bundle.out or runca.out missing or empty" "$(_rf_last_run_diag)"; done
fi
if [ -f /etc/ssl/certs/java/cacerts ] && command -v keytool >/dev/null; then
	if [ -s "$WS/cacerts.out" ]; then
		jl=$(keytool -list -keystore "$WS/cacerts.out" -storetype PKCS12 -storepass changeit 2>&1)
		like "$jl" 'ringfence-run-ca,.*trustedCertEntry' "/etc/ssl/certs/java/cacerts in the run: PKCS12 (changeit) with the run CA as a trusted entry"
		hn=$(keytool -list -keystore /etc/ssl/certs/java/cacerts -storepass changeit 2>/dev/null | grep -c trustedCertEntry)
		rn=$(grep -c trustedCertEntry <<<"$jl")
		is "$((rn > hn && hn > 0))" 1 "... and the host's roots ($rn entries, the host's store has $hn)"
	else
		not_ok "/etc/ssl/certs/java/cacerts in the run" "not readable in the run" "$(_rf_last_run_diag)"
		not_ok "... and the host's roots" "not readable in the run"
	fi
else
	skip "the run's Java trust store" "the host has no /etc/ssl/certs/java/cacerts or keytool"
	skip "the run's Java trust store (host roots)" "the host has no /etc/ssl/certs/java/cacerts or keytool"
fi
# the control: a run without an injection has none of this (one with
# HOST:PORT has it all: TLS on that port is terminated too)
er "${NET[@]}" -- sh -c "$SHOWTRUST"
is "$(grep -E '^[A-Z_]+=.' <<<"$RF_OUT")" "" "control, a run without an injection: no trust variable is set"
unlike "$RF_OUT" 'have-run-bundle' "... no /run/ringfence/ca-certificates.crt"
check "... /etc/ssl/certs/ca-certificates.crt is the host's" cmp -s "$HB" "$WS/bundle.out"
if [ ! -s "$WS/runca.out" ]; then
	ok "... no /run/ringfence/run-ca.crt"
else
	not_ok "... no /run/ringfence/run-ca.crt" "$(head -c 200 "$WS/runca.out")"
fi

# ---- the leaf the run is shown -------------------------------------------------------------------
if [ "$CAPTURE" = 1 ]; then
	er "${INJ[@]}" -- "${NP[@]}" sh -c 'openssl s_client -connect svc.test:443 -servername svc.test \
		-CAfile /run/ringfence/run-ca.crt -verify_return_error </dev/null 2>&1 |
		sed -n "s/^ *Verify return code: /verify: /p"
		openssl s_client -connect svc.test:443 -servername svc.test </dev/null 2>/dev/null |
		openssl x509 -noout -issuer -ext subjectAltName -text'
	like "$RF_OUT" 'verify: 0 \(ok\)' "captured TLS to svc.test:443: the leaf verifies against the run CA alone"
	like "$RF_OUT" 'issuer=.*ringfence run CA' "... issued by the ringfence run CA"
	like "$RF_OUT" 'DNS:svc\.test' "... for svc.test"
	like "$RF_OUT" 'ASN1 OID: prime256v1' "... an ECDSA P-256 key"
else
	for _ in 1 2 3 4; do skip "the leaf shown to the run" "this build does not capture"; done
fi

# ---- curl, the proxy path -----------------------------------------------------------------------
rm -f "$P/tls.log"
c0=$(ncount '"egress.tls"' '"side":"client"' '"via":"proxy"' '"host":"svc.test"')
u0=$(ncount '"egress.tls"' '"side":"upstream"' '"via":"proxy"' '"host":"svc.test"')
i0=$(ncount '"secret.inject"' '"path":"/proxied"')
er "${INJ[@]}" -- sh -c 'echo "PH=$TOKEN"; echo "PROXY=$HTTPS_PROXY"; curl -sS -m 10 --compressed \
	-H "Authorization: Bearer $TOKEN" https://svc.test/proxied; echo "rc=$?"'
PH=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$RF_OUT" 'PROXY=http://' "the proxy path: HTTPS_PROXY is set in the run"
like "$PH" '^[A-Za-z0-9_-]{22,}$' "the run's TOKEN is a placeholder (${#PH} characters)"
isnt "$PH" "$VAL" "... not the value"
like "$RF_OUT" 'rc=0' "curl https://svc.test/ through the proxy: the handshake with the run CA verified (CURL_CA_BUNDLE)"
like "$(tlslog)" "Authorization: Bearer $VAL" "... the test host received the real value"
unlike "$(tlslog)" "$PH" "... and not the placeholder"
like "$(tlslog)" 'sni=svc\.test' "... over the egress process's own TLS (SNI svc.test, the test CA verified)"
like "$(tlslog)" 'Accept-Encoding: identity' "... with Accept-Encoding: identity (curl --compressed asked for gzip)"
unlike "$(tlslog)" 'Accept-Encoding: .*gzip' "... the run's gzip not passed on"
like "$RF_OUT" "Authorization: Bearer $PH" "the host's echo reached the run scrubbed to the placeholder"
unlike "$RF_OUT" "$VAL" "... the run's output never holds the value"
is "$(($(ncount '"egress.tls"' '"side":"client"' '"via":"proxy"' '"host":"svc.test"') - c0))" 1 \
	"egress.tls recorded: side client, via proxy, host svc.test"
is "$(($(ncount '"egress.tls"' '"side":"upstream"' '"via":"proxy"' '"host":"svc.test"') - u0))" 1 \
	"egress.tls recorded: side upstream, via proxy, host svc.test"
like "$(last_rec '"egress.tls"' '"side":"client"' '"host":"svc.test"')" '"port":"?443"?' "... port 443"
# (the record's own "version" key is the audit format's: the field may be
# named tls_version)
like "$(last_rec '"egress.tls"' '"side":"upstream"' '"host":"svc.test"')" 'version":"TLSv1\.[23]"' "... the version (TLSv1.2 or 1.3)"
is "$(($(ncount '"secret.inject"' '"path":"/proxied"') - i0))" 1 "secret.inject recorded once for the request"
rec=$(last_rec '"secret.inject"' '"path":"/proxied"')
like "$rec" '"name":"TOKEN"' "... name TOKEN"
like "$rec" '"host":"svc.test"' "... host svc.test"
like "$rec" '"method":"GET"' "... method GET"
like "$rec" '"via":"proxy"' "... via proxy"
like "$(last_rec '"egress.allow"' '"host":"svc.test"')" '"port":"?443"?' "egress.allow recorded for svc.test:443 as before"

# the value echoed by the host in a body is scrubbed
rm -f "$P/tls.log"
er "${INJ[@]}" -- sh -c 'echo "PH=$TOKEN"; curl -sS -m 10 -H "Authorization: Bearer $TOKEN" https://svc.test/value'
PHV=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$(tlslog)" 'GET /value' "a host that answers the value in its body: reached"
like "$RF_OUT" "value=$PHV" "... the run sees the placeholder where the value was"
unlike "$RF_OUT" "$VAL" "... never the value"

# the scrubber's known gaps, closed: a value split by chunk framing, a
# compressed answer, a value cut short at the end of a response
er "${INJ[@]}" -- sh -c 'echo "PH=$TOKEN"; curl -sS -m 10 --raw https://svc.test/chunked-value |
	tr -d "\r" | awk "NR % 2 == 0" | tr -d "\n"; echo; echo "rc=$?"'
PHV=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$RF_OUT" "value=$PHV" "a value split one byte per chunk: the run reads the placeholder across the framing (curl --raw, chunks joined)"
unlike "$(tr -d '\n' <<<"$RF_OUT")" "$VAL" "... never the value"
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -o /dev/null -w "%{http_code}\n" https://svc.test/gzip-value'
is "$(tail -n 1 <<<"$RF_OUT")" 502 "a compressed answer from the injection host (Content-Encoding: gzip): 502, never relayed"
like "$(last_rec '"egress.deny"' 'compressed')" 'compressed its answer' "... egress.deny says why"
# the same behind a head the egress process cannot parse: never relayed raw
# (it was drained to the run, which decompressed the value)
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 --compressed -w "\ncode=%{http_code}\n" https://svc.test/gzip-badhead'
like "$RF_OUT" 'code=502' "a compressed answer behind a head that cannot be parsed (a 20-digit Content-Length): 502"
unlike "$RF_OUT" "${VAL:0:12}" "... nothing of the value reached the run"
like "$(last_rec '"egress.deny"' 'could not be read')" 'whose head could not be read' "... egress.deny says why"
er "${INJ[@]}" -- sh -c 'echo "PH=$TOKEN"; curl -sS -m 10 https://svc.test/cut-value; echo'
PHV=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$RF_OUT" "value=${PHV:0:$((${#VAL} - 3))}" "a value cut short by the end of the answer: replaced by the placeholder's beginning"
unlike "$RF_OUT" "${VAL:0:$((${#VAL} - 3))}" "... the value's beginning never reaches the run"
# a value split by a pause longer than the hold (a server that pauses, a
# lost segment): its beginning goes out when the hold times out (replaced
# from 8 bytes on), and its rest is still overwritten when it comes
for k in 12 3; do
	er "${INJ[@]}" -- sh -c "echo \"PH=\$TOKEN\"; curl -sS -m 10 https://svc.test/pause-value-$k; echo"
	PHV=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
	m=$((k > 8 ? k : 8))
	unlike "$RF_OUT" "${VAL:$m:12}" "the value split by a 0.5 s pause after its first $k bytes: nothing of it past its ${m}th byte reaches the run"
	like "$RF_OUT" "${PHV:12:$((${#VAL} - 12))}" "... its rest replaced by the placeholder's"
done

# a slice of the value: Range never goes to the secret's host, a 206 from it is refused
rm -f "$P/tls.log"
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -o /dev/null -w "%{http_code}\n" -r 1- https://svc.test/echo;
	curl -sS -m 10 -o /dev/null -w "%{http_code}\n" https://svc.test/partial-value'
like "$(tlslog)" 'GET /echo' "a Range request to the injection host: reached it"
unlike "$(tlslog)" '^Range:' "... without its Range header (a slice of a reflected value would pass the scrubber)"
is "$(sed -n 2p <<<"$RF_OUT")" 502 "a 206 from the injection host anyway: 502, never relayed"
like "$(last_rec '"egress.deny"' '206')" 'part of a resource' "... egress.deny says why"

# WebSocket: the value injected into the upgrade, scrubbed from frames even
# when two frames split it; compression refused
cp "$RF_SRC/tests/helpers/ws-client.py" "$WS/ws-client.py"
rm -f "$P/tls.log"
er "${INJ[@]}" -- sh -c 'echo "PH=$TOKEN"; env -u HTTPS_PROXY -u https_proxy python3 ws-client.py svc.test /ws'
PHW=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$RF_OUT" 'HTTP/1.1 101' "WebSocket (captured): upgraded"
like "$(tlslog)" "Authorization: Bearer $VAL" "... the upgrade request carried the value"
unlike "$(tlslog)" 'Sec-WebSocket-Extensions' "... and no extension offer (compressed frames would hide the value)"
like "$RF_OUT" "frame: value=$PHW" "... the value split over two frames reached the run as the placeholder"
unlike "$RF_OUT" "${VAL:0:12}" "... nothing of the value"
like "$RF_OUT" "frame: end=${VAL:0:1}" "... a frame ending with the value's first byte is not held back forever (one byte of it is no secret)"
rm -f "$P/tls.log"
er "${INJ[@]}" -- sh -c 'env -u HTTPS_PROXY -u https_proxy python3 ws-client.py svc.test /ws-deflate'
unlike "$RF_OUT" 'HTTP/1.1 101' "a 101 with permessage-deflate (not offered): refused"
unlike "$RF_OUT" "${VAL:0:12}" "... nothing of the value"
like "$(last_rec '"egress.deny"' 'WebSocket')" 'WebSocket with an extension' "... egress.deny says why"

# secret.inject only for a request that went out: a body refused for its
# placeholder never carried the value
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -o /dev/null -w "%{http_code}\n" --data "x=$TOKEN" https://svc.test/post-refused'
is "$(tail -n 1 <<<"$RF_OUT")" 403 "a body with the placeholder: 403"
is "$(records | grep '"secret.inject"' | grep -c 'post-refused')" 0 "... and no secret.inject for it (the head never left)"

# a policy may declare a query parameter the value goes into (percent-encoded)
cat >"$P/query.json" <<JSON
{"version": 1, "network": {"upstream_ca": "$P/testca.pem"},
 "secrets": [{"name": "QKEY", "deliver": "inject", "from": "store:api",
              "hosts": ["svc.test"], "query": "key"}]}
JSON
rm -f "$P/tls.log"
er -p "$P/query.json" "${NET[@]}" -- sh -c 'curl -sS -m 10 -o /dev/null -w "%{http_code}\n" \
	"https://svc.test/q?key=$QKEY&x=1"; curl -sS -m 10 -w "\ncode=%{http_code}\n" \
	"https://svc.test/q?other=$QKEY"'
VENC=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe="-._~"))' "$VAL")
like "$(tlslog)" "GET /q\\?key=$VENC&x=1 " "query: the declared parameter reached the host with the value (percent-encoded)"
is "$(head -n 1 <<<"$RF_OUT")" 200 "... answered"
like "$RF_OUT" 'code=403' "the placeholder in another parameter: 403"
like "$RF_OUT" 'only ever replaced in request header values and the query parameter key to the secret.s own hosts' \
	"... its text names where this binding lets the value go (the query parameter too)"
like "$(last_rec '"secret.exfil"' 'QKEY')" 'request target' "... secret.exfil, in the request target"
unlike "$(tlslog)" "other=" "... and nothing of it reached the host"
# an HTTP rule on the host still judges a request whose declared query
# parameter carries the placeholder (skipping the rules for it let any
# method and path through with the value)
rm -f "$P/tls.log"
er -p "$P/query.json" "${NET[@]}" --allow-http 'svc.test GET /q' -- sh -c 'curl -sS -m 10 -o /dev/null -w "%{http_code}\n" \
	-X DELETE "https://svc.test/admin?key=$QKEY"; curl -sS -m 10 -o /dev/null -w "%{http_code}\n" "https://svc.test/q?key=$QKEY"'
is "$(head -n 1 <<<"$RF_OUT")" 403 "the declared query parameter with the placeholder, DELETE /admin where an HTTP rule allows GET /q only: 403 (the rule judged it)"
unlike "$(tlslog)" "DELETE /admin" "... nothing of it reached the host"
is "$(sed -n 2p <<<"$RF_OUT")" 200 "... the control: GET /q with it, answered"
like "$(tlslog)" "GET /q\\?key=$VENC " "... with the value in the parameter"

# a header template is the only header the value goes into: the placeholder
# in another header toward the secret's own host is refused, never replaced
cat >"$P/templ.json" <<JSON
{"version": 1, "network": {"upstream_ca": "$P/testca.pem"},
 "secrets": [{"name": "HKEY", "deliver": "inject", "from": "store:api",
              "hosts": ["svc.test"], "header": "x-api-key: {}"}]}
JSON
rm -f "$P/tls.log"
n0=$(ncount '"secret.exfil"' 'HKEY')
er -p "$P/templ.json" "${NET[@]}" -- sh -c 'curl -sS -m 10 -w "\ncode=%{http_code}\n" -H "X-Echo: $HKEY" https://svc.test/t-echo
	curl -sS -m 10 -H "x-api-key: $HKEY" https://svc.test/t-ok'
like "$RF_OUT" 'code=403' "template x-api-key over TLS, the placeholder in X-Echo: 403"
like "$RF_OUT" 'request header X-Echo \(not the binding.s header\); it is only ever replaced in the request header x-api-key' "... saying why and where it may go"
unlike "$(tlslog)" 'GET /t-echo' "... nothing of it reached the host"
is "$(($(ncount '"secret.exfil"' 'HKEY') - n0))" 1 "... secret.exfil recorded"
like "$(tlslog)" "x-api-key: $VAL" "the control: in x-api-key itself, the value went on the wire"
like "$RF_OUT" 'GET /t-ok' "... answered"

# "basic": every request to the secret's hosts gets Authorization: Basic
# base64(USER:VALUE); like a header template it is the only header the
# value goes into (the client's own Authorization replaced, the
# placeholder in another header refused)
cat >"$P/basic.json" <<JSON
{"version": 1, "network": {"upstream_ca": "$P/testca.pem"},
 "secrets": [{"name": "GKEY", "deliver": "inject", "from": "store:api",
              "hosts": ["svc.test"], "basic": "x-access-token"}]}
JSON
rm -f "$P/tls.log"
n0=$(ncount '"secret.exfil"' 'GKEY')
er -p "$P/basic.json" "${NET[@]}" -- sh -c 'curl -sS -m 10 -o /dev/null https://svc.test/b-plain
	curl -sS -m 10 -o /dev/null -H "Authorization: Bearer run-own" https://svc.test/b-own
	curl -sS -m 10 -o /dev/null -u "me:$GKEY" https://svc.test/b-ph
	curl -sS -m 10 -w "\ncode=%{http_code}\n" -H "X-Echo: $GKEY" https://svc.test/b-echo; echo "PH=$GKEY"'
PHG2=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
B64G=$(printf 'x-access-token:%s' "$VAL" | base64 -w0)
like "$(tlslog | sed -n '/GET \/b-plain /,/^--$/p')" "Authorization: Basic $B64G" \
	"basic: a request naming no credential got Authorization: Basic base64(x-access-token:VALUE)"
b=$(tlslog | sed -n '/GET \/b-own /,/^--$/p')
like "$b" "Authorization: Basic $B64G" "... one with its own Authorization got the binding's instead"
unlike "$b" 'run-own' "... its own dropped"
is "$(tlslog | sed -n '/GET \/b-ph /,/^--$/p' | grep -ci '^authorization:')" 1 "... the placeholder as its own Basic password: one Authorization, the binding's"
like "$RF_OUT" 'code=403' "... the placeholder in X-Echo: 403"
like "$RF_OUT" 'request header X-Echo \(not the binding.s header\); it is only ever replaced in the request header Authorization \(HTTP Basic credentials\)' \
	"... saying where the value may go"
is "$(($(ncount '"secret.exfil"' 'GKEY') - n0))" 1 "... secret.exfil recorded"
unlike "$(tlslog)" 'GET /b-echo' "... nothing of it reached the host"
unlike "$(tlslog)" "$PHG2" "... the placeholder reached the host nowhere"
like "$(last_rec '"secret.inject"' '"path":"/b-plain"')" '"in":"head"' "... secret.inject recorded"
if [ "$HAVE_GIT" = 1 ]; then
	er -p "$P/basic.json" "${NET[@]}" -- sh -c 'rm -rf bclone; git clone -q https://svc.test/repo.git bclone 2>&1; echo "rc=$?"'
	like "$RF_OUT" 'rc=0' "basic: git clone https://svc.test/repo.git with no credential in the run: succeeded"
else
	skip "basic: git clone" "no git"
fi
printf '{"version": 1, "secrets": [\n  {"name": "G", "deliver": "inject", "from": "store:api", "hosts": ["svc.test"], "basic": "a:b"}]}\n' >"$P/basic-bad.json"
er -p "$P/basic-bad.json" "${NET[@]}" -- true
is "$RF_RC" 125 "basic with a ':' in the user name: refused (125)"
like "$RF_ERR" 'basic-bad\.json:2:[0-9]+:.*basic: a user name' "... with file:line:col and why"
printf '{"version": 1, "secrets": [\n  {"name": "G", "deliver": "inject", "from": "store:api", "hosts": ["svc.test"],\n   "basic": "u", "header": "x-api-key: {}"}]}\n' >"$P/basic-bad2.json"
er -p "$P/basic-bad2.json" "${NET[@]}" -- true
like "$RF_ERR" 'basic-bad2\.json:2:[0-9]+:.*header and basic: one or the other' "basic with a header template: refused with file:line:col"

# a policy may let the value into request bodies ("body": true). A body of
# a known length whose placeholder is as long as the value (the default
# shape) is replaced in place, its Content-Length kept; a chunked one is
# de-chunked, scanned as one stream, replaced and re-chunked: the
# placeholder cut between two chunks and two reads is found all the same
cat >"$P/body.json" <<JSON
{"version": 1, "network": {"upstream_ca": "$P/testca.pem"},
 "secrets": [{"name": "BKEY", "deliver": "inject", "from": "store:api",
              "hosts": ["svc.test"], "body": true}]}
JSON
cp "$RF_SRC/tests/helpers/chunked-client.py" "$WS/chunked-client.py"
rm -f "$P/tls.log"
er -p "$P/body.json" "${NET[@]}" -- sh -c 'head -c 40000 /dev/zero | tr "\0" a >pad;
	printf "token=%s&pad=" "$BKEY" >b1; cat pad >>b1;
	cat pad >b2; printf "&token=%s" "$BKEY" >>b2;
	curl -sS -m 10 -o /dev/null -w "%{http_code}\n" --data-binary @b1 https://svc.test/body1;
	curl -sS -m 10 -o /dev/null -w "%{http_code}\n" --data-binary @b2 https://svc.test/body2;
	printf "token=%s" "$BKEY" >b3;
	curl -sS -m 10 -o /dev/null -w "%{http_code}\n" -H "Transfer-Encoding: chunked" -H "Expect:" \
		--data-binary @b3 https://svc.test/body3;
	python3 chunked-client.py https://svc.test/body4 BKEY | head -n 1; echo "PH=$BKEY"'
PHB=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
is "$(sed -n 1,2p <<<"$RF_OUT" | tr '\n' ' ')" "200 200 " "body: two requests with the placeholder in their bodies (40 KB, at the start and at the end): served"
is "$(tlslog | grep -c "body-length $((40011 + ${#VAL}))\|body-length $((40007 + ${#VAL}))")" 2 "... their lengths unchanged (Content-Length kept: in place)"
is "$(tlslog | sed -n '/POST \/body[12] /,/^--$/p' | grep -c '^body-framing length')" 2 "... sent with a Content-Length"
is "$(tlslog | grep -c '^body-value yes')" 4 "... the host read the value in both, and in the two chunked bodies below"
is "$(sed -n 3p <<<"$RF_OUT")" 200 "a chunked body (curl) with the placeholder: served"
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
b3=$(tlslog | sed -n '/POST \/body3 /,/^--$/p')
like "$b3" 'body-framing chunked' "... re-chunked to the host (read strictly there)"
like "$b3" "body-sha256 $(sha "token=$VAL")" "... the host read token=VALUE, nothing else"
unlike "$b3" '[Cc]ontent-[Ll]ength' "... and no Content-Length beside the chunked framing"
is "$(sed -n 4p <<<"$RF_OUT")" code=200 "a chunked body with the placeholder cut between two chunks and two reads (chunk extension, trailer): served"
b4=$(tlslog | sed -n '/POST \/body4 /,/^--$/p')
like "$b4" 'body-framing chunked' "... re-chunked to the host"
like "$b4" "body-sha256 $(sha "a=$VAL&pad=$(head -c 40000 /dev/zero | tr '\0' p)&end=$VAL")" \
	"... the host read both placeholders replaced, across the cut and 40 KB later"
unlike "$b4" 'X-Trailer|x=1' "... the client's extension and trailer did not go up (rebuilt, not relayed)"
unlike "$(tlslog)" "$PHB" "... the placeholder reached the host nowhere"
is "$(records | grep '"secret.inject"' | grep -c '"in":"body"')" 4 "... secret.inject recorded for each body (in: body)"
like "$(last_rec '"secret.inject"' '"path":"/body4"')" '"in":"body"' "... the chunked one's too"
# a Content-Length body whose placeholder differs in length from the value
# is buffered (at most 1 MiB) and sent with its new Content-Length, or
# re-chunked; the supervisor still refuses such a binding at start, so a
# test build's switch (RINGFENCE_TEST_BODY_MODE) takes equal-length bodies
# through those two paths instead of in place (the replacement itself, at
# any lengths, is test_inject's and fuzz_inject's)
if [ -n "$RF_TEST_BIN" ]; then
	for mode in buffer chunk; do
		rm -f "$P/tls.log"
		RF_BIN=$RF_TEST_BIN RINGFENCE_TEST_BODY_MODE=$mode er -p "$P/body.json" "${NET[@]}" -- sh -c '
			head -c 40000 /dev/zero | tr "\0" a >pad;
			printf "token=%s&pad=" "$BKEY" >b1; cat pad >>b1;
			cat pad >b2; printf "&token=%s" "$BKEY" >>b2;
			curl -sS -m 10 -o /dev/null -w "%{http_code}\n" --data-binary @b1 https://svc.test/m1;
			curl -sS -m 10 -o /dev/null -w "%{http_code} %{time_total}\n" -H "Expect: 100-continue" \
				--data-binary @b2 https://svc.test/m2'
		framing=length
		[ "$mode" = chunk ] && framing=chunked
		is "$(sed -n 1p <<<"$RF_OUT")" 200 "body mode $mode (test build): a 40 KB body with the placeholder at its start: served"
		like "$(sed -n 2p <<<"$RF_OUT")" '^200 ' "... one with it at its end, the client asking 100-continue: served"
		m1=$(tlslog | sed -n '/POST \/m1 /,/^--$/p')
		m2=$(tlslog | sed -n '/POST \/m2 /,/^--$/p')
		like "$m1" "body-framing $framing" "... sent with $framing framing"
		like "$m1" "body-sha256 $(sha "token=$VAL&pad=$(head -c 40000 /dev/zero | tr '\0' a)")" "... the host read token=VALUE and the rest, byte for byte"
		like "$m2" "body-sha256 $(sha "$(head -c 40000 /dev/zero | tr '\0' a)&token=$VAL")" "... and the second, the value at its end"
		if [ "$mode" = buffer ]; then
			like "$m1" "Content-Length: $((40011 + ${#VAL}))" "... a Content-Length written for the replaced body"
			unlike "$m2" '[Ee]xpect:' "... the client's Expect not passed on (the head waits for the body)"
			t=$(sed -n 2p <<<"$RF_OUT" | cut -d' ' -f2)
			is "$(awk -v t="$t" 'BEGIN { print (t < 0.9) ? 1 : 0 }')" 1 "... its 100 Continue answered by ringfence: no 1 s wait (${t} s)"
		else
			unlike "$m1" '[Cc]ontent-[Ll]ength' "... no Content-Length beside the chunked framing"
		fi
		is "$(last_rec '"secret.inject"' '"path":"/m2"' | grep -c '"in":"body"')" 1 "... secret.inject recorded (in: body)"
	done
	# another injection's placeholder in a buffered body (its binding has
	# no "body"): refused before anything of the request left, the head
	# included
	cat >"$P/body2.json" <<JSON
{"version": 1, "network": {"upstream_ca": "$P/testca.pem"},
 "secrets": [{"name": "BKEY", "deliver": "inject", "from": "store:api",
              "hosts": ["svc.test"], "body": true},
             {"name": "OKEY", "deliver": "inject", "from": "store:api",
              "hosts": ["svc.test"]}]}
JSON
	rm -f "$P/tls.log"
	n0=$(ncount '"secret.exfil"' 'OKEY')
	RF_BIN=$RF_TEST_BIN RINGFENCE_TEST_BODY_MODE=buffer er -p "$P/body2.json" "${NET[@]}" -- sh -c '
		curl -sS -m 10 -w "\ncode=%{http_code}\n" --data-binary "a=$BKEY&b=$OKEY" https://svc.test/buf-exfil
		curl -sS -m 10 -o /dev/null -w "control=%{http_code}\n" --data-binary "a=$BKEY" https://svc.test/buf-ok'
	like "$RF_OUT" 'code=403' "buffered: another injection's placeholder (no \"body\") in the body: 403"
	like "$RF_OUT" 'placeholder of the injected secret OKEY stands in the request body' "... naming it"
	is "$(($(ncount '"secret.exfil"' 'OKEY') - n0))" 1 "... secret.exfil recorded"
	unlike "$(tlslog)" 'POST /buf-exfil' "... nothing of the request reached the host, not even its head"
	like "$RF_OUT" 'control=200' "... the control (the body binding's own placeholder alone) is served"
	like "$(tlslog | sed -n '/POST \/buf-ok /,/^--$/p')" "body-sha256 $(sha "a=$VAL")" "... with the value"
else
	for _ in $(seq 1 22); do skip "body buffer and chunk modes" "needs a test build"; done
fi
# a placeholder of another length than the value (60 for 51): a body up to
# 1 MiB buffered and sent with its new Content-Length, a larger one
# re-chunked, a chunked one re-chunked. The supervisor still refuses such a
# binding at start (src/supervisor/start.c inject_check): while it does,
# that refusal is asserted and the rest is skipped, saying so
cat >"$P/body-len.json" <<JSON
{"version": 1, "network": {"upstream_ca": "$P/testca.pem"},
 "secrets": [{"name": "BK", "deliver": "inject", "from": "store:api",
              "hosts": ["svc.test"], "body": true, "placeholder": {"length": 60}}]}
JSON
rm -f "$P/tls.log"
er -p "$P/body-len.json" "${NET[@]}" -- sh -c 'head -c 40000 /dev/zero | tr "\0" a >pad;
	head -c 1100000 /dev/zero | tr "\0" b >bigpad;
	printf "token=%s&pad=" "$BK" >l1; cat pad >>l1;
	cat bigpad >l2; printf "&token=%s" "$BK" >>l2;
	curl -sS -m 20 -o /dev/null -w "%{http_code}\n" --data-binary @l1 https://svc.test/len1;
	curl -sS -m 20 -o /dev/null -w "%{http_code}\n" -H "Expect:" --data-binary @l2 https://svc.test/len2;
	python3 chunked-client.py https://svc.test/len3 BK 100 | head -n 1; echo "PH=$BK"'
is "$RF_RC" 0 "\"body\" with a placeholder of another length than the value: the run ends 0 ($RF_ERR)"
PHL=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
is "${#PHL}" 60 "\"body\" with a 60-character placeholder for a ${#VAL}-byte value: the run starts"
is "$(sed -n 1,3p <<<"$RF_OUT" | tr '\n' ' ')" "200 200 code=200 " "... a 40 KB body, a 1.1 MB one and a chunked one with the placeholder: served"
l1=$(tlslog | sed -n '/POST \/len1 /,/^--$/p')
like "$l1" "Content-Length: $((40011 + ${#VAL}))" "... the 40 KB body buffered, sent with its new Content-Length"
like "$l1" "body-sha256 $(sha "token=$VAL&pad=$(head -c 40000 /dev/zero | tr '\0' a)")" "... the host read token=VALUE and the rest"
l2=$(tlslog | sed -n '/POST \/len2 /,/^--$/p')
like "$l2" 'body-framing chunked' "... the 1.1 MB one (over 1 MiB) re-chunked"
like "$l2" "body-sha256 $(sha "$(head -c 1100000 /dev/zero | tr '\0' b)&token=$VAL")" "... the host read it whole, the value at its end"
like "$(tlslog | sed -n '/POST \/len3 /,/^--$/p')" "body-sha256 $(sha "a=$VAL&pad=$(head -c 100 /dev/zero | tr '\0' p)&end=$VAL")" \
	"... the chunked one replaced across the cut"
unlike "$(tlslog)" "$PHL" "... the placeholder reached the host nowhere"

# HTTP/1.0 cannot be re-chunked: a Content-Length body over 1 MiB toward a
# "body" binding whose placeholder is longer than its value goes up as it
# came, the placeholder in it refused (secret.exfil). An 8 MB body to a
# host that reads it only after 1 s (tlshost.py /slow-body): the egress
# process's buffers fill on both sides, then the body moves as the host
# takes it. It stalled there once (the last bytes read from the client
# waited for an event that never came): the control hung instead of being
# served, the placeholder at the end was never seen, no 403 came. A client
# of its own: HTTP/1.0 over TLS without ALPN (curl --http1.0 offers
# http/1.0, which the termination refuses)
cat >"$WS/h10-client.py" <<'PY'
import os, socket, ssl, sys, time, urllib.parse
path, var, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
ph = os.environ[var].encode() if var != "-" else b""
body = b"b" * size + b"&token=" + ph
p = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
s = socket.create_connection((p.hostname, p.port), timeout=20)
s.sendall(b"CONNECT svc.test:443 HTTP/1.1\r\nHost: svc.test:443\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    d = s.recv(4096)
    if not d:
        sys.exit("CONNECT: no answer")
    head += d
ctx = ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE"))
s = ctx.wrap_socket(s, server_hostname="svc.test")
t0 = time.time()
try:
    s.sendall(b"POST %s HTTP/1.0\r\nHost: svc.test\r\nContent-Length: %d\r\n\r\n"
              % (path.encode(), len(body)) + body)
except OSError as e:
    print("send: %s" % e)
resp = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        resp += d
except OSError as e:
    print("recv: %s" % e)
first = resp.split(b"\r\n", 1)[0].decode("latin-1")
print("code=%s secs=%d" % (first.split(" ")[1] if " " in first else "", time.time() - t0))
print(resp.split(b"\r\n\r\n", 1)[-1].decode("latin-1"))
PY
rm -f "$P/tls.log"
n0=$(ncount '"secret.exfil"' '"where":"request body"' '"name":"BK"')
er -p "$P/body-len.json" "${NET[@]}" -- sh -c 'python3 h10-client.py /slow-body-ok - 8000000;
	python3 h10-client.py /slow-body-ph BK 8000000'
like "$(sed -n 1p <<<"$RF_OUT")" '^code=200 secs=[0-9]$' "HTTP/1.0 over TLS, an 8 MB body the host reads late: served within seconds ($RF_ERR)"
like "$(tlslog | sed -n '/POST \/slow-body-ok /,/^--$/p')" "body-length $((8000000 + 7))" "... the host read it whole"
like "$(grep '^code=' <<<"$RF_OUT" | sed -n 2p)" '^code=403 secs=[0-9]$' "... the same with the 60-character placeholder at its end: 403 within seconds, no hang"
like "$RF_OUT" 'placeholder of the injected secret BK stands in the request body' "... naming it"
is "$(($(ncount '"secret.exfil"' '"where":"request body"' '"name":"BK"') - n0))" 1 "... secret.exfil recorded"
unlike "$(tlslog | sed -n '/POST \/slow-body-ph /,/^--$/p')" 'body-length' "... the host never read a whole body"

# without "body" the placeholder in a chunked body is refused, even cut
# between two chunks (the body is read as one stream), and never replaced
rm -f "$P/tls.log"
n0=$(ncount '"secret.exfil"' '"where":"request body"')
er "${INJ[@]}" -- sh -c 'python3 chunked-client.py https://svc.test/chunk-leak TOKEN 100;
	printf "k=v" | curl -sS -m 10 -o /dev/null -w "control=%{http_code}\n" -H "Expect:" -T - -X POST https://svc.test/chunk-ok'
like "$RF_OUT" 'code=403' "a chunked body with the placeholder cut between two chunks, no body binding: 403"
like "$RF_OUT" 'stands in the request body' "... saying where"
is "$(($(ncount '"secret.exfil"' '"where":"request body"') - n0))" 1 "... secret.exfil recorded"
unlike "$(tlslog | sed -n '/POST \/chunk-leak /,/^--$/p')" 'body-value yes' "... the host never got the value"
like "$RF_OUT" 'control=200' "... the control (a chunked body without it) is served"
like "$(tlslog | sed -n '/POST \/chunk-ok /,/^--$/p')" "body-sha256 $(sha 'k=v')" "... re-chunked, the host read k=v"

# a large chunked body (3 MB, more than the proxy holds at once: the
# client's bytes, the de-chunked ones and the re-chunked ones in turn)
rm -f "$P/tls.log"
er -p "$P/body.json" "${NET[@]}" -- sh -c '{ head -c 3000000 /dev/zero | tr "\0" c; printf "&token=%s" "$BKEY"; } |
	curl -sS -m 30 -o /dev/null -w "%{http_code}\n" -H "Expect:" -T - -X POST https://svc.test/bigchunk'
is "$RF_OUT" 200 "a 3 MB chunked body with the placeholder at its end: served"
like "$(tlslog | sed -n '/POST \/bigchunk /,/^--$/p')" "body-sha256 $(sha "$(head -c 3000000 /dev/zero | tr '\0' c)&token=$VAL")" \
	"... re-chunked whole, the value at its end"

# the same on the captured path (no proxy variables): one decision, one rewriter
if [ "$CAPTURE" = 1 ]; then
	rm -f "$P/tls.log"
	er -p "$P/body.json" "${NET[@]}" -- "${NP[@]}" python3 chunked-client.py https://svc.test/body-cap BKEY 1000
	is "$(head -n 1 <<<"$RF_OUT")" code=200 "captured: a chunked body with the placeholder cut between two chunks: served"
	like "$(tlslog | sed -n '/POST \/body-cap /,/^--$/p')" "body-sha256 $(sha "a=$VAL&pad=$(head -c 1000 /dev/zero | tr '\0' p)&end=$VAL")" \
		"... re-chunked, both placeholders replaced"
	like "$(last_rec '"secret.inject"' '"path":"/body-cap"')" '"in":"body".*"via":"capture"|"via":"capture".*"in":"body"' "... secret.inject in: body, via capture"
else
	for _ in 1 2 3; do skip "captured chunked body" "this build does not capture"; done
fi

# keep-alive: every request of the connection
rm -f "$P/tls.log"
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -o /dev/null -o /dev/null -w "connects=%{num_connects}\n" \
	-H "x-api-key: $TOKEN" https://svc.test/one https://svc.test/two'
is "$(tlslog | grep -c "x-api-key: $VAL")" 2 "keep-alive: both requests of one curl invocation carry the value"
is "$(grep -c '^connects=0' <<<"$RF_OUT")" 1 "... over one connection (curl reused it for the second)"

# ---- curl, the captured path --------------------------------------------------------------------
if [ "$CAPTURE" = 1 ]; then
	rm -f "$P/tls.log"
	c0=$(ncount '"egress.tls"' '"side":"client"' '"via":"capture"' '"host":"svc.test"')
	u0=$(ncount '"egress.tls"' '"side":"upstream"' '"via":"capture"' '"host":"svc.test"')
	er "${INJ[@]}" -- "${NP[@]}" sh -c 'echo "PH=$TOKEN"; curl -sS -m 10 -H "Authorization: Bearer $TOKEN" \
		https://svc.test/captured; echo "rc=$?"'
	PH2=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
	like "$RF_OUT" 'rc=0' "captured (no proxy variables): curl https://svc.test/ completes its handshake"
	like "$(tlslog)" "Authorization: Bearer $VAL" "... the test host received the real value"
	like "$RF_OUT" "Authorization: Bearer $PH2" "... the echo came back scrubbed"
	unlike "$RF_OUT" "$VAL" "... no value in the run's output"
	isnt "$PH2" "$PH" "a placeholder is new for every run"
	is "$(($(ncount '"egress.tls"' '"side":"client"' '"via":"capture"' '"host":"svc.test"') - c0))" 1 \
		"egress.tls recorded: side client, via capture"
	is "$(($(ncount '"egress.tls"' '"side":"upstream"' '"via":"capture"' '"host":"svc.test"') - u0))" 1 \
		"egress.tls recorded: side upstream, via capture"
	like "$(last_rec '"secret.inject"' '"path":"/captured"')" '"via":"capture"' "secret.inject recorded, via capture"
else
	for _ in 1 2 3 4 5 6 7 8; do skip "curl, captured" "this build does not capture"; done
fi

# ---- Python urllib and requests (proxy path) -----------------------------------------------------
rm -f "$P/tls.log"
er "${INJ[@]}" -- python3 -c '
import os, urllib.request
req = urllib.request.Request("https://svc.test/urllib")
req.add_header("Authorization", "Bearer " + os.environ["TOKEN"])
print(urllib.request.urlopen(req, timeout=10).read().decode())
print("PH=" + os.environ["TOKEN"])'
PHU=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$RF_OUT" 'GET /urllib' "Python urllib over HTTPS_PROXY: answered"
like "$(tlslog)" "Authorization: Bearer $VAL" "... the value went on the wire"
like "$RF_OUT" "Authorization: Bearer $PHU" "... scrubbed back to the placeholder"
unlike "$RF_OUT" "$VAL" "... no value in the run's output"

if python3 -c 'import requests' 2>/dev/null; then
	rm -f "$P/tls.log"
	er "${INJ[@]}" -- python3 -c '
import os, base64, requests
tok = os.environ["TOKEN"]
r = requests.get("https://svc.test/requests", auth=("user", tok), timeout=10)
print(r.status_code); print(r.text); print("PH=" + tok)'
	PHR=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
	like "$RF_OUT" 'GET /requests' "Python requests (REQUESTS_CA_BUNDLE, HTTPS_PROXY): answered"
	like "$(tlslog)" "Authorization: Basic $(printf 'user:%s' "$VAL" | base64 -w0)" \
		"... Basic user:placeholder decoded, replaced, encoded again"
	like "$RF_OUT" "Authorization: Basic $(printf 'user:%s' "$PHR" | base64 -w0)" "... and scrubbed back in the echo"
	unlike "$RF_OUT" "$VAL" "... no value in the run's output"
	is "$(b64leak "$RF_OUT")" clean "... nor base64-encoded in it (the echoed Basic credentials, value at offset 5)"
else
	for _ in 1 2 3 4 5; do skip "Python requests" "python3-requests is not installed"; done
fi

# ---- Node https.get and fetch (captured) --------------------------------------------------------
if command -v node >/dev/null && [ "$CAPTURE" = 1 ]; then
	rm -f "$P/tls.log"
	er "${INJ[@]}" -- "${NP[@]}" node -e '
const tok = process.env.TOKEN;
require("https").get("https://svc.test/node-https", { headers: { Authorization: "Bearer " + tok } },
  r => { let b = ""; r.on("data", d => b += d); r.on("end", () => { console.log(b); console.log("PH=" + tok); }); })
  .on("error", e => { console.log("error", e.code, e.message); process.exit(1); });'
	PHN=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
	like "$RF_OUT" 'GET /node-https' "Node https.get (NODE_EXTRA_CA_CERTS, captured): answered"
	like "$(tlslog)" "Authorization: Bearer $VAL" "... the value went on the wire"
	like "$RF_OUT" "Authorization: Bearer $PHN" "... scrubbed back"
	unlike "$RF_OUT" "$VAL" "... no value in the run's output"
	rm -f "$P/tls.log"
	er "${INJ[@]}" -- "${NP[@]}" node -e '
const tok = process.env.TOKEN;
fetch("https://svc.test/node-fetch", { headers: { Authorization: "Bearer " + tok } })
  .then(r => r.text()).then(t => { console.log(t); console.log("PH=" + tok); },
  e => { console.log("error", e.cause ? e.cause.code : e); process.exit(1); });'
	PHF=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
	like "$RF_OUT" 'GET /node-fetch' "Node fetch (undici, captured): answered"
	like "$(tlslog)" "Authorization: Bearer $VAL" "... the value went on the wire"
	like "$RF_OUT" "Authorization: Bearer $PHF" "... scrubbed back"
	unlike "$RF_OUT" "$VAL" "... no value in the run's output"
else
	for _ in 1 2 3 4 5 6 7 8; do skip "Node https.get and fetch" "no node, or this build does not capture"; done
fi

# ---- Java 17 HttpClient (captured) --------------------------------------------------------------
if command -v javac >/dev/null && java -version 2>&1 | grep -q 'version "\(1[7-9]\|2[0-9]\)' &&
	[ "$CAPTURE" = 1 ] && [ -f /etc/ssl/certs/java/cacerts ]; then
	mkdir -p "$WS/java"
	cat >"$WS/java/Fetch.java" <<'JAVA'
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

public class Fetch {
    public static void main(String[] a) throws Exception {
        String tok = System.getenv("TOKEN");
        HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try {
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(a[0]))
                    .header("Authorization", "Bearer " + tok).build(),
                    HttpResponse.BodyHandlers.ofString());
            System.out.println(r.statusCode());
            System.out.println(r.body());
        } catch (java.io.IOException e) {
            System.out.println("error " + e);
        }
        System.out.println("PH=" + tok);
    }
}
JAVA
	if javac -d "$WS/java" "$WS/java/Fetch.java" 2>"$WS/java/javac.err"; then
		JRO=()
		for d in /etc/java-*-openjdk; do [ -d "$d" ] && JRO+=(--ro "$d"); done
		rm -f "$P/tls.log"
		er "${INJ[@]}" "${JRO[@]}" -- "${NP[@]}" java -XX:TieredStopAtLevel=1 -cp java Fetch https://svc.test/java
		PHJ=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
		like "$RF_OUT" 'GET /java' "Java 17 HttpClient (the run's cacerts, captured): answered"
		like "$(tlslog)" "Authorization: Bearer $VAL" "... the value went on the wire"
		like "$RF_OUT" "Authorization: Bearer $PHJ" "... scrubbed back"
		unlike "$RF_OUT" "$VAL" "... no value in the run's output"
		# the JAVA_TOOL_OPTIONS line SECRETS.md and TLS.md give, for a JVM
		# whose own trust store is elsewhere: the run's store by its path
		rm -f "$P/tls.log"
		er "${INJ[@]}" "${JRO[@]}" -e "JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStore=/run/ringfence/cacerts.p12 -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=changeit" \
			-- "${NP[@]}" sh -c 'java -XX:TieredStopAtLevel=1 -cp java Fetch https://svc.test/java-opts 2>&1'
		like "$RF_OUT" 'Picked up JAVA_TOOL_OPTIONS: -Djavax.net.ssl.trustStore=/run/ringfence/cacerts.p12' "Java 17 with the documented JAVA_TOOL_OPTIONS (trustStore /run/ringfence/cacerts.p12): read"
		like "$RF_OUT" 'GET /java-opts' "... answered through the run's store"
		like "$(tlslog)" "Authorization: Bearer $VAL" "... the value went on the wire"
	else
		for _ in 1 2 3 4 5 6 7; do not_ok "Java HttpClient" "javac failed: $(cat "$WS/java/javac.err")"; done
	fi
else
	for _ in 1 2 3 4 5 6 7; do skip "Java 17 HttpClient" "no Java 17 / javac, no /etc/ssl/certs/java/cacerts, or no capture"; done
fi

# a host without /etc/ssl/certs/java/cacerts (hidden here under an empty
# tmpfs): no JVM store is made, nothing is mounted there, the run starts
# all the same with its PEM bundle (SECRETS.md: such a JVM lacks the run CA)
if [ -f /etc/ssl/certs/java/cacerts ]; then
	RF_OUT=$(unshare -m sh -c 'mount -t tmpfs tmpfs /etc/ssl/certs/java && mount --bind "$1" /etc/resolv.conf &&
		shift && exec nsenter --net=/run/netns/"$0" "$@"' "$CNS" "$TH/resolv.conf" \
		"$RF_BIN" run --state-dir "$RF_STATE" -w "$WS" "${INJ[@]}" -- sh -c \
		'test -e /run/ringfence/cacerts.p12 && echo p12 || echo no-p12
		test -e /etc/ssl/certs/java/cacerts && echo jvm-file || echo no-jvm-file
		test -s /run/ringfence/ca-certificates.crt && echo bundle' 2>"$WS.err")
	RF_RC=$?
	is "$RF_RC" 0 "a host without the JVM's cacerts: an injection run starts all the same"
	is "$(tr '\n' ' ' <<<"$RF_OUT")" "no-p12 no-jvm-file bundle " "... no /run/ringfence/cacerts.p12 made, none mounted; the PEM bundle there"
else
	for _ in 1 2; do skip "a host without the JVM's cacerts" "this host has none to hide"; done
fi

# ---- git clone over HTTPS, the placeholder as password -----------------------------------------
if [ "$HAVE_GIT" = 1 ]; then
	rm -f "$P/tls.log"
	er "${INJ[@]}" -- sh -c 'rm -rf clone; git clone -q "https://x:$TOKEN@svc.test/repo.git" clone 2>&1;
		echo "rc=$?"; cat clone/README; echo "PH=$TOKEN"'
	PHG=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
	like "$RF_OUT" 'rc=0' "git clone https://x:\$TOKEN@svc.test/repo.git (smart HTTP, Basic auth, GIT_SSL_CAINFO): succeeded"
	like "$RF_OUT" 'hello from the test host' "... the repository's file is there"
	like "$(tlslog)" "Authorization: Basic $(printf 'x:%s' "$VAL" | base64 -w0)" "... the host got x:value"
	unlike "$(tlslog)" "$PHG" "... never the placeholder"
	unlike "$RF_OUT" "$VAL" "... no value in the run's output"
	is "$(b64leak "$(cat "$WS/clone/.git/config" 2>/dev/null; echo "$RF_OUT")")" clean "... nor base64-encoded in it or the clone's config"
	check "... nor in the clone" sh -c "! grep -rqF -- '$VAL' '$WS/clone'"
	# push, in another run: the clone's remote still holds the first run's
	# placeholder, worthless now; this run's own placeholder pushes
	er "${INJ[@]}" -- sh -c 'cd clone && echo pushed >pushed.txt && git add pushed.txt &&
		git -c user.name=run -c user.email=run@ringfence.invalid commit -qm "from the run" &&
		{ git push -q origin HEAD:main 2>&1; echo "old=$?"; } &&
		git push -q "https://x:$TOKEN@svc.test/repo.git" HEAD:main 2>&1; echo "rc=$?"'
	like "$RF_OUT" 'old=128' "git push with the placeholder a previous run held: refused by the host (worthless in this run)"
	like "$RF_OUT" 'rc=0' "git push over HTTPS with this run's placeholder as password: succeeded"
	like "$(git -C "$P/repo.git" log -1 --format=%s main 2>/dev/null)" 'from the run' "... the commit is in the host's repository"
	check "... and the clone's config holds no value" sh -c "! grep -qF -- '$VAL' '$WS/clone/.git/config'"
else
	for _ in 1 2 3 4 5 6 7 8 9 10 11; do skip "git clone and push over HTTPS" "no git"; done
fi

# ---- upstream certificate failures: 502 saying why, egress.deny --------------------------------
# upstream PORT CA-OPTION... — curl through the proxy to svc.test:PORT with the injection there
upstream() {
	local port=$1
	shift
	local suffix=":$port"
	[ "$port" = 443 ] && suffix=""
	rm -f "$P/tls.log"
	er --inject "TOKEN=store:api@svc.test$suffix" "${NET[@]}" "$@" -- sh -c \
		"curl -sS -m 10 -w '\ncode=%{http_code}\n' -H \"Authorization: Bearer \$TOKEN\" https://svc.test$suffix/up; echo rc=\$?"
}
for c in "8444 certificate.expired expired" "8446 self-signed.certificate self-signed" \
	"8445 hostname.mismatch wrong-name" "443 untrusted.certificate untrusted"; do
	read -r port why what <<<"$c"
	ca=("${UCA[@]}")
	[ "$what" = untrusted ] && ca=()
	d0=$(ncount '"egress.deny"' '"host":"svc.test"' "$why")
	upstream "$port" "${ca[@]}"
	label="upstream $what certificate (svc.test:$port, no --upstream-ca)"
	[ "${#ca[@]}" -gt 0 ] && label="upstream $what certificate (svc.test:$port, --upstream-ca the test CA)"
	like "$RF_OUT" 'code=502' "$label: the client gets 502"
	like "$RF_OUT" "$why" "... whose body says why"
	like "$RF_OUT" 'upstream' "... and that it was the upstream"
	unlike "$(tlslog)" 'GET /up' "... no request reached the host"
	is "$(($(ncount '"egress.deny"' '"host":"svc.test"' "$why") - d0))" 1 "... egress.deny recorded with the same reason"
done

# ---- a client that does not trust the run CA (pinned to the real CA) ---------------------------
rm -f "$P/tls.log"
d0=$(ncount '"egress.deny"' '"host":"svc.test"' 'TLS handshake')
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 --cacert testca.pem https://svc.test/pinned; echo "rc=$?"
	curl -sS -m 10 https://svc.test/unpinned; echo "rc=$?"'
like "$RF_OUT" 'rc=60' "a client pinned to the test CA (curl --cacert): its handshake with the run's leaf fails (60)"
unlike "$(tlslog)" 'GET /pinned' "... nothing of it reached the host"
is "$(($(ncount '"egress.deny"' '"host":"svc.test"' 'TLS handshake') - d0))" 1 "... egress.deny recorded, reason: TLS handshake"
like "$RF_OUT" 'GET /unpinned' "... the control (the run's bundle) works"

# ---- exfiltration over TLS, each with its control ------------------------------------------------
exfils() { ncount '"secret.exfil"'; }
rm -f "$P/tls.log"
n0=$(exfils)
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -w "\ncode=%{http_code}\n" "https://svc.test/q?k=$TOKEN"
	curl -sS -m 10 -H "Authorization: Bearer $TOKEN" https://svc.test/q-ok'
like "$RF_OUT" 'code=403' "the placeholder in the URL toward the injection host (over TLS): 403"
unlike "$(tlslog)" 'GET /q\?' "... nothing of it arrived"
like "$RF_OUT" 'GET /q-ok' "... the control (header, same host) works"
is "$(($(exfils) - n0))" 1 "... secret.exfil recorded"
like "$(last_rec '"secret.exfil"')" '"where":"request target \(URL\)"' "... where: request target (URL)"

rm -f "$P/tls.log"
n0=$(exfils)
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -w "\ncode=%{http_code}\n" -H "X-$TOKEN: 1" https://svc.test/hname
	curl -sS -m 10 -H "X-Plain: 1" https://svc.test/hname-ok'
like "$RF_OUT" 'code=403' "the placeholder in a request header name toward the injection host (over TLS): 403"
like "$RF_OUT" 'stands in the request header name' "... saying why"
unlike "$(tlslog)" 'GET /hname ' "... nothing of it arrived"
like "$RF_OUT" 'GET /hname-ok' "... the control (the same header name without it) is served"
is "$(($(exfils) - n0))" 1 "... secret.exfil recorded"
like "$(last_rec '"secret.exfil"')" '"where":"request header name"' "... where: request header name"

rm -f "$P/tls.log"
n0=$(exfils)
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -w "\ncode=%{http_code}\n" -d "k=$TOKEN" https://svc.test/post
	curl -sS -m 10 -d "k=v" https://svc.test/post-ok'
like "$RF_OUT" 'code=403' "the placeholder in a request body toward the injection host: 403"
unlike "$(tlslog)" 'POST /post ' "... nothing of it arrived"
like "$RF_OUT" 'POST /post-ok' "... the control (a body without it) is served"
is "$(($(exfils) - n0))" 1 "... secret.exfil recorded"
like "$(last_rec '"secret.exfil"')" '"where":"request body"' "... where: request body"

# the same refusals on the captured path
if [ "$CAPTURE" = 1 ]; then
	rm -f "$P/tls.log"
	n0=$(exfils)
	d0=$(ncount '"egress.deny"' '"host":"svc.test"' 'TLS handshake' '"via":"capture"')
	er "${INJ[@]}" -- "${NP[@]}" sh -c 'curl -sS -m 10 -w "\ncode=%{http_code}\n" "https://svc.test/qc?k=$TOKEN"
		curl -sS -m 10 -H "Authorization: Bearer $TOKEN" https://svc.test/qc-ok'
	like "$RF_OUT" 'code=403' "captured: the placeholder in the URL: 403"
	unlike "$(tlslog)" 'GET /qc\?' "... nothing of it arrived"
	like "$RF_OUT" 'GET /qc-ok' "... the control (header) works"
	like "$(last_rec '"secret.exfil"')" '"via":"capture"' "... secret.exfil recorded, via capture"
	is "$(($(exfils) - n0))" 1 "... once"
	# (a run of its own: egress.deny is coalesced per host:port within a run)
	er "${INJ[@]}" -- "${NP[@]}" sh -c 'curl -sS -m 10 --cacert testca.pem https://svc.test/pinned-c; echo "rc=$?"
		curl -sS -m 10 -H "Authorization: Bearer $TOKEN" https://svc.test/c-ok'
	like "$RF_OUT" 'rc=60' "captured: a client pinned to the test CA fails its handshake (60)"
	is "$(($(ncount '"egress.deny"' '"host":"svc.test"' 'TLS handshake' '"via":"capture"') - d0))" 1 \
		"... egress.deny (TLS handshake, via capture) recorded"
	like "$RF_OUT" 'GET /c-ok' "... the control (header, the run's bundle) works"
	rm -f "$P/tls.log"
	d0=$(ncount '"egress.deny"' '"host":"svc.test"' 'certificate expired' '"via":"capture"')
	er --inject "TOKEN=store:api@svc.test:8444" "${NET[@]}" "${UCA[@]}" -- "${NP[@]}" sh -c \
		'curl -sS -m 10 -w "\ncode=%{http_code}\n" -H "Authorization: Bearer $TOKEN" https://svc.test:8444/up-c'
	like "$RF_OUT" 'code=502' "captured: an expired upstream certificate: 502"
	like "$RF_OUT" 'certificate expired' "... saying why"
	is "$(($(ncount '"egress.deny"' '"host":"svc.test"' 'certificate expired' '"via":"capture"') - d0))" 1 \
		"... egress.deny recorded, via capture"
else
	for _ in 1 2 3 4 5 6 7 8 9 10 11; do skip "refusals on the captured path" "this build does not capture"; done
fi

# the SNI of a connection to the injection host must name it (no fronting
# through the terminated connection); its upstream, dialled while the
# ClientHello was on its way, is recorded (egress.allow) and closed unused
f0=$(ncount '"egress.deny"' '"sni":"other.test"' 'domain fronting')
a0=$(ncount '"egress.allow"' '"host":"svc.test"' '"proto":"https"')
q0=$(ncount '"egress.request"' '"host":"svc.test"')
er "${INJ[@]}" -- sh -c 'python3 ec.py connect svc.test:443 other.test; python3 ec.py connect svc.test:443 svc.test'
like "$(sed -n 2p <<<"$RF_OUT")" '^tls failed' "CONNECT svc.test:443 with a ClientHello naming other.test: refused"
like "$(sed -n 4p <<<"$RF_OUT")" '^tls ok' "... the control (SNI svc.test) completes its handshake"
is "$(($(ncount '"egress.deny"' '"sni":"other.test"' 'domain fronting') - f0))" 1 \
	"... the refusal recorded: egress.deny, SNI other.test, domain fronting"
is "$(($(ncount '"egress.allow"' '"host":"svc.test"' '"proto":"https"') - a0))" 2 \
	"... both upstreams dialled at CONNECT are recorded (egress.allow)"
is "$(($(ncount '"egress.request"' '"host":"svc.test"') - q0))" 0 "... and no request went up on either"

# another allowed HTTPS host is a blind tunnel: the run's own TLS, end to end
rm -f "$P/tls.log"
t0=$(ncount '"egress.tls"' '"host":"other.test"')
er "${INJ[@]}" -- sh -c 'echo "PH=$TOKEN"; curl -sS -m 10 --cacert testca.pem -H "Authorization: Bearer $TOKEN" \
	https://other.test/blind; echo "rc=$?"'
PHB=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$RF_OUT" 'rc=0' "another allowed HTTPS host (other.test): the run's own handshake with the test CA (a blind tunnel)"
like "$(tlslog)" "Authorization: Bearer $PHB" "... the host received the placeholder (worthless), as the run sent it"
unlike "$(tlslog)" "$VAL" "... never the value"
is "$(($(ncount '"egress.tls"' '"host":"other.test"') - t0))" 0 "... and no egress.tls for it: not terminated"

# ---- the value is nowhere in the run --------------------------------------------------------------
# a run that used the injection (curl; Python requests reading /value, whose
# answer holds the scrubbed value) and then sleeps; the host side reads its
# processes' environments, memory and files
rm -f "$WS/mem-ready" "$WS/mem-done"
RF_WRAP=(unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift &&
	exec nsenter --net=/run/netns/"$0" "$@"' "$CNS" "$TH/resolv.conf")
rf_start -w "$WS" "${INJ[@]}" -- sh -c 'curl -sS -m 10 -H "Authorization: Bearer $TOKEN" https://svc.test/value >/tmp/curl.out
	sleep 120 & python3 -c "
import os, time, urllib.request
import base64
req = urllib.request.Request(\"https://svc.test/value\")
req.add_header(\"Authorization\", \"Bearer \" + os.environ[\"TOKEN\"])
body = urllib.request.urlopen(req, timeout=10).read()
req = urllib.request.Request(\"https://svc.test/basic-echo\")
req.add_header(\"Authorization\", \"Basic \" + base64.b64encode((\"x:\" + os.environ[\"TOKEN\"]).encode()).decode())
body += urllib.request.urlopen(req, timeout=10).read()
open(\"mem-ready\", \"w\").close()
for _ in range(600):
    if os.path.exists(\"mem-done\"):
        break
    time.sleep(0.1)
print(len(body))"; kill $! 2>/dev/null; echo finished'
register_pid "$RF_PID"
RF_WRAP=()
for _ in $(seq 1 400); do [ -e "$WS/mem-ready" ] && break; kill -0 "$RF_PID" 2>/dev/null || break; sleep 0.05; done
pids=""
if [ -e "$WS/mem-ready" ]; then
	run=$("$RF_BIN" ps --state-dir "$RF_STATE" --json | grep -o '"run":"[^"]*"' | head -n 1 | cut -d'"' -f4)
	init=$("$RF_BIN" inspect --state-dir "$RF_STATE" "$run" 2>/dev/null | grep -o '"init_pid":[0-9]*' | cut -d: -f2)
	if [ -n "$init" ] && exec {NSFD}<"/proc/$init/ns/pid"; then
		ns=$(readlink "/proc/$init/ns/pid")
		pat=${ns//\[/\\[}
		pat=${pat//\]/\\]}
		pids=$(find /proc/[0-9]*/ns -maxdepth 1 -name pid -lname "$pat" 2>/dev/null | cut -d/ -f3 | tr '\n' ' ')
	fi
fi
npids=$(wc -w <<<"$pids")
is "$((npids >= 3))" 1 "the sleeping run's processes found by its pid namespace ($npids: $pids)"
envs=""
files=""
for p in $pids; do
	envs+=$(od -An -tx1 "/proc/$p/environ" 2>/dev/null | tr -d ' \n')
done
[ -n "$envs" ] && ok "their environments were read" || not_ok "their environments were read" "pids: $pids"
[[ $envs == *"$HEXVAL"* ]] && not_ok "... and none holds the value" || ok "... and none holds the value"
scan=$(printf '%s' "$VAL" | python3 "$RF_SRC/tests/helpers/memscan.py" $pids 2>&1)
like "$(head -n 1 <<<"$scan")" "^pids=$npids ranges=[1-9][0-9]* bytes=[1-9][0-9]{6,}" "their memory was read from the host side ($(head -n 1 <<<"$scan"))"
if [[ $(head -n 1 <<<"$scan") == *" hits=0 "* ]]; then
	ok "... and holds no value (nor its base64 at any offset)"
else
	not_ok "... and holds no value (nor its base64 at any offset)" "$(head -n 20 <<<"$scan")"
fi
# the scanner's control: the placeholder, which the run does hold, is found
phm=""
for p in $pids; do
	phm=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^TOKEN=//p' | head -n 1)
	[ -n "$phm" ] && break
done
scan=$(printf '%s' "$phm" | python3 "$RF_SRC/tests/helpers/memscan.py" $pids 2>&1)
like "$(head -n 1 <<<"$scan")" ' hits=[1-9]' "control: the same scan finds the placeholder the run holds"
p1=${pids%% *}
if [ -n "$p1" ] && [ -d "/proc/$p1/root/run" ]; then
	ls "/proc/$p1/root$RF_HOME_IN" >/dev/null 2>&1 && home=$RF_HOME_IN || home=/nonexistent
	files=$(cd "/proc/$p1/root" && timeout 60 grep -rlF --devices=skip -e "$VAL" run etc tmp "${home#/}" 2>/dev/null)
	lsd=$(ls "/proc/$p1/root/run/ringfence" "/proc/$p1/root/tmp" 2>&1)
	like "$lsd" 'curl\.out' "the run's files were read from the host side (its /tmp holds curl's output)"
	is "$files" "" "... no file under the run's /run, /etc, /tmp, $home holds the value"
else
	not_ok "the run's files were read from the host side" "no /proc/PID/root/run for '$p1'"
	not_ok "... no file under the run's /run, /etc, /tmp, HOME holds the value"
fi
# the supervisor never maps OpenSSL (a helper makes the run CA: run_tls.c);
# the egress process, which terminates the run's TLS, does (the control)
sup_maps=$(cat "/proc/$RF_PID/maps" 2>/dev/null)
egress_maps=""
for c in $(ps -o pid= --ppid "$RF_PID" 2>/dev/null); do
	[ "$c" = "$init" ] && continue
	egress_maps+=$(cat "/proc/$c/maps" 2>/dev/null)
done
like "$sup_maps" 'ringfence' "the supervisor's mappings were read from the host side"
unlike "$sup_maps" 'libcrypto|libssl|ringfence-tls' "... and hold no OpenSSL and no TLS module"
like "$egress_maps" 'libcrypto' "control: the egress process maps OpenSSL"
[ -n "${NSFD:-}" ] && exec {NSFD}<&-
touch "$WS/mem-done"
rf_wait
like "$RF_OUT" 'finished' "the sleeping run ended normally"
check "the workspace holds no value" sh -c "! grep -rqF -- '$VAL' '$WS'"
unlike "$(records)" "$VAL" "the audit log holds no value"
check "the state dir (audit log, logs, store) holds no value" sh -c "! grep -rqF -- '$VAL' '$RF_STATE'"

done_testing
