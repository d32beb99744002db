#!/bin/bash
# tests/integration/oci_run.sh — ringfence-oci, ringfence behind runc's
# command line (issue 17, first step: run, spec, features, --version).
#
# A bundle made here (tests/helpers/image.bash, and `ringfence-oci spec`'s
# config) runs as a ringfence run: its command, exit status, host name and
# working directory as the config says; its maskedPaths and readonlyPaths
# applied; the agent and egress of its annotations; recorded in the audit
# log. Where runc is installed, the same bundle runs under runc too, and
# the command's output and status must be the same (the control). A config
# asking for what ringfence-oci cannot give is refused with 125 and the
# key, and leaves nothing in --root; unknown commands and options fail.
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
mkdir -p "$B" "$ROOT"
make_image "$B/rootfs"
mkdir -p "$B/rootfs/secret-dir"
echo "hidden" >"$B/rootfs/secret-dir/file"
chmod -R a+rX "$B/rootfs/secret-dir"
ID=rf-test-$$

# oci ARGS... — ringfence-oci with this test's --root and state dir; sets
# RF_RC, RF_OUT, RF_ERR
oci() {
	RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" \
		2>"$TOP/err" </dev/null)
	RF_RC=$?
	RF_ERR=$(cat "$TOP/err")
}

# config JQ-PYTHON — edit $B/config.json with a python expression on `c`
config() {
	python3 - "$B/config.json" "$1" <<'PY' || bail_out "cannot edit config.json"
import json, sys
p, expr = sys.argv[1], sys.argv[2]
c = json.load(open(p))
exec(expr)
json.dump(c, open(p, "w"), indent=1)
PY
}

# --- version, features, spec -------------------------------------------------
oci --version
is "$RF_RC" 0 "--version: exit 0"
like "$RF_OUT" "^ringfence-oci version .*spec: 1\." "... the runtime's and the spec's versions"
oci features
is "$RF_RC" 0 "features: exit 0"
printf '%s' "$RF_OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["hooks"]==["prestart","createRuntime","createContainer","startContainer","poststart","poststop"] and d["linux"]["seccomp"]["enabled"] is True and "SCMP_ACT_NOTIFY" not in d["linux"]["seccomp"]["actions"] and "network" in d["linux"]["namespaces"]' 2>/dev/null
is "$?" 0 "... JSON saying what it implements (every hook stage, a container's seccomp profile without NOTIFY)"
oci features --foo
is "$RF_RC" 1 "features with an argument: refused (unknown options fail)"
oci list --format yaml
is "$RF_RC" 1 "list --format yaml: refused (json or table)"
oci list --format json
is "$RF_RC" 0 "control: list --format json: exit 0"
oci spec -b "$B"
is "$RF_RC" 0 "spec: writes a config.json"
oci spec -b "$B"
is "$RF_RC" 1 "spec again: refused (it never overwrites one)"
like "$RF_ERR" "File exists" "... saying so"
config 'c["process"]["terminal"]=False; c["process"]["args"]=["/bin/sh","-c","hostname; pwd; exit 7"]; c["process"]["cwd"]="/etc"; c["hostname"]="box-1"'

# --- a container runs as the config says -------------------------------------
oci run -b "$B" "$ID"
is "$RF_RC" 7 "run: the command's exit status (7)"
is "$RF_OUT" "box-1
/etc" "... its host name and working directory from the config"
[ -z "$(ls -A "$ROOT")" ] && ok "... and nothing of it is left in --root" ||
	not_ok "... and nothing of it is left in --root ($(ls -A "$ROOT"))"
# runc makes the cgroup the config names (else one at the hierarchy's
# root): name one beneath this test's own cgroup in every hierarchy (the
# deepest of them, when every other is a prefix of it), or leave runc out
own_cgroup() {
	local deepest="" p
	while IFS=: read -r _ _ p; do
		[ "${#p}" -gt "${#deepest}" ] && deepest=$p
	done </proc/self/cgroup
	while IFS=: read -r _ _ p; do
		[ "$p" = / ] || [[ $deepest == "$p" || $deepest == "$p"/* ]] || return 1
	done </proc/self/cgroup
	printf '%s\n' "${deepest%/}"
}
if ! command -v runc >/dev/null 2>&1; then
	skip "runc not installed: no side-by-side control"
elif ! cg=$(own_cgroup); then
	skip "this process's cgroups differ between hierarchies: no cgroup for runc beneath them"
else
	config "c[\"linux\"][\"cgroupsPath\"]=\"$cg/rf-test-runc-$$\""
	ctl=$(cd "$B" && timeout 60 runc --root "$TOP/runc-root" run "$ID-runc" </dev/null 2>/dev/null)
	rc=$?
	is "$rc/$ctl" "$RF_RC/$RF_OUT" "control: runc runs the same bundle to the same output and status"
fi

# the layers of a ringfence run: its own namespaces, no capability, the
# root read-only, the image untouched
host_ns=$("$RF_PROBE" ns self)
config 'c["process"]["args"]=["/bin/rf-probe","ns","self"]'
oci run -b "$B" "$ID"
for kind in user mnt pid net; do
	isnt "$(field "$RF_OUT" "$kind")" "$(field "$host_ns" "$kind")" "the container has its own $kind namespace"
done
config 'c["process"]["args"]=["/bin/rf-probe","create","/bin/evil"]'
oci run -b "$B" "$ID"
is "$(first_line "$RF_OUT")" "errno=EROFS" "a write to the container's root: EROFS"
[ ! -e "$B/rootfs/bin/evil" ] && ok "... nothing in the bundle" || not_ok "... nothing in the bundle"

# maskedPaths and readonlyPaths
config 'c["process"]["args"]=["/bin/rf-probe","cat","/etc/marker"]'
oci run -b "$B" "$ID"
like "$RF_OUT" "from-the-image" "control: the marker is readable unmasked"
config 'c["linux"]["maskedPaths"]+=["/etc/marker","/secret-dir"]'
oci run -b "$B" "$ID"
is "$RF_OUT" "ok" "a masked file reads as empty"
config 'c["process"]["args"]=["/bin/rf-probe","ls","/secret-dir"]'
oci run -b "$B" "$ID"
is "$RF_OUT" "ok" "a masked directory is empty"
config 'c["process"]["args"]=["/bin/rf-probe","create","/tmp/x"]'
oci run -b "$B" "$ID"
is "$(first_line "$RF_OUT")" "ok" "control: /tmp is writable"
config 'c["linux"]["readonlyPaths"]+=["/tmp"]'
oci run -b "$B" "$ID"
is "$(first_line "$RF_OUT")" "errno=EROFS" "a readonlyPath: EROFS"

# egress: none without an annotation; the allow rules of ringfence.io/allow-hosts
config 'c["process"]["args"]=["/bin/rf-probe","dns","api.example.com","1"]'
oci run -b "$B" "$ID"
like "$(first_line "$RF_OUT")" "rcode=REFUSED" "no egress annotation: a name does not resolve (REFUSED)"
config 'c["annotations"]["ringfence.io/allow-hosts"]="api.example.com:443"; c["annotations"]["ringfence.io/agent"]="oci-agent"'
oci run -b "$B" "$ID"
like "$(first_line "$RF_OUT")" "rcode=NOERROR" "ringfence.io/allow-hosts: the allowed name resolves (NOERROR)"
audit=$("$RF_BIN" audit --state-dir "$RF_STATE" --agent oci-agent --event run.start 2>&1)
like "$audit" "oci-agent" "run.start is in the audit log with the annotation's agent"
like "$audit" "container=id=$ID " "... with the container's id (no pod: nothing more)"
# a Kubernetes container: the pod and container names the engine gave
config 'c["annotations"]["ringfence.io/agent"]="oci-k8s"; c["annotations"]["io.kubernetes.pod.namespace"]="team-a"; c["annotations"]["io.kubernetes.pod.name"]="agent-7"; c["annotations"]["io.kubernetes.pod.uid"]="0b1c"; c["annotations"]["io.kubernetes.container.name"]="worker"'
oci run -b "$B" "$ID"
audit=$("$RF_BIN" audit --state-dir "$RF_STATE" --agent oci-k8s --event run.start --json 2>&1)
like "$audit" '"container":"id='"$ID"' pod=team-a/agent-7 pod_uid=0b1c name=worker"' \
	"run.start names the pod (namespace/name, uid) and the container from the engine's annotations"
config 'for k in ("io.kubernetes.pod.namespace","io.kubernetes.pod.name","io.kubernetes.pod.uid","io.kubernetes.container.name"): c["annotations"].pop(k)'

# the kill switch: a container is a run in ringfence's registry
config 'c["process"]["args"]=["/bin/sh","-c","while :; do sleep 1; done"]; c["annotations"]["ringfence.io/agent"]="oci-kill"'
RINGFENCE_STATE_DIR=$RF_STATE "$OCI" --root "$ROOT" run -b "$B" "$ID" </dev/null >/dev/null 2>&1 &
opid=$!
register_pid "$opid"
run=""
for _ in $(seq 100); do
	run=$("$RF_BIN" ps --state-dir "$RF_STATE" --json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("agent") == "oci-kill": print(r["run"])' 2>/dev/null)
	[ -n "$run" ] && break
	sleep 0.1
done
isnt "$run" "" "ringfence ps lists the running container (agent oci-kill)"
[ -n "$run" ] || kill -KILL "$opid"
oci state "$ID"
printf '%s' "$RF_OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["status"]=="running" and d["id"]==sys.argv[1] and d["pid"]>1 and d["annotations"]["ringfence.io/agent"]=="oci-kill"' "$ID" 2>/dev/null
is "$?" 0 "state: running, its id, its init's pid, its annotations ($RF_OUT)"
oci list -q
is "$RF_OUT" "$ID" "list -q: the container"
oci pause "$ID"
is "$RF_RC" 0 "pause: exit 0"
oci state "$ID"
like "$RF_OUT" '"status":"paused"' "... state: paused"
oci resume "$ID"
oci state "$ID"
like "$RF_OUT" '"status":"running"' "resume: running again"
oci delete "$ID"
is "$RF_RC" 1 "delete of a running container without --force: refused"
like "$RF_ERR" "is running" "... saying so"
oci kill "$ID" NOSUCH
is "$RF_RC" 1 "kill with a name that is no signal: refused (1)"
# a state.json naming another process as the supervisor: never signalled
sleep 300 &
victim=$!
register_pid "$victim"
cp "$ROOT/$ID/state.json" "$TOP/state.json.good"
python3 - "$ROOT/$ID/state.json" "$victim" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["supervisor"] = int(sys.argv[2])
json.dump(d, open(sys.argv[1] + ".x", "w"))
PY
cat "$ROOT/$ID/state.json.x" >"$ROOT/$ID/state.json" && rm -f "$ROOT/$ID/state.json.x"
oci kill "$ID" TERM
is "$RF_RC" 1 "kill through a state.json naming another process: refused (1)"
like "$RF_ERR" "not the one it names" "... saying so"
kill -0 "$victim" 2>/dev/null && ok "... and that process got nothing" ||
	not_ok "... and that process got nothing"
kill "$victim" 2>/dev/null
cat "$TOP/state.json.good" >"$ROOT/$ID/state.json"
"$RF_BIN" kill --state-dir "$RF_STATE" "$run" --reason "oci test" >/dev/null 2>&1
wait "$opid"
is "$?" 137 "ringfence kill ends it: ringfence-oci exits 137"
[ -z "$(ls -A "$ROOT")" ] && ok "... and nothing of it is left in --root" ||
	not_ok "... and nothing of it is left in --root"

# --- refusals: 125, the key, nothing left -------------------------------------
refuse_case() { # EXPR WORDS WHAT
	cp "$B/config.json" "$TOP/good.json"
	config "$1"
	oci run -b "$B" "$ID"
	is "$RF_RC" 125 "$3: refused (125)"
	like "$RF_ERR" "$2" "... saying so"
	[ -z "$(ls -A "$ROOT")" ] && ok "... nothing left in --root" || not_ok "... nothing left in --root"
	cp "$TOP/good.json" "$B/config.json"
}
refuse_case 'c["process"]["apparmorProfile"]="docker-default"' "process.apparmorProfile: not supported" \
	"an AppArmor profile"
refuse_case 'c["mounts"].append({"destination":"/data","type":"overlay","source":"overlay"})' \
	"mounts\\[4\\]: /data" "an overlay mount"
refuse_case 'c["mounts"].append({"destination":"/data","type":"bind","source":"/etc","options":["rbind","rshared"]})' \
	"option rshared" "a bind shared with the host"
refuse_case 'c["linux"]["namespaces"]=[n for n in c["linux"]["namespaces"] if n["type"]!="network"]' \
	"no network namespace" "the host's network namespace"
refuse_case 'c["linux"]["namespaces"][1]["path"]="/proc/1/ns/net"
c.get("annotations", {}).pop("ringfence.io/allow-hosts", None)' \
	"joining the network namespace /proc/1/ns/net: (the host's network namespace|Permission denied)" \
	"joining the host's network namespace"
refuse_case 'c["linux"]["namespaces"][1]["path"]="/proc/1/ns/net"
c.setdefault("annotations", {})["ringfence.io/allow-hosts"] = "example.com:443"' \
	"joining the network namespace /proc/1/ns/net: (the host's network namespace|Permission denied)" \
	"joining the host's network namespace with egress of its own"
refuse_case 'del c["ociVersion"]' "ociVersion: required" "a config without ociVersion"
refuse_case 'c["root"]["path"]="missing"' "rootfs .*missing" "a missing root"
refuse_case 'c["hooks"]={"prestart":[{"path":"/bin/true"}]}' "hooks.prestart: not with run yet" \
	"hooks with run (create and start run them: oci_hooks.sh)"

chmod 0777 "$ROOT"
oci run -b "$B" "$ID"
is "$RF_RC" 125 "a --root others may write: refused (125)"
like "$RF_ERR" "only it may write" "... saying so"
chmod 0700 "$ROOT"
mkdir "$ROOT/$ID"
oci run -b "$B" "$ID"
is "$RF_RC" 125 "a container id in use: refused (125)"
like "$RF_ERR" "exists already" "... saying so"
rmdir "$ROOT/$ID"
oci run -b "$B" "../$ID"
is "$RF_RC" 1 "an id with a slash: refused (1)"

# --- the command line ----------------------------------------------------------
oci state "$ID"
is "$RF_RC" 1 "state of a container that ended: it does not exist (1)"
like "$RF_ERR" "does not exist" "... saying so"

# kill TERM: the command gets it (143); delete --force of a running one
config 'c["process"]["args"]=["/bin/sh","-c","trap \"exit 143\" TERM; while :; do sleep 0.1; done"]'
RINGFENCE_STATE_DIR=$RF_STATE "$OCI" --root "$ROOT" run -b "$B" "$ID" </dev/null >/dev/null 2>&1 &
opid=$!
register_pid "$opid"
for _ in $(seq 100); do
	oci state "$ID"
	[[ $RF_OUT == *'"status":"running"'* ]] && break
	sleep 0.1
done
oci kill "$ID"
is "$RF_RC" 0 "kill (TERM): exit 0"
wait "$opid"
is "$?" 143 "... the command got TERM (its trap exits 143)"
config 'c["process"]["args"]=["/bin/sh","-c","while :; do sleep 1; done"]'
RINGFENCE_STATE_DIR=$RF_STATE "$OCI" --root "$ROOT" run -b "$B" "$ID" </dev/null >/dev/null 2>&1 &
opid=$!
register_pid "$opid"
for _ in $(seq 100); do
	oci state "$ID"
	[[ $RF_OUT == *'"status":"running"'* ]] && break
	sleep 0.1
done
oci delete --force "$ID"
is "$RF_RC" 0 "delete --force of a running container: exit 0"
wait "$opid"
is "$?" 137 "... it was killed (137)"
[ -z "$(ls -A "$ROOT")" ] && ok "... and nothing of it is left in --root" ||
	not_ok "... and nothing of it is left in --root"

oci checkpoint "$ID"
is "$RF_RC" 1 "checkpoint: not there yet (1)"
like "$RF_ERR" "not there yet" "... saying so"
oci --systemd-cgroup run -b "$B" "$ID"
is "$RF_RC" 1 "--systemd-cgroup: refused (1)"
oci --bogus run "$ID"
is "$RF_RC" 1 "an unknown global option: refused (1)"
oci run --bogus "$ID"
is "$RF_RC" 1 "an unknown run option: refused (1)"
oci bogus
is "$RF_RC" 1 "an unknown command: refused (1)"
oci --log "$TOP/log.json" --log-format json run --detach "$ID"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$TOP/log.json" 2>/dev/null
is "$?" 0 "--log-format json: the error is a JSON line in --log"

done_testing
