#!/bin/bash
# tests/integration/oci_podman_rootless.sh — rootless Podman (Debian's,
# run by a user this test makes, with the subordinate ids useradd gives it)
# with ringfence-oci as its runtime (issue 17), runc through the same
# Podman as the control.
#
# Rootless Podman calls the runtime as root of a user namespace it made:
# ringfence-oci is not the host's root there, so it allocates no host uid
# (the container's root is the user's own uid, as with runc), keeps its
# state where runc does (XDG_RUNTIME_DIR) and the audit log in the user's
# home — no flag needed. Asserted: run --rm (output, exit status), the
# container's processes running as the user's host uid (as runc's), run -d,
# logs, exec with ringfence's layers (no capabilities, no_new_privs, two
# seccomp filters), stop (TERM reaches the command: 143), rm, run.start in
# the user's audit log, the containers' state under XDG_RUNTIME_DIR. pause
# needs cgroup v2 for a rootless container: on a v1 or hybrid host Podman
# refuses it for every runtime (checked with runc) and the case is skipped
# with that reason. The network is --network none: slirp4netns cannot open
# /dev/net/tun on every host (its own control decides).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root to make the test's user"
PODMAN=$(command -v podman || true)
[ -n "$PODMAN" ] || skip_all "podman is not installed (scripts/deps.sh installs it)"
command -v newuidmap >/dev/null || skip_all "newuidmap is not installed (uidmap)"
RUNC=$(command -v runc || true)
[ -n "$RUNC" ] || skip_all "runc (the control) is not installed"

rf_mktemp /tmp
TOP=$REPLY
chmod 0755 "$TOP"
U=rft$(printf '%x' $$)u
useradd -M -d "$TOP/home" -s /bin/sh "$U" || bail_out "useradd failed"
register_user "$U"
grep -q "^$U:" /etc/subuid || skip_all "useradd gave $U no subordinate ids (SUB_UID_COUNT)"
UID_U=$(id -u "$U")
mkdir -p "$TOP/home" "$TOP/run" "$TOP/bin"
chown "$U:" "$TOP/home" "$TOP/run"
chmod 0700 "$TOP/run"
cp "$(dirname "$RF_BIN")/ringfence-oci" "$RF_BIN" "$TOP/bin/" || bail_out "cannot copy ringfence"
chmod 0755 "$TOP/bin" "$TOP/bin/"*
OCI=$TOP/bin/ringfence-oci
make_image "$TOP/rootfs"
tar -C "$TOP/rootfs" -cf "$TOP/image.tar" . && chmod 0644 "$TOP/image.tar" || bail_out "tar failed"
IMG=localhost/rf-rootless-$$:latest

# pu ARGS... — the user's Podman; RF_RC, RF_OUT (stdout+stderr)
pu() {
	RF_OUT=$(cd "$TOP" && timeout 120 runuser -u "$U" -- env -i HOME="$TOP/home" USER="$U" \
		XDG_RUNTIME_DIR="$TOP/run" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		"$PODMAN" --storage-driver vfs "$@" 2>&1 </dev/null)
	RF_RC=$?
}
cleanup_rootless() {
	pu rm -af -t 0
	# Podman's pause process holds the user's namespace: by its recorded pid
	local p
	p=$(cat "$TOP/run/libpod/tmp/pause.pid" 2>/dev/null)
	[ -n "$p" ] && [ "$(ps -o user= -p "$p" 2>/dev/null)" = "$U" ] && kill -KILL "$p" 2>/dev/null
	for _ in $(seq 50); do
		pgrep -u "$U" >/dev/null || break
		sleep 0.1
	done
}
trap 'cleanup_rootless; _rf_cleanup' EXIT

pu import "$TOP/image.tar" "$IMG"
[ "$RF_RC" = 0 ] || bail_out "podman import failed: $RF_OUT"
RFO=(--runtime "$OCI")
NONE=(--network none)

pu --runtime "$RUNC" run --rm "${NONE[@]}" "$IMG" /bin/echo "from-runc-$$"
like "$RF_OUT" "from-runc-$$" "control: rootless Podman runs a container with runc"
pu "${RFO[@]}" run --rm "${NONE[@]}" "$IMG" /bin/echo "from-rf-$$"
is "$RF_RC" 0 "rootless Podman with ringfence-oci: run --rm, exit 0 ($RF_OUT)"
like "$RF_OUT" "from-rf-$$" "... the container's output"
pu "${RFO[@]}" run --rm "${NONE[@]}" "$IMG" /bin/sh -c 'exit 3'
is "$RF_RC" 3 "... the command's exit status (3)"

C=rf-rl-$$
pu "${RFO[@]}" run -d --name "$C" "${NONE[@]}" "$IMG" /bin/sh -c 'echo started; while :; do sleep 1; done'
is "$RF_RC" 0 "run -d: exit 0"
for _ in $(seq 50); do
	pu logs "$C"
	[[ $RF_OUT == *started* ]] && break
	sleep 0.2
done
like "$RF_OUT" "started" "podman logs: the container's output"
pu inspect "$C" --format '{{.State.Pid}}'
cpid=$RF_OUT
is "$(ps -o uid= -p "$cpid" 2>/dev/null | tr -d ' ')" "$UID_U" \
	"the container's init runs as the user's own host uid (no host uid allocated)"
ls "$TOP/run/ringfence-oci" 2>/dev/null | grep -q . &&
	ok "... its state under XDG_RUNTIME_DIR (where runc keeps its own)" ||
	not_ok "... its state under XDG_RUNTIME_DIR (where runc keeps its own)"
pu "${RFO[@]}" exec "$C" /bin/sh -c 'cat /proc/self/status; exit 4'
is "$RF_RC" 4 "podman exec: the process's status (4)"
like "$RF_OUT" "NoNewPrivs:[[:space:]]*1" "... no_new_privs"
like "$RF_OUT" "CapEff:[[:space:]]*0000000000000000" "... no capabilities"
like "$RF_OUT" "Seccomp_filters:[[:space:]]*2" "... ringfence's filter and Podman's profile"

pu "${RFO[@]}" pause "$C"
if [ "$RF_RC" = 0 ]; then
	ok "podman pause (cgroup v2): exit 0"
	pu "${RFO[@]}" unpause "$C"
	is "$RF_RC" 0 "podman unpause: exit 0"
else
	reason=$RF_OUT
	pu --runtime "$RUNC" run -d --name "$C-r" "${NONE[@]}" "$IMG" /bin/sh -c 'while :; do sleep 1; done'
	pu --runtime "$RUNC" pause "$C-r"
	if [ "$RF_RC" != 0 ] && [[ $reason == *cgroup* ]]; then
		skip "rootless pause" "needs cgroup v2 (Podman refuses it here for runc too: $reason)"
	else
		not_ok "podman pause: refused with ringfence-oci only ($reason)"
	fi
	pu rm -f -t 0 "$C-r"
fi

pu "${RFO[@]}" stop -t 5 "$C"
is "$RF_RC" 0 "podman stop: exit 0"
pu inspect "$C" --format '{{.State.ExitCode}}'
is "$RF_OUT" 143 "... TERM reached the command (143)"
pu "${RFO[@]}" rm "$C"
is "$RF_RC" 0 "podman rm: exit 0"
grep -h '"run\.start"' "$TOP/home/.local/state/ringfence/audit/"audit-*.jsonl 2>/dev/null | grep -q . &&
	ok "run.start in the user's own audit log (its home's state dir)" ||
	not_ok "run.start in the user's own audit log (its home's state dir)"
done_testing
