#!/bin/bash
# tests/integration/oci_devices.sh — linux.devices under ringfence-oci
# (issue 17), runc on the same bundle as the control. A container never
# makes a device node (no mknod in its user namespace): ringfence-oci binds
# the host's node of the same type and numbers, at the config's path.
#
# The test's own nodes are made in the host's /dev (a null device, 1:3,
# under names of this test's, removed at the end). Asserted: a device at
# its own path and one at another path inside (found on the host by its
# numbers) are character devices the container writes to, as in runc's
# container; refused (125, saying why, nothing left): numbers no host node
# has, a host node the container's user could not open (mode 0600), a
# FIFO.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root (device nodes of the test's own in /dev)"

require_oci
RUNC=$(command -v runc || true)
OWN=$(cgroup_own_deepest) || RUNC=""
RCG=${OWN:-}/rft-dv-$$
rf_mktemp /tmp
TOP=$REPLY
B=$TOP/bundle
ROOT=$TOP/oci-root
RROOT=$TOP/runc-root
mkdir -p "$B" "$ROOT" "$RROOT"
make_image "$B/rootfs"
ID=rf-dev-$$
N=rft$(printf '%x' $$)
NODE=/dev/$N-null PRIV=/dev/$N-priv
cleanup() {
	RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$ID" \
		</dev/null >/dev/null 2>&1
	rm -f "$NODE" "$PRIV"
	[ -n "$RUNC" ] && oci_cgroup_rm "$RCG"
}
trap 'cleanup; _rf_cleanup' EXIT
mknod -m 0666 "$NODE" c 1 3 && mknod -m 0600 "$PRIV" c 1 3 || bail_out "mknod failed"

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
cp "$B/config.json" "$TOP/base.json"
# config DEVICES-JSON — the base, terminal off, writing to its devices
config() {
	python3 - "$TOP/base.json" "$B/config.json" "$1" <<'PY' || bail_out "cannot write config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["linux"]["devices"] = json.loads(sys.argv[3])
paths = " ".join(d["path"] for d in c["linux"]["devices"])
c["process"]["args"] = ["/bin/sh", "-c",
    "for d in " + paths + "; do test -c $d && echo hi >$d && echo \"$d: written\"; done"]
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}
run_rt() { # RT — RT run of the bundle; RF_RC, RF_OUT
	if [ "$1" = ringfence ]; then
		RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" run --bundle "$B" \
			"$ID" 2>&1 </dev/null)
	else
		oci_cgroup_path "$B/config.json" "$RCG/$ID"
		RF_OUT=$(cd "$B" && timeout 60 "$RUNC" --root "$RROOT" run "$ID" 2>&1 </dev/null)
	fi
	RF_RC=$?
}

config "[{\"path\": \"$NODE\", \"type\": \"c\", \"major\": 1, \"minor\": 3, \"fileMode\": 438},
	{\"path\": \"/dev/sub/xnull\", \"type\": \"c\", \"major\": 1, \"minor\": 3, \"fileMode\": 438}]"
want="$NODE: written
/dev/sub/xnull: written"
run_rt ringfence
is "$RF_RC" 0 "two devices: the container runs ($RF_OUT)"
is "$RF_OUT" "$want" "... each a character device it writes to (at its own path, and found by its numbers)"
if [ -n "$RUNC" ]; then
	run_rt runc
	is "$RF_OUT" "$want" "control: runc's container the same"
else
	skip "control: runc" "runc is not installed, or our cgroups do not nest"
fi

# numbers no node on the host has (the control: none beneath /dev)
maj=239 min=$((40000 + $$ % 20000))
if find /dev -maxdepth 3 -exec stat -c '%t:%T %F' {} + 2>/dev/null |
	grep -q "^$(printf '%x:%x' $maj $min) character"; then
	skip "a device the host has no node for" "the host has $maj:$min"
else
	config "[{\"path\": \"/dev/none\", \"type\": \"c\", \"major\": $maj, \"minor\": $min}]"
	run_rt ringfence
	is "$RF_RC" 125 "numbers no host node has: refused (125)"
	like "$RF_OUT" "no such node on the host" "... saying so"
fi
config "[{\"path\": \"$PRIV\", \"type\": \"c\", \"major\": 1, \"minor\": 3}]"
# (the same numbers as null: the node at the config's own path is the one taken)
run_rt ringfence
is "$RF_RC" 125 "a host node the container's user could not open (0600): refused (125)"
like "$RF_OUT" "mode 0600" "... saying so"
config '[{"path": "/dev/fifo", "type": "p", "major": 0, "minor": 0}]'
run_rt ringfence
is "$RF_RC" 125 "a FIFO device: refused (125)"
[ ! -e "$ROOT/$ID" ] && ok "... nothing left" || not_ok "... nothing left"
done_testing
