#!/bin/bash
# tests/integration/oci_netns.sh — a network namespace an engine made,
# captured by ringfence-oci (issue 17): Podman's bridge network and every
# Kubernetes pod hand the runtime a new namespace of their own (CNI gave it
# an interface, an address and a default route) instead of letting it make
# one. The first container in it (Podman's container, the pod's sandbox
# container) captures it: the ruleset goes in from the host's side, and
# the container's egress is the namespace's.
#
# Simulated as CNI does it: `ip netns add`, a veth to the test host, an
# address and a default route. Asserted, each beside a control run in the
# same namespace without ringfence: a direct TCP connection through the
# engine's interface is refused by the capture (ECONNREFUSED; the control
# connects), UDP is refused at send (EPERM; the control sends), a datagram
# from a forged source (IPV6_FREEBIND) is dropped (EPERM), names are
# the container's stub's (a name not allowed: NXDOMAIN), the allowed name
# answers through the egress process (capture, no proxy settings), a
# connection opened *to* the container through the engine's interface is
# answered (the engine's ingress: probes, services), the engine's routes
# are left as they were; a Kubernetes app container joins its ringfence
# sandbox's namespace and gets the pod's egress; refused (125): an app
# container whose sandbox is not ringfence's, a namespace a process of
# another runtime is in, the host's, and a namespace captured before
# (fail closed: after its container is gone nothing leaves it).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root (network namespaces of the test host)"
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

require_oci
rf_mktemp /tmp
TOP=$REPLY
ROOT=$TOP/oci-root
mkdir -p "$ROOT" "$TOP/a" "$TOP/b"
make_image "$TOP/rootfs"
"$BUSYBOX" --list | grep -qx nslookup || skip_all "this busybox has no nslookup"
ID=rf-nsc-$$
cleanup_containers() {
	local c
	for c in "$ID-c" "$ID-s" "$ID-a" "$ID-x"; do
		RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$c" \
			</dev/null >/dev/null 2>&1
	done
}
trap 'cleanup_containers; _rf_cleanup' EXIT

mkdir -p "$TOP/base"
RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$TOP/base" >/dev/null 2>&1 || bail_out "spec failed"
# bundle DIR EXPR — DIR/config.json from the spec, the image's root, EXPR applied
bundle() {
	python3 - "$TOP/base/config.json" "$1/config.json" "$TOP/rootfs" "$2" <<'PY' ||
import json, sys
c = json.load(open(sys.argv[1]))
c["root"]["path"] = sys.argv[3]
c["process"]["terminal"] = False
exec(sys.argv[4])
json.dump(c, open(sys.argv[2] + ".new", "w"), indent=1)
PY
		bail_out "cannot write $1/config.json"
	mv "$1/config.json.new" "$1/config.json"
}
# ocn ARGS... — ringfence-oci in the client namespace (its egress dials the
# test host from there); sets RF_RC, RF_ERR
ocn() {
	unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift &&
		exec nsenter --net=/run/netns/"$0" "$@"' "$CNS" "$TH/resolv.conf" \
		env RINGFENCE_STATE_DIR="$RF_STATE" timeout 60 "$OCI" --root "$ROOT" "$@" \
		</dev/null >/dev/null 2>"$TOP/err"
	RF_RC=$?
	RF_ERR=$(cat "$TOP/err")
}
# ocx ARGS... — ringfence-oci here; RF_RC, RF_OUT
ocx() {
	RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" 2>&1 </dev/null)
	RF_RC=$?
}
# engine_netns NAME — a namespace as CNI leaves it: lo up, a veth to the
# test host (NAME's end $pnet.2, the host's $pnet.1), a default route
pnet=10.232.$((RANDOM % 200 + 20))
n_engine=0
engine_netns() {
	local a=${id}q$n_engine b=${id}r$n_engine sub=$pnet
	n_engine=$((n_engine + 1))
	ip netns add "$1" && register_netns "$1" || bail_out "ip netns add failed"
	ip link add "$a" type veth peer name "$b" || bail_out "veth failed"
	ip link set "$a" netns "$1" && ip link set "$b" netns "$HNS" || bail_out "veth move failed"
	ip -n "$1" link set lo up
	ip -n "$1" addr add "$sub.2/30" dev "$a" && ip -n "$1" link set "$a" up
	ip -n "$HNS" addr add "$sub.1/30" dev "$b" && ip -n "$HNS" link set "$b" up
	ip -n "$1" route add default via "$sub.1" || bail_out "no default route"
	pnet=10.232.$((${pnet##*.} + 1))
}
# inside NETNS ARGS... — rf-probe in NETNS without ringfence (the control)
inside() { ip netns exec "$1" "$RF_PROBE" "${@:2}" 2>&1; }
# get CONTAINER PATH — an HTTP GET of svc.test:8080 from inside; RF_OUT
get() {
	ocx exec "$1" /bin/sh -c 'a=$(busybox nslookup svc.test 127.0.0.1 2>/dev/null |
		busybox awk "/^Address/ && \$2 ~ /^[0-9.]+\$/ {print \$2}" | busybox tail -n 1)
		echo "addr=$a"; /bin/rf-probe http-get "$a" 8080 svc.test:8080 "$0" 2>&1
		echo "rc=$?"' "$2"
}
LOOP='["/bin/sh","-c","/bin/rf-probe listen tcp 0.0.0.0 9000 >/dev/null & while :; do sleep 1; done"]'
netpath='for n in c["linux"]["namespaces"]:
    if n["type"] == "network": n["path"] = '

# ---- Podman's bridge network: the container captures its namespace ------------
ENS=${id}e
engine_netns "$ENS"
epeer=${pnet%.*}.$((${pnet##*.} - 1)).1
eaddr=${epeer%.1}.2
like "$(inside "$ENS" tcp-connect "$epeer" 8080)" "^ok" \
	"control: from the engine's namespace without ringfence, the test host connects"
like "$(inside "$ENS" udp-send "$epeer" 53)" "^ok" "control: ... and UDP is sent"
fb=$(inside "$ENS" udp-freebind 2001:db8:ffff::1 4000 ::1 4001) # (asserted below)

bundle "$TOP/a" 'c["process"]["args"]='"$LOOP"'
c["annotations"]={"ringfence.io/allow-hosts":"svc.test:8080,'"$net"'.2:8080","ringfence.io/agent":"nsc-'$$'"}
'"$netpath"'"/run/netns/'"$ENS"'"'
ocn create --bundle "$TOP/a" --pid-file "$TOP/apid" "$ID-a"
is "$RF_RC" 0 "a container given an engine's new network namespace: created ($RF_ERR)"
ocx start "$ID-a"
apid=$(cat "$TOP/apid" 2>/dev/null)
[ -n "$apid" ] || bail_out "no container"
is "$(readlink "/proc/$apid/ns/net")" "$(ip netns exec "$ENS" readlink /proc/self/ns/net)" \
	"... it is in that namespace"
ocx exec "$ID-a" /bin/rf-probe tcp-connect "$epeer" 8080
like "$RF_OUT" "ECONNREFUSED" "a direct connection through the engine's interface: refused (the capture's reset)"
ocx exec "$ID-a" /bin/rf-probe udp-send "$epeer" 53
like "$RF_OUT" "EPERM" "UDP through the engine's interface: refused at send (EPERM)"
# a flow forged from a source the namespace does not own (IPV6_FREEBIND
# needs no capability): its reply direction would lead out through the
# engine's interface; the capture drops a packet whose source is not local
if [[ $fb == ok* ]]; then
	ok "control: without ringfence, a datagram from a forged IPv6 source (IPV6_FREEBIND) is sent"
	ocx exec "$ID-a" /bin/rf-probe udp-freebind 2001:db8:ffff::1 4000 ::1 4001
	like "$RF_OUT" "EPERM" "... in the captured namespace: dropped (EPERM), no flow to reply out of"
else
	skip "a forged IPv6 source (2 cases)" "no IPv6 in the namespace here: $fb"
fi
get "$ID-a" /bridge
like "$RF_OUT" "bridge" "the allowed name answers through the egress process, no proxy settings"
like "$RF_OUT" "addr=198\.1[89]\." "... at an address of the container's synthetic pool"
ocx exec "$ID-a" /bin/rf-probe dns doc.test 1
like "$RF_OUT" "rcode=(NXDOMAIN|REFUSED)" "a name not allowed: the container's stub refuses it"
like "$(inside "$HNS" tcp-connect "$eaddr" 9000)" "^ok" \
	"a connection opened to the container through the engine's interface: answered (ingress)"
like "$(ip -n "$ENS" route show default)" "via $epeer" "the engine's default route: left as it was"
grep -h '"egress\.' "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null | grep -q '/bridge' &&
	ok "the audit records the container's request" || not_ok "the audit records the container's request"

ocx delete --force "$ID-a"
is "$RF_RC" 0 "the container deleted"
like "$(inside "$ENS" tcp-connect "$epeer" 8080)" "ECONNREFUSED" \
	"... nothing leaves its namespace after (fail closed, even without ringfence)"
bundle "$TOP/b" 'c["process"]["args"]='"$LOOP"'
'"$netpath"'"/run/netns/'"$ENS"'"'
ocn create --bundle "$TOP/b" "$ID-x"
is "$RF_RC" 125 "a namespace captured before: refused (125)"
like "$RF_ERR" "ringfence's table already" "... saying so ($RF_ERR)"
[ ! -e "$ROOT/$ID-x" ] && ok "... nothing left" || not_ok "... nothing left"

# ---- a Kubernetes pod: the sandbox captures, the app container joins ---------
KNS=${id}k
engine_netns "$KNS"
kpeer=${pnet%.*}.$((${pnet##*.} - 1)).1
bundle "$TOP/a" 'c["process"]["args"]='"$LOOP"'
c["annotations"]={"ringfence.io/allow-hosts":"svc.test:8080,'"$net"'.2:8080","io.kubernetes.cri.container-type":"sandbox","io.kubernetes.cri.sandbox-id":"'"$ID-s"'"}
'"$netpath"'"/run/netns/'"$KNS"'"'
ocn create --bundle "$TOP/a" --pid-file "$TOP/spid" "$ID-s"
is "$RF_RC" 0 "a pod's sandbox container (containerd's annotations) in the CRI's namespace: created ($RF_ERR)"
ocx start "$ID-s"
spid=$(cat "$TOP/spid" 2>/dev/null)
bundle "$TOP/b" 'c["process"]["args"]='"$LOOP"'
c["annotations"]={"io.kubernetes.cri.container-type":"container","io.kubernetes.cri.sandbox-id":"'"$ID-s"'"}
for n in c["linux"]["namespaces"]:
    if n["type"] in ("network", "ipc", "uts"):
        n["path"] = "/proc/'"$spid"'/ns/" + {"network": "net"}.get(n["type"], n["type"])'
ocn create --bundle "$TOP/b" --pid-file "$TOP/cpid" "$ID-c"
is "$RF_RC" 0 "the pod's app container joining the sandbox's namespaces: created ($RF_ERR)"
ocx start "$ID-c"
get "$ID-c" /app
like "$RF_OUT" "app" "the app container: the allowed name answers through the pod's egress"
ocx exec "$ID-c" /bin/rf-probe tcp-connect "$kpeer" 8080
like "$RF_OUT" "ECONNREFUSED" "... a direct connection through the pod's interface: refused"

# ---- refusals ------------------------------------------------------------------
FNS=${id}f
engine_netns "$FNS"
bundle "$TOP/b" 'c["process"]["args"]='"$LOOP"'
c["annotations"]={"io.kubernetes.cri.container-type":"container"}
'"$netpath"'"/run/netns/'"$FNS"'"'
ocn create --bundle "$TOP/b" "$ID-x"
is "$RF_RC" 125 "an app container whose pod's sandbox is not ringfence's: refused (125)"
like "$RF_ERR" "sandbox is not a ringfence-oci container" "... saying so"
like "$(inside "$FNS" tcp-connect "${pnet%.*}.$((${pnet##*.} - 1)).1" 8080)" "^ok" \
	"... and its namespace is left as the engine made it"
ip netns exec "$FNS" sleep 120 &
register_pid $!
for _ in $(seq 1 50); do
	[ "$(readlink "/proc/$!/ns/net")" = "$(ip netns exec "$FNS" readlink /proc/self/ns/net)" ] && break
	sleep 0.1
done
bundle "$TOP/b" 'c["process"]["args"]='"$LOOP"'
'"$netpath"'"/run/netns/'"$FNS"'"'
ocn create --bundle "$TOP/b" "$ID-x"
is "$RF_RC" 125 "a namespace another runtime's process is in: refused (125)"
like "$RF_ERR" "another runtime's processes" "... saying so"
bundle "$TOP/b" 'c["process"]["args"]='"$LOOP"'
'"$netpath"'"/run/netns/'"$CNS"'"'
ocn create --bundle "$TOP/b" "$ID-x"
is "$RF_RC" 125 "the host's network namespace (ringfence-oci's own): refused (125)"
like "$RF_ERR" "host's network namespace" "... saying so"
[ ! -e "$ROOT/$ID-x" ] && ok "... nothing left" || not_ok "... nothing left"

ocx delete --force "$ID-c"
ocx delete --force "$ID-s"
done_testing
