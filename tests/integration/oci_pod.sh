#!/bin/bash
# tests/integration/oci_pod.sh — a pod under ringfence-oci (issue 17): the
# sandbox container's run makes the pod's network, ipc and uts namespaces
# and enforces the pod's egress; a container joining them by path (as
# Podman's pods and Kubernetes' containers do) gets that egress and none
# of its own.
#
# Asserted, with the sandbox container itself as the control: the joined
# container is in the sandbox's network, ipc and uts namespaces (its host
# name is the pod's); through transparent capture (no proxy settings) it
# reaches the host the pod's annotation allows (an HTTP answer from the
# test host) and nothing else (a name not allowed: NXDOMAIN; an allowed
# name's other port: refused); the pod's audit records its connections;
# a joined container with egress of its own is refused (125), as is
# joining a pid namespace (an engine's network namespace: oci_netns.sh);
# once the sandbox container is gone, the joined container's connections
# fail (fail closed).
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
ID=rf-pod-$$
cleanup_containers() {
	local c
	for c in "$ID-b" "$ID-a" "$ID-x"; do
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
LOOP='["/bin/sh","-c","while :; do sleep 1; done"]'

# the pod's sandbox container: its own namespaces, the pod's egress
bundle "$TOP/a" 'c["process"]["args"]='"$LOOP"'
c["hostname"]="pod-'$$'"
c["annotations"]={"ringfence.io/allow-hosts":"svc.test:8080,'"$net"'.2:8080","ringfence.io/agent":"pod-'$$'"}'
ocn create --bundle "$TOP/a" --pid-file "$TOP/apid" "$ID-a"
is "$RF_RC" 0 "the pod's sandbox container: created ($RF_ERR)"
ocx start "$ID-a"
apid=$(cat "$TOP/apid" 2>/dev/null)
[ -n "$apid" ] || bail_out "no sandbox container"

join='for n in c["linux"]["namespaces"]:
    if n["type"] in ("network", "ipc", "uts"):
        n["path"] = "/proc/'$apid'/ns/" + {"network": "net"}.get(n["type"], n["type"])
'
bundle "$TOP/b" "c['process']['args']=$LOOP
$join"
ocn create --bundle "$TOP/b" --pid-file "$TOP/bpid" "$ID-b"
is "$RF_RC" 0 "a container joining the pod's namespaces by path: created ($RF_ERR)"
ocx start "$ID-b"
bpid=$(cat "$TOP/bpid" 2>/dev/null)
for ns in net ipc uts; do
	a=$(readlink "/proc/$apid/ns/$ns") b=$(readlink "/proc/$bpid/ns/$ns")
	[ -n "$a" ] && [ "$a" = "$b" ] && ok "... in the sandbox's $ns namespace" ||
		not_ok "... in the sandbox's $ns namespace ($a, $b)"
done
ocx exec "$ID-b" /bin/hostname
is "$RF_OUT" "pod-$$" "... its host name is the pod's"

# the pod's egress, with the sandbox container as the control
# (the image's static busybox resolves no names itself and its wget
# crashes: nslookup asks the pod's stub, rf-probe connects to the address
# it answered, its Host header names the name)
get() { # CONTAINER PORT PATH — an HTTP GET of svc.test from inside; RF_OUT
	ocx exec "$1" /bin/sh -c 'a=$(busybox nslookup svc.test 127.0.0.1 2>/dev/null |
		busybox awk "/^Address/ && \$2 ~ /^[0-9.]+\$/ {print \$2}" | busybox tail -n 1)
		echo "addr=$a"; /bin/rf-probe http-get "$a" "$0" "svc.test:$0" "$1" 2>&1
		echo "rc=$?"' "$2" "$3"
}
for c in a b; do
	who=$([ $c = a ] && echo "the sandbox (control)" || echo "the joined container")
	get "$ID-$c" 8080 /pod-$c
	like "$RF_OUT" "pod-$c" "$who: the allowed host answers through capture, no proxy settings"
	like "$RF_OUT" "addr=198\.1[89]\." "... at an address of the pod's synthetic pool"
	ocx exec "$ID-$c" /bin/rf-probe dns doc.test 1
	like "$RF_OUT" "rcode=(NXDOMAIN|REFUSED)" "$who: a name the pod does not allow: $RF_OUT"
	get "$ID-$c" 8082 /
	# (a 403 saying why when the request arrives before the decision, a
	# reset when the decision is first: both the egress process's)
	like "$RF_OUT" "403 Forbidden.*egress to svc.test:8082 refused|errno=ECONNRESET" \
		"$who: the allowed name's other port: refused by the pod's egress"
done
grep -h '"egress\.' "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null | grep -q '/pod-b' &&
	ok "the pod's audit records the joined container's request (its path)" ||
	not_ok "the pod's audit records the joined container's request (its path)"
grep -h '"egress\.deny"' "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null | grep -q '"port":8082' &&
	ok "... and the other port's refusal" || not_ok "... and the other port's refusal"

# refusals
bundle "$TOP/b" "c['process']['args']=$LOOP
c['annotations']={'ringfence.io/allow-hosts':'svc.test:4443'}
$join"
ocn create --bundle "$TOP/b" "$ID-x"
is "$RF_RC" 125 "a joined container with egress of its own: refused (125)"
like "$RF_ERR" "pod's egress" "... saying the pod's egress is its sandbox's"
bundle "$TOP/b" "c['process']['args']=$LOOP
for n in c['linux']['namespaces']:
    if n['type'] == 'pid': n['path'] = '/proc/$apid/ns/pid'"
ocn create --bundle "$TOP/b" "$ID-x"
is "$RF_RC" 125 "joining a pid namespace: refused (125, by design: a container owns its pid namespace)"
like "$(cat "$TOP/err")" "linux.namespaces.*joining the pid namespace .*: refused" "... naming the field"

# the pod's egress ends with its sandbox: fail closed
ocx delete --force "$ID-a"
is "$RF_RC" 0 "the sandbox container deleted"
get "$ID-b" 8080 /after
like "$RF_OUT" "rc=[1-9]" "... the joined container reaches nothing after (fail closed)"
ocx delete --force "$ID-b"

done_testing
