#!/bin/bash
# tests/integration/rootfs.sh — `ringfence run --rootfs DIR` (and the
# policy's filesystem.rootfs): the run's root is an image's root filesystem
# under a copy-on-write layer of the run's own, with every other layer as in
# any run. The image stays as it was; nothing of the host's system
# directories is seen; a root write fails with EROFS (the root is read-only
# once built); a file of the image where ringfence writes one (a symlink
# included) is replaced in the run's layer, never written through; paths
# that would expose ringfence's state, the host's root, a symlinked path
# and a non-directory are refused with 125 and one line.
#
# The image is made here: busybox (static) and rf-probe with the libraries
# it needs, a passwd of its own, a marker.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox

rf_mktemp /tmp
TOP=$REPLY
IMG=$TOP/rootfs
make_image "$IMG"
# a file of the image where ringfence writes its own: a link out of it
ln -s /etc/marker "$IMG/etc/hosts"
before=$(cd "$IMG" && find . -printf '%p %y %s %m\n' | sort)

# --- the image is the root -------------------------------------------------------
rf_run --rootfs "$IMG" -- /bin/rf-probe cat /etc/marker
is "$RF_RC" 0 "a command of the image runs in it (rc 0) [$RF_ERR]"
like "$RF_OUT" "from-the-image" "... and reads the image's files"

rf_run --rootfs "$IMG" -- /bin/rf-probe cat /etc/passwd
like "$RF_OUT" "image root" "the image's own /etc/passwd is its own, not one ringfence writes"

# control: the host has /usr/bin (perl, ls, ...); the run under the image
# does not see any of it
[ -d /usr/bin ] && ok "control: the host has /usr/bin" || not_ok "control: the host has /usr/bin"
rf_run --rootfs "$IMG" -- /bin/rf-probe stat /usr/bin
is "$(first_line "$RF_OUT")" "errno=ENOENT" "the host's /usr/bin is not in the run (ENOENT)"
rf_run --rootfs "$IMG" -- /bin/rf-probe stat /etc/ssl
is "$(first_line "$RF_OUT")" "errno=ENOENT" "nor the host's /etc/ssl (ENOENT)"

# the layers of any run: its own namespaces, its workspace, /tmp, the stub
host_ns=$("$RF_PROBE" ns self)
rf_run --rootfs "$IMG" -- /bin/rf-probe ns self
for kind in user mnt pid net; do
	isnt "$(field "$RF_OUT" "$kind")" "$(field "$host_ns" "$kind")" \
		"the run has its own $kind namespace under an image"
done
rf_run --rootfs "$IMG" -- /bin/rf-probe create "$WS/written"
is "$(first_line "$RF_OUT")" "ok" "the workspace is writable under an image"
[ -f "$WS/written" ] && ok "... and the file is on the host" || not_ok "... and the file is on the host"
rf_run --rootfs "$IMG" -- /bin/rf-probe create /tmp/scratch
is "$(first_line "$RF_OUT")" "ok" "/tmp is the run's own tmpfs"
rf_run --rootfs "$IMG" -- /bin/rf-probe cat /etc/resolv.conf
like "$RF_OUT" "nameserver 127.0.0.1" "/etc/resolv.conf names the run's stub"

# --- attacks on the root and the image ----------------------------------------
rf_run --rootfs "$IMG" -- /bin/rf-probe create /bin/evil
is "$(first_line "$RF_OUT")" "errno=EROFS" "a new file in the root: EROFS (the root is read-only)"
rf_run --rootfs "$IMG" -- /bin/rf-probe rewrite /etc/marker
is "$(first_line "$RF_OUT")" "errno=EROFS" "rewriting an image file: EROFS"
rf_run --rootfs "$IMG" -- /bin/rf-probe readlink /etc/hosts
is "$(first_line "$RF_OUT")" "errno=EINVAL" "the image's /etc/hosts link was replaced by a file (EINVAL: not a link)"
rf_run --rootfs "$IMG" -- /bin/rf-probe cat /etc/hosts
like "$RF_OUT" "localhost" "... ringfence's hosts file"
is "$(cat "$IMG/etc/marker")" "from-the-image" "... never written through the link"
after=$(cd "$IMG" && find . -printf '%p %y %s %m\n' | sort)
is "$after" "$before" "the image on the host is as it was (no mount point, no file made in it)"

# a git workspace: the protected files (.git/config, placeholders for HEAD
# and config at its root) are file mount points over the host's workspace;
# making them must not replace anything on the host
rf_mktemp /tmp
GW=$REPLY
git -C "$GW" init -q 2>/dev/null || bail_out "git init failed"
git -C "$GW" config user.name tester
gbefore=$(cd "$GW" && find . -printf '%p %y %s\n' | sort; cat .git/config)
rf_run --rootfs "$IMG" --workspace "$GW" -- /bin/rf-probe cat "$GW/.git/config"
like "$RF_OUT" "name = tester" "a git workspace under an image: its .git/config reads as on the host"
gafter=$(cd "$GW" && find . -printf '%p %y %s\n' | sort; cat .git/config)
is "$gafter" "$gbefore" "... and nothing of the workspace on the host was replaced or added"

# --- refusals: 125 and one line ---------------------------------------------------
ln -s "$IMG" "$TOP/link"
rf_run --rootfs "$TOP/link" -- /bin/true
is "$RF_RC" 125 "a rootfs named through a symlink: refused (125)"
like "$RF_ERR" "symbolic link" "... saying so"
rf_run --rootfs "$IMG/etc/marker" -- /bin/true
is "$RF_RC" 125 "a rootfs that is a file: refused (125)"
like "$RF_ERR" "not a directory" "... saying so"
rf_run --rootfs / -- /bin/true
is "$RF_RC" 125 "--rootfs /: refused (125)"
like "$RF_ERR" "host's own root" "... saying so"
rf_run --rootfs "$(dirname "$RF_STATE")" -- /bin/true
is "$RF_RC" 125 "a rootfs holding the state dir: refused (125)"
like "$RF_ERR" "expose ringfence state" "... saying so"
is "$(printf '%s\n' "$RF_ERR" | grep -c .)" 1 "... in one line"
mkdir -p "$RF_STATE/img"
rf_run --rootfs "$RF_STATE/img" -- /bin/true
is "$RF_RC" 125 "a rootfs inside the state dir: refused (125)"
like "$RF_ERR" "expose ringfence state" "... saying so"
for d in /etc /usr /var; do
	rf_run --rootfs "$d" -- /bin/true
	is "$RF_RC" 125 "--rootfs $d (the host's own tree, root-owned): refused (125)"
	like "$RF_ERR" "not an image's root filesystem" "... saying so"
done
rf_run --rootfs /etc/ssl -- /bin/true
is "$RF_RC" 125 "--rootfs /etc/ssl (inside the host's /etc): refused (125)"

# --- the policy's filesystem.rootfs --------------------------------------------
printf '{"version":1,"filesystem":{"rootfs":"%s"}}\n' "$IMG" >"$TOP/policy.json"
rf_run -p "$TOP/policy.json" -- /bin/rf-probe cat /etc/marker
like "$RF_OUT" "from-the-image" "filesystem.rootfs in a policy: the same root"
out=$("$RF_BIN" policy check "$TOP/policy.json" 2>&1)
is "$?" 0 "... a valid policy ($out)"
printf '{"version":1,"filesystem":{"rootfs":"relative/dir"}}\n' >"$TOP/bad.json"
out=$("$RF_BIN" policy check "$TOP/bad.json" 2>&1)
is "$?" 1 "filesystem.rootfs relative: an invalid policy (exit 1)"
like "$out" "filesystem.rootfs: .* not an absolute path" "... naming the key"

done_testing
