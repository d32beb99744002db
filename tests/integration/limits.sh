#!/bin/bash
# tests/integration/limits.sh — resource limits, each stopped by the layer
# meant to stop it, with the reason ringfence gives:
#   - a memory bomb under --memory is OOM-killed inside the run's memory
#     cgroup: exit 137, stderr names the memory limit, the host is fine;
#   - a fork loop under --pids gets EAGAIN from the pids cgroup and the run
#     ends normally; under --timeout a loop that keeps retrying ends in 124;
#   - --cpus sets the cpu cgroup's quota (read from the host while the run
#     is alive); the default limits are half of RAM and 4096 pids;
#   - filesystem.tmp_size: filling /tmp hits ENOSPC and the run goes on;
#   - limits.nofile: opening more files fails with EMFILE;
#   - after every run no ringfence-<run id> cgroup is left in any hierarchy;
#   - rootless (uid 65534, no writable cgroup): a limit asked for refuses
#     the run (125, the command does not run); without limits the run goes
#     ahead and stderr says so exactly once.
# Each limit has a control without it, showing the same command succeeds;
# with a test build, the cgroup layer switched off lets the memory bomb
# through and turns --pids into RLIMIT_NPROC, and a failing cgroup step
# refuses the run (125).
# Known gap (TODO): on a hybrid host a root run gets v1 cgroups only for
# limits asked for (a v1 migration waits an RCU grace period), so there is
# no default memory limit there; stderr says so once per state dir.
# No assertion depends on timing: waits are polls bounded by RF_RUN_TIMEOUT.
#
# Only cgroups named after the runs started here are ever looked at, and
# only beneath this script's own cgroups (from /proc/self/cgroup); nothing
# is removed or killed by name.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root: cgroup limits are set up by a root supervisor, and the rootless cases run as uid 65534"
new_workspace
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "no $PY (the memory, fork and fd bombs are python scripts)"

# ---- this script's own cgroups -------------------------------------------------

# OWN_CG[ctrl] — this shell's cgroup directory in the hierarchy of each v1
# controller (and "name=..." hierarchy); OWN_CG[v2] in the unified one.
declare -A OWN_CG=()
own_cgroups() {
	local id ctrls path line pre post root mnt fstype super first c rel
	while IFS=: read -r id ctrls path; do
		first=${ctrls%%,*}
		while IFS= read -r line; do
			pre=${line%% - *} post=${line#* - }
			read -r _ _ _ root mnt _ <<<"$pre"
			read -r fstype _ super <<<"$post"
			if [ -z "$ctrls" ]; then
				[ "$fstype" = cgroup2 ] || continue
			else
				[ "$fstype" = cgroup ] || continue
				in_list "$first" "${super//,/ }" || continue
			fi
			rel=$path
			if [ "$root" != / ]; then
				case $path in
				"$root" | "$root"/*) rel=${path#"$root"} ;;
				*) continue ;;
				esac
			fi
			[ "$rel" = / ] && rel=
			if [ -z "$ctrls" ]; then
				OWN_CG[v2]=$mnt$rel
			else
				for c in ${ctrls//,/ }; do OWN_CG[$c]=$mnt$rel; done
			fi
			break
		done </proc/self/mountinfo
	done </proc/self/cgroup
}
own_cgroups
[ "${#OWN_CG[@]}" -gt 0 ] || bail_out "found none of this script's cgroups in /proc/self/cgroup + mountinfo"

# run_cgroup CTRL ID — the run's cgroup directory in CTRL's hierarchy.
run_cgroup() { printf '%s/ringfence-%s' "${OWN_CG[$1]:-/nonexistent}" "$2"; }

# check_no_leftovers NAME ID — no ringfence-ID beneath any of our cgroups.
check_no_leftovers() {
	local name=$1 id=$2 d left=()
	if [ -z "$id" ]; then
		not_ok "$name: no cgroup of the run is left" "the run's id is unknown"
		return
	fi
	for d in $(printf '%s\n' "${OWN_CG[@]}" | sort -u); do
		[ -e "$d/ringfence-$id" ] && left+=("$d/ringfence-$id")
	done
	if [ "${#left[@]}" = 0 ]; then
		ok "$name: no cgroup of the run is left"
	else
		not_ok "$name: no cgroup of the run is left" "${left[@]}"
	fi
}

# wait_file PATH — poll until PATH is non-empty or the run started by
# rf_start has ended (then 1), at most RF_RUN_TIMEOUT seconds.
wait_file() {
	local i
	for ((i = 0; i < RF_RUN_TIMEOUT * 20; i++)); do
		[ -s "$1" ] && return 0
		kill -0 "$RF_PID" 2>/dev/null || { [ -s "$1" ]; return; }
		sleep 0.05
	done
	return 1
}

# cat_or FILE — FILE's first line, or "(unreadable)".
cat_or() { head -n 1 "$1" 2>/dev/null || printf '(unreadable)'; }

# new_idfile — a fresh file in the workspace for the next run's id; sets
# IDF and SAY_ID, a shell prelude for the run's command that records
# $RINGFENCE_RUN_ID there (expanded inside the run).
_idn=0
new_idfile() {
	_idn=$((_idn + 1))
	IDF=$WS/runid.$_idn
	rm -f "$IDF"
	# shellcheck disable=SC2016
	SAY_ID='printf "%s\n" "$RINGFENCE_RUN_ID" >'"'$IDF.tmp'"' && mv '"'$IDF.tmp' '$IDF'"'; '
}
run_id() { cat_or "$IDF"; }

# The run's own scripts, written into the workspace.
cat >"$WS/bomb.py" <<'EOF'
# Touch 256 MiB, page by page.
b = b"\x01" * (256 << 20)
print("survived", len(b))
EOF
cat >"$WS/forks.py" <<'EOF'
# Try 100 forks; children wait. Count successes and failures by errno,
# and report RLIMIT_NPROC (to tell a pids cgroup from the rlimit).
import errno, os, resource, signal
kids, eagain, other = [], 0, 0
for _ in range(100):
    try:
        pid = os.fork()
    except OSError as e:
        if e.errno == errno.EAGAIN:
            eagain += 1
        else:
            other += 1
        continue
    if pid == 0:
        signal.pause()
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.kill(pid, signal.SIGKILL)
for pid in kids:
    os.waitpid(pid, 0)
nproc = resource.getrlimit(resource.RLIMIT_NPROC)[0]
print("forked=%d eagain=%d other=%d" % (len(kids), eagain, other))
print("nproc=%s" % ("unlimited" if nproc == resource.RLIM_INFINITY else nproc))
EOF
cat >"$WS/forever.py" <<'EOF'
# A fork loop that never gives up, deaf to SIGTERM.
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open("started", "w").close()
while True:
    try:
        if os.fork() == 0:
            signal.pause()
            os._exit(0)
    except BlockingIOError:
        time.sleep(0.01)
EOF
cat >"$WS/fds.py" <<'EOF'
# Open /dev/null 100 times; report how many opened and why the next failed.
import errno, os
fds = []
err = "none"
for _ in range(100):
    try:
        fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
print("opened=%d errno=%s" % (len(fds), err))
EOF
cat >"$WS/fill.sh" <<'EOF'
# Write 16 MiB into /tmp; report dd's status and the file size, then go on.
dd if=/dev/zero of=/tmp/fill bs=1M count=16 2>&1
echo "dd=$?"
echo "size=$(stat -c %s /tmp/fill)"
echo "after"
EOF
printf '{"version": 1, "filesystem": {"tmp_size": "8M"}}\n' >"$WS/tmp8m.json"
printf '{"version": 1, "limits": {"nofile": 64}}\n' >"$WS/nofile64.json"
printf '{"version": 1, "limits": {"memory": "1G"}}\n' >"$WS/mem1g.json"

# Whether this host gives a root run its cgroups at all (the default run
# below says so on stderr otherwise); without them only the rootless and
# rlimit/tmpfs cases apply.
rf_run -- /bin/true
have_cgroups=1 no_cg="no writable cgroup for root runs on this host"
first_err=$RF_ERR # notes are said once per state dir: this run says them
case $RF_ERR in *"no writable cgroup"*) have_cgroups=0 ;; esac
# A cgroup v2 tree where this script's cgroup cannot delegate controllers
# (other processes in it: a login session's scope, a container's root):
# the run's cgroup exists (kill, accounting) but no limit can be set there.
# Then a limit asked for must be refused (fail closed), and the limit cases
# below do not apply.
if [ "$have_cgroups" = 1 ]; then
	rm -f "$WS/marker"
	rf_run --memory 1G -- /bin/sh -c "touch '$WS/marker'"
	if [ "$RF_RC" = 125 ]; then
		like "$RF_ERR" 'cannot enforce the memory limit' \
			"a host where root runs get no memory cgroup from here: --memory is refused (125), saying so"
		check "... and the command did not run" test ! -e "$WS/marker"
		have_cgroups=0 no_cg="no cgroup limits from this script's cgroup: $(first_line "$RF_ERR")"
	fi
fi

# ---- default limits, read from the host while the run is alive ---------------

if [ "$have_cgroups" = 1 ]; then
	new_idfile
	rf_start -- /bin/sh -c "cat /proc/self/limits >'$IDF.limits'; $SAY_ID
		while [ ! -e '$IDF.stop' ]; do sleep 0.05; done"
	mem_ok=0
	if wait_file "$IDF"; then
		id=$(run_id)
		ok "default run: the command reports its run id ($id)"
		check "default run: its v2 cgroup is $(run_cgroup v2 "$id")" \
			test -z "${OWN_CG[v2]:-}" -o -d "$(run_cgroup v2 "$id")"
		mem_total_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
		page=$(getconf PAGESIZE)
		want_mem=$((mem_total_kb * 1024 / 2 / page * page))
		if [ -d "$(run_cgroup memory "$id")" ]; then
			got_mem=$(cat_or "$(run_cgroup memory "$id")/memory.limit_in_bytes")
		else
			got_mem=$(cat_or "$(run_cgroup v2 "$id")/memory.max")
		fi
		# Half of MemTotal, as the kernel stores it (whole pages).
		# Known gap: since baa5ee9 a root run on a hybrid host gets v1
		# cgroups only for limits asked for, so the default memory limit
		# is silently absent (no cgroup, no rlimit, no note on stderr).
		todo_begin "default memory limit dropped on hybrid hosts (baa5ee9)"
		if [[ $got_mem =~ ^[0-9]+$ ]] && ((got_mem <= want_mem + page && got_mem + page >= want_mem)); then
			mem_ok=1
			ok "default memory limit is half of MemTotal ($got_mem ~ $want_mem)"
		else
			not_ok "default memory limit is half of MemTotal" "got:  $got_mem" "want: $want_mem (+/- one page)"
		fi
		todo_end
		# The default pids limit: pids.max of the run's cgroup where it
		# has one, else RLIMIT_NPROC of the run (baa5ee9: exact per run,
		# since a root-started run has a host uid of its own).
		if [ -d "$(run_cgroup pids "$id")" ]; then
			is "$(cat_or "$(run_cgroup pids "$id")/pids.max")" 4096 "default pids.max is 4096"
		elif [ -e "$(run_cgroup v2 "$id")/pids.max" ]; then
			is "$(cat_or "$(run_cgroup v2 "$id")/pids.max")" 4096 "default pids.max is 4096"
		else
			nproc=$(awk '/^Max processes/ {print $3}' "$IDF.limits" 2>/dev/null)
			is "$nproc" 4096 "default pids limit without a pids cgroup: RLIMIT_NPROC 4096"
		fi
	else
		not_ok "default run: the command reports its run id" "no $IDF"
		id=""
	fi
	touch "$IDF.stop"
	rf_wait
	is "$RF_RC" 0 "default run: exit 0"
	# MISSION: a default limit that is not enforced is said once on stderr
	if [ "$mem_ok" = 1 ]; then
		unlike "$RF_ERR" 'no writable cgroup' "default run as root, limits enforced: no fallback note"
	else
		like "$first_err" 'no default memory limit' "default run as root without a default memory limit: stderr says so (once per state dir)"
		rf_run -- /bin/true
		unlike "$RF_ERR" 'note:' "... and only once: a second run in the same state dir is quiet"
	fi
	check_no_leftovers "default run" "$id"
else
	skip "default limits" "$no_cg"
fi

# ---- --cpus ----------------------------------------------------------------------

if [ "$have_cgroups" = 1 ]; then
	new_idfile
	rf_start --cpus 0.5 -- /bin/sh -c "$SAY_ID""while [ ! -e '$IDF.stop' ]; do sleep 0.05; done"
	if wait_file "$IDF"; then
		id=$(run_id)
		cpu=$(run_cgroup cpu "$id")
		if [ -d "$cpu" ]; then
			is "$(cat_or "$cpu/cpu.cfs_quota_us")" 50000 "--cpus 0.5: cpu.cfs_quota_us of ringfence-<run id> is 50000"
			is "$(cat_or "$cpu/cpu.cfs_period_us")" 100000 "... per cpu.cfs_period_us 100000"
		elif [ -d "$(run_cgroup v2 "$id")" ] && [ -e "$(run_cgroup v2 "$id")/cpu.max" ]; then
			is "$(cat_or "$(run_cgroup v2 "$id")/cpu.max")" "50000 100000" "--cpus 0.5: cpu.max of ringfence-<run id> is 50000 100000"
		else
			not_ok "--cpus 0.5: the run has a cpu cgroup" "no $cpu"
		fi
		# the cgroups are where they must be: beneath ours, named after the run
		# (a v1 cpu hierarchy where there is one; a v2-only host has none)
		if [ -n "${OWN_CG[cpu]:-}" ]; then
			check "--cpus run: its cpu cgroup is $cpu" test -d "$cpu"
		fi
		if [ -n "${OWN_CG[v2]:-}" ]; then
			check "--cpus run: its v2 cgroup is $(run_cgroup v2 "$id")" test -d "$(run_cgroup v2 "$id")"
		fi
	else
		not_ok "--cpus 0.5: the command reports its run id" "no $IDF"
		id=""
	fi
	touch "$IDF.stop"
	rf_wait
	is "$RF_RC" 0 "--cpus 0.5: exit 0"
	check_no_leftovers "--cpus 0.5" "$id"
else
	skip "--cpus" "$no_cg"
fi

# ---- memory bomb -------------------------------------------------------------------

if [ "$have_cgroups" = 1 ]; then
	new_idfile
	rf_run --memory 64M -- /bin/sh -c "$SAY_ID"'exec '"$PY"' bomb.py'
	id=$(run_id)
	is "$RF_RC" 137 "--memory 64M + 256 MiB bomb: exit 137"
	like "$RF_ERR" 'memory limit' "... stderr names the memory limit"
	unlike "$RF_OUT" survived "... the bomb did not get its memory"
	check_no_leftovers "memory bomb" "$id"
	# the host and ringfence are fine afterwards
	rf_run -- /bin/sh -c 'echo alive'
	is "$RF_RC:$RF_OUT" "0:alive" "after the memory bomb: a new run works"
	check "after the memory bomb: the host allocates 64 MiB" "$PY" -c 'b = b"\x01" * (64 << 20)'

	# control: the same bomb under a limit it fits in
	rf_run --memory 1G -- "$PY" bomb.py
	is "$RF_RC:$RF_OUT" "0:survived 268435456" "control: the bomb survives under --memory 1G"
else
	skip "memory bomb" "$no_cg"
fi

# ---- fork loop ----------------------------------------------------------------------

if [ "$have_cgroups" = 1 ]; then
	new_idfile
	# MISSION: a pids limit kill is 137 and stderr names the limit — the
	# fork the cgroup refuses ends the whole run.
	rf_run --pids 32 -- /bin/sh -c "$SAY_ID"'exec '"$PY"' forks.py'
	id=$(run_id)
	is "$RF_RC" 137 "--pids 32 + 100 forks: the run is killed (137)"
	like "$RF_ERR" 'pids limit \(32 processes\)' "... stderr names the pids limit"
	unlike "$RF_OUT" 'forked=100' "... the 100 forks did not all happen"
	check_no_leftovers "fork loop" "$id"

	rf_run -- "$PY" forks.py
	is "$RF_RC:$(first_line "$RF_OUT")" "0:forked=100 eagain=0 other=0" "control: without --pids all 100 forks succeed"

	# A host with thousands of mounts (container hosts): mountinfo runs to
	# megabytes, and the run must still find its cgroups (ringfence reads
	# it in pieces). What matters is mountinfo's size, not the number of
	# mounts: 80 tmpfs mounts on ~3,800-byte mount points give ~300 KiB, in
	# a mount namespace of the test's own (gone with it). (3,000 short ones
	# took minutes on a loaded host.)
	manymnt=$(mktemp -d /tmp/rf-manymounts.XXXXXX)
	long=$(printf '%0250d' 0)
	deep=$manymnt
	for _ in $(seq 15); do deep="$deep/$long"; done
	mkdir -p "$deep"
	# shellcheck disable=SC2016 # expanded by the wrapper's shell
	RF_WRAP=(unshare -m --propagation private sh -c 'd=$1; shift; i=0
		while [ $i -lt 80 ]; do
			mkdir "$d/mount-point-$i" && mount -t tmpfs -o size=4k rf-many-mounts "$d/mount-point-$i" || exit 99
			i=$((i + 1))
		done
		wc -c </proc/self/mountinfo >"$d/size"; exec "$@"' sh "$deep")
	# (80 mounts before ringfence starts: seconds on a loaded host, so a
	# longer bound than one run's RF_RUN_TIMEOUT)
	RF_RUN_TIMEOUT=$((RF_RUN_TIMEOUT * 3)) rf_run --pids 32 -- /bin/sh -c 'exec '"$PY"' forks.py'
	RF_WRAP=()
	size=$(cat "$deep/size" 2>/dev/null || echo 0)
	if [ "$size" -gt 262144 ]; then
		ok "80 long mount points: mountinfo is $size bytes (more than the 256 KiB read once at a time)"
	else
		not_ok "80 long mount points: mountinfo is more than 256 KiB" "size: $size, rc $RF_RC: $RF_ERR"
	fi
	is "$RF_RC" 137 "... --pids 32 + 100 forks: killed at the pids limit (137): the run found its cgroups"
	like "$RF_ERR" 'pids limit \(32 processes\)' "... stderr names the pids limit"
	rm -rf -- "$manymnt"

	# a loop that keeps retrying (and ignores SIGTERM) is ended at the
	# limit, long before its --timeout
	new_idfile
	rf_run --pids 32 --timeout 60s -- /bin/sh -c "$SAY_ID"'exec '"$PY"' forever.py'
	id=$(run_id)
	check "--pids 32: the endless fork loop started" test -e "$WS/started"
	is "$RF_RC" 137 "... and was killed at the pids limit (137), not by the timeout"
	like "$RF_ERR" 'pids limit' "... stderr names the pids limit"
	check_no_leftovers "endless fork loop" "$id"
else
	skip "fork loop" "$no_cg"
fi

# ---- tmpfs size --------------------------------------------------------------------

new_idfile
rf_run -p "$WS/tmp8m.json" -- /bin/sh -c "$SAY_ID"'exec /bin/sh fill.sh'
id=$(run_id)
is "$RF_RC" 0 "tmp_size 8M + 16 MiB into /tmp: the run goes on (0)"
like "$RF_OUT" 'No space left on device' "... dd fails with ENOSPC"
like "$RF_OUT" $'\ndd=[1-9]' "... dd reports failure"
size=$(field "$RF_OUT" size)
if [[ $size =~ ^[0-9]+$ ]] && ((size <= 8 << 20)); then
	ok "... the file stopped at the limit ($size bytes)"
else
	not_ok "... the file stopped at the limit" "$RF_OUT"
fi
like "$RF_OUT" $'\nafter$' "... the script carried on after ENOSPC"
[ "$have_cgroups" = 1 ] && check_no_leftovers "tmpfs fill" "$id"

rf_run -- /bin/sh fill.sh
like "$RF_OUT" $'dd=0\nsize=16777216' "control: 16 MiB fit in the default /tmp"

# ---- open files --------------------------------------------------------------------

rf_run -p "$WS/nofile64.json" -- "$PY" fds.py
is "$RF_RC" 0 "limits.nofile 64 + 100 opens: exit 0"
like "$RF_OUT" '^opened=[0-9]+ errno=EMFILE$' "... the open beyond the limit fails with EMFILE"
opened=$(field "$RF_OUT" opened)
if [[ $opened =~ ^[0-9]+$ ]] && ((opened < 64)); then
	ok "... fewer than 64 opened ($opened)"
else
	not_ok "... fewer than 64 opened" "$RF_OUT"
fi
rf_run -- "$PY" fds.py
is "$RF_OUT" "opened=100 errno=none" "control: without limits.nofile all 100 open"

# ---- the release binary refuses nothing it should not --------------------------------

if [ "$have_cgroups" = 1 ]; then
	rf_run --memory 256M --pids 64 --cpus 1.5 --timeout 1m -- /bin/sh -c 'echo fine'
	is "$RF_RC:$RF_OUT" "0:fine" "every limit flag at once, a modest command: runs"
	rf_run -p "$RF_SRC/examples/ci-job.json" -- /bin/sh -c 'echo fine'
	is "$RF_RC:$RF_OUT" "0:fine" "examples/ci-job.json (all limits in a policy): runs"
fi
# bad limit values are refused before anything runs
for bad in "--memory 0" "--memory 12Q" "--pids 0" "--cpus 0" "--timeout 0"; do
	rm -f "$WS/marker"
	# shellcheck disable=SC2086 # split the flag from its value
	rf_run $bad -- /bin/sh -c "touch '$WS/marker'"
	is "$RF_RC" 125 "$bad: refused (125)"
	check "... the command did not run" test ! -e "$WS/marker"
done

# ---- layer switch: without the cgroup layer the bombs get through (test build) ----

if [ "$have_cgroups" = 1 ] && [ -n "$RF_TEST_BIN" ] && [ -x "$RF_TEST_BIN" ] &&
	grep -q RINGFENCE_TEST_SKIP "$RF_TEST_BIN"; then
	RF_RUN_BIN=$RF_TEST_BIN RF_ENV=(RINGFENCE_TEST_SKIP=cgroup)
	rf_run --memory 64M -- "$PY" bomb.py
	is "$RF_RC:$RF_OUT" "0:survived 268435456" "cgroup layer off: the memory bomb survives --memory 64M (the cgroup stopped it)"
	rf_run --pids 32 -- "$PY" forks.py
	is "$(field "$RF_OUT" nproc)" 32 "cgroup layer off: --pids 32 falls back to RLIMIT_NPROC 32"
	unset RF_RUN_BIN
	RF_ENV=()
else
	skip "cgroup layer switch" "no test build with RINGFENCE_TEST_SKIP"
fi

# ---- a failing cgroup step fails closed (test build) ------------------------------

if [ "$have_cgroups" = 1 ] && [ -n "$RF_TEST_BIN" ] && [ -x "$RF_TEST_BIN" ] &&
	grep -q RINGFENCE_TEST_FAIL "$RF_TEST_BIN"; then
	rm -f "$WS/marker"
	RF_RUN_BIN=$RF_TEST_BIN RF_ENV=(RINGFENCE_TEST_FAIL=cgroup)
	rf_run --memory 64M -- /bin/sh -c "touch '$WS/marker'"
	unset RF_RUN_BIN
	RF_ENV=()
	is "$RF_RC" 125 "cgroup attach failing (test build): refused (125)"
	like "$RF_ERR" '\(cgroup\)' "... stderr names the cgroup step"
	check "... the command did not run" test ! -e "$WS/marker"
else
	skip "cgroup step failure" "no test build with RINGFENCE_TEST_FAIL"
fi

# ---- rootless: no writable cgroup ---------------------------------------------------

as_user_setup || bail_out "as_user_setup failed"
for flag in "--memory 1G" "--pids 32" "--cpus 0.5"; do
	rm -f "$WS/marker"
	what=${flag%% *}
	what=${what#--}
	[ "$what" = cpus ] && what=cpu
	# shellcheck disable=SC2086
	RF_AS_USER=1 rf_run $flag -- /bin/sh -c "touch '$WS/marker'"
	is "$RF_RC" 125 "rootless $flag: refused (125)"
	like "$RF_ERR" "$what limit" "... stderr names the $what limit"
	check "... the command did not run" test ! -e "$WS/marker"
done
rm -f "$WS/marker"
RF_AS_USER=1 rf_run -p "$WS/mem1g.json" -- /bin/sh -c "touch '$WS/marker'"
is "$RF_RC" 125 "rootless, limits.memory in the policy file: refused (125)"
check "... the command did not run" test ! -e "$WS/marker"

rm -f "$WS/marker" "$RF_STATE"/note-cgroup-* # notes are said once per state dir
new_idfile
RF_AS_USER=1
rf_run -- /bin/sh -c "$SAY_ID"'touch marker; '"$PY"' -c "import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[0])"'
RF_AS_USER=0 id=$(run_id)
is "$RF_RC" 0 "rootless without limits: runs (0)"
check "... the command ran" test -e "$WS/marker"
notes=$(printf '%s\n' "$RF_ERR" | grep -c 'note: no writable cgroup')
is "$notes" 1 "... stderr has exactly one \"note: no writable cgroup\" line"
is "$RF_OUT" 4096 "... the default pids limit falls back to RLIMIT_NPROC 4096"
check_no_leftovers "rootless run" "$id"

done_testing
