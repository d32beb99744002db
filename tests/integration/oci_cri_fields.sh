#!/bin/bash
# tests/integration/oci_cri_fields.sh — what Kubernetes' CRI writes into
# every container's config, which ringfence-oci must run rather than
# refuse (issue 17), runc on the same bundle as the control: the kubelet's
# OOM score adjustment (-998 for a pod's sandbox, -997 to 1000 by QoS
# class), cpu shares (2 for a best-effort pod), and huge page limits of 0
# for every size the node has.
#
# Asserted: init and the command have the config's oom_score_adj, as
# runc's have (-998 where the host's root may lower it, else 500); the
# container's cpu cgroup (at its cgroupsPath) has the config's cpu.shares
# (v1) or the weight runc would write (v2), as runc's has; huge page limits run where the host has no such pages to give (its
# sysfs pool and overcommit both 0, read as the control) and are refused
# where it has some (ringfence has no hugetlb controller); additionalGids
# (the image's groups of the user) are taken and the container runs with
# none (one gid is mapped: none could grant anything); values out of range
# are refused (125) and leave nothing.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root (an OOM score below 0)"

require_oci
RUNC=$(command -v runc || true)
OWN=$(cgroup_own_deepest) || skip_all "this process's cgroups do not nest"
rf_mktemp /tmp
TOP=$REPLY
B=$TOP/bundle
ROOT=$TOP/oci-root
RROOT=$TOP/runc-root
mkdir -p "$B" "$ROOT" "$RROOT"
make_image "$B/rootfs"
ID=rf-cri-$$
CGP=$OWN/rft-cri-$$
cleanup() {
	local c d
	for c in "$ID" "$ID-x"; do
		RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$c" \
			</dev/null >/dev/null 2>&1
		[ -n "$RUNC" ] && timeout 30 "$RUNC" --root "$RROOT" delete --force "$c" \
			</dev/null >/dev/null 2>&1
	done
	# the cgroups this test named (the leaves go with the containers)
	for d in /sys/fs/cgroup/*/"${CGP#/}" /sys/fs/cgroup/"${CGP#/}"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
}
trap 'cleanup; _rf_cleanup' EXIT

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
cp "$B/config.json" "$TOP/base.json"
# config EXPR — the base, terminal off, a loop, EXPR applied
config() {
	python3 - "$TOP/base.json" "$B/config.json" "$1" <<'PY' || bail_out "cannot write config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c", "while :; do sleep 1; done"]
exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}
# run_rt RT ARGS... — ringfence-oci or runc (into a file: a created
# container's stdio is the caller's); RF_RC, RF_OUT
run_rt() {
	local rt=$1
	shift
	if [ "$rt" = ringfence ]; then
		RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" >"$TOP/o" 2>&1 </dev/null
	else
		timeout 60 "$RUNC" --root "$RROOT" "$@" >"$TOP/o" 2>&1 </dev/null
	fi
	RF_RC=$?
	RF_OUT=$(cat "$TOP/o")
}
# cpu_file PID — the container's cpu weight file: v1 cpu.shares, else v2 cpu.weight
cpu_file() {
	local l p
	l=$(grep -E '^[0-9]+:[^:]*\bcpu\b[^:]*:' "/proc/$1/cgroup" | head -n 1)
	if [ -n "$l" ]; then
		p=${l#*:*:}
		ls /sys/fs/cgroup/*/"${p#/}"/cpu.shares 2>/dev/null | head -n 1
	else
		p=$(sed -n 's/^0:://p' "/proc/$1/cgroup")
		echo "/sys/fs/cgroup/${p#/}/cpu.weight"
	fi
}
child_of() { cat /proc/"$1"/task/*/children 2>/dev/null | awk '{print $1; exit}'; }

# a pod sandbox's -998 needs CAP_SYS_RESOURCE (lowering it), which some
# hosts' root lacks: the control decides, else a burstable pod's 500
ADJV=-998
sh -c 'echo -998 >/proc/self/oom_score_adj' 2>/dev/null || ADJV=500
SIDES=(ringfence)
[ -n "$RUNC" ] && SIDES+=(runc)
declare -A ADJ SHARES
for rt in "${SIDES[@]}"; do
	config 'c["process"]["oomScoreAdj"] = '"$ADJV"'

c["linux"]["cgroupsPath"] = "'"$CGP/$rt"'"
c["linux"].setdefault("resources", {})["cpu"] = {"shares": 2}'
	run_rt $rt create --bundle "$B" --pid-file "$TOP/pid.$rt" "$ID"
	is "$RF_RC" 0 "$rt: a container with oomScoreAdj $ADJV and cpu shares 2: created ($RF_OUT)"
	run_rt $rt start "$ID"
	pid=$(cat "$TOP/pid.$rt" 2>/dev/null)
	cmd=$pid
	for _ in $(seq 50); do # ringfence's command is init's child (runc's is init)
		[ $rt = runc ] && break
		cmd=$(child_of "$pid")
		[ -n "$cmd" ] && break
		sleep 0.1
	done
	ADJ[$rt]="$(cat "/proc/$pid/oom_score_adj" 2>/dev/null) $(cat "/proc/$cmd/oom_score_adj" 2>/dev/null)"
	f=$(cpu_file "$pid")
	SHARES[$rt]="${f##*/}=$(cat "$f" 2>/dev/null)"
	if [ $rt = ringfence ]; then
		# what the CRI's UpdateContainerResources sends: the whole of the
		# resources, unchanged shares and empty cpus/mems among them
		printf '{"cpu":{"shares":2,"cpus":"","mems":""},"hugepageLimits":[]}' >"$TOP/upd.json"
		run_rt $rt update --resources "$TOP/upd.json" "$ID"
		is "$RF_RC" 0 "ringfence: update with the CRI's whole resources (shares unchanged, cpus/mems empty): taken ($RF_OUT)"
		printf '{"cpu":{"shares":512}}' >"$TOP/upd2.json"
		run_rt $rt update --resources "$TOP/upd2.json" "$ID"
		is "$RF_RC" 1 "ringfence: update changing the cpu shares: refused (1)"
		like "$RF_OUT" "change of cpu shares" "... saying so"
	fi
	run_rt $rt delete --force "$ID"
done
is "${ADJ[ringfence]}" "$ADJV $ADJV" "ringfence: init and the command have the config's oom_score_adj"
is "${SHARES[ringfence]}" \
	"$( [ -n "$(grep -E '^[0-9]+:[^:]*\bcpu\b' /proc/self/cgroup)" ] && echo cpu.shares=2 || echo cpu.weight=1)" \
	"ringfence: the container's cpu cgroup has the config's shares (v1) or their weight (v2)"
if [ -n "$RUNC" ]; then
	is "${ADJ[runc]% *}" "$ADJV" "control: runc's init has the same oom_score_adj"
	is "${SHARES[runc]}" "${SHARES[ringfence]}" "control: runc's cgroup has the same cpu weight"
else
	skip "runc, the control (2 cases)" "runc is not installed"
fi

# huge page limits: run where the host has no such pages to give
pool=0
for f in /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages \
	/sys/kernel/mm/hugepages/hugepages-2048kB/nr_overcommit_hugepages; do
	[ -r "$f" ] && pool=$((pool + $(cat "$f")))
done
config 'c["linux"].setdefault("resources", {})["hugepageLimits"] = [{"pageSize": "2MB", "limit": 0}]'
run_rt ringfence create --bundle "$B" "$ID-x"
if [ "$pool" = 0 ]; then
	is "$RF_RC" 0 "hugepageLimits 2MB=0 where the host has no 2 MB pages (control: its sysfs pool is 0): created"
else
	is "$RF_RC" 125 "hugepageLimits where the host has 2 MB pages to give: refused (125)"
	like "$RF_OUT" "cannot limit them" "... saying so"
fi
run_rt ringfence delete --force "$ID-x"

# the image's groups of the user, as the CRI writes them (Alpine's root)
config 'c["process"]["user"]["additionalGids"] = [0, 1, 2, 3, 4, 6, 10, 11, 20, 26, 27]
c["process"]["args"] = ["/bin/sh", "-c", "grep ^Groups: /proc/self/status"]'
run_rt ringfence run --bundle "$B" "$ID-x"
is "$RF_RC" 0 "additionalGids (Alpine root's groups, as the CRI writes them): the container runs"
like "$RF_OUT" "^Groups:[[:space:]]*\$" "... with no group it could not hold (one gid mapped: none would grant anything)"

config 'c["process"]["oomScoreAdj"] = 1001'
run_rt ringfence create --bundle "$B" "$ID-x"
is "$RF_RC" 125 "oomScoreAdj 1001: refused (125)"
like "$RF_OUT" "oomScoreAdj: .*-1000 to 1000" "... saying so"
[ ! -e "$ROOT/$ID-x" ] && ok "... nothing left" || not_ok "... nothing left"
config 'c["linux"].setdefault("resources", {})["cpu"] = {"shares": 1}'
run_rt ringfence create --bundle "$B" "$ID-x"
is "$RF_RC" 125 "cpu shares 1: refused (125)"
config 'c["linux"].setdefault("resources", {})["hugepageLimits"] = [{"pageSize": "2mb", "limit": 0}]'
run_rt ringfence create --bundle "$B" "$ID-x"
is "$RF_RC" 125 "a malformed pageSize: refused (125)"
like "$RF_OUT" "pageSize" "... naming it"
done_testing
