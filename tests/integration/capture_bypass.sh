#!/usr/bin/env bash
# capture_bypass.sh — bypass classes of SECURITY-CASES.md again, on the
# captured path (issue 14), each next to a working control: rebinding,
# the host's own addresses (a listener there as the control), another
# run's synthetic addresses, IP literal spellings; refusals answer, never
# hang: the ruleset's with ECONNREFUSED (and its summary line), the egress
# process's with a 403 to an HTTP client; and nothing of the run's network
# is left after it.
# (SNI fronting, Host mismatch, literals, metadata answers, pool addresses
# never handed out and the egress listeners: capture_egress.sh; UDP and
# the run's lack of CAP_NET_ADMIN: capture.sh; the resolver: capture_dns.sh.)
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

NP=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
	-u NO_PROXY -u no_proxy)
# probe HOST PORT [PATH [HOST-HEADER]]: one HTTP GET by name or address, without a proxy;
# prints the status line, or errno=NAME (a socket timeout: errno=TIMEOUT,
# which no case here may give: a refusal answers)
cat >"$WS/probe.py" <<'PY'
import errno, socket, sys
host, port = sys.argv[1], int(sys.argv[2])
path = sys.argv[3] if len(sys.argv) > 3 else "/"
hosthdr = sys.argv[4] if len(sys.argv) > 4 else "%s:%d" % (host, port)
try:
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, hosthdr)).encode())
    d = s.recv(4096)
    print(d.split(b"\r\n", 1)[0].decode("latin-1") if d else "closed")
except socket.timeout:
    print("errno=TIMEOUT")
except socket.gaierror as e:
    print("gaierror=%s" % ("EAI_NONAME" if e.errno == socket.EAI_NONAME else e.errno))
except OSError as e:
    print("errno=%s" % errno.errorcode.get(e.errno, e.errno))
PY
probe() { # probe RUN-OPTIONS... -- HOST PORT [PATH]
	local o=()
	while [ "$1" != "--" ]; do o+=("$1"); shift; done
	shift
	er "${o[@]}" -- "${NP[@]}" python3 probe.py "$@"
}

probe --add-host "svc.test:$net.2" --allow-host svc.test -- svc.test 8080
case "$RF_OUT" in
"HTTP/1.1 200"*) ;;
*) skip_all "this build does not capture (svc.test:8080 without a proxy: '$RF_OUT')" ;;
esac
ok "control: an allowed name without a proxy: 200"

# ---- rebinding -------------------------------------------------------------------------------
# rebind.test answers the test host, then 169.254.169.254, in turn; the run
# only ever holds its pool address, and each connection is decided on the
# host side with the address the egress process itself resolved and dials
ok200=0 refused=0 other=""
for _ in 1 2 3 4; do
	probe --allow-host rebind.test:8080 --allow-host "$net.0/24:8080" -- rebind.test 8080
	case "$RF_OUT" in
	"HTTP/1.1 200"*) ok200=$((ok200 + 1)) ;;
	"HTTP/1.1 403"*) refused=$((refused + 1)) ;; # an HTTP client always gets its 403
	*) other="$other $RF_OUT" ;;
	esac
done
if [ "$ok200" -ge 1 ] && [ "$refused" -ge 1 ] && [ -z "$other" ]; then
	ok "a rebinding resolver on the captured path: the test host served ($ok200×), the metadata answer refused ($refused×)"
else
	not_ok "a rebinding resolver on the captured path" "200: $ok200, refused: $refused, other:$other"
fi
like "$(records | grep '"event":"egress.deny"' | grep -c '169.254.169.254')" '^[1-9]' \
	"... each refusal recorded naming the metadata address"

# ---- the host's own addresses ----------------------------------------------------------------
# the client namespace's own address ($net.1) is the host's to the egress
# process: refused as a literal without a rule (the ruleset), and behind an
# allowed name that resolves to it (the egress process: the host's own
# addresses are refused unless an IP rule covers them). Something listens
# there, so ECONNREFUSED is the ruleset's refusal, not an empty port.
cat >"$WS/listen.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
open(sys.argv[3] + ".ready", "w").close()
while True:
    c, _ = s.accept()
    with open(sys.argv[3], "a") as f:
        f.write("connection\n")
    c.close()
PY
ip netns exec "$CNS" python3 "$WS/listen.py" "$net.1" 8080 "$TH/own.log" &
register_pid $!
for _ in $(seq 1 100); do [ -e "$TH/own.log.ready" ] && break; sleep 0.05; done
own_conns() { grep -c connection "$TH/own.log" 2>/dev/null; }
ip netns exec "$CNS" python3 -c '
import socket, sys
socket.create_connection((sys.argv[1], 8080), timeout=10).close()' "$net.1" 2>/dev/null
is "$(own_conns)" 1 "control: outside the run, a listener on the host's own address $net.1:8080 accepts"
probe --allow-host svc.test -- "$net.1" 8080
is "$RF_OUT" "errno=ECONNREFUSED" "the host's own address as a literal: refused by the run's ruleset (ECONNREFUSED)"
like "$RF_ERR" "$net.1:8080 +[0-9]+x +refused by the run's ruleset" "... the ruleset's refusal, in the end-of-run summary"
is "$(own_conns)" 1 "... and the listener there saw no connection from the run"
probe --allow-host self.test:8080 -- self.test 8080
like "$RF_OUT" '^HTTP/1.1 403' "an allowed name the resolver answers with the host's own address: 403 ($RF_OUT)"
like "$RF_ERR" "self.test:8080 .*the address is private \\($net.1\\)" "... refused by the egress process for its address"
is "$(own_conns)" 1 "... and the listener saw no connection"

# ---- another run's synthetic addresses -------------------------------------------------------
# run A learns svc.test's pool address; run B, allowed the same name but
# never having resolved it, connects to that address: refused
er --add-host "svc.test:$net.2" --allow-host svc.test -- getent ahostsv4 svc.test
addr=$(awk '{print $1; exit}' <<<"$RF_OUT")
like "$addr" '^198\.1[89]\.' "run A: svc.test has pool address $addr"
probe --add-host "svc.test:$net.2" --allow-host svc.test -- "$addr" 8080
like "$RF_OUT" '^HTTP/1.1 403' "run B, never told that address, connects to it: refused by the egress process, 403 ($RF_OUT)"
like "$RF_ERR" "$addr:8080 .*not an address this run's resolver handed out" "... saying why in the end-of-run summary"
like "$(records | grep '"event":"egress.deny"' | tail -n 5)" "$addr" "... recorded with the address"

# ---- IP literal spellings --------------------------------------------------------------------
# the run's own resolver never sees a literal: the client turns it into an
# address, which the ruleset decides as an address (no rule: refused;
# a CIDR rule: decided by the egress process)
IFS=. read -r a b c d <<<"$net.2"
dec=$(((a << 24) | (b << 16) | (c << 8) | d))
hex=$(printf '0x%02x.%d.%d.%d' "$a" "$b" "$c" "$d")
for spelled in "$dec" "$hex" "::ffff:$net.2"; do
	probe --allow-host svc.test -- "$spelled" 8080
	# ECONNREFUSED: the ruleset's reset (a run without capture has no
	# route at all: ENETUNREACH, which no longer passes here)
	is "$RF_OUT" "errno=ECONNREFUSED" "the test host spelled $spelled, no rule for it: refused by the run's ruleset (ECONNREFUSED)"
	like "$RF_ERR" "$net.2:8080 +[0-9]+x +refused by the run's ruleset" "... counted in the end-of-run summary as the ruleset's refusal"
done
probe --allow-host "$net.0/24:8080" -- "$dec" 8080 / "$net.2:8080"
like "$RF_OUT" '^HTTP/1.1 200' "control: spelled $dec with a CIDR rule covering it: 200"
probe --allow-host "$net.0/24:8080" -- "$dec" 8080 / "$dec:8080"
like "$RF_OUT" '^HTTP/1.1 403' "... but a Host header in that spelling is refused (403), as on the proxy path"
probe --allow-host "$net.0/24:8080" -- 2130706433 8080
is "$RF_OUT" "errno=ECONNREFUSED" "2130706433 (127.0.0.1) is the run's own loopback: nothing listens there (ECONNREFUSED)"

# ---- the egress process dies ----------------------------------------------------------------
# killed from outside (as the run's memory limit would): the next captured
# connection is served by a new one, never left waiting in a backlog
cat >"$WS/twice.sh" <<'SH'
python3 probe.py svc.test 8080 >first.out
while [ ! -e go ]; do sleep 0.05; done
python3 probe.py svc.test 8080 >second.out
SH
rm -f "$WS/first.out" "$WS/second.out" "$WS/go"
er --detach --add-host "svc.test:$net.2" --allow-host svc.test -- "${NP[@]}" sh twice.sh
run=$RF_OUT
for _ in $(seq 1 600); do [ -s "$WS/first.out" ] && break; sleep 0.05; done
like "$(cat "$WS/first.out" 2>/dev/null)" '^HTTP/1.1 200' "a detached run's first captured connection: 200"
sup=$(grep -o '"pid":[0-9]*' "$RF_STATE/runs/$run/info.json" 2>/dev/null | cut -d: -f2)
egress=""
for p in /proc/[0-9]*; do
	[ "$(awk '{print $4}' "$p/stat" 2>/dev/null)" = "$sup" ] || continue
	[ "$(readlink "$p/ns/net" 2>/dev/null)" = "$(readlink "/proc/$sup/ns/net" 2>/dev/null)" ] &&
		egress=${p#/proc/}
done
if [ -n "$sup" ] && [ -n "$egress" ]; then
	kill -KILL "$egress"
	touch "$WS/go"
	"$RF_BIN" wait --state-dir "$RF_STATE" "$run" >/dev/null 2>&1
	like "$(cat "$WS/second.out" 2>/dev/null)" '^HTTP/1.1 200' \
		"after its egress process was killed, the run's next captured connection is served (a new one)"
	like "$(records | grep '"event":"egress.lost"' | grep "$run")" '"times":1' "... recorded as egress.lost"
else
	touch "$WS/go"
	not_ok "the run's egress process found" "supervisor '$sup', egress '$egress'"
	skip "egress.lost recorded" "no egress process found"
fi

# ---- nothing is left -------------------------------------------------------------------------
er --add-host "svc.test:$net.2" --allow-host svc.test -- sh -c 'readlink /proc/self/ns/net'
nsid=$RF_OUT
like "$nsid" '^net:\[[0-9]+\]$' "a run's network namespace: $nsid"
left=""
for p in /proc/[0-9]*; do
	[ "$(readlink "$p/ns/net" 2>/dev/null)" = "$nsid" ] && left="$left ${p#/proc/}"
done
is "$left" "" "after the run no process is left in its network namespace (its ruleset and pool went with it)"

done_testing
