#!/bin/bash
# tests/integration/contain_proc.sh — process containment: host processes
# and the supervisor are invisible and unsignalable (ESRCH/ENOENT), pid 1
# of the run cannot be ptraced or read (EPERM), every namespace differs
# from the host's, and /proc/1/root does not lead to the host's root.
# Each attack has a control against a process of the run's own.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
require_isolation

start_bg HOSTPID sleep 300
[ "$HOSTPID" -gt 300 ] || bail_out "host pid $HOSTPID too small to be unambiguous inside a pid namespace"

# ---- signalling ------------------------------------------------------------------

rf_probe kill "$HOSTPID" 0
is "$RF_OUT" "errno=ESRCH" "kill(host pid, 0) -> ESRCH"
rf_probe kill "$HOSTPID" 9
is "$RF_OUT" "errno=ESRCH" "kill(host pid, SIGKILL) -> ESRCH"
rf_probe stat "/proc/$HOSTPID"
is "$RF_OUT" "errno=ENOENT" "/proc/<host pid> is absent"
rf_probe kill child 0
is "$RF_OUT" "ok" "control: kill(own child, 0) works"

# kill(-1, SIG) reaches every process the caller may signal. The signal is
# SIGWINCH (harmless: ignored by default) so that nothing breaks even if
# isolation failed; a catcher on each side records whether it arrived.
rf_mktemp /tmp
host_catch=$REPLY/host-caught
start_bg CATCHER "$RF_PROBE" catch 28 "$host_catch"
for _ in $(seq 1 1200); do [ -e "$host_catch.ready" ] && break; sleep 0.05; done
[ -e "$host_catch.ready" ] || bail_out "the host-side signal catcher did not start"
rf_run -- /bin/sh -c "'$PROBE' catch 28 '$WS/inner-caught' >/dev/null &
	while [ ! -e '$WS/inner-caught.ready' ]; do sleep 0.05; done
	'$PROBE' kill -1 28; wait"
is "$RF_OUT" "ok" "kill(-1, SIGWINCH) inside is delivered somewhere"
is "$(cat "$WS/inner-caught" 2>/dev/null)" "caught 28" "control: the run's own catcher got it"
if [ -e "$host_catch" ]; then
	not_ok "... the host's catcher did not" "$(cat "$host_catch")"
else
	ok "... the host's catcher did not"
fi

# The supervisor (ringfence on the host) is not visible either.
rf_start -- /bin/sh -c "while [ ! -s '$WS/sup.pid' ]; do sleep 0.05; done
	'$PROBE' kill \"\$(cat '$WS/sup.pid')\" 0"
printf '%s\n' "$RF_PID" >"$WS/sup.pid.tmp" && mv "$WS/sup.pid.tmp" "$WS/sup.pid"
rf_wait
is "$RF_OUT" "errno=ESRCH" "kill(supervisor's host pid, 0) -> ESRCH"

rf_probe ls /proc
procs=$(printf '%s\n' "${RF_OUT#ok }" | tr ' ' '\n' | grep -c '^[0-9][0-9]*$')
like "$procs" '^[1-4]$' "/proc lists only the run's few processes ($procs)"

# ---- ptrace, process_vm_readv -----------------------------------------------------

rf_probe ptrace-attach 1
is "$RF_OUT" "errno=EPERM" "ptrace(ATTACH, 1) -> EPERM"
rf_probe process-vm-read 1
is "$RF_OUT" "errno=EPERM" "process_vm_readv(1) -> EPERM"
rf_probe read /proc/1/environ
like "$RF_OUT" '^errno=(EACCES|EPERM)$' "/proc/1/environ is not readable"
# The seccomp filter refuses ptrace and process_vm_* outright (EPERM), even
# on the run's own child; the pid namespace alone hides host pids (ESRCH).
rf_probe ptrace-attach child
is "$RF_OUT" "errno=EPERM" "ptrace(ATTACH, own child) -> EPERM (seccomp)"
rf_probe process-vm-read child
is "$RF_OUT" "errno=EPERM" "process_vm_readv(own child) -> EPERM (seccomp)"
rf_probe ptrace-attach "$HOSTPID"
is "$RF_OUT" "errno=EPERM" "ptrace(ATTACH, host pid) -> EPERM (seccomp)"
if [ -n "$RF_TEST_BIN" ] && [ -x "$RF_TEST_BIN" ] && grep -q RINGFENCE_TEST_SKIP "$RF_TEST_BIN"; then
	RF_RUN_BIN=$RF_TEST_BIN RF_ENV=(RINGFENCE_TEST_SKIP=seccomp)
	rf_probe ptrace-attach child
	is "$RF_OUT" "ok" "control, seccomp off: ptrace(ATTACH, own child) works"
	rf_probe process-vm-read child
	is "$RF_OUT" "ok marker" "control, seccomp off: process_vm_readv(own child) works"
	rf_probe ptrace-attach "$HOSTPID"
	is "$RF_OUT" "errno=ESRCH" "seccomp off: ptrace(ATTACH, host pid) -> ESRCH (pid namespace)"
	rf_probe ptrace-attach 1
	is "$RF_OUT" "errno=EPERM" "seccomp off: ptrace(ATTACH, init) -> EPERM (init is not dumpable)"
	unset RF_RUN_BIN
	RF_ENV=()
else
	skip "seccomp-off controls" "no test build"
fi

# ---- namespaces ------------------------------------------------------------------

host_ns=$("$RF_PROBE" ns self)
rf_probe ns self
inner_ns=$RF_OUT
like "$inner_ns" '^ok ' "read the run's namespace inodes"
for kind in user mnt pid net ipc uts cgroup; do
	h=$(field "$host_ns" "$kind") i=$(field "$inner_ns" "$kind")
	if [ -n "$i" ] && [ "$h" != "$i" ]; then
		ok "$kind namespace differs from the host's"
	else
		not_ok "$kind namespace differs from the host's" "host $kind=$h, run $kind=$i"
	fi
done

# setns into another namespace of the run's own: no capability left -> EPERM.
rf_probe setns /proc/self/ns/net
is "$RF_OUT" "errno=EPERM" "setns (even into its own net ns) -> EPERM"

# ---- /proc/1/root ------------------------------------------------------------------

host_root=$(stat -L -c '%d:%i' /)
rf_probe stat /proc/1/root/
case $RF_OUT in
errno=EACCES | errno=EPERM) ok "/proc/1/root is not followable ($RF_OUT)" ;;
ok*)
	d=$(field "$RF_OUT" dev) i=$(field "$RF_OUT" ino)
	# stat -c %d prints the device number as one decimal; rebuild it.
	dev_dec=$(((${d%%:*} << 8) | (${d#*:} & 0xff) | ((${d#*:} & ~0xff) << 12)))
	isnt "$dev_dec:$i" "$host_root" "/proc/1/root is not the host's root"
	;;
*) not_ok "/proc/1/root is not the host's root" "$RF_OUT" ;;
esac
rf_probe read /proc/1/root/etc/shadow
like "$RF_OUT" '^errno=(ENOENT|EACCES)$' "/proc/1/root/etc/shadow is not the host's shadow"
rf_probe stat "/proc/$HOSTPID/root/etc/shadow"
is "$RF_OUT" "errno=ENOENT" "/proc/<host pid>/root is absent"

done_testing
