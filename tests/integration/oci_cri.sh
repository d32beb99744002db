#!/bin/bash
# tests/integration/oci_cri.sh — Kubernetes' path into ringfence-oci
# (issue 17): containerd 1.6's CRI plugin, spoken to as the kubelet does
# (tests/helpers/cri-client.py: RunPodSandbox, CreateContainer,
# StartContainer, ExecSync, ...), with a runtime handler "ringfence" (the
# runc v2 shim, BinaryName ringfence-oci, the pod's ringfence.io/*
# annotations passed through) beside the default handler, runc, as the
# control, the way a RuntimeClass picks one.
#
# containerd runs as a daemon of this test's own (private root, state,
# sockets, config) inside the test's client network namespace, where CNI's
# bridge plugin (Debian's containernetworking-plugins) gives each pod a
# namespace, a veth on a bridge and a default route — a network that
# reaches the test host (egress-net.bash). The image is an OCI archive made
# here and imported into the CRI's namespace; it is the pod's sandbox
# image too.
#
# Asserted, the runc pod as the control: the pod starts with ringfence's
# sandbox container capturing the namespace the CRI made; its app
# container joins it; a direct connection from the app container is
# refused by the capture (ECONNREFUSED) where runc's reaches the test
# host; the host the pod's annotation allows answers through the pod's
# egress; every app container has the two mounts a kubelet asks for — the
# service account token at /var/run/secrets/kubernetes.io/serviceaccount
# (the image's /var/run a symlink to /run) and /dev/termination-log bound
# to the kubelet's file — reads the one and writes the other as under
# runc; the containers are ringfence runs (run.start in the audit log
# with the pod's sandbox id); stopping and removing the pod and container
# through the CRI succeed and leave nothing in ringfence-oci's root.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "containerd as root only here"
for b in containerd ctr containerd-shim-runc-v2 runc; do
	command -v "$b" >/dev/null || skip_all "$b is not installed (scripts/deps.sh installs it)"
done
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] ||
	skip_all "no CNI plugins (Debian's containernetworking-plugins)"
/usr/bin/python3 -c 'import grpc' 2>/dev/null || skip_all "no python3-grpcio (scripts/deps.sh installs it)"
case $(containerd --version 2>/dev/null) in
*" 1.6."* | *" v1.6."*) ;;
*) skip_all "containerd 1.6 only here (this is: $(containerd --version 2>&1 | head -n 1))" ;;
esac
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

require_oci
CRI="/usr/bin/python3 $RF_SRC/tests/helpers/cri-client.py"
rf_mktemp /tmp
TOP=$REPLY
SOCK=$TOP/containerd.sock
OWN=$(cgroup_own_deepest) || skip_all "this process's cgroups do not nest"
CGP=$OWN/rft-cri-$$
podnet=10.234.$((RANDOM % 200 + 20))
mkdir -p "$TOP/root" "$TOP/state" "$TOP/cni" "$TOP/logs" "$TOP/oci-root"
declare -A existed=() netns_before=()
for d in /run/containerd /run/containerd/s /var/run/netns; do
	[ -e "$d" ] && existed[$d]=1
done
# the CRI names each pod's network namespace cni-<uuid>: those there
# before are not this test's
for d in /var/run/netns/cni-*; do
	[ -e "$d" ] && netns_before[${d##*/}]=1
done

cat >"$TOP/ringfence-oci" <<EOF
#!/bin/sh
printf 'ringfence-oci %s\n' "\$*" >>"$TOP/calls.log"
exec "$OCI" --state-dir "$RF_STATE" --cgroup-root "$CGP" "\$@"
EOF
cat >"$TOP/runc" <<EOF
#!/bin/sh
exec "$(command -v runc)" "\$@"
EOF
chmod 0755 "$TOP/ringfence-oci" "$TOP/runc"
IMG=localhost/rf-cri-$$:1
cat >"$TOP/config.toml" <<EOF
version = 2
root = "$TOP/root"
state = "$TOP/state"
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.internal.v1.tracing",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$IMG"
  disable_apparmor = true
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$TOP/runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ringfence]
      runtime_type = "io.containerd.runc.v2"
      pod_annotations = ["ringfence.io/*"]
      container_annotations = ["ringfence.io/*"]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ringfence.options]
        BinaryName = "$TOP/ringfence-oci"
        Root = "$TOP/oci-root"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$TOP/cni"
    max_conf_num = 1
EOF
cat >"$TOP/cni/10-rf.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "rf-cri-$$", "plugins": [
  {"type": "bridge", "bridge": "${id}k", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "dataDir": "$TOP/ipam",
            "ranges": [[{"subnet": "$podnet.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
# the test host answers the pods (the control's direct connection)
ip -n "$HNS" route add "$podnet.0/24" via "$net.1" || bail_out "no route back to the pods"
ip netns exec "$CNS" sysctl -qw net.ipv4.ip_forward=1

PODS=()
RUNC_IDS=()
cleanup_cri() {
	local p m
	if [ -n "${CPID:-}" ] && kill -0 "$CPID" 2>/dev/null; then
		for p in "${PODS[@]}"; do
			timeout 30 $CRI "$SOCK" stopp "$p" >/dev/null 2>&1
			timeout 30 $CRI "$SOCK" rmp "$p" >/dev/null 2>&1
		done
		kill -TERM "$CPID" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$CPID" 2>/dev/null || break
			sleep 0.1
		done
	fi
	# the shims this containerd started (pids from its log), checked
	# against its socket before they are signalled
	for p in $(sed -n 's|.*msg="starting signal loop" namespace=k8s.io .* pid=\([0-9]*\).*|\1|p' \
		"$TOP/containerd.log" 2>/dev/null); do
		[[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" == *"-address $SOCK "* ]] &&
			kill -KILL "$p" 2>/dev/null
	done
	# what a runtime may still hold, by id, through the runtime that made it
	for c in "$TOP"/oci-root/k8s.io/*; do
		[ -d "$c" ] && timeout 30 "$OCI" --state-dir "$RF_STATE" --root "$TOP/oci-root/k8s.io" \
			delete --force "${c##*/}" </dev/null >/dev/null 2>&1
	done
	for c in "${RUNC_IDS[@]}"; do
		[ -e "/run/containerd/runc/k8s.io/$c" ] &&
			timeout 30 runc --root /run/containerd/runc/k8s.io delete --force "$c" </dev/null >/dev/null 2>&1
	done
	# a pod's namespace the CRI did not remove (RemovePodSandbox failed):
	# only one made while this test's containerd ran
	for d in /var/run/netns/cni-*; do
		[ -e "$d" ] && [ -z "${netns_before[${d##*/}]:-}" ] && ip netns del "${d##*/}" 2>/dev/null
	done
	grep -o " $TOP/[^ ]*" /proc/self/mountinfo | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	for h in /run/containerd/s /run/containerd; do
		[ -n "${existed[$h]:-}" ] || rmdir "$h" 2>/dev/null
	done
	for h in /sys/fs/cgroup/*/"${CGP#/}" /sys/fs/cgroup/"${CGP#/}"; do
		[ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
}
trap 'cleanup_cri; _rf_cleanup' EXIT

nsenter --net=/run/netns/"$CNS" containerd --config "$TOP/config.toml" </dev/null \
	>"$TOP/containerd.log" 2>&1 &
CPID=$!
register_pid "$CPID"
up=no
for _ in $(seq 150); do
	kill -0 "$CPID" 2>/dev/null || break
	v=$($CRI "$SOCK" version 2>/dev/null) && up=yes && break
	sleep 0.1
done
[ "$up" = yes ] ||
	skip_all "containerd's CRI does not serve here: $(grep -m 3 -i 'error\|fail' "$TOP/containerd.log" | tr '\n' ' ')"
like "$v" "containerd" "containerd's CRI of the test's own answers the kubelet's Version"

make_image "$TOP/rootfs"
ln -s busybox "$TOP/rootfs/bin/sleep"
# a Debian-like image: /var/run is a symlink to /run
mkdir -p "$TOP/rootfs/run" "$TOP/rootfs/var"
ln -s /run "$TOP/rootfs/var/run"
# the kubelet's host side of every container's two mounts: its
# termination log (a file, 0666) and the service account's projected
# volume (with its ..data links)
TOKEN=eyJhbGciOiJSUzI1NiJ9.cri-$$-$RANDOM
SA=$TOP/kubelet/pods/sa/volumes/kubernetes.io~projected/kube-api-access-q2x9d
mkdir -p "$SA/..2026_12_04_21_00_00.1"
printf '%s' "$TOKEN" >"$SA/..2026_12_04_21_00_00.1/token"
ln -s ..2026_12_04_21_00_00.1 "$SA/..data"
ln -s ..data/token "$SA/token"
chmod -R a+rX "$TOP/kubelet"
tar -C "$TOP/rootfs" -cf "$TOP/layer.tar" . || bail_out "cannot tar the image"
/usr/bin/python3 "$RF_SRC/tests/helpers/oci-archive.py" "$TOP/layer.tar" "$TOP/image.tar" "$IMG" \
	'["/bin/sh", "-c", "while :; do sleep 1; done"]' || bail_out "cannot make the OCI archive"
ctr --address "$SOCK" -n k8s.io image import "$TOP/image.tar" >/dev/null 2>&1 ||
	bail_out "ctr image import failed"

# pod HANDLER NAME ANNOTATIONS-JSON — a pod sandbox and its app container,
# started, with the namespaces a kubelet asks for a pod without
# shareProcessNamespace (network and ipc the pod's, pid the container's);
# POD and CTR get their ids
pod() {
	local handler=$1 name=$2
	cat >"$TOP/$name.pod.json" <<EOF
{"metadata": {"name": "$name", "uid": "uid-$name-$$", "namespace": "rf-test", "attempt": 0},
 "hostname": "$name", "log_directory": "$TOP/logs/$name",
 "annotations": $3,
 "linux": {"cgroup_parent": "$CGP",
           "security_context": {"namespace_options": {"network": 0, "pid": 1, "ipc": 0}}}}
EOF
	mkdir -p "$TOP/kubelet/pods/$name/containers/app"
	: >"$TOP/kubelet/pods/$name/containers/app/7c1e0f2a"
	chmod 0666 "$TOP/kubelet/pods/$name/containers/app/7c1e0f2a"
	# the two mounts a kubelet asks for every container (PROPAGATION_PRIVATE: 0)
	cat >"$TOP/$name.ctr.json" <<EOF
{"metadata": {"name": "app", "attempt": 0}, "image": {"image": "$IMG"},
 "command": ["/bin/sh", "-c", "while :; do sleep 1; done"], "log_path": "app.log",
 "mounts": [{"container_path": "/var/run/secrets/kubernetes.io/serviceaccount",
             "host_path": "$SA", "readonly": true, "propagation": 0},
            {"container_path": "/dev/termination-log",
             "host_path": "$TOP/kubelet/pods/$name/containers/app/7c1e0f2a", "propagation": 0}],
 "linux": {"security_context": {"namespace_options": {"network": 0, "pid": 1, "ipc": 0}}}}
EOF
	mkdir -p "$TOP/logs/$name"
	POD=$(timeout 120 $CRI "$SOCK" runp "$TOP/$name.pod.json" "$handler" 2>"$TOP/err")
	RF_RC=$?
	RF_ERR=$(cat "$TOP/err")
	[ -n "$POD" ] && PODS+=("$POD")
	[ "$RF_RC" = 0 ] || return
	CTR=$(timeout 120 $CRI "$SOCK" create "$POD" "$TOP/$name.ctr.json" "$TOP/$name.pod.json" 2>"$TOP/err") &&
		timeout 60 $CRI "$SOCK" start "$CTR" 2>>"$TOP/err"
	RF_RC=$?
	RF_ERR=$(cat "$TOP/err")
}
# cx CTR CMD... — ExecSync in container CTR; RF_RC, RF_OUT
cx() {
	local c=$1
	shift
	RF_OUT=$(timeout 90 $CRI "$SOCK" exec "$c" 30 "$@" 2>&1)
	RF_RC=$?
}

pod runc control '{}'
is "$RF_RC" 0 "control: a pod through the default handler (runc) runs ($RF_ERR)"
RCTR=$CTR RPOD=$POD
RUNC_IDS=("$RCTR" "$RPOD")
cx "$RCTR" /bin/rf-probe tcp-connect 169.254.169.254 8080
like "$RF_OUT" "^ok" "control: runc's app container reaches the test host directly through CNI"
# kubelet_mounts HANDLER-NAME CTR WHAT — the token through /var/run, the
# termination message into the kubelet's file
kubelet_mounts() {
	cx "$2" /bin/cat /var/run/secrets/kubernetes.io/serviceaccount/token
	is "$RF_RC/$RF_OUT" "0/$TOKEN" "$3: the service account token at /var/run/secrets/... (/var/run -> /run in the image)"
	cx "$2" /bin/sh -c "echo done-$1 >/dev/termination-log"
	is "$RF_RC/$(cat "$TOP/kubelet/pods/$1/containers/app/7c1e0f2a")" "0/done-$1" \
		"$3: the termination message in the kubelet's file (/dev/termination-log)"
}
kubelet_mounts control "$RCTR" "control: runc"

pod ringfence agent "{\"ringfence.io/allow-hosts\": \"$net.2:8080\", \"ringfence.io/agent\": \"cri-$$\"}"
is "$RF_RC" 0 "a pod through the ringfence handler (its RuntimeClass) runs ($RF_ERR)"
FCTR=$CTR FPOD=$POD
[ -n "$FPOD" ] && [ -e "$TOP/oci-root/k8s.io/$FPOD" ] &&
	ok "... its sandbox is a ringfence-oci container" || not_ok "... its sandbox is a ringfence-oci container"
kubelet_mounts agent "$FCTR" "ringfence"
cx "$FCTR" /bin/rf-probe tcp-connect 169.254.169.254 8080
like "$RF_OUT" "ECONNREFUSED" "the app container's direct connection: refused by the pod's capture"
cx "$FCTR" /bin/rf-probe http-get "$net.2" 8080 "$net.2:8080" /cri-pod
like "$RF_OUT" "cri-pod" "the host the pod's annotation allows answers through the pod's egress"
grep -h '"run\.start"' "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null | grep -q "cri-$$" &&
	ok "the pod's containers are ringfence runs (run.start, its agent)" ||
	not_ok "the pod's containers are ringfence runs (run.start, its agent)"

for c in "$FCTR" "$RCTR"; do
	timeout 60 $CRI "$SOCK" stop "$c" >/dev/null 2>&1
	timeout 60 $CRI "$SOCK" rm "$c" >/dev/null 2>&1
done
for p in "$FPOD" "$RPOD"; do
	timeout 60 $CRI "$SOCK" stopp "$p" 2>"$TOP/err" && timeout 60 $CRI "$SOCK" rmp "$p" 2>>"$TOP/err"
	is "$?" 0 "StopPodSandbox, RemovePodSandbox ($(cat "$TOP/err"))"
done
PODS=()
left=$(ls "$TOP/oci-root/k8s.io" 2>/dev/null)
is "$left" "" "nothing left in ringfence-oci's root"
done_testing
