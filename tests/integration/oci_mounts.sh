#!/bin/bash
# tests/integration/oci_mounts.sh — a kubelet's mounts under ringfence-oci
# (issue 17 audit), runc beside it on the same bundle.
#
# A kubelet asks every container for two mounts that containerd's CRI
# writes into config.json as binds ("rbind", "rprivate", "rw"/"ro"): a
# host file onto /dev/termination-log (beneath the runtime's own /dev),
# and the service account's projected volume at
# /var/run/secrets/kubernetes.io/serviceaccount, where the image's
# /var/run is a symlink to /run. Asserted: the container reads the token
# through the volume's own ..data links and writes its termination message
# to the host's file, the token volume is read-only (EROFS), exactly as
# under runc; the mount lands at /run/secrets/... (the symlink followed
# inside the root), never covered by ringfence's own secrets, which an
# image's container gets at /run/ringfence/secrets (docs/OCI.md), on the
# container's root itself (a bind over /run, even through /var/run: 125).
#
# The CVE-2019-19921 / CVE-2021-30465 class, each asserted to fail for its
# reason: an image symlink pointing out of the root (absolute, and through
# "../..") lands the mount inside the root, nothing made on the host (runc
# beside it); a symlink onto ringfence's /run/ringfence or /proc is
# refused by the resolved path (125, naming it); a symlink loop is refused
# with ELOOP; binds over ringfence's own /dev nodes are refused.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root (a kubelet's host files are root's)"

require_oci
rf_mktemp /tmp
TOP=$REPLY
B=$TOP/bundle
ROOT=$TOP/oci-root
mkdir -p "$B" "$ROOT"
make_image "$B/rootfs"
# a Debian-like image: /var/run -> /run, /var/lock -> ../run/lock
mkdir -p "$B/rootfs/run/lock" "$B/rootfs/var"
ln -s /run "$B/rootfs/var/run"
ln -s ../run/lock "$B/rootfs/var/lock"
ID=rf-mnt-$$

# the kubelet's host side, as it lays it out for a pod
POD=$TOP/kubelet/pods/0b1c-$$
TL=$POD/containers/worker/5f3a9c1e
SA=$POD/volumes/kubernetes.io~projected/kube-api-access-x7k2p
mkdir -p "$(dirname "$TL")" "$SA/..2026_12_04_20_00_00.1"
: >"$TL"
chmod 0666 "$TL" # the kubelet's: any container user may write its message
TOKEN=eyJhbGciOiJSUzI1NiJ9.tok-$$-$RANDOM
printf '%s' "$TOKEN" >"$SA/..2026_12_04_20_00_00.1/token"
printf 'default' >"$SA/..2026_12_04_20_00_00.1/namespace"
ln -s ..2026_12_04_20_00_00.1 "$SA/..data"
ln -s ..data/token "$SA/token"
ln -s ..data/namespace "$SA/namespace"
chmod -R a+rX "$TOP/kubelet"

oci() { # ringfence-oci ARGS...; RF_RC, RF_OUT, RF_ERR
	RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" \
		2>"$TOP/err" </dev/null)
	RF_RC=$?
	RF_ERR=$(cat "$TOP/err")
}
# config PYTHON — edit $B/config.json with a python statement on `c`
config() {
	python3 - "$B/config.json" "$1" <<'PY' || bail_out "cannot edit config.json"
import json, sys
p, expr = sys.argv[1], sys.argv[2]
c = json.load(open(p))
exec(expr)
json.dump(c, open(p, "w"), indent=1)
PY
}
RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
cp "$B/config.json" "$TOP/base.json"
# kubelet — the base config with the two mounts exactly as containerd's
# CRI writes a kubelet's, and the command ARGS (a shell line)
kubelet() {
	cp "$TOP/base.json" "$B/config.json"
	config "c['process']['terminal']=False
c['process']['args']=['/bin/sh','-c','''$1''']
c['mounts'].append({'destination':'/dev/termination-log','type':'bind','source':'$TL','options':['rbind','rprivate','rw']})
c['mounts'].append({'destination':'/var/run/secrets/kubernetes.io/serviceaccount','type':'bind','source':'$SA','options':['rbind','rprivate','ro']})"
}
# runc's cgroup beneath this test's own (or no runc)
RUNC=""
if ! command -v runc >/dev/null 2>&1; then
	diag "runc not installed: no side-by-side control"
elif cg=$(cgroup_own_deepest); then
	RUNC=runc
else
	diag "this process's cgroups differ between hierarchies: no runc control"
fi
runc_run() { # the bundle under runc; RC_RC, RC_OUT
	oci_cgroup_path "$B/config.json" "$cg/rf-test-runc-$$"
	RC_OUT=$(cd "$B" && timeout 60 runc --root "$TOP/runc-root" run "$ID-runc" </dev/null 2>"$TOP/runc-err")
	RC_RC=$?
	oci_cgroup_rm "$cg/rf-test-runc-$$"
}

# --- the kubelet's two mounts ------------------------------------------------
LINE='cat /var/run/secrets/kubernetes.io/serviceaccount/token; echo;
cat /run/secrets/kubernetes.io/serviceaccount/namespace; echo;
echo "exit: OOMKilled? no" >/dev/termination-log && echo written;
echo x >/var/run/secrets/kubernetes.io/serviceaccount/new || echo ro'
kubelet "$LINE"
oci run -b "$B" "$ID"
is "$RF_RC" 0 "a kubelet's termination-log and service account mounts: the container runs"
like "$RF_ERR" "new: Read-only file system" "... the token volume is read-only (EROFS)"
is "$RF_OUT" "$TOKEN
default
written
ro" "... reads the token through /var/run (a symlink to /run) and the volume's ..data links, writes its message, cannot write the token volume"
is "$(cat "$TL")" "exit: OOMKilled? no" "... the termination message is in the kubelet's host file"
[ -e "$B/rootfs/run/secrets" ] && not_ok "... nothing made in the image" ||
	ok "... nothing made in the image (its /run/secrets stays absent)"
if [ -n "$RUNC" ]; then
	: >"$TL"
	kubelet "$LINE"
	runc_run
	is "$RC_RC/$RC_OUT" "$RF_RC/$RF_OUT" "control: runc runs the same bundle to the same output and status"
	is "$(cat "$TL")" "exit: OOMKilled? no" "control: ... and writes the same termination message"
	rm -rf "$B/rootfs/run/secrets" # runc made its mount points in the image
fi

# the same through the relative link: /var/lock -> ../run/lock
kubelet 'cat /run/lock/sa/token'
config "c['mounts'][-1]['destination']='/var/lock/sa'"
oci run -b "$B" "$ID"
is "$RF_RC/$RF_OUT" "0/$TOKEN" "a destination through a relative symlink (../run/lock) lands at /run/lock/sa"

# --- the run's own secrets beside the kubelet's --------------------------------
PDIR=/etc/ringfence/policies
NAME=rft$(printf '%x' $$)-mounts
made_dirs=()
for d in /etc/ringfence "$PDIR"; do
	[ -d "$d" ] || { mkdir "$d" && made_dirs=("$d" "${made_dirs[@]}"); } || bail_out "cannot make $d"
done
cleanup() {
	rm -f "$PDIR/$NAME.json"
	local d
	for d in "${made_dirs[@]}"; do rmdir "$d" 2>/dev/null; done
}
trap 'cleanup; _rf_cleanup' EXIT
VF=file-secret-$$-$RANDOM
printf '%s' "$VF" | "$RF_BIN" secret set --state-dir "$RF_STATE" "tok-f-$$" >/dev/null 2>&1 ||
	bail_out "ringfence secret set failed"
cat >"$PDIR/$NAME.json" <<EOF
{"version": 1, "identity": {"agent": "mnt-$$"},
 "secrets": [{"name": "api_key", "deliver": "file", "from": "store:tok-f-$$"}]}
EOF
kubelet 'cat /run/ringfence/secrets/api_key; echo; cat /var/run/secrets/kubernetes.io/serviceaccount/token; echo; ls /run/secrets'
config "c['annotations']={'ringfence.io/policy':'$NAME'}"
oci run -b "$B" "$ID"
is "$RF_RC" 0 "a named policy's file secret beside the kubelet's mounts: runs ($RF_ERR)"
is "$RF_OUT" "$VF
$TOKEN
kubernetes.io" "... ringfence's secret at /run/ringfence/secrets, the token at /run/secrets (only the kubelet's there)"
kubelet 'true'
config "c['annotations']={'ringfence.io/policy':'$NAME'}
c['mounts'][-1]['destination']='/run/ringfence/secrets'"
oci run -b "$B" "$ID"
is "$RF_RC" 125 "a mount over ringfence's own secrets (/run/ringfence/secrets): refused (125)"
like "$RF_ERR" "/run/ringfence" "... naming ringfence's /run/ringfence"
# containerd's default spec has a tmpfs at /run: the container's own,
# ringfence's /run/ringfence made on it, the kubelet's mount beneath it
kubelet 'cat /run/ringfence/secrets/api_key; echo; cat /var/run/secrets/kubernetes.io/serviceaccount/token'
config "c['annotations']={'ringfence.io/policy':'$NAME'}
c['mounts'].insert(0, {'destination':'/run','type':'tmpfs','source':'tmpfs','options':['nosuid','strictatime','mode=755','size=65536k']})"
oci run -b "$B" "$ID"
is "$RF_RC/$RF_OUT" "0/$VF
$TOKEN" "a tmpfs at /run (containerd's default): the file secret and the token both there"

# a mount over /run itself, which holds ringfence's /run/ringfence (the
# run's identity, broker, secrets: made on the container's root)
mkdir -p "$TOP/host-run"
chmod 0777 "$TOP/host-run" # writable by anyone: only the refusal keeps it empty
kubelet 'true'
config "c['annotations']={'ringfence.io/policy':'$NAME'}
c['mounts'].pop()
c['mounts'].append({'destination':'/var/run','type':'bind','source':'$TOP/host-run','options':['rbind','rw']})"
oci run -b "$B" "$ID"
is "$RF_RC" 125 "a bind over /run (as /var/run, the image's symlink to it): refused (125)"
like "$RF_ERR" "/var/run is /run inside the root: .*a bind at /run" "... naming the bind at /run, which would hold ringfence's own"
[ -z "$(ls -A "$TOP/host-run")" ] && ok "... nothing made in the host's directory" ||
	not_ok "... nothing made in the host's directory ($(ls -A "$TOP/host-run"))"

# --- symlinks out of the root, onto ringfence's own, loops -------------------
mkdir -p "$TOP/host-target"
ln -s "$TOP/host-target" "$B/rootfs/abs-out"
ln -s "../../../../../../../../..$TOP/host-target" "$B/rootfs/var/rel-out"
for link in /abs-out /var/rel-out; do
	kubelet "cat $TOP/host-target/sa/token"
	config "c['mounts'][-1]['destination']='$link/sa'"
	oci run -b "$B" "$ID"
	is "$RF_RC/$RF_OUT" "0/$TOKEN" "a symlink out of the root ($link -> $(readlink "$B/rootfs$link")): the mount lands inside the root, at $TOP/host-target/sa there"
	[ -z "$(ls -A "$TOP/host-target")" ] && ok "... nothing made in the host's $TOP/host-target" ||
		not_ok "... nothing made in the host's $TOP/host-target ($(ls -A "$TOP/host-target"))"
	if [ -n "$RUNC" ]; then
		runc_run
		is "$RC_RC/$RC_OUT" "0/$TOKEN" "control: runc lands it inside the root too"
		[ -z "$(ls -A "$TOP/host-target")" ] && ok "control: ... nothing on the host under runc" ||
			not_ok "control: ... nothing on the host under runc"
		rm -rf "${B:?}/rootfs${TOP:?}"
	fi
done

ln -s /run/ringfence "$B/rootfs/var/rf"
ln -s /proc/self "$B/rootfs/var/me"
ln -s loop-b "$B/rootfs/loop-a"
ln -s loop-a "$B/rootfs/loop-b"
refused() { # DESTINATION WORDS WHAT
	kubelet true
	config "c['mounts'][-1]['destination']='$1'"
	oci run -b "$B" "$ID"
	is "$RF_RC" 125 "$3: refused (125)"
	like "$RF_ERR" "$2" "... saying so"
	[ -z "$(ls -A "$ROOT")" ] && ok "... nothing left in --root" || not_ok "... nothing left in --root"
}
refused /var/rf/x "/var/rf/x is /run/ringfence/x inside the root" \
	"a symlink onto ringfence's /run/ringfence"
refused /var/me/x "/var/me/x is /proc/self/x inside the root" "a symlink onto /proc"
refused /loop-a/x "Too many levels of symbolic links" "a symlink loop (ELOOP)"
refused /dev/null "/dev/null: not over" "a bind over ringfence's /dev/null"
refused /dev/pts/ptmx "/dev/pts/ptmx: not over" "a bind beneath ringfence's /dev/pts"
refused /dev/console "/dev/console: not over" "a bind over the console"
kubelet 'cat /dev/k8s/sa/token'
config "c['mounts'][-1]['destination']='/dev/k8s/sa'"
oci run -b "$B" "$ID"
is "$RF_RC/$RF_OUT" "0/$TOKEN" "control: a directory bind elsewhere beneath /dev: taken"

done_testing
