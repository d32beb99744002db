#!/bin/bash
# tests/integration/doctor.sh — `ringfence doctor [--json]` (issue 16): on a
# host where runs work (the control: a run here exits 0) it exits 0 and
# reports each check; `--json` is {"checks": [{name, status, detail, fix}]}
# with every check named once, a known status, and a fix wherever one is
# not ok; inside a run, where new namespaces are refused, it exits 1 and
# says which namespace and why (the run's own refusal, EPERM); a state dir
# owned by another user fails that check and says so (its control: the
# caller's own); usage errors exit 2; global --state-dir before the
# command is accepted.
#
# The workspace's filesystem (workspace_idmap, --workspace DIR, default
# the current directory): as root, where runs idmap the workspace, a
# ramfs mounted by this test (no idmapped mounts) fails the check with its
# type and a fix, exit 1, in the text and in --json — and a root run there
# is indeed refused ("its filesystem cannot be idmapped"); the controls, a
# tmpfs mounted by this test (idmappable since Linux 6.3: a run there
# works) and the test's own workspace, pass. For another user the check
# does not apply (a note). The mounts are unmounted at exit by the paths
# recorded when they were made.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

CHECKS="user_namespaces apparmor landlock seccomp cgroups nftables state_dir workspace_idmap resolver tls_module int80"

# the file systems this test mounts, unmounted at exit by these paths
MOUNTS=()
# shellcheck disable=SC2317 # (called from the EXIT trap)
doctor_cleanup() {
	local m
	[ "$BASHPID" = "$$" ] || return 0
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" || printf '# cleanup: cannot unmount %s\n' "$m"
	done
	_rf_cleanup
}
trap doctor_cleanup EXIT

# the control: runs work on this host
rf_run -- true
is "$RF_RC" 0 "control: a run works on this host"

out=$("$RF_BIN" doctor --state-dir "$RF_STATE" --workspace "$WS" 2>&1)
rc=$?
is "$rc" 0 "doctor: exit 0 where runs work"
like "$out" 'runs will work here' "... and says so"
for c in $CHECKS; do
	like "$out" "(ok|note|warn) +$c " "... $c reported, not failed"
done

json=$("$RF_BIN" doctor --json --state-dir "$RF_STATE" --workspace "$WS" 2>/dev/null)
is "$?" 0 "doctor --json: exit 0"
shape=$(printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
names = [c["name"] for c in d["checks"]]
bad = [c for c in d["checks"] if set(c) != {"name", "status", "detail", "fix"}
       or c["status"] not in ("ok", "note", "warn", "fail") or not c["detail"]
       or (c["status"] in ("warn", "fail") and not c["fix"])]
print(" ".join(names), "bad=%d" % len(bad), "fail=%d" % sum(c["status"] == "fail" for c in d["checks"]))
' 2>&1)
is "$shape" "$CHECKS bad=0 fail=0" "... every check once, as {name, status, detail, fix}, a fix wherever not ok"

# inside a run: no new namespace may be made there (the run's seccomp
# filter and user namespace refuse it), so runs would not work
bindir=$(dirname "$RF_BIN")
# (a sanitizer build's leak checker cannot work under the run's seccomp
# filter: off for this one command, which a release build ignores)
rf_run --ro "$bindir" -e ASAN_OPTIONS=detect_leaks=0 -- "$RF_BIN" doctor --json --state-dir /tmp/rf-doctor-state
is "$RF_RC" 1 "doctor inside a run: exit 1 (runs would not work there)"
ns=$(printf '%s' "$RF_OUT" | python3 -c '
import json, sys
d = {c["name"]: c for c in json.load(sys.stdin)["checks"]}
u = d["user_namespaces"]
print(u["status"], "|", u["detail"], "|", bool(u["fix"]))' 2>&1)
like "$ns" '^fail \| the user namespace \(userns\) cannot be created: Operation not permitted \| True$' \
	"... user_namespaces fails with the reason (EPERM) and a fix"

# a state dir owned by another user
other=$WS.other-state
mkdir -p "$other"
chown 65534:65534 "$other" 2>/dev/null
if [ "$(stat -c %u "$other")" = 65534 ] && [ "$RF_UID" != 65534 ]; then
	out=$("$RF_BIN" doctor --state-dir "$other" 2>&1)
	is "$?" 1 "doctor with a state dir owned by another user: exit 1"
	like "$out" "fail +state_dir +$other is owned by another user" "... the state_dir check says why"
	like "$out" 'fix: use a state dir you own' "... and what to do"
else
	skip "a state dir owned by another user" "cannot chown here"
	skip "... the state_dir check says why" "cannot chown here"
	skip "... and what to do" "cannot chown here"
fi
rm -rf "$other"
out=$(cd "$WS" && "$RF_BIN" --state-dir "$RF_STATE" doctor 2>&1)
is "$?" 0 "ringfence --state-dir DIR doctor: the global option before the command"
like "$out" "ok +state_dir +$RF_STATE" "... checks that state dir"

# ---- the workspace's filesystem -----------------------------------------------------------
# the default is the current directory, as for `run`
out=$(cd "$WS" && "$RF_BIN" doctor --state-dir "$RF_STATE" 2>&1)
like "$out" "(ok|note) +workspace_idmap +(does not apply: .*\\()?${WS}[ ,]" \
	"doctor without --workspace checks the current directory"
rf_mktemp /tmp
FSDIR=$REPLY
tag="rft$(printf '%x' $$)-doctor-$RANDOM"
mkdir "$FSDIR/ramfs" "$FSDIR/tmpfs"
# skip_idmap REASON — skip the cases below
skip_idmap() {
	local t
	for t in "a ramfs: fails workspace_idmap, exit 1" "... the line says why" "... and the fix" \
		"... --json carries the check" "... a root run there is refused as doctor said" \
		"control: a tmpfs passes" "control: a root run on the tmpfs works" \
		"control: the test's workspace passes"; do
		skip "$t" "$1"
	done
}
# host root (uid 0 of the initial user namespace, hostuid_root) idmaps
if ! is_root || ! grep -Eq '^ *0 +0 +4294967295 *$' /proc/self/uid_map; then
	out=$("$RF_BIN" doctor --state-dir "$RF_STATE" --workspace "$WS" 2>&1)
	like "$out" "note +workspace_idmap +does not apply: runs started by this user do not idmap the workspace \\($WS, " \
		"not host root: workspace_idmap does not apply (a note)"
	skip_idmap "not host root: runs are not idmapped"
elif ! mount -t ramfs "$tag-ramfs" "$FSDIR/ramfs"; then
	skip_idmap "cannot mount a ramfs here"
else
	MOUNTS+=("$FSDIR/ramfs")
	out=$("$RF_BIN" doctor --state-dir "$RF_STATE" --workspace "$FSDIR/ramfs" 2>&1)
	is "$?" 1 "a ramfs: fails workspace_idmap, exit 1"
	like "$out" "fail +workspace_idmap +$FSDIR/ramfs: its filesystem \\(ramfs\\) cannot be idmapped: root-started runs there would be refused" \
		"... the line says why"
	like "$out" 'fix: put the workspace on a filesystem that supports idmapped mounts \(ext4, xfs, btrfs, tmpfs' \
		"... and the fix"
	json=$("$RF_BIN" doctor --json --state-dir "$RF_STATE" --workspace "$FSDIR/ramfs" 2>/dev/null)
	rc=$?
	got=$(printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
f = [c["name"] for c in d["checks"] if c["status"] == "fail"]
w = {c["name"]: c for c in d["checks"]}["workspace_idmap"]
print(" ".join(f), "|", w["detail"], "|", bool(w["fix"]))' 2>&1)
	like "rc=$rc $got" "^rc=1 workspace_idmap \\| $FSDIR/ramfs: its filesystem \\(ramfs\\) cannot be idmapped: .* \\| True\$" \
		"... --json carries the check (the only failing one, with its fix), exit 1"
	# what doctor said is what a run meets
	rf_run -w "$FSDIR/ramfs" -- true
	like "rc=$RF_RC $RF_ERR" "^rc=125 .*$FSDIR/ramfs: its filesystem cannot be idmapped" \
		"... a root run there is refused as doctor said"

	# the controls
	if mount -t tmpfs -o size=1m,mode=0755 "$tag-tmpfs" "$FSDIR/tmpfs"; then
		MOUNTS+=("$FSDIR/tmpfs")
		out=$("$RF_BIN" doctor --state-dir "$RF_STATE" --workspace "$FSDIR/tmpfs" 2>&1)
		like "rc=$? $out" "^rc=0 .*ok +workspace_idmap +$FSDIR/tmpfs \\(tmpfs\\) can be idmapped to a run's uid" \
			"control: a tmpfs passes (exit 0)"
		rf_run -w "$FSDIR/tmpfs" -- true
		is "$RF_RC" 0 "control: a root run on the tmpfs works"
	else
		skip "control: a tmpfs passes" "cannot mount a tmpfs here"
		skip "control: a root run on the tmpfs works" "cannot mount a tmpfs here"
	fi
	out=$("$RF_BIN" doctor --state-dir "$RF_STATE" --workspace "$WS" 2>&1)
	like "$out" "ok +workspace_idmap +$WS \\([^)]+\\) can be idmapped to a run's uid" \
		"control: the test's workspace passes"
fi
"$RF_BIN" doctor --state-dir "$RF_STATE" --workspace "$FSDIR/missing" >/dev/null 2>&1
is "$?" 1 "a workspace that does not exist: exit 1"

# usage errors
"$RF_BIN" doctor --bogus >/dev/null 2>&1
is "$?" 2 "doctor --bogus: usage error (2)"
"$RF_BIN" doctor extra >/dev/null 2>&1
is "$?" 2 "doctor with an argument: usage error (2)"
"$RF_BIN" doctor --workspace >/dev/null 2>&1
is "$?" 2 "doctor --workspace without a directory: usage error (2)"
out=$("$RF_BIN" doctor --help)
like "$out" 'Usage: ringfence doctor' "doctor --help"

done_testing
