#!/bin/bash
# tests/integration/workspace.sh — choosing the workspace: the default is the
# current directory, but never /, the caller's home or a directory holding
# ringfence's state or system state (125); an explicit --workspace of a plain
# directory works, and the cwd inside follows the caller's cwd when it is
# inside the workspace; a workspace named through a symbolic link is refused
# (name the resolved path); a workspace that contains (or is, or is inside)
# the state dir is refused even when explicit; a missing workspace or a file
# is refused.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
WS_REAL=$(cd "$WS" && pwd -P)
STATE_PARENT=$(dirname "$RF_STATE")

# refused NAME RUN-ARGS... — the run exits 125 with one "ringfence: " line
# (matching $WHY, an ERE, when set: the refusal is for the right reason),
# and the command did not run. (The probe exits 0 or 1, never 125, so the
# status alone tells; the marker in $WS is a second witness where $WS is the
# workspace the run would have had.)
refused() {
	local name=$1 marker=$WS/marker.$RANDOM$RANDOM
	shift
	rf_run "$@" -- "$PROBE" write "$marker"
	if [ "$RF_RC" = 125 ] && [[ $RF_ERR =~ ^ringfence:\ [^$'\n']+$ ]] && [ ! -e "$marker" ] &&
		[[ $RF_ERR =~ ${WHY:-.} ]]; then
		ok "$name: refused (125, one line: ${RF_ERR#ringfence: })"
	else
		not_ok "$name: refused with 125 and one 'ringfence: ' line${WHY:+ matching /$WHY/}, command not run" \
			"$(_rf_last_run_diag)" "marker exists: $([ -e "$marker" ] && echo yes || echo no)"
	fi
}

# ---- the default: the current directory ------------------------------------------------

RF_CWD=$WS rf_probe cwd
is "$RF_OUT" "ok $WS_REAL" "default workspace: the current directory (cwd inside)"
RF_CWD=$WS rf_run -- "$PROBE" write relative-file
is "$(cat "$WS/relative-file" 2>/dev/null)" rf-probe "default workspace: a relative write lands in it on the host"

host_home=$HOST_HOME
RF_CWD=/ refused "cwd /, no --workspace"
if [ -d "$host_home" ]; then
	WHY=home RF_CWD=$host_home refused "cwd = the caller's home ($host_home), no --workspace"
else
	skip "cwd = the caller's home, no --workspace: refused" "the caller's home $host_home does not exist"
fi
WHY="ringfence state" RF_CWD=$STATE_PARENT refused "cwd contains the state dir, no --workspace"
WHY="ringfence state" RF_CWD=$RF_STATE refused "cwd is the state dir, no --workspace"
WHY=/etc RF_CWD=/etc refused "cwd /etc (system state), no --workspace"
WHY=/usr RF_CWD=/usr refused "cwd /usr (system), no --workspace"
WHY=/proc RF_CWD=/proc refused "cwd /proc, no --workspace"

# ---- explicit --workspace ---------------------------------------------------------------

RF_CWD=/ rf_run -w "$WS" -- "$PROBE" cwd
is "$RF_OUT" "ok $WS_REAL" "explicit -w DIR from cwd / : cwd inside is the workspace"
RF_CWD=/ rf_run --workspace "$WS" -- "$PROBE" write "$WS/explicit-file"
is "$RF_OUT" "ok 9" "explicit --workspace DIR is writable"
check "... and the write is on the host" test -e "$WS/explicit-file"

mkdir -p "$WS/sub/dir"
RF_CWD=$WS/sub/dir rf_run -w "$WS" -- "$PROBE" cwd
is "$RF_OUT" "ok $WS_REAL/sub/dir" "cwd inside the workspace is kept"
RF_CWD=$WS/sub/dir rf_run -- /bin/pwd
is "$RF_OUT" "$WS_REAL/sub/dir" "default workspace from a subdirectory: that subdirectory"
RF_CWD=$WS/sub/dir rf_run -- /bin/sh -c "test -e '$WS/rf-probe' && echo visible || echo absent"
is "$RF_OUT" absent "... and files of its parent directory (outside the workspace) are absent"

rf_mktemp /tmp
links=$REPLY
ln -s "$WS" "$links/ws-link"
# A workspace named through a symbolic link is refused (docs/POLICY.md: a
# link planted by an earlier run must not redirect a later run's mount);
# the resolved path works (the control).
WHY="symbolic link" refused "explicit workspace given through a symlink" -w "$links/ws-link"
RF_CWD=/ rf_run -w "$(readlink -f "$links/ws-link")" -- "$PROBE" cwd
is "$RF_OUT" "ok $WS_REAL" "control: the resolved path of that symlink works"
mkdir -p "$WS/real-sub"
WHY="symbolic link" refused "explicit workspace with a symlink in the middle of its path" -w "$links/ws-link/real-sub"

WHY="ringfence state" refused "explicit workspace containing the state dir" -w "$STATE_PARENT"
WHY="ringfence state" refused "explicit workspace = the state dir" -w "$RF_STATE"
mkdir -p "$RF_STATE/inner"
WHY="ringfence state" refused "explicit workspace inside the state dir" -w "$RF_STATE/inner"
ln -s "$STATE_PARENT" "$links/state-link"
WHY="ringfence state|symbolic link" refused "explicit workspace containing the state dir, through a symlink" -w "$links/state-link"
WHY="No such file|does not exist" refused "explicit workspace that does not exist" -w "$WS/does-not-exist"
: >"$WS/plain-file"
WHY="[Nn]ot a directory" refused "explicit workspace that is a file" -w "$WS/plain-file"
WHY=/proc refused "explicit workspace /proc" -w /proc

# RINGFENCE_STATE_DIR selects the state dir as --state-dir does: a workspace
# containing it is refused too (run without --state-dir here).
rf_mktemp /tmp
env_state_parent=$REPLY
marker=$env_state_parent/env-state-marker
(cd / && RINGFENCE_STATE_DIR=$env_state_parent/state timeout -k 5 60 "$RF_BIN" run \
	-w "$env_state_parent" -- "$PROBE" write "$marker" </dev/null >/dev/null 2>&1)
rc=$?
if [ "$rc" = 125 ] && [ ! -e "$marker" ]; then
	ok "RINGFENCE_STATE_DIR: a workspace containing it is refused"
else
	not_ok "RINGFENCE_STATE_DIR: a workspace containing it is refused" \
		"rc=$rc, marker written: $([ -e "$marker" ] && echo yes || echo no)"
fi

# ---- --expect-workspace: the inode the daemon checked, and no other ------------------------
new_workspace
id=$(stat -c '%d:%i' "$WS")
rf_run --expect-workspace "$id" -w "$WS" -- /bin/sh -c "touch '$WS/expect-ok'"
is "$RF_RC" 0 "--expect-workspace with the workspace's own DEV:INO: the run starts"
check "... and the command ran" test -e "$WS/expect-ok"
other=$(stat -c '%d:%i' /tmp)
rf_run --expect-workspace "$other" -w "$WS" -- /bin/sh -c "touch '$WS/expect-bad'"
is "$RF_RC" 125 "another inode (a path swapped after the daemon's check): refused with 125"
like "$RF_ERR" 'not the directory that was checked' "... saying so"
check "... and the command did not run" test ! -e "$WS/expect-bad"
rf_run --expect-workspace "x:1" -w "$WS" -- true
is "$RF_RC" 125 "--expect-workspace that is not DEV:INO: 125"

done_testing
