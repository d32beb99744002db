# egress-net.bash — the network of the egress tests (sourced by
# tests/integration/egress*.sh after tests/lib.sh and new_workspace).
#
# Two network namespaces of this test run, a "client" one where ringfence
# itself runs (entered with nsenter inside `unshare -m`, with a resolv.conf
# naming the test host bound over /etc/resolv.conf) and a test host reached
# over a veth pair (tests/helpers/testhost.py: HTTP :8080, TLS :8443, TCP
# echo :4443, line echo :5432, banner :2525, a never-answering :8082, DNS
# :53). The test host also holds 169.254.169.254. Every name is unique to
# the run and removed at exit by its recorded name (register_netns,
# register_pid).
#
# Defines: CNS HNS net TH, er [RUN-OPTIONS...] -- CMD..., ec ARGS... (the
# egress client with ${EROPTS[@]}), records.
# shellcheck shell=bash
id=rft$(printf '%x' $$)$(printf '%04x' $((RANDOM % 65536)))
CNS=${id}c HNS=${id}h VA=${id}a VB=${id}b
net=10.231.$((RANDOM % 200 + 20))
ip netns add "$CNS" && register_netns "$CNS" || bail_out "ip netns add failed"
ip netns add "$HNS" && register_netns "$HNS" || bail_out "ip netns add failed"
ip link add "$VA" type veth peer name "$VB" || bail_out "veth failed"
ip link set "$VA" netns "$CNS" && ip link set "$VB" netns "$HNS" || bail_out "veth move failed"
ip -n "$CNS" addr add "$net.1/24" dev "$VA"
ip -n "$CNS" link set lo up
ip -n "$CNS" link set "$VA" up
ip -n "$CNS" route add 169.254.169.254/32 dev "$VA"
ip -n "$HNS" addr add "$net.2/24" dev "$VB"
ip -n "$HNS" addr add 169.254.169.254/32 dev "$VB"
ip -n "$HNS" link set lo up
ip -n "$HNS" link set "$VB" up

rf_mktemp /tmp
TH=$REPLY
cat >"$TH/table" <<TABLE
svc.test $net.2
self.test $net.1
meta.test 169.254.169.254
rebind.test $net.2,169.254.169.254
doc.test 192.0.2.10
sf.test servfail
slowdns.test noanswer
TABLE
printf 'nameserver %s\n' "$net.2" >"$TH/resolv.conf"
# the test host's TLS server (urllib through HTTPS_PROXY); without openssl those cases skip
command -v openssl >/dev/null &&
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TH/key.pem" -out "$TH/cert.pem" \
		-days 1 -subj /CN=svc.test -addext subjectAltName=DNS:svc.test >/dev/null 2>&1
ip netns exec "$HNS" python3 "$RF_SRC/tests/helpers/testhost.py" "$TH" "$TH/table" >/dev/null 2>&1 &
register_pid $!
for _ in $(seq 1 100); do [ -e "$TH/ready" ] && break; sleep 0.05; done
[ -e "$TH/ready" ] || bail_out "the test host did not start"
cp "$RF_SRC/tests/helpers/egress-client.py" "$WS/ec.py"

# er [RUN-OPTIONS...] -- CMD... : ringfence run in the client namespace
er() {
	RF_OUT=$(unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift &&
		exec nsenter --net=/run/netns/"$0" "$@"' "$CNS" "$TH/resolv.conf" \
		"$RF_BIN" run --state-dir "$RF_STATE" -w "$WS" "$@" 2>"$WS.err" </dev/null)
	RF_RC=$?
	RF_ERR=$(cat "$WS.err")
	RF_CMDLINE="ringfence run $*"
}
ec() { er "${EROPTS[@]}" -- python3 "$WS/ec.py" "$@"; }
records() { cat "$RF_STATE"/audit/audit-*.jsonl; }
