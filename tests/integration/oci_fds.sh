#!/bin/bash
# tests/integration/oci_fds.sh — fds an engine hands ringfence-oci's
# create, run and exec (issue 17 audit): --preserve-fds N (socket
# activation, Podman's --preserve-fds) and create --pidfd-socket PATH
# (runc 1.2), runc beside it.
#
# tests/helpers/oci-fds.py is the engine: a subreaper spawning `create`
# with a pipe's read end at fd 3 and another's write end at fd 4, and a
# socket for the pidfd. Asserted: the container reads the engine's line
# from fd 3 and writes to fd 4; its fds are exactly 0-4; the engine sees
# the end of the fd 4 pipe once the container ends (no copy kept by the
# runtime's supervisor); without --preserve-fds the same command finds
# no fd 3 (control); runc runs the same through the same helper. The
# pidfd arrives over SCM_RIGHTS, its fdinfo's Pid: is the pid file's
# (init), pidfd_send_signal(0) succeeds while init lives and fails with
# ESRCH once it is reaped. `run --preserve-fds` and `exec --preserve-fds`
# pass theirs the same way; an exec without it passes no fd of the
# caller's (control). Refused (1): --preserve-fds naming an fd that
# is not open, or not a number; a --pidfd-socket nobody listens on fails
# create (125) and leaves nothing.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox

require_oci
ENGINE=$RF_SRC/tests/helpers/oci-fds.py
rf_mktemp /tmp
TOP=$REPLY
B=$TOP/bundle
ROOT=$TOP/oci-root
RROOT=$TOP/runc-root
mkdir -p "$B" "$ROOT" "$RROOT"
make_image "$B/rootfs"
ID=rf-fds-$$
RUNC=$(command -v runc || true)
cleanup_containers() {
	RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$ID" \
		</dev/null >/dev/null 2>&1
	[ -n "$RUNC" ] && timeout 30 "$RUNC" --root "$RROOT" delete --force "$ID" >/dev/null 2>&1
}
trap 'cleanup_containers; _rf_cleanup' EXIT

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
python3 - "$B/config.json" <<'PY' || bail_out "cannot edit config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c",
    'read line <&3; echo "got: $line" >&4; /bin/rf-probe fds >&4; exit 3']
json.dump(c, open(sys.argv[1], "w"), indent=1)
PY

engine() { # RUNTIME ROOT [OPTS] — ENGINE_OUT; `fact K` reads one
	ENGINE_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 120 python3 "$ENGINE" "$1" "$2" "$B" "$ID" \
		"${@:3}" 2>&1)
}
fact() { printf '%s\n' "$ENGINE_OUT" | sed -n "s/^$1=//p" | head -n 1; }

# --- --preserve-fds 2 and --pidfd-socket ---------------------------------------
engine "$OCI" "$ROOT"
is "$(fact create_rc)" 0 "create --preserve-fds 2 --pidfd-socket: exit 0 ($(fact create_err))"
is "$(fact start_rc)" 0 "start: exit 0"
is "$(fact from_container)" '"got: from-the-engine\nok 0 1 2 3 4\n"' \
	"the container read the engine's line from fd 3, wrote to fd 4, and holds exactly fds 0-4; the pipe ended with it (no copy kept by the runtime)"
is "$(fact exit)" 3 "... its status reaches the engine's waitpid (3)"
is "$(fact pidfd)" received "a pidfd arrived on the --pidfd-socket (SCM_RIGHTS)"
is "$(fact pidfd_msg)" '"pidfd"' "... named as runc names it"
is "$(fact pidfd_pid)" "$(fact pid)" "... it refers to the container's init (fdinfo Pid: is the pid file's)"
is "$(fact pidfd_signal0)" ok "... pidfd_send_signal(0) reaches init while it lives"
is "$(fact pidfd_after)" ESRCH "... and fails with ESRCH once init is reaped"
is "$(fact delete_rc)" 0 "delete: exit 0"
[ -z "$(ls -A "$ROOT" | grep -v "^$ID\.")" ] && ok "... nothing of it left in --root" ||
	not_ok "... nothing of it left in --root ($(ls -A "$ROOT"))"
rm -f "$ROOT/$ID".*

# control: without --preserve-fds the same command has no fd 3
engine "$OCI" "$ROOT" --no-pidfd --preserve 0
is "$(fact create_rc)/$(fact exit)/$(fact from_container)" '0/3/""' \
	"control: without --preserve-fds the same command runs with nothing on fds 3 and 4"
like "$(fact stderr)" "3: Bad file descriptor" "... its read from fd 3: EBADF"
rm -f "$ROOT/$ID".*

if [ -n "$RUNC" ] && RCG=$(cgroup_own_deepest); then
	RCG=$RCG/rft-fds-$$-runc
	cp "$B/config.json" "$TOP/config.keep"
	oci_cgroup_path "$B/config.json" "$RCG"
	# runc 1.1 has no --pidfd-socket (runc 1.2 added it)
	engine "$RUNC" "$RROOT" --no-pidfd
	cp "$TOP/config.keep" "$B/config.json"
	oci_cgroup_rm "$RCG"
	is "$(fact from_container)/$(fact exit)" '"got: from-the-engine\nok 0 1 2 3 4\n"/3' \
		"control: runc with --preserve-fds 2 through the same engine: the same"
else
	skip "control: runc through the same engine" "runc is not installed, or our cgroups do not nest"
fi

# --- run --preserve-fds, exec --preserve-fds -----------------------------------
echo "from-a-file" >"$TOP/in"
RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" run --preserve-fds 2 \
	-b "$B" "$ID" 2>&1 </dev/null 3<"$TOP/in" 4>"$TOP/out")
is "$?/$(cat "$TOP/out")" "3/got: from-a-file
ok 0 1 2 3 4" "run --preserve-fds 2: the container reads fd 3, writes fd 4, holds exactly 0-4"

cp "$B/config.json" "$TOP/config.keep"
python3 - "$B/config.json" <<'PY' || bail_out "cannot edit config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["/bin/sh", "-c", "while :; do /bin/rf-probe fds >/dev/null; sleep 1; done"]
json.dump(c, open(sys.argv[1], "w"), indent=1)
PY
ln -sf busybox "$B/rootfs/bin/sleep"
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create -b "$B" "$ID" </dev/null >/dev/null 2>&1 &&
	RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" start "$ID" </dev/null
is "$?" 0 "a running container to exec into"
RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" exec --preserve-fds 1 "$ID" \
	/bin/sh -c 'read l <&3; echo "exec got: $l"; /bin/rf-probe fds' 2>&1 </dev/null 3<"$TOP/in")
is "$?/$RF_OUT" "0/exec got: from-a-file
ok 0 1 2 3" "exec --preserve-fds 1: the joined process reads fd 3 and holds exactly 0-3"
RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" exec "$ID" \
	/bin/rf-probe fds 2>&1 </dev/null 3<"$TOP/in")
is "$?/$RF_OUT" "0/ok 0 1 2" "control: exec without --preserve-fds: an fd 3 of the caller never reaches the container"
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" delete --force "$ID" </dev/null >/dev/null 2>&1
cp "$TOP/config.keep" "$B/config.json"

# --- refusals --------------------------------------------------------------------
oci() { # ringfence-oci ARGS...; RF_RC, RF_ERR
	RF_ERR=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" 2>&1 </dev/null)
	RF_RC=$?
}
oci create --bundle "$B" --preserve-fds 40 "$ID" 40>&-
is "$RF_RC" 1 "--preserve-fds past the open fds: refused (1)"
like "$RF_ERR" "fd [0-9]+: Bad file descriptor" "... naming the fd that is not open"
oci create --bundle "$B" --preserve-fds two "$ID"
is "$RF_RC" 1 "--preserve-fds not a number: refused (1)"
oci create --bundle "$B" --pidfd-socket "$TOP/nobody.sock" "$ID"
is "$RF_RC" 125 "--pidfd-socket nobody listens on: create fails (125)"
like "$RF_ERR" "pidfd-socket .*(No such file|Connection refused)" "... saying why"
oci state "$ID"
is "$RF_RC" 1 "... and the container is gone (state: does not exist)"
[ -z "$(ls -A "$ROOT")" ] && ok "... nothing left in --root" || not_ok "... nothing left in --root ($(ls -A "$ROOT"))"

done_testing
