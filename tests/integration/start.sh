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
		"the run's /etc is opened once for all its entries"; do
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
