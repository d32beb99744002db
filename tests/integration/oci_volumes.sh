#!/bin/bash
# tests/integration/oci_volumes.sh — the owners of a container's volumes
# (the config's binds) under ringfence-oci (issue 17), runc on the same
# bundle as the control.
#
# runc without a user namespace shows host uid N as uid N and writes as the
# container's uid. ringfence gives a container a host uid of its own, its
# user namespace mapping one id, and idmaps every bind through it as it
# idmaps the root (docs/OCI.md, "Volumes"). Asserted, each beside runc: a
# root container sees the volume's root-owned files as uid and gid 0 and
# writes them; what it creates lands on the host as 0:0; another owner
# (uid 1000) is nobody (65534) where runc shows 1000 (the one-id
# namespace: the documented difference), and neither writes it (the
# bundle, from ringfence-oci spec, gives runc's root no capability;
# ringfence gives none); a container of uid 1000 sees its own files as
# 1000 and what it creates lands as 1000; a read-only bind refuses a write
# (EROFS); a tmpfs source works. With the engine's own id mapping
# (linux.uidMappings: runc's user namespace) nothing is idmapped: the same
# owners as under runc. Refused (125, one line naming the mount, nothing
# left; through create too): a source on ramfs, overlayfs or FUSE
# (bindfs, where installed), which the kernel does not idmap, and one with
# a ramfs mounted beneath it; a /proc source.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root (volume owners are the host root's to give)"

require_oci
RUNC=$(command -v runc || true)
OWN=$(cgroup_own_deepest) || RUNC=""
[ -n "$RUNC" ] || diag "runc not installed, or our cgroups do not nest: no runc control"
RCG=${OWN:-}/rft-vol-$$
rf_mktemp /tmp
TOP=$REPLY
chmod 0755 "$TOP" # runc's mapped root and a container of uid 1000 walk to it
B=$TOP/bundle
ROOT=$TOP/oci-root
RROOT=$TOP/runc-root
mkdir -p "$B" "$ROOT" "$RROOT"
make_image "$B/rootfs"
ln -s busybox "$B/rootfs/bin/stat"
ID=rf-vol-$$
MOUNTED=()
cleanup() {
	local m
	RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$ID" \
		</dev/null >/dev/null 2>&1
	if [ -n "$RUNC" ]; then
		timeout 30 "$RUNC" --root "$RROOT" delete --force "$ID" </dev/null >/dev/null 2>&1
		oci_cgroup_rm "$RCG"
	fi
	for m in "${MOUNTED[@]}"; do umount "$m" 2>/dev/null; done
}
trap 'cleanup; _rf_cleanup' EXIT

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
cp "$B/config.json" "$TOP/base.json"
# config UID:GID LINE [PYTHON] — the base config, the process as UID:GID
# running the shell LINE, the mounts $VOL at /vol and $RO at /ro
# (read-only), then the python statement PYTHON on `c`
config() {
	python3 - "$TOP/base.json" "$B/config.json" "$1" "$2" "$VOL" "$RO" "${3:-}" <<'PY' ||
import json, sys
src, dst, ids, line, vol, ro, expr = sys.argv[1:8]
c = json.load(open(src))
u, g = (int(x) for x in ids.split(":"))
c["process"]["terminal"] = False
c["process"]["user"] = {"uid": u, "gid": g}
c["process"]["args"] = ["/bin/sh", "-c", line]
c["mounts"].append({"destination": "/vol", "type": "bind", "source": vol,
                    "options": ["rbind", "rprivate", "rw"]})
c["mounts"].append({"destination": "/ro", "type": "bind", "source": ro,
                    "options": ["rbind", "rprivate", "ro"]})
exec(expr)
json.dump(c, open(dst, "w"), indent=1)
PY
		bail_out "cannot write config.json"
}
# volume DIR [OWNER] — a volume at DIR (owned by OWNER, default 0:0, 0755):
# root-file 0:0, user-file 1000:1000, userdir/ 1000:1000 (0755)
volume() {
	mkdir -p "$1/userdir"
	echo root >"$1/root-file"
	echo user >"$1/user-file"
	chown 1000:1000 "$1/user-file" "$1/userdir"
	chown "${2:-0:0}" "$1"
	chmod 0755 "$1" "$1/userdir"
	chmod 0644 "$1/root-file" "$1/user-file"
}
RO=$TOP/ro
mkdir -p "$RO"
echo ro >"$RO/f"
chmod -R a+rX "$RO"
# run_rt RT — the bundle run to its end under RT; RF_RC, RF_OUT (stdout and
# stderr)
run_rt() {
	if [ "$1" = ringfence ]; then
		RF_OUT=$(cd "$B" && RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" \
			run -b "$B" "$ID" 2>&1 </dev/null)
	else
		oci_cgroup_path "$B/config.json" "$RCG/$ID"
		RF_OUT=$(cd "$B" && timeout 60 "$RUNC" --root "$RROOT" run "$ID" 2>&1 </dev/null)
	fi
	RF_RC=$?
}
SIDES=(ringfence)
[ -n "$RUNC" ] && SIDES+=(runc)
declare -A OUT

# --- a root container -------------------------------------------------------
LINE='cd /vol && stat -c "%u:%g" root-file user-file .
echo more >>root-file && echo root-file-written
echo made >new && stat -c "new %u:%g" new
mkdir newdir && stat -c "newdir %u:%g" newdir
{ echo more >>user-file; } 2>/dev/null && echo user-file-written || echo user-file-refused
{ echo x >/ro/f; } 2>&1 || echo ro-refused'
for rt in "${SIDES[@]}"; do
	VOL=$TOP/vol.$rt
	volume "$VOL"
	config 0:0 "$LINE"
	run_rt "$rt"
	is "$RF_RC" 0 "$rt: a root container with a volume and a read-only bind runs"
	OUT[$rt]=$RF_OUT
	is "$(stat -c %u:%g "$VOL/new")" 0:0 "$rt: the file it created lands on the host as 0:0"
	is "$(stat -c %u:%g "$VOL/newdir")" 0:0 "$rt: ... and its directory"
	is "$(stat -c %u:%g "$VOL/root-file")" 0:0 "$rt: the root-owned file it wrote is still 0:0"
	like "$RF_OUT" "ro/f: Read-only file system" "$rt: the read-only bind refuses a write (EROFS)"
done
RF_OUT=${OUT[ringfence]}
is "$(printf '%s\n' "$RF_OUT" | sed -n 1p)" 0:0 "ringfence: a file of host uid 0 is uid 0 inside"
is "$(printf '%s\n' "$RF_OUT" | sed -n 3p)" 0:0 "ringfence: ... the volume's root-owned directory too"
is "$(printf '%s\n' "$RF_OUT" | sed -n 2p)" 65534:65534 \
	"ringfence: a file of host uid 1000 is nobody inside (one id mapped; runc shows 1000)"
like "$RF_OUT" "user-file-refused" "ringfence: ... written only through its 'other' bits (refused)"
if [ -n "$RUNC" ]; then
	R=${OUT[runc]}
	is "$(printf '%s\n' "$R" | sed 2d)" "$(printf '%s\n' "$RF_OUT" | sed 2d)" \
		"control: runc the same, but for the uid 1000 file (the same numbers, writes, refusals)"
	is "$(printf '%s\n' "$R" | sed -n 2p)" 1000:1000 "control: runc shows host uid 1000 as 1000"
else
	skip "control: runc" "no runc control"
fi

# --- a container of uid 1000 ------------------------------------------------
LINE='cd /vol && stat -c "%u:%g" root-file user-file userdir
echo made >userdir/new && stat -c "new %u:%g" userdir/new
{ echo x >new; } 2>/dev/null && echo root-dir-written || echo root-dir-refused'
for rt in "${SIDES[@]}"; do
	VOL=$TOP/vol1000.$rt
	volume "$VOL"
	config 1000:1000 "$LINE"
	run_rt "$rt"
	is "$RF_RC" 0 "$rt: a container of uid 1000 with a volume runs"
	OUT[$rt]=$RF_OUT
	is "$(stat -c %u:%g "$VOL/userdir/new")" 1000:1000 \
		"$rt: the file it created lands on the host as 1000:1000"
	like "$RF_OUT" "root-dir-refused" "$rt: the root-owned directory refuses it (0755)"
done
RF_OUT=${OUT[ringfence]}
is "$(printf '%s\n' "$RF_OUT" | sed -n 2,4p)" "1000:1000
1000:1000
new 1000:1000" "ringfence: its own files are 1000:1000 inside, as created"
is "$(printf '%s\n' "$RF_OUT" | sed -n 1p)" 65534:65534 \
	"ringfence: a root-owned file is nobody inside (runc shows 0)"
if [ -n "$RUNC" ]; then
	is "$(printf '%s\n' "${OUT[runc]}" | sed -n 2,4p)" "$(printf '%s\n' "$RF_OUT" | sed -n 2,4p)" \
		"control: runc the same for the container's own uid"
else
	skip "control: runc" "no runc control"
fi

# --- a tmpfs source (idmapped on Linux 6.3 and later) ------------------------
VOL=$TOP/tmpfs
mkdir -p "$VOL"
mount -t tmpfs -o mode=0755 rf-vol-tmpfs "$VOL" && MOUNTED+=("$VOL") || bail_out "cannot mount a tmpfs"
config 0:0 'echo made >/vol/new && echo made'
run_rt ringfence
is "$RF_RC:$RF_OUT" "0:made" "a volume on tmpfs: idmapped, written"
is "$(stat -c %u:%g "$VOL/new")" 0:0 "... the file lands as 0:0"

# --- the engine's own id mapping: nothing idmapped, as under runc -------------
X=$((1500000000 + ($$ % 1000) * 65536))
if getent passwd "$X" >/dev/null; then
	skip "the engine's id mapping" "uid $X has an account here"
else
	B2=$TOP/bundle-userns
	mkdir -p "$B2"
	make_image "$B2/rootfs"
	ln -s busybox "$B2/rootfs/bin/stat"
	chown -R "$X:$X" "$B2/rootfs"
	cp "$B/config.json" "$TOP/plain.json"
	LINE='cd /vol && stat -c "%u:%g" mapped-file root-file && echo made >new && echo made'
	for rt in "${SIDES[@]}"; do
		VOL=$TOP/volns.$rt
		volume "$VOL" "$X:$X"
		echo m >"$VOL/mapped-file"
		chown "$X:$X" "$VOL/mapped-file"
		config 0:0 "$LINE" "c['root']['path']='$B2/rootfs'
c['linux']['namespaces'].append({'type': 'user'})
m = [{'containerID': 0, 'hostID': $X, 'size': 65536}]
c['linux']['uidMappings'] = m
c['linux']['gidMappings'] = m"
		run_rt "$rt"
		is "$RF_RC:$RF_OUT" "0:0:0
65534:65534
made" "$rt: the engine maps 0 -> $X: host $X is 0 inside, host 0 nobody, the volume written"
		is "$(stat -c %u:%g "$VOL/new")" "$X:$X" "$rt: ... what it created lands as $X:$X"
	done
	[ -n "$RUNC" ] || skip "control: runc" "no runc control"
fi

# --- sources that cannot be idmapped: refused ----------------------------------
# refused WHAT SOURCE TYPE — the root container with SOURCE at /vol: 125,
# the one line naming the mount and TYPE (a regex)
refused() {
	VOL=$2
	config 0:0 'echo ran'
	run_rt ringfence
	is "$RF_RC" 125 "$1: refused (125)"
	like "$RF_OUT" "^ringfence-oci: mount /vol: its source $2 \\($3\\), or a mount beneath it, cannot be idmapped: [^
]*\$" \
		"... one line naming the mount and its filesystem"
	unlike "$RF_OUT" "^ran" "... the command never ran"
	[ ! -e "$ROOT/$ID" ] && ok "... nothing left" || not_ok "... nothing left"
}
mkdir -p "$TOP/ramfs" "$TOP/ovl" "$TOP/l" "$TOP/u" "$TOP/w" "$TOP/outer/inner"
mount -t ramfs -o mode=0755 rf-vol-ramfs "$TOP/ramfs" && MOUNTED+=("$TOP/ramfs") ||
	bail_out "cannot mount a ramfs"
refused "a ramfs source" "$TOP/ramfs" ramfs
# the engine's path: create (what Podman's conmon and containerd's shim call)
RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create --bundle "$B" \
	--pid-file "$TOP/pid" "$ID" 2>&1 </dev/null)
RF_RC=$?
is "$RF_RC" 125 "... create of it: refused (125)"
like "$RF_OUT" "^ringfence-oci: create: mount /vol: its source $TOP/ramfs \\(ramfs\\), or a mount beneath it, cannot be idmapped: [^
]*\$" "... the same one line (create: ...)"
[ ! -e "$ROOT/$ID" ] && [ ! -e "$TOP/pid" ] && ok "... no container, no pid file" ||
	not_ok "... no container, no pid file"
mount -t overlay rf-vol-ovl -o "lowerdir=$TOP/l,upperdir=$TOP/u,workdir=$TOP/w" "$TOP/ovl" &&
	MOUNTED+=("$TOP/ovl") || bail_out "cannot mount an overlay"
refused "an overlay source" "$TOP/ovl" overlay
mount -t ramfs rf-vol-inner "$TOP/outer/inner" && MOUNTED+=("$TOP/outer/inner") ||
	bail_out "cannot mount a ramfs"
refused "a source with a ramfs mounted beneath it" "$TOP/outer" "[^)]*"
# FUSE: idmapped only where its server opts in (FUSE_ALLOW_IDMAP, Linux
# 6.12); bindfs (libfuse) does not
if command -v bindfs >/dev/null; then
	mkdir -p "$TOP/fuse-src" "$TOP/fuse"
	bindfs "$TOP/fuse-src" "$TOP/fuse" && MOUNTED+=("$TOP/fuse") || bail_out "bindfs failed"
	refused "a FUSE source (bindfs)" "$TOP/fuse" "fuse[^)]*"
else
	skip "a FUSE source" "bindfs is not installed"
fi
VOL=/proc/sys
config 0:0 'echo ran'
run_rt ringfence
is "$RF_RC" 125 "a /proc source: refused (125)"
like "$RF_OUT" "mount /vol: its source /proc/sys: the host's root and pseudo filesystems" \
	"... saying so"
done_testing
