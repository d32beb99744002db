#!/bin/bash
# tests/integration/oci_hooks.sh — a container's hooks under ringfence-oci
# (issue 17, runtime-spec "POSIX-platform Hooks"), runc on the same bundle
# as the control.
#
# Asserted: prestart and createRuntime run during create (in that order,
# the container built and its command held: their state says "creating"
# with init's pid), poststart during start ("running"), poststop during
# delete, after the container is gone ("stopped"); each hook gets the
# config's args and env only and the state on its stdin; runc runs the
# same stages in the same order (but runc 1.1 runs poststart during create
# instead of start, a bug fixed in runc 1.2). A createRuntime hook that fails (its exit
# status), one past its timeout (killed) and one that does not exist fail
# create (125, naming the hook) and leave nothing (the container deleted,
# poststop run, as the spec says); a failing poststart is a warning and
# the container runs on; createContainer and startContainer hooks (the
# container's namespaces) are refused with a clear line.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox

OCI=$(dirname "$RF_BIN")/ringfence-oci
[ -x "$OCI" ] || bail_out "no ringfence-oci beside $RF_BIN"
rf_mktemp /tmp
TOP=$REPLY
B=$TOP/bundle
ROOT=$TOP/oci-root
RROOT=$TOP/runc-root
mkdir -p "$B" "$ROOT" "$RROOT" "$TOP/out"
make_image "$B/rootfs"
ID=rf-hooks-$$
RUNC=$(command -v runc || true)
OWN=$(cgroup_own_deepest) || RUNC=""
RCG=${OWN:-}/rft-hk-$$
cleanup_containers() {
	local c
	for c in "$ID" "$ID-f"; do
		RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$c" \
			</dev/null >/dev/null 2>&1
		[ -n "$RUNC" ] && timeout 30 "$RUNC" --root "$RROOT" delete --force "$c" \
			</dev/null >/dev/null 2>&1
	done
	[ -n "$RUNC" ] && oci_cgroup_rm "$RCG"
}
trap 'cleanup_containers; _rf_cleanup' EXIT

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
cp "$B/config.json" "$TOP/base.json"
# the hook: appends its stage to OUT/order, and its args, env and stdin to OUT/STAGE
cat >"$TOP/hook.sh" <<'EOF'
#!/bin/sh
out=$1 stage=$2
shift 2
echo "$stage" >>"$out/order"
{ echo "args=$*"; echo "env=$(tr '\0' ' ' </proc/$$/environ)"; cat; echo; } >"$out/$stage"
EOF
chmod 0755 "$TOP/hook.sh"
# config EXPR — config.json from the base, terminal off, a loop, EXPR applied;
# h(stage, out, extra...) is a hook entry
config() {
	python3 - "$TOP/base.json" "$B/config.json" "$TOP/hook.sh" "$1" <<'PY' ||
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c", "while :; do sleep 1; done"]
hook = sys.argv[3]
def h(stage, out, **kw):
    e = {"path": hook, "args": ["hook.sh", out, stage, "a1"], "env": ["X=" + stage]}
    e.update(kw)
    return e
exec(sys.argv[4])
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
		bail_out "cannot write config.json"
}
# oc ARGS... — ringfence-oci; RF_RC, RF_OUT (stdout+stderr)
# (into a file: a created container's stdio is the caller's, held open)
oc() {
	RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" >"$TOP/o" 2>&1 </dev/null
	RF_RC=$?
	RF_OUT=$(cat "$TOP/o")
}
rc() {
	timeout 60 "$RUNC" --root "$RROOT" "$@" >"$TOP/o" 2>&1 </dev/null
	RF_RC=$?
	RF_OUT=$(cat "$TOP/o")
}
# stage_field OUT STAGE KEY — a field of the state the hook read
stage_field() {
	python3 -c 'import json, sys
t = open(sys.argv[1]).read().split("\n", 2)[2]
print(json.loads(t).get(sys.argv[2], ""))' "$1/$2" "$3" 2>/dev/null
}

all='c["hooks"] = {s: [h(s, OUT)] for s in ("prestart", "createRuntime", "poststart", "poststop")}'
for rt in ringfence runc; do
	if [ $rt = runc ] && [ -z "$RUNC" ]; then
		skip "runc, the control (7 cases)" "runc is not installed, or our cgroups do not nest"
		continue
	fi
	run=oc
	[ $rt = runc ] && run=rc
	O=$TOP/out/$rt
	mkdir -p "$O"
	config "OUT = '$O'
$all"
	[ $rt = runc ] && oci_cgroup_path "$B/config.json" "$RCG/$ID"
	$run create --bundle "$B" --pid-file "$TOP/pid.$rt" "$ID"
	is "$RF_RC" 0 "$rt: create with hooks of the four runtime stages ($RF_OUT)"
	pid=$(cat "$TOP/pid.$rt" 2>/dev/null)
	# (runc 1.1 runs poststart during create instead of start, fixed in runc 1.2)
	like "$(tr '\n' ' ' <"$O/order" 2>/dev/null)" "^prestart createRuntime $([ $rt = runc ] &&
		echo '(poststart )?')\$" "$rt: create ran prestart, then createRuntime"
	if [ $rt = ringfence ]; then
		is "$(stage_field "$O" createRuntime status)" "creating" "... createRuntime's state: creating"
		is "$(stage_field "$O" createRuntime pid)" "$pid" "... with init's pid"
		is "$(stage_field "$O" createRuntime id)" "$ID" "... and the container's id"
		is "$(sed -n 1,2p "$O/prestart" | tr '\n' ' ')" "args=a1 env=X=prestart  " \
			"... a hook gets the config's args and env, nothing else"
	fi
	$run start "$ID"
	is "$RF_RC" 0 "$rt: start"
	is "$(tr '\n' ' ' <"$O/order" 2>/dev/null)" "prestart createRuntime poststart " \
		"$rt: start ran poststart (once)"
	[ $rt = ringfence ] &&
		is "$(stage_field "$O" poststart status)" "running" "... its state: running"
	$run delete --force "$ID"
	is "$RF_RC" 0 "$rt: delete --force"
	is "$(tr '\n' ' ' <"$O/order" 2>/dev/null)" "prestart createRuntime poststart poststop " \
		"$rt: delete ran poststop"
	if [ $rt = ringfence ]; then
		is "$(stage_field "$O" poststop status)" "stopped" "... its state: stopped"
		[ ! -e "$ROOT/$ID" ] && ok "... after the container was gone" ||
			not_ok "... after the container was gone"
	fi
done

# failures
fail_case() { # EXPR WANT WHAT
	local O=$TOP/out/f$n_fail
	n_fail=$((n_fail + 1))
	mkdir -p "$O"
	config "OUT = '$O'
$1
c['hooks']['poststop'] = [h('poststop', OUT)]"
	oc create --bundle "$B" "$ID-f"
	is "$RF_RC" 125 "$3: create refused (125)"
	like "$RF_OUT" "$2" "... saying so"
	[ ! -e "$ROOT/$ID-f" ] && ok "... nothing left in --root" || not_ok "... nothing left in --root"
	local p
	p=$(stage_field "$O" createRuntime pid)
	# (gone, or a zombie its new parent has not reaped yet)
	[ -n "$p" ] && { [ ! -e "/proc/$p" ] || grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; } &&
		ok "... its init is gone ($p)" ||
		not_ok "... its init is gone (${p:-no pid})"
	grep -qx poststop "$O/order" 2>/dev/null && ok "... and poststop ran (the spec's delete)" ||
		not_ok "... and poststop ran (the spec's delete)"
}
n_fail=0
cat >"$TOP/fail.sh" <<'EOF'
#!/bin/sh
"$(dirname "$0")/hook.sh" "$@"
exit 3
EOF
cat >"$TOP/slow.sh" <<'EOF'
#!/bin/sh
"$(dirname "$0")/hook.sh" "$@"
exec sleep 60
EOF
chmod 0755 "$TOP/fail.sh" "$TOP/slow.sh"
fail_case "c['hooks'] = {'createRuntime': [h('createRuntime', OUT, path='$TOP/fail.sh')]}" \
	"hooks\.createRuntime\[0\] \($TOP/fail.sh\): exit status 3" "a createRuntime hook failing"
fail_case "c['hooks'] = {'createRuntime': [h('createRuntime', OUT, path='$TOP/slow.sh', timeout=1)]}" \
	"hooks\.createRuntime\[0\] .*: timed out after 1 s" "a createRuntime hook past its timeout"
config "c['hooks'] = {'createRuntime': [{'path': '$TOP/missing'}]}"
oc create --bundle "$B" "$ID-f"
is "$RF_RC" 125 "a hook that does not exist: create refused (125)"
like "$RF_OUT" "exit status 127 \(not found\)" "... saying so"
[ ! -e "$ROOT/$ID-f" ] && ok "... nothing left in --root" || not_ok "... nothing left in --root"

O=$TOP/out/ps
mkdir -p "$O"
config "OUT = '$O'
c['hooks'] = {'poststart': [h('poststart', OUT, path='$TOP/fail.sh')]}"
oc create --bundle "$B" "$ID-f"
oc start "$ID-f"
is "$RF_RC" 0 "a poststart hook failing: start still succeeds"
like "$RF_OUT" "warning: .*poststart" "... with a warning"
oc state "$ID-f"
like "$RF_OUT" '"status":"running"' "... and the container runs on"
oc delete --force "$ID-f"

for st in createContainer startContainer; do
	config "c['hooks'] = {'$st': [{'path': '/bin/true'}]}"
	oc create --bundle "$B" "$ID-f"
	is "$RF_RC" 125 "a $st hook: refused (125)"
	like "$RF_OUT" "createContainer and startContainer hooks: not yet" "... saying so"
done
done_testing
