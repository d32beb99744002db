#!/usr/bin/env bash
# egress_compat.sh — proxy compatibility and refusals that say the right
# thing (issue 13, section 3), on the network of egress.sh
# (tests/helpers/egress-net.bash).
#
# HTTP/1.0 clients (Python 3.11's urllib through HTTPS_PROXY,
# socat's PROXY:, raw 1.0 CONNECT and absolute form) work, and a parse
# error never hints "--allow-host :0"; refusals say the resolver's answer
# (NXDOMAIN, SERVFAIL, no answer: 502), a private/reserved address of an
# allowed name (403 naming it and both fixes), an upstream that refuses
# (502) or never answers (504), never suggesting a rule already in force;
# a run with refusals ends with one stderr summary (counts, flags, escaped
# SOCKS5 names, "and N more"), none with --quiet or without refusals; a
# rule naming its port lets plain TCP through CONNECT and SOCKS5 (a server
# that speaks first too) while a ClientHello on it must still name the host
# (no byte of a fronted one reaches the server) and 443 stays TLS-only.
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

# ---- issue 13: HTTP/1.0 clients (Python <= 3.11, socat PROXY:) ----------------------------------
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:5432)
ec raw 'CONNECT svc.test:5432 HTTP/1.0\r\n\r\n'
is "$RF_OUT" "HTTP/1.1 200 Connection established" "CONNECT host:port HTTP/1.0 (Python <= 3.11, socat): 200"
ec raw 'CONNECT svc.test:5432 HTTP/1.2\r\n\r\n'
is "$RF_OUT" "HTTP/1.1 400 Bad Request" "control: HTTP/1.2 is still refused (400)"
ec raw-all 'GET http://svc.test:8080/ HTTP/1.2\r\nHost: svc.test:8080\r\n\r\n'
like "$RF_OUT" 'ringfence: request refused: HTTP version other than 1.1 or 1.0' "... its body says why"
unlike "$RF_OUT" 'allow-host|\?:0' "... with no --allow-host hint (never \"--allow-host :0\")"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:8080)
rm -f "$TH/http.log"
ec raw-all 'GET http://svc.test:8080/ten HTTP/1.0\r\n\r\n'
like "$(first_line "$RF_OUT")" '^HTTP/1.1 200 OK' "an HTTP/1.0 absolute-form request without Host: 200"
like "$(cat "$TH/http.log")" 'GET /ten HTTP/1.0' "... forwarded as HTTP/1.0 (no chunked answer a 1.0 client cannot read)"
like "$(cat "$TH/http.log")" 'Host: svc.test:8080' "... with a Host header made from its target"

if [ -e "$TH/cert.pem" ]; then
	pyv=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:8443)
	ec_py() { er "${EROPTS[@]}" -- python3 -c "
import ssl, sys, urllib.request
try:
    r = urllib.request.urlopen(sys.argv[1], context=ssl._create_unverified_context(), timeout=10)
    print(r.status)
    print(r.read().decode())
except OSError as e:
    print('error', e)
" "$1"; }
	ec_py "https://svc.test:8443/py"
	is "$(first_line "$RF_OUT")" 200 "python3 $pyv urllib through HTTPS_PROXY (CONNECT ... HTTP/1.0) to an allowed host: 200"
	like "$RF_OUT" 'GET /py HTTP/1.1' "... the request went through the TLS tunnel"
	ec_py "https://other.test:8443/py"
	like "$RF_OUT" 'Tunnel connection failed: 403 Forbidden' "... to a host without a rule: the client sees the 403"
	like "$(records | grep '"event":"egress.deny"' | tail -n 1)" '"host":"other.test".*no allow rule matches' "... recorded with its reason"
else
	skip "urllib through HTTPS_PROXY" "no openssl to make the test host's certificate"
	skip "... the request went through" "no openssl"
	skip "... to a host without a rule" "no openssl"
	skip "... recorded with its reason" "no openssl"
fi

if command -v socat >/dev/null; then
	EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:5432)
	er "${EROPTS[@]}" -- sh -c 'echo ping | socat -t 2 - PROXY:127.0.0.1:svc.test:5432,proxyport=3128 2>&1'
	is "$RF_OUT" "ping" "socat PROXY: (HTTP/1.0 CONNECT) to an allowed host:port: the line echoes"
	er "${EROPTS[@]}" -- sh -c 'echo ping | socat -t 2 - PROXY:127.0.0.1:other.test:5432,proxyport=3128 2>&1; echo "exit $?"'
	like "$RF_OUT" 'CONNECT other.test:5432: Forbidden' "socat PROXY: to a denied host: refused (403 Forbidden)"
	like "$RF_OUT" 'exit [1-9]' "... and socat fails"
	like "$(records | grep '"event":"egress.deny"' | tail -n 1)" '"host":"other.test".*no allow rule matches' "... recorded with its reason"
else
	skip "socat PROXY: to an allowed host" "socat is not installed (scripts/deps.sh installs it)"
	skip "socat PROXY: to a denied host" "no socat"
	skip "... and socat fails" "no socat"
	skip "... recorded with its reason" "no socat"
fi

# ---- issue 13: refusals that say the right thing -----------------------------------------------
EROPTS=(--allow-host nx.test:8080)
ec get "http://nx.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 502 Bad Gateway" "an allowed name that does not resolve: 502"
like "$RF_OUT" 'the name does not resolve: NXDOMAIN' "... naming the resolver's answer (NXDOMAIN)"
unlike "$RF_OUT" 'allow-host' "... never suggesting --allow-host (the rule is in force)"
EROPTS=(--allow-host sf.test:8080)
ec get "http://sf.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 502 Bad Gateway" "a name whose resolver fails: 502"
like "$RF_OUT" 'the name does not resolve: SERVFAIL' "... naming SERVFAIL"
EROPTS=(--allow-host slowdns.test:8080)
ec get "http://slowdns.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 502 Bad Gateway" "a name the resolver never answers: 502"
like "$RF_OUT" 'the name does not resolve: no answer \(timeout\)' "... saying it timed out"
EROPTS=(--allow-host svc.test:8080)
ec get "http://svc.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 403 Forbidden" "an allowed name resolving to a private address: 403"
like "$RF_OUT" "the address is private \\($net.2\\)" "... naming the address"
like "$RF_OUT" "run with --allow-host $net.2:8080 or --add-host svc.test:$net.2" "... and both fixes"
unlike "$RF_OUT" 'allow-host svc.test' "... never the rule already in force (--allow-host svc.test:8080)"
EROPTS=(--allow-host doc.test:8080)
ec get "http://doc.test:8080/"
like "$RF_OUT" 'the address is reserved \(192.0.2.10\).*--allow-host 192.0.2.10:8080 or --add-host doc.test:192.0.2.10' "a documentation address (192.0.2.10): 403 naming it and both fixes"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:9)
ec get "http://svc.test:9/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 502 Bad Gateway" "an allowed upstream that refuses the connection: 502"
like "$RF_OUT" "the upstream $net.2:9 refused the connection" "... naming it"
unlike "$RF_OUT" 'allow-host|add-host' "... with no flag to suggest"
ec socks svc.test 9
is "$RF_OUT" "socks REP=5" "... through SOCKS5: reply 5 (connection refused)"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:8082)
ec get "http://svc.test:8082/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 504 Gateway Timeout" "an allowed upstream that never answers: 504"
like "$RF_OUT" "the upstream $net.2:8082 did not answer \\(connect timed out\\)" "... naming it"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:8080)
ec get "http://svc.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 200 OK" "control: the same host on its serving port: 200"

# ---- issue 13: one summary of the refusals at the end of the run --------------------------------
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:8080)
twice="python3 $WS/ec.py get http://other.test:8080/ && python3 $WS/ec.py get http://other.test:8080/ &&
	python3 $WS/ec.py socks evil.test 443 && python3 $WS/ec.py get http://svc.test:8080/"
er "${EROPTS[@]}" -- sh -c "$twice"
like "$RF_OUT" '200 OK' "control: the run's allowed request went through"
like "$RF_ERR" 'ringfence: egress refused 3 times during the run' "a run with refusals: a summary on stderr"
like "$RF_ERR" 'other.test:8080  2x  no allow rule matches \(default: no egress\)  -> --allow-host other.test:8080' "... destination, count, reason and the flag"
like "$RF_ERR" 'evil.test:443  1x  no allow rule matches.*-> --allow-host evil.test:443' "... for SOCKS5 too"
is "$(grep -c 'egress refused' <<<"$RF_ERR")" 1 "... once"
d0=$(records | grep -c '"event":"egress.deny"')
er --quiet "${EROPTS[@]}" -- sh -c "$twice"
unlike "$RF_ERR" 'egress refused' "--quiet: no summary"
d1=$(records | grep -c '"event":"egress.deny"')
check "... though the run was refused (egress.deny records: $d0 -> $d1)" test "$d1" -gt "$d0"
er "${EROPTS[@]}" -- python3 "$WS/ec.py" get "http://svc.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 200 OK" "a run without refusals (control: 200) ..."
unlike "$RF_ERR" 'egress refused' "... prints no summary"
er "${EROPTS[@]}" -- python3 "$WS/ec.py" socks $'\e]0;pwned\a\e[2Jx.test' 443
like "$RF_ERR" '\\u001b\]0;pwned\\u0007\\u001b\[2Jx.test:443' "a SOCKS5 name with ESC sequences is escaped in the summary"
is "$(tr -cd '\033\007' <<<"$RF_ERR" | wc -c)" 0 "... no raw ESC or BEL reaches the terminal"
er "${EROPTS[@]}" -- python3 "$WS/ec.py" socks $'bad\xff\xfe.test' 443
is "$RF_OUT" "socks REP=2" "a SOCKS5 name that is not UTF-8: refused (reply 2)"
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" '"host":"bad\\\\xff\\\\xfe.test"' "... and recorded (its bytes as \\xNN), not lost"
like "$RF_ERR" 'bad\\\\xff\\\\xfe.test:443  1x' "... and in the summary"
er "${EROPTS[@]}" -- python3 "$WS/ec.py" socks-many 20 many.test
like "$RF_ERR" 'egress refused 20 times' "20 refused destinations: counted"
is "$(grep -c 'many.test:443  1x' <<<"$RF_ERR")" 16 "... 16 of them listed"
like "$RF_ERR" 'and 4 more refusals of 4 other destinations' "... then \"and 4 more\""

# ---- issue 13: a rule naming its port allows plain TCP (TLS still SNI-checked) ----------------
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:5432)
ec connect-plain svc.test:5432
is "$RF_OUT" "HTTP/1.1 200 Connection established
echo ok" "--allow-host svc.test:5432: plain TCP through CONNECT works (no network.plain_ports)"
ec socks svc.test 5432
is "$RF_OUT" "socks REP=0
echo ok" "... and through SOCKS5"
ec connect-plain svc.test:4443
is "$RF_OUT" "HTTP/1.1 403 Forbidden" "... a port the rule does not name: 403"
ec socks svc.test 4443
is "$RF_OUT" "socks REP=2" "... through SOCKS5: reply 2"
rm -f "$TH/plain.log"
ec connect svc.test:5432 evil.example
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" 'domain fronting.*"sni":"evil.example"' "a ClientHello naming another host on that port is refused (domain fronting)"
unlike "$(cat "$TH/plain.log" 2>/dev/null)" 'data' "... and none of its bytes reached the server"
rm -f "$TH/plain.log"
ec socks-tls svc.test 5432 evil.example
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" 'domain fronting.*"sni":"evil.example"' "... through SOCKS5 too"
unlike "$(cat "$TH/plain.log" 2>/dev/null)" 'data' "... none of its bytes reached the server"
ec connect svc.test:5432 svc.test
like "$(cat "$TH/plain.log" 2>/dev/null)" 'data' "control: a ClientHello naming the host passes to the server"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:2525)
ec connect-banner svc.test:2525
is "$RF_OUT" "HTTP/1.1 200 Connection established
220 banner" "a server that speaks first (SMTP, MySQL) reaches the client through CONNECT"
ec socks-banner svc.test 2525
is "$RF_OUT" "socks REP=0
220 banner" "... and SOCKS5"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:443)
ec connect-plain svc.test:443
is "$RF_OUT" "HTTP/1.1 200 Connection established
closed" "--allow-host svc.test:443: a plain protocol on 443 is still closed"
like "$(records | grep '"event":"egress.deny"' | tail -n 1)" '"port":443.*not TLS' "... recorded as not TLS"

"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "the audit log with every refusal verifies"

rm -f "$WS.err"
done_testing
