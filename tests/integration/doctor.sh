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
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

CHECKS="user_namespaces apparmor landlock seccomp cgroups nftables state_dir resolver tls_module int80"

# the control: runs work on this host
rf_run -- true
is "$RF_RC" 0 "control: a run works on this host"

out=$("$RF_BIN" doctor --state-dir "$RF_STATE" 2>&1)
rc=$?
is "$rc" 0 "doctor: exit 0 where runs work"
like "$out" 'runs will work here' "... and says so"
for c in $CHECKS; do
	like "$out" "(ok|note|warn) +$c " "... $c reported, not failed"
done

json=$("$RF_BIN" doctor --json --state-dir "$RF_STATE" 2>/dev/null)
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
out=$("$RF_BIN" --state-dir "$RF_STATE" doctor 2>&1)
is "$?" 0 "ringfence --state-dir DIR doctor: the global option before the command"
like "$out" "ok +state_dir +$RF_STATE" "... checks that state dir"

# usage errors
"$RF_BIN" doctor --bogus >/dev/null 2>&1
is "$?" 2 "doctor --bogus: usage error (2)"
"$RF_BIN" doctor extra >/dev/null 2>&1
is "$?" 2 "doctor with an argument: usage error (2)"
out=$("$RF_BIN" doctor --help)
like "$out" 'Usage: ringfence doctor' "doctor --help"

done_testing
