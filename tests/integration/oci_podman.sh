#!/bin/bash
# tests/integration/oci_podman.sh — Podman (Debian's, through conmon) with
# ringfence-oci as its runtime (issue 17), runc and crun (where it runs)
# through the same Podman on the same engine cases.
#
# Podman runs rootful here with a storage, run root, temp dir and
# containers.conf of this test's own (the vfs driver: a container's root
# is a plain directory, which ringfence idmaps to the container's own host
# uid; an overlay mount cannot be idmapped on every kernel, see
# docs/OCI.md), and a volume (-v) is idmapped the same way: its owners as
# under runc for the container's own uid. The image is imported from a
# root filesystem made here (tests/helpers/image.bash). Asserted: run --rm
# and its exit status, the output through conmon, Podman's own seccomp
# profile applied on top of ringfence's filter, run -d / ps / logs / pause
# / unpause / stop / rm, a volume's owners (-v, and :ro), the terminal
# through the console socket (run -t), an agent annotation in the
# audit log, exec (its status, environment and layers; -d; another user
# refused with a clear line, not there yet), and Podman's bridge network
# (CNI), whose namespace ringfence-oci captures: a direct connection
# refused, the allowlist's host answered (runc beside it as the control).
# Skipped where Podman is not installed.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "Podman as root only here (rootless Podman needs subuids and slirp4netns)"
PODMAN=$(command -v podman || true)
[ -n "$PODMAN" ] || skip_all "podman is not installed (scripts/deps.sh installs it)"
command -v conmon >/dev/null || skip_all "conmon is not installed"

require_oci
RUNC=$(command -v runc || true)
rf_mktemp /tmp
TOP=$REPLY
# the containers' cgroups: beneath ours (Podman's --cgroup-parent), and
# delegated to ringfence-oci (--cgroup-root): conmon and the container are
# siblings there, as Podman lays them out
OWN=$(cgroup_own_deepest) || skip_all "this process's cgroups do not nest"
CGPARENT=$OWN/rft-pm-$$
mkdir -p "$TOP/tmp" "$TOP/net"
cat >"$TOP/containers.conf" <<EOF
[containers]
# this host may lack CAP_SYS_RESOURCE: Podman's own defaults (1048576)
# would fail every runtime's rlimits
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[network]
network_config_dir = "$TOP/net"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$TOP/events.log"
tmp_dir = "$TOP/tmp"
EOF

# pm ARGS... — this test's Podman; sets RF_RC, RF_OUT (stdout+stderr)
pm() {
	RF_OUT=$(CONTAINERS_CONF=$TOP/containers.conf RINGFENCE_STATE_DIR=$RF_STATE \
		timeout 120 "$PODMAN" --root "$TOP/storage-${DRIVER:-vfs}" \
		--runroot "$TOP/runroot-${DRIVER:-vfs}" --storage-driver "${DRIVER:-vfs}" "$@" 2>&1 </dev/null)
	RF_RC=$?
}
cleanup_podman() {
	pm rm -af -t 0
	DRIVER=overlay pm rm -af -t 0
	# the cgroups Podman and ringfence-oci made beneath ours, by their name
	find /sys/fs/cgroup -depth -type d -path "*$OWN/rft-pm-$$*" -exec rmdir {} \; 2>/dev/null
	# what Podman mounted for its containers (their /dev/shm), by path
	grep -o " $TOP/[^ ]*" /proc/self/mountinfo | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
}
trap 'cleanup_podman; _rf_cleanup' EXIT

make_image "$TOP/rootfs"
tar -C "$TOP/rootfs" -cf "$TOP/image.tar" . || bail_out "cannot tar the image"
IMG=localhost/rf-podman-test-$$:latest
pm import "$TOP/image.tar" "$IMG"
[ "$RF_RC" = 0 ] || bail_out "podman import failed: $RF_OUT"

NONE=(--network none --cgroup-parent "$CGPARENT")
# engines pass ringfence-oci no environment: its state dir is a runtime flag
RFO=(--runtime "$OCI" --runtime-flag "state-dir=$RF_STATE" --runtime-flag "cgroup-root=$CGPARENT")

# engine_cases NAME ARGS... — the engine commands of docs/OCI.md's table
# through one runtime (ARGS: Podman's flags naming it), the same cases and
# the same expectations for every runtime except where the table says
# they differ; what only ringfence-oci has is asserted for it alone
engine_cases() {
	local name=$1 C=rf-podman-$1-$$ cpid cid mine want
	shift
	local -a rt=("$@")
	pm "${rt[@]}" run --rm "${NONE[@]}" "$IMG" /bin/sh -c 'echo from-$(hostname); exit 3'
	is "$RF_RC" 3 "$name: podman run --rm: the command's status (3) through conmon"
	like "$RF_OUT" "from-" "$name: ... its output too"
	pm "${rt[@]}" run --rm "${NONE[@]}" "$IMG" /bin/no-such-command
	is "$RF_RC" 127 "$name: a command not found: 127, as a shell says"

	# detached: logs, ps, inspect, stats, pause, unpause, exec, top, stop, rm
	pm "${rt[@]}" run -d --name "$C" "${NONE[@]}" "$IMG" /bin/sh -c 'echo started; while :; do sleep 1; done'
	is "$RF_RC" 0 "$name: run -d: exit 0"
	for _ in $(seq 50); do
		pm logs "$C"
		[[ $RF_OUT == *started* ]] && break
		sleep 0.2
	done
	like "$RF_OUT" "started" "$name: podman logs: the container's output"
	pm ps --filter "name=$C" --format '{{.Status}}'
	like "$RF_OUT" "^Up" "$name: podman ps: Up"
	pm inspect "$C" --format '{{.State.Pid}} {{.Id}}'
	read -r cpid cid <<<"$RF_OUT"
	mine=$(grep -E '^[0-9]+:(pids|memory|):' "/proc/$cpid/cgroup" 2>/dev/null | cut -d: -f3 | sort -u)
	is "$mine" "$CGPARENT/libpod-$cid" "$name: the container is in exactly the cgroup Podman named (cgroupsPath)"
	pm stats --no-stream --format '{{.PIDs}} {{.MemUsage}}' "$C"
	like "$RF_OUT" "^[1-9][0-9]* [1-9]" "$name: ... where podman stats reads its tasks and memory"
	pm "${rt[@]}" pause "$C"
	is "$RF_RC" 0 "$name: podman pause: exit 0"
	pm ps -a --filter "name=$C" --format '{{.Status}}'
	like "$RF_OUT" "Paused" "$name: ... podman ps: Paused"
	pm "${rt[@]}" unpause "$C"
	is "$RF_RC" 0 "$name: podman unpause: exit 0"
	pm "${rt[@]}" exec -e "FROM_EXEC=e-$$" -w /etc "$C" /bin/sh -c \
		'echo "$FROM_EXEC in $(pwd)"; cat /proc/self/status; exit 4'
	is "$RF_RC" 4 "$name: podman exec: the process's status (4)"
	like "$RF_OUT" "e-$$ in /etc" "$name: ... with its environment and working directory"
	if [ "$name" = ringfence-oci ]; then
		like "$RF_OUT" "NoNewPrivs:[[:space:]]*1" "$name: ... no_new_privs"
		like "$RF_OUT" "CapEff:[[:space:]]*0000000000000000" "$name: ... no capabilities"
		like "$RF_OUT" "Seccomp_filters:[[:space:]]*2" "$name: ... ringfence's filter and Podman's profile"
	else # what Podman asks for: no no_new_privs, its default capabilities, its profile
		like "$RF_OUT" "NoNewPrivs:[[:space:]]*0" "$name: ... no no_new_privs (Podman does not ask for it)"
		unlike "$RF_OUT" "CapEff:[[:space:]]*0000000000000000" "$name: ... Podman's default capabilities"
		like "$RF_OUT" "Seccomp_filters:[[:space:]]*1" "$name: ... Podman's profile alone"
	fi
	pm "${rt[@]}" exec -d "$C" /bin/sh -c 'sleep 30'
	is "$RF_RC" 0 "$name: podman exec -d: exit 0"
	pm top "$C" args
	like "$RF_OUT" "sleep 30" "$name: ... the detached process runs in the container (podman top)"
	if [ "$name" = ringfence-oci ]; then
		pm "${rt[@]}" exec -u 1000 "$C" /bin/true
		isnt "$RF_RC" 0 "$name: podman exec -u of another user: refused (one id is mapped)"
		like "$RF_OUT" "the container's user namespace maps one user, its own" "$name: ... with ringfence-oci's line"
	fi
	pm "${rt[@]}" stop -t 2 "$C"
	is "$RF_RC" 0 "$name: podman stop: exit 0"
	pm inspect "$C" --format '{{.State.ExitCode}}'
	# ringfence's init forwards TERM to the command (143); under runc and
	# crun the shell is pid 1 of its pid namespace, which ignores TERM
	# without a handler, so Podman KILLs it after -t (137)
	want=137
	[ "$name" = ringfence-oci ] && want=143
	is "$RF_OUT" "$want" "$name: ... the command's status after stop ($want)"
	pm "${rt[@]}" rm "$C"
	is "$RF_RC" 0 "$name: podman rm: exit 0"
	pm ps -a --filter "name=$C" --format '{{.Names}}'
	is "$RF_OUT" "" "$name: ... podman ps -a no longer lists it"
	if [ "$name" = ringfence-oci ]; then
		[ ! -e "/run/ringfence-oci/$(printf '%s' "$C")" ] && ok "$name: ... nothing left in ringfence-oci's root" ||
			not_ok "$name: ... nothing left in ringfence-oci's root"
	fi

	# a volume (-v): its owners as the runtime shows them (docs/OCI.md,
	# "Volumes"), what the container creates there on the host, ro
	local V=$TOP/vol-$name
	mkdir -p "$V"
	echo r >"$V/root-file"
	echo u >"$V/user-file"
	chown 1000:1000 "$V/user-file"
	pm "${rt[@]}" run --rm "${NONE[@]}" -v "$V:/v" -v "$V:/r:ro" "$IMG" /bin/sh -c \
		'busybox stat -c %u:%g /v/root-file /v/user-file; echo n >/v/new && echo created
{ echo x >/r/x; } 2>&1 || echo ro-refused'
	want=1000:1000
	[ "$name" = ringfence-oci ] && want=65534:65534 # one id mapped: nobody
	is "$RF_RC:$RF_OUT" "0:0:0
$want
created
/bin/sh: can't create /r/x: Read-only file system
ro-refused" \
		"$name: podman run -v: host root's file 0:0 inside, uid 1000's $want, written; :ro refuses (EROFS)"
	is "$(stat -c %u:%g "$V/new")" 0:0 "$name: ... the file it created is the host root's, as under runc"

	# the terminal: conmon's console socket
	if command -v script >/dev/null; then
		RF_OUT=$(CONTAINERS_CONF=$TOP/containers.conf RINGFENCE_STATE_DIR=$RF_STATE timeout 120 \
			script -qec "$PODMAN --root $TOP/storage-vfs --runroot $TOP/runroot-vfs --storage-driver vfs \
			${rt[*]} run --rm -t --network none --cgroup-parent $CGPARENT $IMG /bin/rf-probe tty" \
			/dev/null 2>&1 </dev/null)
		like "$RF_OUT" "name=/dev/pts/" "$name: run -t: the command's stdio is a terminal (the console socket)"
	else
		skip "$name: run -t" "no script(1)"
	fi
}

engine_cases ringfence-oci "${RFO[@]}"
if [ -n "$RUNC" ]; then
	engine_cases runc --runtime "$RUNC"
else
	skip "runc: the same engine cases" "runc is not installed"
fi
# crun where it runs: Debian 12's crun 1.8 refuses a hybrid-cgroup host
# whose v2 tree holds a controller ("cgroups in hybrid mode not supported")
CRUN=$(command -v crun || true)
if [ -z "$CRUN" ]; then
	skip "crun: the same engine cases" "crun is not installed"
else
	pm --runtime "$CRUN" run --rm "${NONE[@]}" "$IMG" /bin/sh -c :
	if [ "$RF_RC" = 0 ]; then
		engine_cases crun --runtime "$CRUN"
	else
		skip "crun: the same engine cases" "crun cannot run here: $(printf '%s' "$RF_OUT" | tail -n 1)"
	fi
fi

pm "${RFO[@]}" run --rm "${NONE[@]}" "$IMG" /bin/cat /proc/self/status
like "$RF_OUT" "Seccomp_filters:[[:space:]]*2" \
	"Podman's seccomp profile is applied on top of ringfence's (two filters)"
like "$RF_OUT" "NoNewPrivs:[[:space:]]*1" "... with no_new_privs"
pm "${RFO[@]}" run --rm "${NONE[@]}" "$IMG" /bin/rf-probe unshare-user
like "$RF_OUT" "errno=EPERM" "a user namespace inside: refused (EPERM), as in every run"

pm "${RFO[@]}" run --rm "${NONE[@]}" --annotation "ringfence.io/agent=podman-$$" "$IMG" /bin/sh -c :
is "$RF_RC" 0 "an agent annotation: the run starts"
"$RF_BIN" audit --state-dir "$RF_STATE" --json 2>/dev/null | grep '"run.start"' |
	grep -q "podman-$$" && ok "... and the audit log's run.start names that agent" ||
	not_ok "... and the audit log's run.start names that agent"

# Podman's default overlay driver: the root is an overlay mount, rebuilt
# from its layers, each idmapped (docs/OCI.md)
DRIVER=overlay pm import "$TOP/image.tar" "$IMG"
if [ "$RF_RC" = 0 ]; then
	DRIVER=overlay pm "${RFO[@]}" run --rm "${NONE[@]}" "$IMG" /bin/sh -c '/bin/rf-probe stat /etc/marker; exit 4'
	is "$RF_RC" 4 "the overlay driver: podman run --rm works (4)"
	like "$RF_OUT" "uid=0 gid=0" "... the image's files are the container root's own"
else
	skip "the overlay driver" "podman cannot use it here: $RF_OUT"
fi

# a pod: its infra container's run makes the pod's network, ipc and uts
# namespaces (and holds its egress); a container of the pod joins them
P=rf-pod-$$
pm "${RFO[@]}" pod create --name "$P" --network none --cgroup-parent "$CGPARENT"
is "$RF_RC" 0 "podman pod create --network none: exit 0"
pm "${RFO[@]}" run -d --pod "$P" --name "$P-app" "$IMG" /bin/sh -c 'while :; do sleep 1; done'
is "$RF_RC" 0 "podman run --pod: a container joining the pod's namespaces runs"
pm pod inspect "$P" --format '{{.InfraContainerID}}'
pm inspect "$RF_OUT" --format '{{.State.Pid}}'
ipid=$RF_OUT
pm inspect "$P-app" --format '{{.State.Pid}}'
apid=$RF_OUT
for ns in net ipc uts; do
	a=$(readlink "/proc/$ipid/ns/$ns") b=$(readlink "/proc/$apid/ns/$ns")
	[ -n "$a" ] && [ "$a" = "$b" ] && ok "... in the infra container's $ns namespace" ||
		not_ok "... in the infra container's $ns namespace ($a, $b)"
done
pm "${RFO[@]}" exec "$P-app" /bin/rf-probe dns svc.test 1
like "$RF_OUT" "rcode=(NXDOMAIN|REFUSED)" "... its names answered by the pod's stub (no egress: refused)"
pm pod rm -f -t 0 "$P"
is "$RF_RC" 0 "podman pod rm -f: exit 0"

# Podman's bridge network (CNI): Podman makes the container's network
# namespace, ringfence-oci captures it. Podman runs in the test's client
# namespace (its bridge, NAT and the container's egress are there), which
# reaches the test host; runc through the same Podman is the control.
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"
pmc() { # pm, in the client namespace
	local -a a=("$@")
	RF_OUT=$(CONTAINERS_CONF=$TOP/containers.conf RINGFENCE_STATE_DIR=$RF_STATE \
		timeout 120 nsenter --net=/run/netns/"$CNS" "$PODMAN" --root "$TOP/storage-vfs" \
		--runroot "$TOP/runroot-vfs" --storage-driver vfs "${a[@]}" 2>&1 </dev/null)
	RF_RC=$?
}
BRIDGE=(run --rm --cgroup-parent "$CGPARENT")
if [ -n "$RUNC" ]; then
	pmc --runtime "$RUNC" "${BRIDGE[@]}" "$IMG" /bin/rf-probe tcp-connect 169.254.169.254 8080
	control=$RF_OUT
else
	control="no runc"
fi
if [[ $control != ok* ]]; then
	skip "Podman's bridge network (7 cases)" "no control: runc in Podman's bridge network: $control"
else
	ok "control: runc in Podman's bridge network reaches the test host directly"
	pmc "${RFO[@]}" "${BRIDGE[@]}" "$IMG" /bin/rf-probe tcp-connect 169.254.169.254 8080
	like "$RF_OUT" "ECONNREFUSED" \
		"ringfence-oci in Podman's bridge network: the direct connection refused by the capture"
	pmc "${RFO[@]}" "${BRIDGE[@]}" --annotation "ringfence.io/allow-hosts=$net.2:8080" "$IMG" \
		/bin/rf-probe http-get "$net.2" 8080 "$net.2:8080" /podman-bridge
	is "$RF_RC" 0 "... with an allowlist annotation: exit 0"
	like "$RF_OUT" "podman-bridge" "... the allowed host answers through the container's egress"
	# a pod on the bridge network: its infra container captures the
	# namespace (no annotation: the pod has no egress), its containers join
	P=rf-bpod-$$
	pmc "${RFO[@]}" pod create --name "$P" --cgroup-parent "$CGPARENT"
	is "$RF_RC" 0 "podman pod create on the bridge network: exit 0"
	pmc "${RFO[@]}" run --rm --pod "$P" "$IMG" /bin/rf-probe tcp-connect 169.254.169.254 8080
	like "$RF_OUT" "ECONNREFUSED" "... a container of the pod: the direct connection refused"
	pmc pod rm -f -t 0 "$P"
	is "$RF_RC" 0 "... podman pod rm -f: exit 0"
fi

# without a delegated root, Podman's cgroup for the container lies beside
# conmon's, outside ringfence-oci's own: refused, nothing made
pm --runtime "$OCI" --runtime-flag "state-dir=$RF_STATE" run --rm "${NONE[@]}" "$IMG" /bin/true
isnt "$RF_RC" 0 "a cgroupsPath outside ringfence-oci's cgroup, no --cgroup-root: refused"
like "$RF_OUT" "outside ringfence's own cgroup" "... saying so"

done_testing
