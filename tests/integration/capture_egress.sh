#!/usr/bin/env bash
# capture_egress.sh — transparent egress (issue 14): clients that ignore
# the proxy, run with every proxy variable removed, reach what the run is
# allowed through the captured path, and nothing else.
#
# Setup: the network of egress.sh (tests/helpers/egress-net.bash): a
# client namespace where ringfence runs and a test host over a veth
# (HTTP :8080, TLS :8443, TCP echo :4443, line echo :5432, banner :2525,
# DNS :53 naming svc.test, meta.test = 169.254.169.254, ...). The run's
# resolver hands out pool addresses (198.18.0.0/15) for allowed names; its
# ruleset redirects TCP to them (and to allowed CIDRs) to the egress
# process, which decides each connection as a connection to the name.
#
# Asserts (each refusal for its reason, next to a working control):
# curl and wget over http and https to an allowed name; a raw Python
# socket; an HTTP request through the captured path is stamped
# (traceparent) and recorded with via=capture; TLS naming another server
# (SNI fronting) gets a TLS alert (access denied) and the test host sees
# nothing; a Host header naming another destination gets a 403; an IP
# literal no rule allows is reset by the ruleset (ECONNREFUSED), one a
# CIDR rule allows is served; a pool address the resolver never handed
# out, the run's own address and the capture listener itself
# (127.0.0.1:3129) are reset after accept (ECONNRESET); an allowed name
# answering a metadata address is refused; a port no rule allows for an
# allowed name, refused at accept, answers every one of 10 requests of raw
# sockets, curl and Node fetch with the 403 and its hint and every one of
# 10 TLS handshakes with an alert (the refusal waits briefly for the first
# bytes), a silent client with a reset; plain TCP to a name:port a rule
# names works (a client-first echo, a server-first banner, ssh-keyscan and
# ssh to a test sshd on :22) and to a port no rule names is reset before
# anything reaches the test host; a client waiting for a banner where the
# name is allowed without a port (TLS and HTTP only) is reset within its
# own 10 s timeout (the short first-bytes deadline), with the banner as
# the control once a rule names the port; every refusal is an egress.deny
# record.
#
# Skipped when the run holds no pool address (capture not built in, or
# the policy's network.capture is "proxy-only").
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
cp "$RF_SRC/tests/helpers/capture-client.py" "$WS/cc.py"
[ -e "$TH/cert.pem" ] && cp "$TH/cert.pem" "$WS/cert.pem"

NOPROXY=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
	-u NO_PROXY -u no_proxy)
# explicit-port rules first: the first allow rule matching a name decides
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:5432 --allow-host svc.test:2525
	--allow-host svc.test:22 --allow-host svc.test --allow-host meta.test)
cc() { er "${EROPTS[@]}" -- "${NOPROXY[@]}" python3 "$WS/cc.py" "$@"; }
last_deny() { records | grep '"event":"egress.deny"' | tail -n 1; }

cc pool
[ "$RF_OUT" = yes ] ||
	skip_all "the run holds no pool address 198.18.0.1 (no transparent capture here: $RF_OUT)"

# ---- clients that ignore the proxy, to an allowed name ----------------------------------------
if command -v curl >/dev/null; then
	er "${EROPTS[@]}" -- "${NOPROXY[@]}" curl -sS -m 10 "http://svc.test:8080/c1"
	like "$RF_OUT" 'GET /c1 HTTP/1.1' "curl without a proxy: http to an allowed name is served"
	like "$RF_OUT" 'traceparent: 00-[0-9a-f]{32}-[0-9a-f]{16}-01' "... stamped with a traceparent"
	like "$RF_OUT" 'baggage: ringfence.run=' "... and the run's baggage"
	like "$(records | grep '"event":"egress.request"' | tail -n 1)" '"path":"/c1".*"via":"capture"' \
		"... recorded as egress.request with via=capture"
	if [ -e "$WS/cert.pem" ]; then
		er "${EROPTS[@]}" -- "${NOPROXY[@]}" curl -sS -m 10 --cacert "$WS/cert.pem" "https://svc.test:8443/c2"
		like "$RF_OUT" 'GET /c2 HTTP/1.1' "curl without a proxy: https to an allowed name is served"
	else
		skip "curl https" "no openssl to make the test host's certificate"
	fi
else
	skip "curl http" "curl is not installed"
	skip "... stamped" "no curl"
	skip "... baggage" "no curl"
	skip "... recorded" "no curl"
	skip "curl https" "no curl"
fi
if command -v wget >/dev/null; then
	er "${EROPTS[@]}" -- "${NOPROXY[@]}" wget -q -O- -T 10 "http://svc.test:8080/w1"
	like "$RF_OUT" 'GET /w1 HTTP/1.1' "wget without a proxy: http to an allowed name is served"
	if [ -e "$WS/cert.pem" ]; then
		er "${EROPTS[@]}" -- "${NOPROXY[@]}" wget -q -O- -T 10 --ca-certificate="$WS/cert.pem" \
			"https://svc.test:8443/w2"
		like "$RF_OUT" 'GET /w2 HTTP/1.1' "wget without a proxy: https to an allowed name is served"
	else
		skip "wget https" "no openssl"
	fi
else
	skip "wget http" "wget is not installed"
	skip "wget https" "no wget"
fi
cc http svc.test 8080 svc.test:8080
is "$RF_OUT" "HTTP/1.1 200 OK" "a raw Python socket: an HTTP request to an allowed name (200)"

# ---- what the stream may carry ------------------------------------------------------------------
if [ -e "$WS/cert.pem" ]; then
	cc tls svc.test 8443 svc.test "$WS/cert.pem"
	is "$RF_OUT" "tls ok" "control: TLS naming the name the run resolved completes"
	n0=$(grep -c . "$TH/http.log" 2>/dev/null)
	cc tls svc.test 8443 other.test "$WS/cert.pem"
	like "$RF_OUT" 'tls alert .*ACCESS_DENIED' "SNI fronting (other.test on svc.test's address): a TLS alert, access denied"
	like "$(last_deny)" 'domain fronting.*"sni":"other.test".*"via":"capture"' "... recorded as egress.deny (domain fronting)"
	is "$(grep -c . "$TH/http.log" 2>/dev/null)" "$n0" "... and nothing reached the test host"
else
	skip "TLS control" "no openssl"
	skip "SNI fronting" "no openssl"
	skip "... recorded" "no openssl"
	skip "... nothing reached" "no openssl"
fi
cc http svc.test 8080 meta.test:8080
is "$RF_OUT" "HTTP/1.1 403 Forbidden" "a Host header naming another destination: 403"
like "$(last_deny)" 'names another destination.*"via":"capture"' "... recorded as egress.deny"

# ---- addresses ------------------------------------------------------------------------------------
cc http "$net.2" 8080 "$net.2:8080"
is "$RF_OUT" "errno=ECONNREFUSED" "an IP literal no rule allows: reset by the ruleset (ECONNREFUSED)"
er --add-host "svc.test:$net.2" --allow-host "$net.2:8080" -- "${NOPROXY[@]}" \
	python3 "$WS/cc.py" http "$net.2" 8080 "$net.2:8080"
is "$RF_OUT" "HTTP/1.1 200 OK" "control: the same literal with a CIDR/IP rule is served"
cc wait 198.18.77.77 8080
is "$RF_OUT" "errno=ECONNRESET" "a pool address the resolver never handed out: reset after accept (ECONNRESET)"
like "$(last_deny)" "not an address this run's resolver handed out" "... recorded with its reason"
cc wait 198.18.0.1 8080
is "$RF_OUT" "errno=ECONNRESET" "the run's own pool address: reset"
cc wait 127.0.0.1 3129
is "$RF_OUT" "errno=ECONNRESET" "a direct connection to the capture listener: reset"
like "$(last_deny)" "the egress process's own listener" "... recorded as such"
cc wait meta.test 8080
is "$RF_OUT" "errno=ECONNRESET" "an allowed name answering the metadata address: refused (reset)"
like "$(last_deny)" '"host":"meta.test".*the address is metadata' "... recorded: the address is metadata"

# ---- refused at accept: the answer fits what the client speaks ----------------------------------
# a port no rule allows for an allowed name (and a pool address never
# handed out) is refused the moment the connection is accepted, before the
# client's first bytes are in; the egress process waits briefly for them,
# so every HTTP request gets its 403 with the hint and every ClientHello
# its alert, whoever was first; a client that sends nothing gets the reset
ACC=(--add-host "svc.test:$net.2" --allow-host svc.test:8080)
hint403='^HTTP/1\.1 403 Forbidden \| ringfence: egress to svc\.test:8081 refused: no allow rule matches.* run with --allow-host svc\.test:8081\.$'
er "${ACC[@]}" -- "${NOPROXY[@]}" python3 "$WS/cc.py" repeat 10 http-body svc.test 8081 svc.test:8081
is "$(grep -cE "$hint403" <<<"$RF_OUT")" 10 \
	"10 raw HTTP requests to an allowed name on a port no rule allows: 10 × 403 with the hint ($(sort <<<"$RF_OUT" | uniq -c | head -n 3 | tr -s ' \n' ' '))"
if command -v curl >/dev/null; then
	er "${ACC[@]}" -- "${NOPROXY[@]}" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do
		curl -sS -m 10 http://svc.test:8081/c 2>&1 | tr "\n" " "; echo; done'
	is "$(grep -c 'To allow it, add "svc.test:8081" to network.allow in the run.s policy, or run with --allow-host svc.test:8081\.' <<<"$RF_OUT")" 10 \
		"10 curl requests there: 10 × the 403's body with the hint ($(sort <<<"$RF_OUT" | uniq -c | head -n 3 | tr -s ' \n' ' '))"
else
	skip "curl to an unallowed port" "curl is not installed"
fi
if command -v node >/dev/null; then
	er "${ACC[@]}" -- "${NOPROXY[@]}" node -e '
(async () => { for (let i = 0; i < 10; i++) {
  try { const r = await fetch("http://svc.test:8081/n" + i); const t = await r.text();
        console.log(r.status, t.includes("run with --allow-host svc.test:8081.") ? "hint" : "no hint");
  } catch (e) { console.log("error", e.cause ? e.cause.code : e); } } })();'
	is "$(grep -cx '403 hint' <<<"$RF_OUT")" 10 \
		"10 Node fetches there: 10 × 403 with the hint ($(sort <<<"$RF_OUT" | uniq -c | tr -s ' \n' ' '))"
else
	skip "Node fetch to an unallowed port" "node is not installed"
fi
if [ -e "$WS/cert.pem" ]; then
	er "${ACC[@]}" -- "${NOPROXY[@]}" python3 "$WS/cc.py" repeat 10 tls svc.test 8444 svc.test "$WS/cert.pem"
	is "$(grep -c 'tls alert .*ACCESS_DENIED' <<<"$RF_OUT")" 10 \
		"10 TLS handshakes there: 10 × a TLS alert, access denied ($(sort <<<"$RF_OUT" | uniq -c | tr -s ' \n' ' '))"
else
	skip "TLS to an unallowed port" "no openssl"
fi
er "${ACC[@]}" -- "${NOPROXY[@]}" python3 "$WS/cc.py" wait svc.test 8081
is "$RF_OUT" "errno=ECONNRESET" "... a client there that sends nothing: reset"
like "$(last_deny)" '"fix":"--allow-host svc.test:8081","host":"svc.test","port":8081,.*"reason":"no allow rule matches' \
	"... recorded with its reason and the fix"

# ---- plain TCP --------------------------------------------------------------------------------------
cc tcp svc.test 5432 'ping\n'
is "$RF_OUT" "ping" "plain TCP to a name:port a rule names: the line echoes"
cc wait svc.test 2525
like "$RF_OUT" '^220' "plain TCP, a server that speaks first: its banner arrives before the client sends"
# the same client where the name is allowed without a port (TLS and HTTP
# only there): its wait for the banner ends in a reset once the short
# first-bytes deadline passes, well within the client's own 10 s timeout
# (which would print "error timed out"), never after 30 s or 60 s
er --add-host "svc.test:$net.2" --allow-host svc.test -- "${NOPROXY[@]}" python3 "$WS/cc.py" wait svc.test 2525
is "$RF_OUT" "errno=ECONNRESET" "a server that speaks first, to a name allowed without a port (no plain TCP): reset within the client's 10 s timeout"
like "$(last_deny)" '"fix":"--allow-host svc.test:2525 [^"]*","host":"svc.test","port":2525,.*"reason":"[^"]*sent nothing[^"]*plain TCP' \
	"... recorded: nothing sent, plain TCP needs a rule naming the port (the fix)"
er --add-host "svc.test:$net.2" --allow-host svc.test:2525 -- "${NOPROXY[@]}" python3 "$WS/cc.py" wait svc.test 2525
like "$RF_OUT" '^220' "control: with --allow-host svc.test:2525 the same client gets the banner"
rm -f "$TH/tcp.log"
cc tcp svc.test 4443 'ping\n'
is "$RF_OUT" "errno=ECONNRESET" "plain TCP to a port no rule names (svc.test allows any port for TLS/HTTP): reset"
like "$(last_deny)" 'plain TCP needs a rule naming the port' "... recorded with the fix"
check "... and the test host saw no connection" test ! -e "$TH/tcp.log"

# ---- ssh to an allowed name:22 (a test sshd on the test host; both sides send their banner) -----
if [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null && command -v ssh-keyscan >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -f "$TH/hk" || bail_out "ssh-keygen failed"
	# its privilege separation directory on a tmpfs of its own mount namespace
	# shellcheck disable=SC2016
	ip netns exec "$HNS" unshare -m sh -c 'mount -t tmpfs tmpfs /run && mkdir /run/sshd &&
		exec /usr/sbin/sshd -D -e -f /dev/null -o ListenAddress="$0":22 -o HostKey="$1" \
		-o PidFile=none' "$net.2" "$TH/hk" 2>"$TH/sshd.log" &
	register_pid $!
	for _ in $(seq 1 100); do
		ip netns exec "$HNS" ss -ltn 2>/dev/null | grep -q "$net.2:22 " && break
		sleep 0.05
	done
	er "${EROPTS[@]}" -- "${NOPROXY[@]}" ssh-keyscan -T 5 -t ed25519 svc.test
	is "$(awk '{print $2, $3}' <<<"$RF_OUT")" "$(awk '{print $1, $2}' "$TH/hk.pub")" \
		"ssh-keyscan to an allowed name:22: the test sshd's host key (the SSH handshake went through)"
	er "${EROPTS[@]}" -- "${NOPROXY[@]}" ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no \
		-o UserKnownHostsFile=/dev/null -o ConnectTimeout=5 nobody@svc.test true
	like "$RF_ERR$RF_OUT" 'Permission denied \(publickey' "ssh to an allowed name:22: key exchange done, authentication refused by the server"
	like "$(records | grep '"event":"egress.allow"' | tail -n 1)" '"port":22.*"via":"capture"' "... recorded as egress.allow via capture"
else
	skip "ssh-keyscan" "no sshd (Debian openssh-server) or ssh-keygen"
	skip "ssh" "no sshd"
	skip "... recorded" "no sshd"
fi

# rootless: a run started by uid 65534 (no capability outside; its init
# commits the ruleset inside the run's own user and network namespaces)
# captures the same way: the allowed name is served, another refused
UWS=$(mktemp -d /tmp/rf-cap-user.$$.XXXXXX) && USTATE=$UWS.state && mkdir -p "$USTATE" ||
	bail_out "cannot make the rootless workspace"
cp "$WS/cc.py" "$UWS/cc.py"
chown -R 65534:65534 "$UWS" "$USTATE"
chmod 0755 "$UWS"
# ur ARGS... — er, as uid 65534 with no capabilities
ur() {
	RF_OUT=$(unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift &&
		exec nsenter --net=/run/netns/"$0" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$@"' "$CNS" "$TH/resolv.conf" \
		"$RF_BIN" run --state-dir "$USTATE" -w "$UWS" "$@" 2>"$UWS.err" </dev/null)
	RF_RC=$?
	RF_ERR=$(cat "$UWS.err")
}
ur --add-host "svc.test:$net.2" --allow-host svc.test:8080 -- "${NOPROXY[@]}" python3 "$UWS/cc.py" pool
if [ "$RF_OUT" != yes ]; then
	skip "rootless capture (3 cases)" "a rootless run cannot start here: ${RF_ERR##*$'\n'}"
else
	ur --add-host "svc.test:$net.2" --allow-host svc.test:8080 -- "${NOPROXY[@]}" \
		curl -sS -m 10 "http://svc.test:8080/rootless"
	like "$RF_OUT" 'GET /rootless HTTP/1.1' "rootless (uid 65534): http to an allowed name is served through the capture"
	ur --add-host "svc.test:$net.2" --add-host "other.test:$net.2" --allow-host svc.test:8080 -- \
		"${NOPROXY[@]}" getent hosts other.test
	is "$RF_RC/$RF_OUT" "2/" "rootless: a name no rule allows does not resolve (getent: 2, nothing)"
	cat "$USTATE"/audit/audit-*.jsonl 2>/dev/null | grep '"event":"egress.request"' |
		grep -q '"via":"capture"' && ok "rootless: recorded as egress.request via=capture" ||
		not_ok "rootless: recorded as egress.request via=capture" "$(ls -la "$USTATE" "$USTATE"/audit 2>&1)"
fi
rm -rf "$UWS" "$USTATE" "$UWS.err"

done_testing
