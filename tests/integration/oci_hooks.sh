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
# the container runs on.
#
# The two stages of the container's namespaces: createContainer runs
# during create after createRuntime, startContainer during start before
# the command and poststart — each in the container's namespaces (its
# mount and pid namespace, as init's), with its state ("created"), args
# and env; createContainer's binary is the host's (the runtime's
# namespace), startContainer's the container's, and startContainer gets
# every layer an exec'd process gets (no_new_privs, seccomp, no
# capabilities). A createContainer hook runs in the container's root, so
# it must be a static binary (here Debian's static busybox running the
# hook's script with -c): a script or a dynamically linked binary would
# have its interpreter or loader from the image, run as the container's
# root with no layer, and is refused before anything of it runs. runc runs the same six stages in the same order. A
# failing createContainer hook fails create (125, nothing left, poststop
# run); a failing startContainer hook fails start and the command never
# runs; a process a createContainer hook leaves behind is killed (init
# stays the container's only process until start).
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
# the hook: appends its stage to OUT/order, and its args, env and stdin to
# OUT/STAGE, then its namespaces and status; in the container (where OUT
# is not) OUT is bound at /hookout
cat >"$TOP/hook.sh" <<'EOF'
#!/bin/sh
out=$1 stage=$2
[ -d "$out" ] || out=/hookout
shift 2
echo "$stage" >>"$out/order"
{ echo "args=$*"; echo "env=$(tr '\0' ' ' </proc/$$/environ)"; cat; echo
  echo "mnt=$(readlink /proc/self/ns/mnt) pid=$(readlink /proc/self/ns/pid)"
  grep -E '^(NoNewPrivs|Seccomp|CapEff):' /proc/self/status; } >"$out/$stage"
EOF
printf '#!/bin/sh\nexit 3\n' >"$TOP/cfail.sh"
printf '#!/bin/sh\nsleep 1000 &\n' >"$TOP/leave.sh"
chmod 0755 "$TOP/hook.sh" "$TOP/cfail.sh" "$TOP/leave.sh"
cp "$TOP/hook.sh" "$B/rootfs/hook.sh"
cp "$TOP/cfail.sh" "$B/rootfs/cfail.sh"
# config EXPR — config.json from the base, terminal off, a loop, EXPR applied;
# h(stage, out, extra...) is a hook entry
config() {
	BUSYBOX=$BUSYBOX python3 - "$TOP/base.json" "$B/config.json" "$TOP/hook.sh" "$1" <<'PY' ||
import json, os, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c",
                        "[ -d /hookout ] && echo ran >>/hookout/order; while :; do sleep 1; done"]
hook = sys.argv[3]
def bind(out):
    c["mounts"].append({"destination": "/hookout", "type": "bind", "source": out,
                        "options": ["rbind", "rw"]})
def h(stage, out, **kw):
    e = {"path": hook, "args": ["hook.sh", out, stage, "a1"], "env": ["X=" + stage]}
    e.update(kw)
    return e
# a createContainer hook: the host's static busybox running a script with -c
def hs(stage, out, script=None, **kw):
    body = open(hook).read() if script is None else script
    e = {"path": os.environ["BUSYBOX"], "args": ["sh", "-c", body, "hook.sh", out, stage, "a1"],
         "env": ["X=" + stage]}
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
t = open(sys.argv[1]).read().split("\n")[2]
print(json.loads(t).get(sys.argv[2], ""))' "$1/$2" "$3" 2>/dev/null
}

all='c["hooks"] = {s: [h(s, OUT)] for s in ("prestart", "createRuntime", "poststart", "poststop")}
c["hooks"]["createContainer"] = [hs("createContainer", OUT)]
c["hooks"]["startContainer"] = [h("startContainer", OUT, path="/hook.sh")]
bind(OUT)'
# outdir DIR — DIR for hooks of the runtime's and the container's user
outdir() {
	mkdir -p "$1" && : >"$1/order" && chmod 0777 "$1" && chmod 0666 "$1/order"
}
for rt in ringfence runc; do
	if [ $rt = runc ] && [ -z "$RUNC" ]; then
		skip "runc, the control (7 cases)" "runc is not installed, or our cgroups do not nest"
		continue
	fi
	run=oc
	[ $rt = runc ] && run=rc
	O=$TOP/out/$rt
	outdir "$O"
	config "OUT = '$O'
$all"
	[ $rt = runc ] && oci_cgroup_path "$B/config.json" "$RCG/$ID"
	$run create --bundle "$B" --pid-file "$TOP/pid.$rt" "$ID"
	is "$RF_RC" 0 "$rt: create with hooks of all six stages ($RF_OUT)"
	pid=$(cat "$TOP/pid.$rt" 2>/dev/null)
	# (runc 1.1 runs poststart during create instead of start, fixed in runc 1.2)
	like "$(tr '\n' ' ' <"$O/order" 2>/dev/null)" \
		"^prestart createRuntime createContainer $([ $rt = runc ] && echo '(poststart )?')\$" \
		"$rt: create ran prestart, createRuntime, then createContainer"
	if [ $rt = ringfence ]; then
		is "$(stage_field "$O" createRuntime status)" "creating" "... createRuntime's state: creating"
		is "$(stage_field "$O" createRuntime pid)" "$pid" "... with init's pid"
		is "$(stage_field "$O" createRuntime id)" "$ID" "... and the container's id"
		is "$(sed -n 1,2p "$O/prestart" | tr '\n' ' ')" "args=a1 env=X=prestart  " \
			"... a hook gets the config's args and env, nothing else"
		ns="mnt=$(readlink "/proc/$pid/ns/mnt") pid=$(readlink "/proc/$pid/ns/pid")"
		is "$(grep '^mnt=' "$O/createContainer")" "$ns" \
			"... createContainer ran in the container's mount and pid namespaces"
		is "$(stage_field "$O" createContainer status)" "created" "... its state: created"
		is "$(sed -n 1,2p "$O/createContainer" | tr '\n' ' ')" \
			"args=a1 env=X=createContainer  " "... its args and env"
		oc ps --format json "$ID"
		is "$RF_OUT" "[$pid]" "... and left nothing but init in the container"
	fi
	$run start "$ID"
	is "$RF_RC" 0 "$rt: start"
	# the command writes "ran" on its own after start returns: waited for (bounded)
	for _ in $(seq 1 100); do
		[ "$(wc -w <"$O/order" 2>/dev/null)" -ge 6 ] && break
		sleep 0.05
	done
	like "$(tr '\n' ' ' <"$O/order" 2>/dev/null)" \
		"^prestart createRuntime createContainer (startContainer poststart ran|startContainer ran poststart|poststart startContainer ran) \$" \
		"$rt: start ran startContainer before the command, and poststart (once)"
	if [ $rt = ringfence ]; then
		is "$(stage_field "$O" poststart status)" "running" "... poststart's state: running"
		is "$(stage_field "$O" startContainer status)" "created" "... startContainer's: created"
		is "$(grep '^mnt=' "$O/startContainer")" "$ns" \
			"... startContainer ran in the container's mount and pid namespaces"
		is "$(grep -E '^(NoNewPrivs|Seccomp|CapEff):' "$O/startContainer" | tr -s '\t\n' '  ')" \
			"CapEff: 0000000000000000 NoNewPrivs: 1 Seccomp: 2 " \
			"... with every layer: no capabilities, no_new_privs, seccomp"
	fi
	$run delete --force "$ID"
	is "$RF_RC" 0 "$rt: delete --force"
	like "$(tr '\n' ' ' <"$O/order" 2>/dev/null)" " poststop \$" "$rt: delete ran poststop"
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
	outdir "$O"
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
fail_case "c['hooks'] = {'createRuntime': [h('createRuntime', OUT)],
              'createContainer': [hs('createContainer', OUT, script='exit 3')]}" \
	"hooks\.createContainer\[0\] \($BUSYBOX\): exit status 3" "a createContainer hook failing"
# a createContainer hook that is a script, or dynamically linked: refused
# before anything of it runs (its interpreter or loader would be the image's)
fail_case "c['hooks'] = {'createRuntime': [h('createRuntime', OUT)],
              'createContainer': [h('createContainer', OUT)]}" \
	"hooks\.createContainer\[0\] \($TOP/hook.sh\): a script: a createContainer hook runs in the container's root, where its interpreter would be the image's" \
	"a createContainer hook that is a script"
grep -qx createContainer "$TOP/out/f$((n_fail - 1))/order" 2>/dev/null && not_ok "... it never ran" ||
	ok "... it never ran"
TRUE=$(type -P true)
fail_case "c['hooks'] = {'createRuntime': [h('createRuntime', OUT)],
              'createContainer': [{'path': '$TRUE'}]}" \
	"hooks\.createContainer\[0\] \($TRUE\): dynamically linked: .* where its loader and libraries would be the image's" \
	"a createContainer hook dynamically linked ($TRUE)"
config "c['hooks'] = {'createRuntime': [{'path': '$TOP/missing'}]}"
oc create --bundle "$B" "$ID-f"
is "$RF_RC" 125 "a hook that does not exist: create refused (125)"
like "$RF_OUT" "exit status 127 \(not found\)" "... saying so"
[ ! -e "$ROOT/$ID-f" ] && ok "... nothing left in --root" || not_ok "... nothing left in --root"
config "c['hooks'] = {'createContainer': [{'path': '$TOP/missing'}]}"
oc create --bundle "$B" "$ID-f"
is "$RF_RC" 125 "a createContainer hook the runtime's namespace lacks: create refused (125)"
like "$RF_OUT" "hooks\.createContainer\[0\] \($TOP/missing\): No such file" "... saying so"
[ ! -e "$ROOT/$ID-f" ] && ok "... nothing left in --root" || not_ok "... nothing left in --root"

# a createContainer hook that leaves a process behind: killed, init alone
config "c['hooks'] = {'createContainer': [{'path': '$BUSYBOX', 'args': ['sh', '-c', 'sleep 1000 &']}]}"
oc create --bundle "$B" --pid-file "$TOP/pid.l" "$ID-f"
is "$RF_RC" 0 "a createContainer hook leaving a process: create succeeds"
oc ps --format json "$ID-f"
is "$RF_OUT" "[$(cat "$TOP/pid.l" 2>/dev/null)]" "... and the process it left is gone (init alone)"
oc delete --force "$ID-f"

# a failing startContainer hook: start fails, the command never runs
O=$TOP/out/sc
outdir "$O"
config "OUT = '$O'
c['hooks'] = {'startContainer': [h('startContainer', OUT, path='/cfail.sh')]}
bind(OUT)"
oc create --bundle "$B" "$ID-f"
is "$RF_RC" 0 "a startContainer hook failing: create succeeds"
oc start "$ID-f"
is "$RF_RC" 1 "... start fails"
like "$RF_OUT" "hooks\.startContainer\[0\] \(/cfail.sh\): exit status 3" "... saying so"
for _ in $(seq 50); do
	oc state "$ID-f"
	case $RF_OUT in *'"status":"stopped"'* | *"does not exist"*) break ;; esac
	sleep 0.1
done
like "$RF_OUT" '"status":"stopped"|does not exist' "... the container stopped"
is "$(cat "$O/order")" "" "... and its command never ran"
oc delete --force "$ID-f"

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

done_testing
