#!/usr/bin/env bash
# egress.sh — a run's only way out is its own egress proxy (issue 5).
#
# Setup: two network namespaces of this test, a "client" one where
# ringfence itself runs (entered with nsenter inside `unshare -m`, with a
# resolv.conf naming the test host bound over /etc/resolv.conf) and a test
# host reached over a veth pair, serving HTTP on :8080, a TCP echo on :4443
# and DNS on :53 (tests/helpers/testhost.py). The test host also holds
# 169.254.169.254, so "refused" is observable and a broken proxy still
# reaches nothing but the test host.
#
# Asserts (each refusal for its reason, each with a working control):
# default no egress (403 naming the host and --allow-host); an allowed name
# (--add-host) is reached, with traceparent and baggage naming the run; a
# keep-alive connection checks its second request; Host/target mismatch,
# userinfo and IP literals (any spelling) are refused; a DNS name resolving
# to a private or metadata address is refused unless a CIDR allows it;
# CONNECT to a TLS port with a fronted SNI is refused before any connection
# to the test host, with the right SNI it reaches it; SOCKS5 by name works
# and a denied name gets reply 2; a direct connection bypassing the proxy
# fails (ENETUNREACH: the run's namespace has only loopback); every
# decision is recorded (egress.allow / egress.deny / egress.request) and the
# log verifies; no egress process outlives its run. Also: CONNECT and SOCKS5
# to an IP literal need an IP rule; the allowed address in hex or decimal
# spelling is still refused; CONNECT to the run's own proxy is refused; a
# name with no rule is never looked up; with a rebinding resolver each
# connection dials the address it checked (never the metadata one); a
# baggage naming another run never reaches the host.
#
# The issue 13 cases (HTTP/1.0 clients, refusals, the end-of-run summary,
# plain TCP on a port a rule names) are in egress_compat.sh.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own)"
command -v ip >/dev/null && command -v nsenter >/dev/null && command -v python3 >/dev/null ||
	skip_all "needs ip, nsenter and python3"
new_workspace

# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

# ---- default: no egress --------------------------------------------------------------
EROPTS=()
ec get "http://svc.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 403 Forbidden" "no allow rule: an HTTP request is refused (403)"
like "$RF_OUT" 'egress to svc.test:8080 refused: no allow rule matches' "... the body names the host and why"
like "$RF_OUT" '\-\-allow-host svc.test:8080' "... and how to ask for more"
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" '"host":"svc.test"' "... recorded as egress.deny"
check "... and the test host saw nothing" test ! -e "$TH/http.log"

# ---- an allowed, operator-declared name ---------------------------------------------------
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:8080)
ec get "http://svc.test:8080/hello?x=1"
is "$(first_line "$RF_OUT")" "HTTP/1.1 200 OK" "--add-host + --allow-host: the request goes through (200)"
like "$RF_OUT" 'GET /hello\?x=1 HTTP/1.1' "... forwarded in origin form"
like "$RF_OUT" 'traceparent: 00-[0-9a-f]{32}-[0-9a-f]{16}-01' "... with a traceparent"
like "$RF_OUT" 'baggage: ringfence.run=[0-9a-f-]{36},ringfence.agent=agent' "... and a baggage naming the run"
like "$(records | grep '"event":"egress.allow"' | tail -n 1)" "\"addr\":\"$net.2\"" "egress.allow records the address dialled"
like "$(records | grep '"event":"egress.request"' | tail -n 1)" '"path":"/hello\?x=1"' "egress.request records the path"

a0=$(records | grep -c '"event":"egress.allow"')
q0=$(records | grep -c '"event":"egress.request"')
ec get2 "http://svc.test:8080/a" "http://svc.test:8080/b"
is "$RF_OUT" "HTTP/1.1 200 OK
HTTP/1.1 200 OK" "keep-alive: two requests to the same host"
a1=$(records | grep -c '"event":"egress.allow"')
q1=$(records | grep -c '"event":"egress.request"')
is "$((a1 - a0)):$((q1 - q0))" "1:2" "... one upstream connection (one egress.allow), each request recorded (two egress.request)"
ec get2 "http://svc.test:8080/a" "http://other.test:8080/b"
is "$RF_OUT" "HTTP/1.1 200 OK
HTTP/1.1 403 Forbidden" "keep-alive: the second request, to another host, is checked and refused"

# a method longer than the egress process holds (15 characters) is
# refused, never cut and sent as another method; the longest standard one
# (WebDAV's VERSION-CONTROL, 15) goes through
ec raw-all 'VERSION-CONTROLS http://svc.test:8080/m HTTP/1.1\r\nHost: svc.test:8080\r\n\r\n'
like "$(first_line "$RF_OUT")" "^HTTP/1.1 501 Not Implemented" "a 16-character method: refused (501)"
unlike "$(cat "$TH/http.log" 2>/dev/null)" 'VERSION-CONTRO[^L]|VERSION-CONTROL /m' "... nothing of it reached the host (not cut to 15 and sent)"
ec raw-all 'VERSION-CONTROL http://svc.test:8080/m15 HTTP/1.1\r\nHost: svc.test:8080\r\nConnection: close\r\n\r\n'
like "$RF_OUT" 'VERSION-CONTROL /m15 HTTP/1.1' "... the control: a 15-character one goes through as it is"

ec get "http://svc.test:8080/" "evil.test:8080"
is "$(first_line "$RF_OUT")" "HTTP/1.1 400 Bad Request" "Host header differing from the request target: 400"
ec raw 'GET http://evil.test@svc.test:8080/ HTTP/1.1\r\nHost: svc.test:8080\r\n\r\n'
is "$RF_OUT" "HTTP/1.1 400 Bad Request" "userinfo in the request target: 400"
ec raw 'GET http://svc.test:8080/ HTTP/1.1\r\nHost: svc.test:8080\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
is "$RF_OUT" "HTTP/1.1 400 Bad Request" "Content-Length with Transfer-Encoding: 400"

# ---- IP literals --------------------------------------------------------------------------
EROPTS=(--allow-host svc.test:8080)
ec get "http://$net.2:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 403 Forbidden" "an IP literal without an IP rule: 403"
ec get "http://0x0a.231.${net##*.}.2:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 403 Forbidden" "... in hex spelling too"
EROPTS=(--allow-host "$net.2:8080")
ec get "http://$net.2:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 200 OK" "with an IP rule for it: 200"

# ---- names resolved by the egress process --------------------------------------------------
EROPTS=(--allow-host svc.test:8080)
ec get "http://svc.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 403 Forbidden" "an allowed name that resolves to a private address: 403"
like "$RF_OUT" 'the address is private' "... saying so"
like "$(cat "$TH/dns.log")" 'svc.test' "... (the egress process asked the test's DNS server)"
EROPTS=(--allow-host meta.test:8080)
ec get "http://meta.test:8080/"
like "$RF_OUT" 'the address is metadata' "an allowed name resolving to 169.254.169.254: refused as metadata"
EROPTS=(--allow-host svc.test:8080 --allow-host "$net.0/24:8080")
ec get "http://svc.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 200 OK" "with a CIDR rule covering the address: 200"

# ---- CONNECT and SNI -------------------------------------------------------------------------
# a rule for any port: 4443 is a TLS port (answered first, SNI checked, then dialled)
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test)
rm -f "$TH/tcp.log"
ec connect svc.test:4443 evil.example
like "$(first_line "$RF_OUT")" ' 200 ' "CONNECT to an allowed TLS port: 200"
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" 'domain fronting' "a ClientHello naming another host is refused (domain fronting)"
check "... before any connection to the test host" test ! -e "$TH/tcp.log"
ec connect svc.test:4443 -
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" 'names no server' "a ClientHello without SNI is refused"
ec connect svc.test:4443 svc.test
check "with the matching SNI the test host is reached" test -e "$TH/tcp.log"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test)
ec connect-plain svc.test:4443
is "$RF_OUT" "HTTP/1.1 200 Connection established
closed" "a plain protocol on a TLS port: the tunnel is closed"
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" 'not TLS' "... recorded as not TLS"
cat >"$WS.plain.json" <<JSON
{"version": 1, "network": {"allow": ["svc.test:4443"], "hosts": {"svc.test": "$net.2"}, "plain_ports": [4443]}}
JSON
EROPTS=(-p "$WS.plain.json")
ec connect-plain svc.test:4443
is "$RF_OUT" "HTTP/1.1 200 Connection established
echo ok" "network.plain_ports: a plain tunnel on that port works"

# ---- SOCKS5 -----------------------------------------------------------------------------------
EROPTS=(-p "$WS.plain.json")
ec socks svc.test 4443
is "$RF_OUT" "socks REP=0
echo ok" "SOCKS5 CONNECT by name to an allowed host (a plain port) works"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test)
rm -f "$TH/tcp.log"
ec socks-tls svc.test 4443 evil.example
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" 'domain fronting' "SOCKS5 to a TLS port with another SNI is refused too (domain fronting)"
check "... before any connection to the test host" test ! -e "$TH/tcp.log"
ec socks-tls svc.test 4443 svc.test
check "SOCKS5 with the matching SNI reaches the test host" test -e "$TH/tcp.log"
ec socks other.test 4443
is "$RF_OUT" "socks REP=2" "SOCKS5 to a name without a rule: reply 2 (not allowed by ruleset)"

# ---- IP literals through CONNECT and SOCKS; other spellings; chaining ------------------------
EROPTS=(--allow-host svc.test:4443)
ec connect-plain "$net.2:4443"
is "$RF_OUT" "HTTP/1.1 403 Forbidden" "CONNECT to an IP literal without an IP rule: 403"
ec socks-ip "$net.2" 4443
is "$RF_OUT" "socks REP=2" "SOCKS5 CONNECT to an IPv4 address without an IP rule: reply 2"
cat >"$WS.ip.json" <<JSON
{"version": 1, "network": {"allow": ["$net.2:4443", "$net.2:8080"], "plain_ports": [4443]}}
JSON
EROPTS=(-p "$WS.ip.json")
ec connect-plain "$net.2:4443"
is "$RF_OUT" "HTTP/1.1 200 Connection established
echo ok" "control: with an IP rule the same CONNECT tunnels"
ec socks-ip "$net.2" 4443
is "$RF_OUT" "socks REP=0
echo ok" "control: ... and so does the SOCKS5 CONNECT"
rm -f "$TH/http.log"
ec get "http://0x0a.231.${net##*.}.2:8080/"
like "$(first_line "$RF_OUT")" '^HTTP/1.1 40[03] ' "the allowed address in hex spelling is still refused"
dec=$(( (10 << 24) + (231 << 16) + (${net##*.} << 8) + 2 ))
ec get "http://$dec:8080/"
like "$(first_line "$RF_OUT")" '^HTTP/1.1 40[03] ' "... and in decimal spelling ($dec)"
ec get "http://$net.2:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 200 OK" "control: the canonical spelling is allowed"
is "$(grep -c '^GET ' "$TH/http.log" 2>/dev/null)" 1 "... and only it reached the test host"
EROPTS=(--allow-host svc.test:4443)
ec connect-plain 127.0.0.1:3128
is "$RF_OUT" "HTTP/1.1 403 Forbidden" "chaining: CONNECT to the run's own proxy (127.0.0.1:3128) is refused"

# ---- DNS: a denied name is never looked up; a rebinding resolver ---------------------------------
EROPTS=()
ec get "http://exfil-$id.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 403 Forbidden" "a name with no rule: 403"
unlike "$(cat "$TH/dns.log" 2>/dev/null)" "exfil-$id" "... and it was never looked up (no DNS query carries it)"
# rebind.test answers the test host, then 169.254.169.254, in turn: each
# connection dials exactly the address it checked, never the metadata one
EROPTS=(--allow-host rebind.test:8080 --allow-host "$net.0/24:8080")
ok200=0 meta=0 other=0
for _ in 1 2 3 4; do
	ec get "http://rebind.test:8080/"
	case $(first_line "$RF_OUT") in
	"HTTP/1.1 200 OK") ok200=$((ok200 + 1)) ;;
	*) if grep -q 'the address is metadata' <<<"$RF_OUT"; then meta=$((meta + 1)); else other=$((other + 1)); fi ;;
	esac
done
if [ "$ok200" -ge 1 ] && [ "$meta" -ge 1 ] && [ "$other" = 0 ]; then
	ok "a rebinding resolver: answered with the test host ($ok200×, 200) and the metadata address ($meta×, refused), nothing else"
else
	not_ok "a rebinding resolver: both answers seen, each handled" "200: $ok200, metadata: $meta, other: $other"
fi
allows=$(records | grep '"event":"egress.allow"' | grep '"host":"rebind.test"')
is "$(grep -c . <<<"$allows")" "$ok200" "... one egress.allow per 200"
unlike "$allows" '169\.254\.169\.254' "... and none of them dialled the metadata address"

# ---- the run's identity on the wire cannot be forged -------------------------------------------
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:8080)
fake=00000000-0000-0000-0000-000000000000
ec raw-all "GET http://svc.test:8080/id HTTP/1.1\r\nHost: svc.test:8080\r\nbaggage: ringfence.run=$fake,ringfence.agent=root\r\ntraceparent: 00-0123456789abcdef0123456789abcdef-0123456789abcdef-01\r\nConnection: close\r\n\r\n"
run=$(records | grep '"event":"egress.request"' | grep '"path":"/id"' | tail -n 1 | grep -o '"run":"[^"]*"' | cut -d'"' -f4)
unlike "$RF_OUT" "ringfence.run=$fake" "a baggage naming another run does not reach the host"
like "$RF_OUT" "baggage: ringfence.run=$run,ringfence.agent=agent" "... the run's own id and agent do"
is "$(grep -c 'ringfence.run=' <<<"$RF_OUT")" 1 "... once"
like "$RF_OUT" 'traceparent: 00-0123456789abcdef0123456789abcdef-[0-9a-f]{16}-01' "the run's traceparent is the parent (its trace id kept)"
unlike "$RF_OUT" 'traceparent: 00-0123456789abcdef0123456789abcdef-0123456789abcdef-01' "... with a new span id"

# ---- bypassing the proxy ------------------------------------------------------------------------
EROPTS=()
ec direct "$net.2" 8080
is "$RF_OUT" "errno=ENETUNREACH" "a direct connection bypassing the proxy: ENETUNREACH"
out=$(ip netns exec "$CNS" python3 "$WS/ec.py" direct "$net.2" 8080)
is "$out" "connected" "control: from the client namespace itself (no sandbox) it connects"

# ---- limits ----------------------------------------------------------------------------------
cat >"$WS.limits.json" <<JSON
{"version": 1, "network": {"allow": ["svc.test:4443"], "hosts": {"svc.test": "$net.2"}, "plain_ports": [4443]},
 "limits": {"egress_bytes": "64k"}}
JSON
EROPTS=(-p "$WS.limits.json")
er "${EROPTS[@]}" -- python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT svc.test:4443 HTTP/1.1\r\nHost: svc.test:4443\r\n\r\n')
head = b''
while not head.endswith(b'\r\n\r\n'):
    head += s.recv(1)
sent = 0
try:
    while sent < 1 << 20:
        s.sendall(b'x' * 4096)
        sent += 4096
        s.recv(65536)
except OSError:
    pass
print('sent', sent)
"
sent=$(printf '%s\n' "$RF_OUT" | awk '/^sent/ {print $2}')
[ -n "$sent" ] && [ "$sent" -lt 1048576 ] && cut=1 || cut=0
is "$cut" 1 "limits.egress_bytes 64k: the tunnel is cut before 1 MiB ($sent bytes)"
like "$(records | grep '"event":"egress.limit"' | tail -n 1)" '"limit":"egress_bytes"' "... recorded as egress.limit"

# ---- the egress process is locked down -------------------------------------------------------
# (it starts with the run's first connection; this run makes one, then waits)
rm -f "$WS/stop"
unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift &&
	exec nsenter --net=/run/netns/"$0" "$@"' "$CNS" "$TH/resolv.conf" \
	"$RF_BIN" run --state-dir "$RF_STATE" -w "$WS" -- sh -c "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 3128))'; while [ ! -e '$WS/stop' ]; do sleep 0.05; done" \
	</dev/null >/dev/null 2>&1 &
sup=$!
register_pid "$sup"
eg=""
for _ in $(seq 1 100); do
	for k in $(cat /proc/"$sup"/task/*/children 2>/dev/null); do
		grep -q '^Uid:.*65534' /proc/"$k"/status 2>/dev/null && eg=$k
	done
	[ -n "$eg" ] && break
	sleep 0.05
done
if [ -n "$eg" ]; then
	st=$(cat /proc/"$eg"/status)
	like "$st" 'Seccomp:[[:space:]]+2' "the egress process runs under a seccomp filter"
	like "$st" 'NoNewPrivs:[[:space:]]+1' "... with no_new_privs"
	like "$st" 'CapEff:[[:space:]]+0000000000000000' "... without capabilities"
	like "$st" 'CapBnd:[[:space:]]+0000000000000000' "... even in its bounding set"
	is "$(ls /proc/"$eg"/fd | wc -l)" 4 "... holding exactly four fds (two listeners, its event channel, its epoll)"
	like "$(cat /proc/"$eg"/cgroup)" 'ringfence-[0-9a-f-]{36}' "... inside the run's cgroup (its memory and pids count as the run's)"
else
	ok 0 "the egress process (uid nobody) was found"
fi
touch "$WS/stop"
wait "$sup" 2>/dev/null
check "when the run ends its egress process is gone" test ! -e "/proc/$eg/status"

"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "the audit log with every egress decision verifies"
left=$(ps -eo pid,args | grep -c "[r]ingfence run --state-dir $RF_STATE")
is "$left" 0 "no ringfence or egress process of these runs is left"

rm -f "$WS.plain.json" "$WS.limits.json" "$WS.err" "$WS/stop"
done_testing
