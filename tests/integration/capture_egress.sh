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
# answering a metadata address is refused; plain TCP to a name:port a rule
# names works (a client-first echo, a server-first banner, ssh-keyscan and
# ssh to a test sshd on :22) and to a port no rule names is reset before
# anything reaches the test host; every refusal is an egress.deny record.
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

# ---- plain TCP --------------------------------------------------------------------------------------
cc tcp svc.test 5432 'ping\n'
is "$RF_OUT" "ping" "plain TCP to a name:port a rule names: the line echoes"
cc wait svc.test 2525
like "$RF_OUT" '^220' "plain TCP, a server that speaks first: its banner arrives before the client sends"
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

done_testing
