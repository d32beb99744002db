#!/bin/bash
# tests/integration/leftovers.sh — when `ringfence run` returns, nothing of
# the run remains: no process in any of its namespaces, no ringfence helper
# process, no mount on the host. Checked after a normal exit that leaves
# daemons behind, a --timeout, a command killed by a signal, and SIGTERM to
# ringfence itself; after SIGKILL of ringfence the run must go too.
#
# Method: the run prints its namespace inodes from inside; afterwards every
# /proc/*/ns/* on the host is compared against them. ringfence runs from a
# copy at a unique path so its own processes can be found by /proc/*/exe.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
require_isolation

rf_mktemp /tmp
bindir=$REPLY
cp "$RF_BIN" "$bindir/ringfence" || bail_out "cannot copy ringfence"
RF_RUN_BIN=$bindir/ringfence

KINDS="pid net mnt ipc uts cgroup user"

# ours PID — PID belongs to this test's run: its mount table shows our
# unique workspace (namespace inode numbers are reused by the kernel, so an
# inode match alone could name another, concurrent sandbox). A process
# whose mount table is gone (exiting) cannot be told apart and counts.
ours() {
	local mi
	mi=$(cat "/proc/$1/mountinfo" 2>/dev/null) || return 0
	[ -z "$mi" ] || [[ $mi == *" $WS "* ]]
}

# leftover_report NS-LINE — host processes in any namespace named in NS-LINE
# ("ok cgroup=... pid=...") that are ours, or running our ringfence copy.
# Empty if none.
leftover_report() {
	local line=$1 kind ino f p
	for kind in $KINDS; do
		ino=$(field "$line" "$kind") || continue
		for f in /proc/[0-9]*/ns/"$kind"; do
			[ "$(stat -L -c %i "$f" 2>/dev/null)" = "$ino" ] || continue
			p=${f#/proc/}
			p=${p%%/*}
			ours "$p" || continue
			printf '%s ns %s: pid %s (%s) %s\n' "$kind" "$ino" "$p" \
				"$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" \
				"$(grep -E '^(State|PPid|NSpid):' "/proc/$p/status" 2>/dev/null | tr '\n\t' '  ')"
		done
	done
	for f in /proc/[0-9]*/exe; do
		[ "$(readlink "$f" 2>/dev/null)" = "$RF_RUN_BIN" ] || continue
		p=${f#/proc/}
		printf 'ringfence process: pid %s\n' "${p%%/*}"
	done
	if grep -qsF -e " $WS" -e " $RF_STATE" /proc/self/mountinfo; then
		printf 'host mount: %s\n' "$(grep -F -e " $WS" -e " $RF_STATE" /proc/self/mountinfo)"
	fi
}

# reap_leftovers NS-LINE — after a failure, end what the run left behind,
# identified exactly: processes in the run's own pid namespace (by inode)
# whose mount table shows this test's unique workspace — never by name.
reap_leftovers() {
	local ino f p mi
	ino=$(field "$1" pid) || return 0
	[ "$ino" != "$(stat -L -c %i /proc/self/ns/pid)" ] || return 0
	for f in /proc/[0-9]*/ns/pid; do
		[ "$(stat -L -c %i "$f" 2>/dev/null)" = "$ino" ] || continue
		p=${f#/proc/}
		p=${p%%/*}
		mi=$(cat "/proc/$p/mountinfo" 2>/dev/null) || continue
		[[ $mi == *" $WS "* ]] && kill -KILL "$p" 2>/dev/null
	done
}

# check_clean NAME — after a run: the ns line was printed and nothing is left.
check_clean() {
	local name=$1 line report
	line=$(printf '%s\n' "$RF_OUT" | grep -m1 '^ok cgroup=')
	if [ -z "$line" ]; then
		not_ok "$name: the run reported its namespaces" "$(_rf_last_run_diag)"
		return
	fi
	ok "$name: the run reported its namespaces"
	report=$(leftover_report "$line")
	is "$report" "" "$name: nothing of the run remains"
	[ -z "$report" ] || reap_leftovers "$line"
}

# A command that leaves daemons behind: a plain background job, a setsid'd
# double fork, a process ignoring TERM and HUP, a listener.
DAEMONS="'$PROBE' ns self
	sleep 300 &
	setsid sh -c 'sleep 301 &' 
	(trap '' TERM HUP INT; exec sleep 302) &
	'$PROBE' listen tcp 127.0.0.1 0 >/dev/null &"

rf_run -- /bin/sh -c "$DAEMONS exit 0"
is "$RF_RC" 0 "normal exit: status 0"
check_clean "normal exit with daemons left behind"

rf_run --timeout 1s -- /bin/sh -c "$DAEMONS exec sleep 300"
is "$RF_RC" 124 "timeout: status 124"
check_clean "--timeout"

rf_run -- /bin/sh -c "$DAEMONS kill -KILL \$\$"
is "$RF_RC" 137 "command killed by SIGKILL: status 137"
check_clean "command killed by a signal"

# wait_for_ns — wait (bounded) until the started run has printed its ns line.
wait_for_ns() {
	for _ in $(seq 1 1200); do
		grep -qs '^ok cgroup=' "$_RF_OUTF" && return 0
		kill -0 "$RF_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

rf_start -- /bin/sh -c "$DAEMONS exec sleep 300"
if wait_for_ns; then
	kill -TERM "$RF_PID"
	rf_wait
	like "$RF_RC" '^(143|130|129|1[0-9][0-9])$' "SIGTERM to ringfence: it exits ($RF_RC)"
	check_clean "SIGTERM to ringfence"
else
	rf_wait
	not_ok "SIGTERM to ringfence: the run started" "$(_rf_last_run_diag)"
fi

# SIGKILL to ringfence: it cannot clean up itself; the run must die with it
# (PDEATHSIG / pid namespace). The kernel does that asynchronously, so wait
# for it, bounded.
rf_start -- /bin/sh -c "$DAEMONS exec sleep 300"
if wait_for_ns; then
	kill -KILL "$RF_PID"
	rf_wait
	is "$RF_RC" 137 "SIGKILL to ringfence: it is gone"
	RF_OUT=$(cat "$_RF_OUTF")
	line=$(grep -m1 '^ok cgroup=' <<<"$RF_OUT")
	for _ in $(seq 1 1200); do
		[ -z "$(leftover_report "$line")" ] && break
		sleep 0.05
	done
	check_clean "SIGKILL to ringfence (within 60 s)"
else
	rf_wait
	not_ok "SIGKILL to ringfence: the run started" "$(_rf_last_run_diag)"
fi

done_testing
