#!/bin/bash
# tests/integration/oci_idmap.sh — an engine's own id mapping
# (linux.uidMappings and gidMappings with a user namespace: Podman's
# --userns=auto or --uidmap, Kubernetes' user namespaces) under
# ringfence-oci (issue 17), runc on the same bundle as the control.
#
# ringfence maps one id: the container's user to the host id the engine's
# mapping gives it (instead of one it allocates), never to the host's root.
# Asserted: the container's processes run as that host uid and gid, as
# runc's do; inside, the user namespace maps the container's user to it;
# refused (125, saying why, nothing left): a mapping to the host's root,
# a user no range holds.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root (an id mapping is the host root's to give)"

require_oci
RUNC=$(command -v runc || true)
OWN=$(cgroup_own_deepest) || RUNC=""
RCG=${OWN:-}/rft-im-$$
rf_mktemp /tmp
TOP=$REPLY
chmod 0755 "$TOP" # runc's mapped root walks to the bundle
B=$TOP/bundle
ROOT=$TOP/oci-root
RROOT=$TOP/runc-root
mkdir -p "$B" "$ROOT" "$RROOT"
make_image "$B/rootfs"
ID=rf-idm-$$
# a range of this test's (below ringfence's own run uids), no account's
X=$((1500000000 + ($$ % 1000) * 65536))
getent passwd "$X" >/dev/null && skip_all "uid $X has an account here"
# the image's files are the mapped root's, as an engine chowns its layers
chown -R "$X:$X" "$B/rootfs" || bail_out "chown failed"
cleanup() {
	RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$ID" \
		</dev/null >/dev/null 2>&1
	[ -n "$RUNC" ] && timeout 30 "$RUNC" --root "$RROOT" delete --force "$ID" </dev/null >/dev/null 2>&1
	[ -n "$RUNC" ] && oci_cgroup_rm "$RCG"
}
trap 'cleanup; _rf_cleanup' EXIT

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
cp "$B/config.json" "$TOP/base.json"
# config HOSTID [UID] — a user namespace mapping 0..65535 to HOSTID.., the
# process as UID (default 0), a loop
config() {
	python3 - "$TOP/base.json" "$B/config.json" "$1" "${2:-0}" <<'PY' || bail_out "cannot write config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["user"] = {"uid": int(sys.argv[4]), "gid": 0}
c["process"]["args"] = ["/bin/sh", "-c", "while :; do sleep 1; done"]
c["linux"]["namespaces"].append({"type": "user"})
m = [{"containerID": 0, "hostID": int(sys.argv[3]), "size": 65536}]
c["linux"]["uidMappings"] = m
c["linux"]["gidMappings"] = m
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}
run_rt() { # RT ARGS... (into a file: a created container's stdio is the caller's)
	local rt=$1
	shift
	if [ "$rt" = ringfence ]; then
		RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" >"$TOP/o" 2>&1 </dev/null
	else
		timeout 60 "$RUNC" --root "$RROOT" "$@" >"$TOP/o" 2>&1 </dev/null
	fi
	RF_RC=$?
	RF_OUT=$(cat "$TOP/o")
}
ids_of() { awk '/^Uid:/ {u=$2} /^Gid:/ {g=$2} END {print u ":" g}' "/proc/$1/status" 2>/dev/null; }

config "$X"
SIDES=(ringfence)
[ -n "$RUNC" ] && SIDES+=(runc)
declare -A IDS
for rt in "${SIDES[@]}"; do
	[ $rt = runc ] && oci_cgroup_path "$B/config.json" "$RCG/$ID"
	run_rt $rt create --bundle "$B" --pid-file "$TOP/pid.$rt" "$ID"
	is "$RF_RC" 0 "$rt: a container with the engine's mapping 0 -> $X: created ($RF_OUT)"
	run_rt $rt start "$ID"
	pid=$(cat "$TOP/pid.$rt" 2>/dev/null)
	IDS[$rt]=$(ids_of "$pid")
	if [ $rt = ringfence ]; then
		run_rt ringfence exec "$ID" /bin/cat /proc/self/uid_map
		like "$RF_OUT" "^ *0 +$X +1\$" "... inside, the container's user maps to the engine's host id"
	fi
	run_rt $rt delete --force "$ID"
done
is "${IDS[ringfence]}" "$X:$X" "ringfence: its init runs as the host uid and gid the mapping gives its root"
if [ -n "$RUNC" ]; then
	is "${IDS[runc]}" "${IDS[ringfence]}" "control: runc's init the same"
else
	skip "control: runc" "runc is not installed, or our cgroups do not nest"
fi

config 0
run_rt ringfence create --bundle "$B" "$ID"
is "$RF_RC" 125 "a mapping of the container's root to the host's root: refused (125)"
like "$RF_OUT" "host's root" "... saying so"
[ ! -e "$ROOT/$ID" ] && ok "... nothing left" || not_ok "... nothing left"
config "$X" 70000
run_rt ringfence create --bundle "$B" "$ID"
is "$RF_RC" 125 "a user no range holds (70000): refused (125)"
like "$RF_OUT" "no range holds the user 70000" "... saying so"
done_testing
