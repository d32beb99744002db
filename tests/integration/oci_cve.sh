#!/bin/bash
# tests/integration/oci_cve.sh — the runc escape classes of 2025 against
# ringfence-oci (issue 17 audit), each attack asserted to fail for its
# reason, each with the legitimate path working beside it.
#
# CVE-2025-52565 (runc's /dev/console bind and /dev/pts/ptmx, raced or
# swapped for a symlink, let its privileged setup mount or open what the
# container chose). ringfence binds no console node (the terminal is the
# pty slave as fds 0-2) and opens a pty master only through
# sandbox_ptmx_open: /dev/pts must be devpts and its ptmx char 5:2 of that
# mount, reached with no symlink and no mount crossed. Asserted: a
# container's terminal works and it has no /dev/console (control); a
# config bind over /dev/console, over it through an image symlink, or
# over /dev/pts (a planted ptmx) is refused (125, the config check); a
# running container that tries to replace /dev/ptmx with a symlink to a
# file cannot (EACCES: Landlock), and with Landlock switched off (a test
# build) it can, yet an `exec -t` into it still gets the container's own
# pty and never opens the file.
#
# CVE-2025-52881 (writes runc meant for procfs — /proc/self/attr/*,
# /proc/sys/* — redirected by racing mounts onto other files). ringfence
# writes no LSM attribute (apparmorProfile and selinuxLabel are refused),
# and a container's sysctls go through a procfs of init's own, detached,
# each file opened with no symlink and no mount crossed. Asserted: a config
# mount over /proc/self/attr or /proc/sys/kernel/core_pattern, directly or
# through an image symlink, is refused (125); a sysctl of the host's
# (kernel.core_pattern) is refused; with a decoy tmpfs over
# /proc/sys/kernel in the runtime's own mount namespace (the redirect the
# CVE raced for: its "shmmni" a file anyone may write), the container
# fails closed at its sysctls (init's private procfs cannot be made over a
# /proc with something mounted in it: EPERM) and the decoy is never
# written — the runtime before this wrote the config's value into it;
# runc beside it on the legitimate sysctl.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root (a mount namespace of the test's own for the decoy)"
command -v unshare >/dev/null || skip_all "no unshare(1)"

require_oci
SHIM=$RF_SRC/tests/helpers/oci-shim.py
CONSOLE=$RF_SRC/tests/helpers/oci-console.py
rf_mktemp /tmp
TOP=$REPLY
B=$TOP/bundle
ROOT=$TOP/oci-root
mkdir -p "$B" "$ROOT"
make_image "$B/rootfs"
for a in rm ln sleep; do ln -s busybox "$B/rootfs/bin/$a"; done
ID=rf-cve-$$
cleanup_containers() {
	RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$ID" \
		</dev/null >/dev/null 2>&1
}
trap 'cleanup_containers; _rf_cleanup' EXIT

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
cp "$B/config.json" "$TOP/base.json"
# config PYTHON — the base config, terminal off, edited by a statement on `c`
config() {
	python3 - "$TOP/base.json" "$B/config.json" "$1" <<'PY' || bail_out "cannot write config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}
oci() { # ringfence-oci ARGS...; RF_RC, RF_OUT, RF_ERR
	RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" \
		2>"$TOP/err" </dev/null)
	RF_RC=$?
	RF_ERR=$(cat "$TOP/err")
}
refused() { # PYTHON WORDS WHAT — a config refused with 125, saying WORDS, nothing left
	config "$1"
	oci run -b "$B" "$ID"
	is "$RF_RC" 125 "$3: refused (125)"
	like "$RF_ERR" "$2" "... saying so"
	[ -z "$(ls -A "$ROOT")" ] && ok "... nothing left in --root" || not_ok "... nothing left in --root"
}
bind() { # DESTINATION SOURCE — a python statement adding a bind as the CRI writes one
	printf "c['mounts'].append({'destination':'%s','type':'bind','source':'%s','options':['rbind','rprivate','rw']})" "$1" "$2"
}
echo "host-file" >"$TOP/host-file"
chmod 0644 "$TOP/host-file"

# === CVE-2025-52565: the console and /dev/pts/ptmx ===========================
# control: a container's terminal (create with a console socket), and no
# console node of ringfence's making
config 'c["process"]["terminal"]=True
c["process"]["args"]=["/bin/sh","-c","test -t 0 && echo is-a-tty; ls /dev/console 2>&1; echo @end@"]'
SHIM_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 90 python3 "$SHIM" "$OCI" "$ROOT" "$B" "$ID" --tty 2>&1)
fact() { printf '%s\n' "$SHIM_OUT" | sed -n "s/^$1=//p" | head -n 1; }
is "$(fact create_rc)/$(fact tty)" "0/yes" "control: a container with a terminal: its pty master reaches the console socket"
like "$(fact output)" "is-a-tty" "... the command's stdin is that terminal"
like "$(fact output)" "/dev/console: No such file" "... and there is no /dev/console (ringfence binds no console node)"
rm -f "$ROOT/$ID".*
if command -v runc >/dev/null 2>&1 && RCG=$(cgroup_own_deepest); then
	mkdir -p "$TOP/runc-root"
	oci_cgroup_path "$B/config.json" "$RCG/rft-cve-$$-runc"
	SHIM_OUT=$(timeout 90 python3 "$SHIM" runc "$TOP/runc-root" "$B" "$ID" --tty 2>&1)
	oci_cgroup_rm "$RCG/rft-cve-$$-runc"
	is "$(fact create_rc)/$(fact tty)" "0/yes" "control: runc through the same shim: a terminal"
	like "$(fact output)" "is-a-tty" "control: ... the command's stdin is it"
	unlike "$(fact output)" "/dev/console: No such file" "control: ... and runc binds a /dev/console (the CVE's target)"
	rm -f "$TOP/runc-root/$ID".*
else
	skip "control: runc's terminal" "runc is not installed, or our cgroups do not nest"
fi

refused "$(bind /dev/console "$TOP/host-file")" "/dev/console: not over" \
	"a bind over /dev/console (the CVE's target)"
ln -s /dev/console "$B/rootfs/console-link"
refused "$(bind /console-link "$TOP/host-file")" "/console-link is /dev/console inside the root" \
	"a bind over /dev/console through an image symlink"
rm -f "$B/rootfs/console-link"
mkdir -p "$TOP/fake-pts"
ln -sf "$TOP/host-file" "$TOP/fake-pts/ptmx"
refused "$(bind /dev/pts "$TOP/fake-pts")" "/dev/pts: not over" \
	"a bind over /dev/pts (a planted ptmx)"
refused 'c["mounts"].append({"destination":"/dev/pts/ptmx","type":"tmpfs","source":"tmpfs"})' \
	"/dev/pts/ptmx: not over" "a tmpfs over /dev/pts/ptmx"

# a running container swaps /dev/ptmx for a symlink, then the engine
# execs into it with a terminal
config 'c["process"]["args"]=["/bin/sh","-c","rm -f /dev/ptmx 2>&1; ln -sf /etc/marker /dev/ptmx 2>&1; ln -sf /etc/marker /dev/pts/ptmx 2>&1; /bin/rf-probe mount /dev/pts; echo ready; sleep 60"]'
# (create and start: exec needs the join plan create writes; init, once
# create is gone, is reaped by whoever reaps orphans here)
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create -b "$B" "$ID" </dev/null \
	>"$TOP/run.out" 2>&1
oci start "$ID"
is "$RF_RC" 0 "a container started to attack its /dev"
for _ in $(seq 100); do
	grep -q '^ready' "$TOP/run.out" 2>/dev/null && break
	sleep 0.1
done
out=$(cat "$TOP/run.out")
like "$out" "rm: can't remove '/dev/ptmx': Permission denied" \
	"the container cannot remove /dev/ptmx (EACCES: Landlock grants no removal in /dev; below, with it off, it can)"
like "$out" "ln: /dev/pts/ptmx: File exists" \
	"... nor replace devpts's ptmx with a link (the node stays: EEXIST)"
like "$(printf '%s\n' "$out" | grep '^errno=\|^ok')" "errno=EPERM" "... nor mount over /dev/pts (EPERM: no capability)"
CO=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 90 python3 "$CONSOLE" "$TOP/c.sock" \
	"$OCI" --root "$ROOT" exec --tty --console-socket "$TOP/c.sock" "$ID" \
	/bin/sh -c 'test -t 0 && echo exec-tty; /bin/rf-probe tty; echo @end@' 2>&1)
cfact() { printf '%s\n' "$CO" | sed -n "s/^$1=//p" | head -n 1; }
is "$(cfact master)" received "exec -t: a pty master reaches the engine's console socket"
like "$(cfact output)" "exec-tty" "... the exec'd process's stdin is a terminal of the container's own devpts"
is "$(cat "$B/rootfs/etc/marker")" "from-the-image" "... and the image's file the link named is untouched"
oci delete --force "$ID"

# the same with Landlock, the layer that kept /dev/ptmx, switched off (a
# test build): the container does replace it with a symlink to a file it
# may write, and `exec -t` still never opens it (sandbox_ptmx_open: the
# devpts instance's own ptmx, reached without /dev/ptmx)
TOCI=${RF_TEST_BIN:+$(dirname "$RF_TEST_BIN")/ringfence-oci}
if [ -n "$TOCI" ] && [ -x "$TOCI" ]; then
	config 'c["process"]["args"]=["/bin/sh","-c","echo victim >/tmp/victim; rm -f /dev/ptmx 2>&1 && ln -s /tmp/victim /dev/ptmx 2>&1 && echo swapped; echo ready; sleep 60"]'
	RINGFENCE_TEST_SKIP=landlock RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$TOCI" --root "$ROOT" \
		create -b "$B" "$ID" </dev/null >"$TOP/run.out" 2>&1
	RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$TOCI" --root "$ROOT" start "$ID" </dev/null
	for _ in $(seq 100); do
		grep -q '^ready' "$TOP/run.out" 2>/dev/null && break
		sleep 0.1
	done
	like "$(cat "$TOP/run.out")" "swapped" "Landlock off (test build): the container replaced /dev/ptmx with a link to /tmp/victim"
	CO=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 90 python3 "$CONSOLE" "$TOP/c.sock" \
		"$TOCI" --root "$ROOT" exec --tty --console-socket "$TOP/c.sock" "$ID" \
		/bin/sh -c 'test -t 0 && echo exec-tty; cat /tmp/victim; echo @end@' 2>&1)
	is "$(cfact master)/$(cfact exec_rc)" "received/0" "... exec -t still gets a pty master (the link is never followed)"
	like "$(cfact output)" "exec-tty" "... a terminal of the container's devpts"
	like "$(cfact output)" "victim" "... and the file the link names is as the container left it"
	RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$TOCI" --root "$ROOT" delete --force "$ID" </dev/null >/dev/null 2>&1
else
	skip "the swapped /dev/ptmx with Landlock off" "no test build (RF_TEST_BIN)"
fi

# === CVE-2025-52881: writes meant for procfs ===================================
refused "$(bind /proc/self/attr/exec "$TOP/host-file")" "/proc/self/attr/exec: not over" \
	"a bind over /proc/self/attr/exec"
refused "$(bind /proc/sys/kernel/core_pattern "$TOP/host-file")" \
	"/proc/sys/kernel/core_pattern: not over" "a bind over /proc/sys/kernel/core_pattern"
ln -s /proc/sys/kernel "$B/rootfs/kern"
refused "$(bind /kern/core_pattern "$TOP/host-file")" \
	"/kern/core_pattern is /proc/sys/kernel/core_pattern inside the root" \
	"... the same through an image symlink"
rm -f "$B/rootfs/kern"
refused 'c["process"]["apparmorProfile"]="unconfined"' "process.apparmorProfile: not supported" \
	"an AppArmor profile (ringfence writes no /proc/self/attr)"
refused 'c["process"]["selinuxLabel"]="system_u:system_r:container_t:s0"' \
	"process.selinuxLabel: not supported" "an SELinux label (no /proc/self/attr/exec write)"
refused 'c["linux"]["sysctl"]={"kernel.core_pattern":"|/tmp/x"}' "sysctl kernel.core_pattern: only" \
	"a sysctl of the host's (kernel.core_pattern)"
[ "$(cat "$TOP/host-file")" = host-file ] && ok "... the host file named by every refused mount is untouched" ||
	not_ok "... the host file named by every refused mount is untouched"

# the redirect itself: a decoy bind-mounted over /proc/sys/kernel/shmmni in
# the runtime's mount namespace (one of the test's own)
host_shmmni=$(cat /proc/sys/kernel/shmmni)
want=$((host_shmmni - 7))
config "c['linux']['sysctl']={'kernel.shmmni':'$want'}
c['process']['args']=['/bin/cat','/proc/sys/kernel/shmmni']"
oci run -b "$B" "$ID"
is "$RF_RC/$RF_OUT" "0/$want" "control: a namespaced sysctl of the config (kernel.shmmni=$want) is the container's"
# the decoy: a tmpfs over /proc/sys/kernel holding a file "shmmni" anyone
# may write (the redirect's target), in a mount namespace of the test's
# own, where ringfence-oci runs; what the decoy holds afterwards is read
# there
out=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 unshare -m --propagation private sh -c '
	mount -t tmpfs -o size=64k tmpfs /proc/sys/kernel || exit 99
	echo decoy >/proc/sys/kernel/shmmni && chmod 0666 /proc/sys/kernel/shmmni || exit 98
	"$1" --root "$2" run -b "$3" "$4" </dev/null 2>&1
	echo "rc=$?"
	echo "decoy=$(cat /proc/sys/kernel/shmmni)"' sh "$OCI" "$ROOT" "$B" "$ID")
# the write is never redirected: init's own procfs cannot even be made
# while something is mounted in the /proc it could see (the kernel's
# mount_too_revealing: EPERM), and the container fails closed before any
# sysctl is written
like "$out" "rc=125" "with a decoy tmpfs over /proc/sys/kernel in the runtime's namespace: the container fails closed (125)"
like "$out" "sysctl.*Operation not permitted" "... at its sysctls: no procfs of its own to write them through (EPERM)"
like "$out" "decoy=decoy\$" "... and the write never landed on the decoy"
is "$(cat /proc/sys/kernel/shmmni)" "$host_shmmni" "... nor on the host's own sysctl"
if command -v runc >/dev/null 2>&1 && RCG=$(cgroup_own_deepest); then
	oci_cgroup_path "$B/config.json" "$RCG/rft-cve-$$-runc"
	ctl=$(cd "$B" && timeout 60 runc --root "$TOP/runc-root" run "$ID-runc" </dev/null 2>&1)
	is "$?/$ctl" "0/$want" "control: runc sets the same sysctl for the same bundle"
	oci_cgroup_rm "$RCG/rft-cve-$$-runc"
else
	skip "control: runc on the same sysctl" "runc is not installed, or our cgroups do not nest"
fi

done_testing
