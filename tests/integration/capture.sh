#!/usr/bin/env bash
# capture.sh — transparent capture in the run's network namespace (issue 14):
# the addresses, routes and nftables ruleset of a run with allow rules.
#
# Setup: the egress tests' network (tests/helpers/egress-net.bash): a client
# namespace where ringfence runs and a test host over a veth pair (HTTP
# :8080, DNS :53). Every run here is started inside the client namespace.
#
# Asserts: a run with an allow rule has 198.18.0.1 and fd52:6667:6e63::1 on
# lo and default routes from them; a TCP connect to an address that is
# neither in the pool nor allowed (the test host's real one) is refused at
# once (ECONNREFUSED) while the client namespace itself connects (control);
# UDP to the test host's DNS server is refused at send (EPERM), never a
# timeout, while the client namespace gets an answer (control), and 50 of
# them are one egress.deny record (and the end-of-run summary counts them);
# a flood of refused UDP (250 distinct destinations, or 5000 datagrams to
# one) does not hide a TCP connect to a fresh refused address that follows:
# it is recorded, as it is without the flood (control), and so is each
# flooded destination, once;
# UDP to the run's own stub (127.0.0.1:53) and loopback TCP still work, and
# so does the explicit proxy; the command has no CAP_NET_ADMIN over its
# namespace (seccomp refuses a NETLINK_NETFILTER socket; without seccomp,
# in a test build, a raw nftables DELTABLE gets EPERM in the kernel's ACK;
# an address change over rtnetlink is refused) while root from outside, in the same
# namespace, sees the ruleset and may delete it (control); runs without
# allow rules or with --capture proxy-only get neither ruleset nor pool
# addresses (ENETUNREACH as before); nothing of the run's namespace is left
# after the run; a policy of 256 IP/CIDR rules commits in one transaction;
# in a test build, a ruleset commit the kernel refuses ends the run with 125
# and one line naming the step.
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
cp "$RF_SRC/tests/helpers/capture-probe.py" "$WS/cp.py"
RF_WRAP=(nsenter --net=/run/netns/"$CNS")
cpr() { rf_run "${CPOPTS[@]}" -- python3 "$WS/cp.py" "$@"; }
host() { ip netns exec "$CNS" python3 "$WS/cp.py" "$@"; }
v6=0
ip netns exec "$CNS" grep -qs . /proc/net/if_inet6 && v6=1

# ---- the run's addresses and routes ------------------------------------------------------
CPOPTS=(--allow-host svc.test:8080)
cpr addrs
like "$RF_OUT" $'(^|\n)inet 198\\.18\\.0\\.1/32(\n|$)' "an allow rule: 198.18.0.1/32 on lo"
like "$RF_OUT" $'(^|\n)default4 198\\.18\\.0\\.1(\n|$)' "... and the default route, from it"
if [ "$v6" = 1 ]; then
	like "$RF_OUT" $'(^|\n)inet6 fd52:6667:6e63::1/128(\n|$)' "... fd52:6667:6e63::1/128 on lo"
	like "$RF_OUT" $'(^|\n)default6 lo(\n|$)' "... and a v6 default route on lo"
else
	skip "the v6 pool address and route" "no IPv6 in the client namespace"
	skip "the v6 default route" "no IPv6 in the client namespace"
fi

# the most rules a policy may hold, all of them IP/CIDR: one transaction
python3 -c '
import json, sys
rules = ["10.%d.%d.0/24" % (i // 200, i % 200) for i in range(128)]
rules += ["2001:db8:%x::/48" % i for i in range(128)]
json.dump({"version": 1, "network": {"allow": rules}}, open(sys.argv[1], "w"))' "$WS/many.json"
CPOPTS=(-p "$WS/many.json")
cpr addrs
is "$RF_RC" 0 "256 IP/CIDR allow rules: the ruleset is committed (one transaction, no ACK overflow)"
like "$RF_OUT" $'(^|\n)default4 198\\.18\\.0\\.1(\n|$)' "... and the run has its default route"

# ---- TCP outside the pool and the allowed prefixes -------------------------------------------
CPOPTS=(--allow-host svc.test:8080)
is "$(host tcp "$net.2" 8080)" "connected" "control: the client namespace reaches $net.2:8080"
cpr tcp "$net.2" 8080
is "$RF_OUT" "errno=ECONNREFUSED" "TCP to the test host's real address (not allowed): ECONNREFUSED (a reset from the ruleset, not a hang)"
like "$RF_ERR" "$net.2:8080 .*--allow-host $net.2:8080" "... the summary says what would allow it"
cpr tcp 169.254.169.254 80
is "$RF_OUT" "errno=ECONNREFUSED" "TCP to the metadata address: ECONNREFUSED"
like "$RF_ERR" "169\\.254\\.169\\.254:80 +[0-9]+x +refused by the run's ruleset" "... counted in the summary"
unlike "$RF_ERR" "--allow-host 169\\.254" "... which never suggests allowing the metadata address"
if [ "$v6" = 1 ]; then
	cpr tcp 2001:db8::1 443
	is "$RF_OUT" "errno=ECONNREFUSED" "TCP to a v6 address outside the pool: ECONNREFUSED"
else
	skip "TCP to a v6 address" "no IPv6 in the client namespace"
fi

# ---- UDP ----------------------------------------------------------------------------------
is "$(host udp-connected "$net.2" 53)" "answer" "control: the client namespace gets an answer from $net.2:53"
CPOPTS=(--allow-host svc.test:8080)
cpr udp-connected "$net.2" 53
is "$RF_OUT" "errno=EPERM" "UDP to the test host's DNS server: refused at send (EPERM), no timeout"
n0=$(records | grep '"event":"egress.deny"' | grep -c "\"host\":\"$net.2\".*\"proto\":\"udp\"\|\"proto\":\"udp\".*\"host\":\"$net.2\"")
cpr udp "$net.2" 53 50
is "$RF_OUT" "errno=EPERM" "50 UDP datagrams to $net.2:53: every send refused (EPERM)"
n1=$(records | grep '"event":"egress.deny"' | grep '"path":"capture"' | grep "\"host\":\"$net.2\"" | grep -c '"port":53')
is "$((n1 - n0))" 1 "... recorded once (one egress.deny for the destination)"
like "$(records | grep '"path":"capture"' | tail -n 1)" '"proto":"udp"' "... naming the protocol"
like "$(records | grep '"path":"capture"' | tail -n 1)" '"via":"capture"' \
	"... and via=capture, as the egress process's refusals on the captured path"
like "$RF_ERR" "$net.2:53 +[0-9]+x +refused by the run's ruleset" "... and counted in the end-of-run summary"
cpr udp 10.255.255.1 443 1
is "$RF_OUT" "errno=EPERM" "UDP to :443 elsewhere (QUIC) refused at once (EPERM)"
cpr dns-stub
is "$RF_OUT" "answer" "control: UDP to the run's own stub (127.0.0.1:53) is answered"

# ---- a flood cannot hide a refused destination ---------------------------------------------
# Each destination has a log budget of its own in the ruleset (capture-gen.c;
# RF_CAPTURE_LOG_DESTS = 256 of them a family at once): refusals to other
# destinations leave a fresh destination's first refusal logged, so recorded
# (one global budget of 20 a second used to be spent by the first 20). flood.py
# sends N UDP datagrams (to N distinct addresses, or all to one), then makes
# one TCP connect.
cat >"$WS/flood.py" <<'PY'
import errno, socket, sys
mode, n, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    dst = "10.3.%d.%d" % (i // 250, i % 250 + 1) if mode == "distinct" else "10.4.4.4"
    try:
        u.sendto(b"x", (dst, 9))
    except OSError:
        pass
try:
    socket.create_connection((target, 80), timeout=10)
    print("connected")
except OSError as e:
    print("errno=" + errno.errorcode.get(e.errno, str(e.errno)))
PY
# denied HOST — the egress.deny records (path capture) of TCP to HOST:80
denied() {
	records | grep '"event":"egress.deny"' | grep '"path":"capture"' | grep '"proto":"tcp"' |
		grep "\"host\":\"$1\"" | grep -c '"port":80'
}
CPOPTS=(--allow-host svc.test:8080)
cpr tcp 10.2.2.1 80
is "$RF_OUT" "errno=ECONNREFUSED" "control: TCP to a fresh refused address (10.2.2.1), no flood: ECONNREFUSED"
is "$(denied 10.2.2.1)" 1 "... recorded (egress.deny)"
rf_run "${CPOPTS[@]}" -- python3 "$WS/flood.py" distinct 250 10.2.2.2
is "$RF_OUT" "errno=ECONNREFUSED" "250 UDP datagrams to 250 distinct addresses, then TCP to a fresh refused address (10.2.2.2): ECONNREFUSED"
is "$(denied 10.2.2.2)" 1 "... still recorded: the flood did not use up its log budget"
n=$(records | grep '"event":"egress.deny"' | grep '"path":"capture"' | grep -c '"host":"10\.3\.')
is "$n" 250 "... and each of the 250 flooded destinations is recorded too"
rf_run "${CPOPTS[@]}" -- python3 "$WS/flood.py" one 5000 10.2.2.3
is "$RF_OUT" "errno=ECONNREFUSED" "5000 UDP datagrams to one address, then TCP to a fresh refused address (10.2.2.3): ECONNREFUSED"
is "$(denied 10.2.2.3)" 1 "... still recorded: one destination's flood leaves another's record"
is "$(records | grep '"event":"egress.deny"' | grep -c '"host":"10\.4\.4\.4"')" 1 \
	"... and the flooded destination is recorded once"

# ---- loopback and the proxy still work ---------------------------------------------------------
rf_run --allow-host svc.test:8080 -- /bin/sh -c "'$PROBE' listen tcp 127.0.0.1 0 >'$WS/inner-listen' &
	while [ ! -s '$WS/inner-listen' ]; do sleep 0.05; done
	'$PROBE' tcp-connect 127.0.0.1 \$(cut -d' ' -f2 '$WS/inner-listen')"
is "$RF_OUT" "ok" "loopback TCP inside the run still works"
EROPTS=(--add-host "svc.test:$net.2" --allow-host svc.test:8080)
ec get "http://svc.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 200 OK" "the explicit proxy still works with capture on"
EROPTS=(--capture proxy-only --add-host "svc.test:$net.2" --allow-host svc.test:8080)
ec get "http://svc.test:8080/"
is "$(first_line "$RF_OUT")" "HTTP/1.1 200 OK" "... and with --capture proxy-only"

# ---- no CAP_NET_ADMIN for the command ----------------------------------------------------------
CPOPTS=(--allow-host svc.test:8080)
cpr nft-deltable
is "$RF_OUT" "socket=EPERM" "the command opens a NETLINK_NETFILTER socket: EPERM (seccomp)"
if [ -n "${RF_TEST_BIN:-}" ]; then
	RF_RUN_BIN=$RF_TEST_BIN
	RF_ENV=(RINGFENCE_TEST_SKIP=seccomp)
	cpr nft-deltable
	is "$RF_OUT" "ack=EPERM" "... without seccomp (test build): the raw DELTABLE gets EPERM in the kernel's ACK (no CAP_NET_ADMIN)"
	RF_ENV=()
	RF_RUN_BIN=
else
	skip "the raw DELTABLE without seccomp" "no test build (RF_TEST_BIN)"
fi
rf_run --allow-host svc.test:8080 -- ip addr del 198.18.0.1/32 dev lo
isnt "$RF_RC" 0 "the command removes the pool address: refused"
like "$RF_ERR$RF_OUT" "Operation not permitted" "... EPERM"

# control: root outside, in the run's network namespace, sees the ruleset and may delete it
rf_mktemp /tmp
sync_dir=$REPLY
chmod 0777 "$sync_dir"
rf_start --allow-host svc.test:8080 --allow-host 10.77.0.0/16:5432 --allow-host '[2001:db8:77::]/48' \
	--rw "$sync_dir" -- /bin/sh -c \
	"python3 '$WS/cp.py' netns >'$sync_dir/netns'; python3 '$WS/cp.py' wait-go '$sync_dir'"
for _ in $(seq 1 200); do [ -e "$sync_dir/ready" ] && break; sleep 0.05; done
ino=$(cat "$sync_dir/netns" 2>/dev/null)
runpid=""
pids=("$RF_PID")
while [ "${#pids[@]}" -gt 0 ] && [ -z "$runpid" ]; do
	p=${pids[0]}
	pids=("${pids[@]:1}")
	[ "$(stat -L -c %i "/proc/$p/ns/net" 2>/dev/null)" = "$ino" ] && runpid=$p
	# shellcheck disable=SC2013 # the children files hold space-separated pids
	for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do pids+=("$c"); done
done
if [ -n "$runpid" ] && [ -n "$ino" ]; then
	if command -v nft >/dev/null; then
		rules=$(nsenter --net=/proc/"$runpid"/ns/net nft list table inet ringfence 2>&1)
		like "$rules" 'ip daddr 198\.18\.0\.0/15 redirect to :3129' \
			"control: root in the run's namespace sees the ruleset (nft list): the pool is redirected"
		like "$rules" 'ip daddr 10\.77\.0\.0/16 redirect to :3129' "... and an allowed v4 CIDR"
		like "$rules" 'ip6 daddr 2001:db8:77::/48 redirect to :3129' "... and an allowed v6 CIDR"
		like "$rules" 'reject with tcp reset' "... and the rest of TCP is reset"
	else
		for _ in 1 2 3 4; do skip "nft list in the run's namespace" "no nft on this host"; done
	fi
	is "$(nsenter --net=/proc/"$runpid"/ns/net python3 "$WS/cp.py" nft-deltable)" "ack=0" \
		"control: the same DELTABLE sent by root from outside succeeds"
else
	not_ok "control: found the run's network namespace" "netns=$ino pid=$runpid"
	skip "control: the same DELTABLE from outside" "the run's namespace was not found"
fi
touch "$sync_dir/go"
rf_wait
is "$RF_OUT" "go" "... (the run itself went on)"
# the ruleset and the pool live only in the run's namespace: once the run
# has ended no process holds it
left=""
for p in /proc/[0-9]*; do
	[ -n "$ino" ] && [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$ino" ] && left="$left ${p#/proc/}"
done
is "${ino:+checked}:$left" "checked:" "nothing is left of the run's namespace (ruleset, pool) after the run"

# ---- no allow rule, or proxy-only: no ruleset, no pool ---------------------------------------------
for opts in "" "--capture proxy-only --allow-host svc.test:8080"; do
	# shellcheck disable=SC2206
	CPOPTS=($opts)
	what=${opts:-"no allow rule"}
	cpr addrs
	unlike "$RF_OUT" '198\.18\.0\.1|fd52:6667|default' "$what: no pool address, no default route"
	cpr tcp "$net.2" 8080
	is "$RF_OUT" "errno=ENETUNREACH" "$what: TCP elsewhere is unreachable (ENETUNREACH), as without capture"
done

# ---- fail closed: a ruleset the kernel refuses -------------------------------------------------
if [ -n "${RF_TEST_BIN:-}" ]; then
	RF_RUN_BIN=$RF_TEST_BIN
	RF_ENV=(RINGFENCE_TEST_FAIL=capture)
	rf_run --allow-host svc.test:8080 -- "$PROBE" write "$WS/capture-marker"
	is "$RF_RC" 125 "a ruleset commit the kernel refuses: exit 125"
	is "$(printf '%s\n' "$RF_ERR" | grep -c '')" 1 "... one line"
	like "$RF_ERR" "^ringfence: cannot set up .*capture.*\(capture\)" "... naming the step"
	check "... and the command did not run" test ! -e "$WS/capture-marker"
	RF_ENV=()
	rf_run --allow-host svc.test:8080 -- "$PROBE" write "$WS/capture-marker"
	is "$RF_RC" 0 "control: the test build runs with the ruleset committed"
	RF_RUN_BIN=
else
	skip "a failing ruleset commit" "no test build (RF_TEST_BIN)"
fi

done_testing
