#!/bin/bash
# tests/integration/start.sh — the start path does what it must and nothing
# it need not: run.start is durable before the command starts (its
# fdatasync now overlaps init's setup, it must still precede the command's
# exec), the capability bounding set is emptied with one PR_CAPBSET_DROP
# per capability the kernel has (not 64), and the run's /etc is populated
# through one directory fd. Observed with strace -f (deterministic system
# call order and counts, no timings); skipped where strace is missing or
# cannot trace. Also: the command starts with every signal at SIG_DFL even
# when ringfence's caller ignored some.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

# ---- controls (no tracer) ----------------------------------------------------

rf_run -- /bin/sh -c 'grep ^CapBnd: /proc/self/status'
is "$RF_RC" 0 "control: a run starts and ends (exit 0)"
like "$RF_OUT" '^CapBnd:[[:space:]]+0000000000000000$' \
	"control: the command's capability bounding set is empty"

# Signals ignored by ringfence's caller (and SIGPIPE, which the supervisor
# ignores) are back to SIG_DFL in the command: the reset now reads the
# non-default dispositions from /proc/self/status instead of one
# sigaction per signal.
# Also 32 and 33, glibc's own real-time signals, which its signal()
# refuses to touch (set here by the system call, as a caller may).
# shellcheck disable=SC2016
IGN_RT='import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class KSA(ctypes.Structure):
    _fields_ = [("h", ctypes.c_void_p), ("f", ctypes.c_ulong), ("r", ctypes.c_void_p), ("m", ctypes.c_uint64)]
for s in (32, 33):
    if libc.syscall(13, s, ctypes.byref(KSA(1, 0, None, 0)), None, 8) != 0:
        sys.exit("rt_sigaction %d: errno %d" % (s, ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])'
(
	trap '' INT HUP USR1 TERM PIPE
	exec python3 -c "$IGN_RT" grep ^SigIgn: /proc/self/status </dev/null >"$WS/sigign.host" 2>&1
)
like "$(cat "$WS/sigign.host")" '^SigIgn:[[:space:]]+0000000181005203$' \
	"control: outside, INT HUP USR1 TERM PIPE 32 33 are ignored"
(
	trap '' INT HUP USR1 TERM PIPE
	exec python3 -c "$IGN_RT" "$RF_BIN" run --state-dir "$RF_STATE" --workspace "$WS" -- \
		/bin/sh -c 'grep ^SigIgn: /proc/self/status' </dev/null >"$WS/sigign" 2>&1
)
like "$(cat "$WS/sigign")" '^SigIgn:[[:space:]]+0000000000000000$' \
	"signals the caller ignored (INT HUP USR1 TERM PIPE 32 33) are default in the command"
rm -f "$WS/sigign"

skip_traced() { # REASON: the traced cases do not apply here
	local name
	for name in "a traced run exits 0" "run.start's fdatasync completes before the command's execve" \
		"the bounding set is emptied with cap_last_cap + 2 PR_CAPBSET_DROP calls" \
		"the run's /etc is opened once for all its entries" \
		"a traced run that leaves nothing behind exits 0" \
		"run.exit is written before the run leaves the registry" \
		"init, alone at the end, is reaped after the registry entry went (its teardown overlapped)" \
		"run.exit's fdatasync comes after the registry and before ringfence ends" \
		"a traced run that leaves a clone child behind exits 0" \
		"init with a child left is waited for before run.exit is written"; do
		skip "$name" "$1"
	done
	done_testing
}
command -v strace >/dev/null 2>&1 || skip_traced "strace is not installed (scripts/deps.sh installs it)"
rf_mktemp /tmp
TR=$REPLY/trace
strace -f -qq -o "$TR" /bin/true 2>/dev/null || skip_traced "strace cannot trace here (ptrace refused)"

# One traced run: fdatasync (with fd paths), execve, prctl, openat2.
# (LeakSanitizer cannot run under ptrace: a sanitizer build's traced runs
# go without it)
RF_WRAP=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	strace -f -qq -y -o "$TR" -e trace=fdatasync,execve,prctl,openat2)
rf_run -- "$PROBE" write "$WS/started"
RF_WRAP=()
is "$RF_RC" 0 "a traced run exits 0"
[ -e "$WS/started" ] || diag "the command did not run"

# ---- run.start is durable before the command's exec ----------------------------
# The first completed fdatasync of the audit segment (possibly printed as
# "<unfinished ...>" then "<... fdatasync resumed>") must come before the
# command's execve line.
read -r sync_line exec_line < <(awk -v probe="$PROBE" '
	/fdatasync\(.*audit-[0-9]+\.jsonl>/ {
		if ($0 ~ /<unfinished/) pend[$1] = 1
		else if ($0 ~ /= 0$/ && !s) s = NR
	}
	/<\.\.\. fdatasync resumed>/ { if (pend[$1] && $0 ~ /= 0$/ && !s) s = NR; pend[$1] = 0 }
	index($0, "execve(\"" probe "\"") && !e { e = NR }
	END { printf "%d %d\n", s, e }' "$TR")
if [ "$sync_line" -gt 0 ] && [ "$exec_line" -gt 0 ] && [ "$sync_line" -lt "$exec_line" ]; then
	ok "run.start's fdatasync completes before the command's execve"
else
	not_ok "run.start's fdatasync completes before the command's execve" \
		"fdatasync of the segment at trace line $sync_line, the command's execve at $exec_line"
fi

# ---- the bounding set: one drop per capability of this kernel ------------------
# Each call has one line that starts it (complete, or "<unfinished ...>"):
# 0..cap_last_cap succeed, then one more ends the loop with EINVAL. Before,
# the loop went on to 63 regardless.
last=$(cat /proc/sys/kernel/cap_last_cap)
drops=$(grep -c 'prctl(PR_CAPBSET_DROP, ' "$TR")
is "$drops" "$((last + 2))" \
	"the bounding set is emptied with cap_last_cap + 2 = $((last + 2)) PR_CAPBSET_DROP calls (not 64)"

# ---- the run's end -------------------------------------------------------------
# init tells the supervisor whether anything of the run is left once the
# command ended (waitid __WALL: ECHILD). Alone, it exits at once and the
# supervisor writes run.exit and removes the registry entry while init's
# namespaces are torn down, reaping it only before the cgroup goes; the
# sync of run.exit comes after the registry entry went (its writeback
# started first), before ringfence ends. With anything left — here a child the
# command made with exit signal 0 (init's once the command ends) — init
# is waited for (the pid namespace's teardown kills the rest) before
# run.exit is written, and nothing of the run outlives ringfence.
# Positions in the supervisor's own lines: W its blocking wait4 of init,
# X the write of run.exit, U the unlink of the control socket, F the last
# fdatasync of the audit segment, E its exit_group.
end_order() { # TRACE: prints "W X U F E" (0: not seen)
	awk '
	NR == 1 { sup = $1 }
	$1 != sup { next }
	/wait4\([1-9][0-9]*, / && !w { w = NR }
	/write\(.*audit-[0-9]+\.jsonl>.*run\.exit/ && !x { x = NR }
	/unlinkat\(.*"control\.sock"/ && !u { u = NR }
	/fdatasync\(.*audit-[0-9]+\.jsonl>/ { f = NR }
	/exit_group\(/ { e = NR }
	END { printf "%d %d %d %d %d\n", w, x, u, f, e }' "$1"
}
traced_end() { # TRACE CMD...: one run traced for end_order, then "W X U F E" read
	local trace=$1
	shift
	RF_WRAP=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		strace -f -qq -y -s 4096 -o "$trace" -e trace=wait4,write,unlinkat,fdatasync,exit_group)
	rf_run -- "$@"
	RF_WRAP=()
	read -r W X U F E < <(end_order "$trace")
}
traced_end "$TR.end" /bin/true
is "$RF_RC" 0 "a traced run that leaves nothing behind exits 0"
if [ "$X" -gt 0 ] && [ "$U" -gt "$X" ]; then
	ok "run.exit is written before the run leaves the registry"
else
	not_ok "run.exit is written before the run leaves the registry" "run.exit at $X, unlink at $U"
fi
if [ "$W" -gt "$U" ] && [ "$U" -gt 0 ]; then
	ok "init, alone at the end, is reaped after the registry entry went (its teardown overlapped)"
else
	not_ok "init, alone at the end, is reaped after the registry entry went (its teardown overlapped)" \
		"wait4 of init at $W, unlink of the control socket at $U"
fi
if [ "$F" -gt "$U" ] && [ "$E" -gt "$F" ]; then
	ok "run.exit's fdatasync comes after the registry and before ringfence ends"
else
	not_ok "run.exit's fdatasync comes after the registry and before ringfence ends" \
		"fdatasync at $F, unlink at $U, exit_group at $E"
fi

# A child with exit signal 0 (clone flags 0: no SIGCHLD), holding a lock
# on a workspace file; its parent, the command, exits once it holds it.
# shellcheck disable=SC2016
CLONE0='import ctypes, fcntl, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
pid = libc.syscall(56, 0, 0, 0, 0, 0)
if pid == 0:
    fcntl.flock(fd, fcntl.LOCK_EX)
    time.sleep(300)
    os._exit(0)
if pid < 0:
    sys.exit("clone: errno %d" % ctypes.get_errno())
probe = os.open(sys.argv[1], os.O_RDWR)
for _ in range(1000):
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(probe, fcntl.LOCK_UN)
        time.sleep(0.01)
    except BlockingIOError:
        print("held")
        sys.exit(0)
sys.exit("the child never took the lock")'
rf_run -- python3 -c "$CLONE0" "$WS/clone0.lock"
is "$RF_RC" 0 "control: a run that leaves a clone child behind exits 0"
like "$RF_OUT" '^held$' "control: its child held the lock while the command ended"
flock -n "$WS/clone0.lock" true
is "$?" 0 "control: the child is gone when ringfence returns (its lock is free)"
traced_end "$TR.left" python3 -c "$CLONE0" "$WS/clone0.lock"
is "$RF_RC" 0 "a traced run that leaves a clone child behind exits 0"
if [ "$W" -gt 0 ] && [ "$X" -gt "$W" ]; then
	ok "init with a child left is waited for before run.exit is written"
else
	not_ok "init with a child left is waited for before run.exit is written" \
		"wait4 of init at $W, run.exit at $X"
fi

# ---- the run's /etc through one directory fd -------------------------------------
# openat2 of "etc" beneath the new root (RESOLVE_BENEATH): once to make it.
# Before: once per file, link and bind placed in /etc (a dozen).
etc_opens=$(grep -c 'openat2([0-9]*<[^>]*>, "etc", .*RESOLVE_BENEATH' "$TR")
if [ "$etc_opens" -ge 1 ] && [ "$etc_opens" -le 2 ]; then
	ok "the run's /etc is opened once for all its entries ($etc_opens)"
else
	not_ok "the run's /etc is opened once for all its entries" \
		"openat2 of \"etc\" beneath the new root: $etc_opens times"
fi

done_testing
