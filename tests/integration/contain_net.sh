#!/bin/bash
# tests/integration/contain_net.sh — the run has a network namespace of its
# own with only `lo`, up: host loopback services refuse (ECONNREFUSED: the
# run's loopback is not the host's), other addresses are unreachable
# (ENETUNREACH), the host's abstract unix sockets refuse, host path sockets
# are absent (ENOENT). Controls: each host listener is reachable from the
# host, and loopback inside the run works.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
require_isolation
uniq=$(basename "$WS")

rf_probe ifaces
is "$RF_OUT" "ok lo:up" "the only interface is lo, and it is up"

# ---- host loopback TCP -------------------------------------------------------------

start_listener PORT tcp 127.0.0.1 0
is "$("$RF_PROBE" tcp-connect 127.0.0.1 "$PORT")" ok "control: the host listener on 127.0.0.1:$PORT accepts from the host"
rf_probe tcp-connect 127.0.0.1 "$PORT"
is "$RF_OUT" "errno=ECONNREFUSED" "tcp connect to the host's 127.0.0.1:$PORT -> ECONNREFUSED"

# Inside, the same port is free (its own stack) and loopback works.
rf_run -- /bin/sh -c "'$PROBE' listen tcp 127.0.0.1 $PORT >'$WS/inner-listen' &
	while [ ! -s '$WS/inner-listen' ]; do sleep 0.05; done
	cat '$WS/inner-listen'; '$PROBE' tcp-connect 127.0.0.1 $PORT"
is "$RF_OUT" "ok $PORT"$'\n'"ok" "control: inside, a listener on the same port works over the run's loopback"

if grep -qs '^0\{31\}1 ' /proc/net/if_inet6; then
	start_listener PORT6 tcp ::1 0
	is "$("$RF_PROBE" tcp-connect ::1 "$PORT6")" ok "control: the host listener on [::1]:$PORT6 accepts from the host"
	rf_probe tcp-connect ::1 "$PORT6"
	like "$RF_OUT" '^errno=(ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH)$' "tcp connect to the host's [::1]:$PORT6 fails"
else
	skip "tcp connect to the host's ::1" "no IPv6 loopback on this host"
fi

# ---- everything else ----------------------------------------------------------------

rf_probe tcp-connect 10.255.255.1 80
is "$RF_OUT" "errno=ENETUNREACH" "tcp connect to 10.255.255.1:80 -> ENETUNREACH"
rf_probe tcp-connect 169.254.169.254 80
is "$RF_OUT" "errno=ENETUNREACH" "tcp connect to the metadata address -> ENETUNREACH"
rf_probe udp-send 8.8.8.8 53
is "$RF_OUT" "errno=ENETUNREACH" "udp to 8.8.8.8:53 (DNS) -> ENETUNREACH"
rf_probe udp-send 10.255.255.1 443
is "$RF_OUT" "errno=ENETUNREACH" "udp to 10.255.255.1:443 (QUIC) -> ENETUNREACH"
rf_probe tcp-connect 2001:4860:4860::8888 443
like "$RF_OUT" '^errno=(ENETUNREACH|EADDRNOTAVAIL|EAFNOSUPPORT)$' "tcp connect to an IPv6 address fails"
rf_probe udp-send 127.0.0.1 53
is "$RF_OUT" "ok" "control: udp to the run's own loopback is sent"

# ---- unix sockets ---------------------------------------------------------------------

abstract=@rf-test.$uniq
start_listener unused unix "$abstract"
is "$("$RF_PROBE" unix-connect "$abstract")" ok "control: the host's abstract socket accepts from the host"
rf_probe unix-connect "$abstract"
is "$RF_OUT" "errno=ECONNREFUSED" "connect to the host's abstract socket -> ECONNREFUSED"

rf_mktemp /tmp
sock=$REPLY/host.sock
start_listener unused unix "$sock"
is "$("$RF_PROBE" unix-connect "$sock")" ok "control: the host path socket accepts from the host"
rf_probe unix-connect "$sock"
is "$RF_OUT" "errno=ENOENT" "connect to a host path socket outside the workspace -> ENOENT"

# A socket inside the workspace is, by design, shared (the workspace is the
# run's window): reachable. This is the legitimate control for the path case.
start_listener unused unix "$WS/ws.sock"
rf_probe unix-connect "$WS/ws.sock"
is "$RF_OUT" "ok" "control: a socket inside the workspace is reachable"

for s in /run/dbus/system_bus_socket /var/run/docker.sock /run/docker.sock \
	/run/systemd/private /run/systemd/journal/stdout; do
	if [ -S "$s" ]; then
		rf_probe unix-connect "$s"
		is "$RF_OUT" "errno=ENOENT" "host service socket $s -> ENOENT"
	else
		skip "host service socket $s -> ENOENT" "$s not present on this host"
	fi
done

done_testing
