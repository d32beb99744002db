# tests/helpers/image.bash — a small image root filesystem for the tests
# of --rootfs and ringfence-oci: busybox (static) with a few applets,
# rf-probe with the libraries its loader needs, an /etc/passwd and a
# marker file of its own. Sourced after tests/lib.sh.

# require_busybox — skip the whole script without a static busybox.
require_busybox() {
	BUSYBOX=$(command -v busybox)
	[ -n "$BUSYBOX" ] && file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
		skip_all "no static busybox (Debian's busybox-static; scripts/deps.sh installs it)"
}

# make_image DIR — the image at DIR (created), readable by everyone.
make_image() {
	local img=$1 a lib
	mkdir -p "$img"/{bin,etc,lib64,usr/lib/x86_64-linux-gnu} || bail_out "cannot make the image"
	cp "$BUSYBOX" "$img/bin/busybox"
	for a in sh cat ls id echo test hostname; do ln -s busybox "$img/bin/$a"; done
	cp "$RF_PROBE" "$img/bin/rf-probe"
	while read -r lib; do
		[ -f "$lib" ] || continue
		mkdir -p "$img$(dirname "$lib")"
		cp -L "$lib" "$img$lib"
	done < <(ldd "$RF_PROBE" | grep -o '/[^ ]*')
	echo "root:x:0:0:image root:/root:/bin/sh" >"$img/etc/passwd"
	echo "from-the-image" >"$img/etc/marker"
	chmod -R a+rX "$img"
}

# oci_cgroup_path CONFIG PATH — CONFIG's linux.cgroupsPath set to PATH: a
# runtime given none makes its cgroup at the hierarchies' root (runc's
# /ID), and tests create cgroups only beneath their own
oci_cgroup_path() {
	python3 - "$1" "$2" <<'PY' || bail_out "cannot set cgroupsPath"
import json, sys
c = json.load(open(sys.argv[1]))
c.setdefault("linux", {})["cgroupsPath"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"), indent=1)
PY
}

# oci_cgroup_rm PATH — PATH and what is beneath it removed in every
# hierarchy (empty by then: the runtimes removed their leaves)
oci_cgroup_rm() {
	local d
	for d in /sys/fs/cgroup/*/"${1#/}" /sys/fs/cgroup/"${1#/}"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
}
