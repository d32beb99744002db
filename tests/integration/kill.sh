#!/usr/bin/env bash
# kill.sh — the per-run kill switch (issue 7, standalone runs): every run is
# registered with a control socket; `ringfence kill` stops exactly that
# run's whole process tree.
#
# Asserts: ps lists the runs; a 50-process run is killed and none of its
# processes survives (every pid of its pid namespace is gone), while a
# second run is untouched and finishes normally; a run that keeps forking
# during the kill leaves nothing behind either; kill returns only once the
# run is gone (rc 137 for `ringfence run`, "killed by uid 0 (root):
# REASON"); run.kill records the actor, the reason and the state; pause
# freezes the run (its counter stops) and resume thaws it; kill --agent A
# stops only A's runs, --block refuses new runs of A (125, run.refused
# reason=blocked) until unblock; after a kill the run's broker grant is
# revoked and a connection it held through its egress proxy is closed; the
# control socket refuses another uid (EACCES on the directory; SO_PEERCRED
# when it can reach it); a supervisor killed with SIGKILL takes its run
# with it and shows as lost; the audit chain verifies.
#
# Counting a run's processes: by its pid namespace, held open by the test
# (pin_ns) while it counts, since the kernel hands a freed namespace's
# inode number to the next namespace created anywhere on the host. Waits
# are polls bounded at 60 s (a loaded 2-CPU host, a sanitizer build); no
# sleep stands in for an event.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (host pids of the run's namespace, a second uid)"
new_workspace
RF=$RF_BIN
records() { cat "$RF_STATE"/audit/audit-*.jsonl; }
ps_json() { "$RF" ps --state-dir "$RF_STATE" --json; }
run_of_agent() { ps_json | grep "\"agent\":\"$1\"" | grep -o '"run":"[^"]*"' | cut -d'"' -f4; }
# pin_ns RUN — hold run RUN's pid namespace open (fd $NS_FD) and set NS to
# its name ("pid:[INODE]"). The kernel reuses a namespace's inode number as
# soon as the namespace is freed, so without the pin a pid namespace created
# afterwards anywhere on the host (another sandbox, another test suite)
# could carry the same name and its processes would count as the run's. A
# held namespace file keeps the number taken; it keeps no process alive.
NS_FD=""
pin_ns() {
	local init
	NS=""
	init=$("$RF" inspect --state-dir "$RF_STATE" "$1" | grep -o '"init_pid":[0-9]*' | cut -d: -f2)
	[ -n "$init" ] || return 1
	exec {NS_FD}<"/proc/$init/ns/pid" || return 1
	NS=$(readlink "/proc/$init/ns/pid")
	# the pin is the namespace the name was read from
	[ "$(readlink "/proc/self/fd/$NS_FD")" = "$NS" ]
}
unpin_ns() {
	[ -n "$NS_FD" ] && exec {NS_FD}<&-
	NS_FD=""
}
# ns_procs — the host pids in the pinned namespace NS, one per line (one
# find for the whole of /proc: a readlink per process is too slow to poll)
ns_procs() {
	local pat
	[ -n "$NS" ] || return 0
	pat=${NS//\[/\\[}
	pat=${pat//\]/\\]}
	find /proc/[0-9]*/ns -maxdepth 1 -name pid -lname "$pat" 2>/dev/null | cut -d/ -f3
}
# ns_procs_live — ns_procs but zombies: with its supervisor gone, the run's
# init is reparented to the host's pid 1 and stays a zombie until that
# reaps it (soon, but not ringfence's to do); a zombie runs nothing, holds
# no memory and no file, and init becomes one only once the rest of its
# namespace is gone (the kernel's rule)
ns_procs_live() {
	local p st
	for p in $(ns_procs); do
		st=$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && echo "$p"
	done
}
# ns_report — what is left in NS, for diagnostics
ns_report() {
	local p
	for p in $(ns_procs); do
		printf 'pid %s: %s| %s| %s\n' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" \
			"$(grep -E '^(State|PPid|NSpid):' "/proc/$p/status" 2>/dev/null | tr '\n\t' '  ')" \
			"$(grep -m1 ringfence "/proc/$p/cgroup" 2>/dev/null)"
	done
}
wait_for() { # wait_for FILE: up to 60 s (a loaded machine, a sanitizer build)
	for _ in $(seq 1 1200); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}
alive_in() { # alive_in NS PIDS...: how many of PIDS still live in NS
	local ns=$1 n=0 p
	shift
	for p in "$@"; do [ "$(readlink "/proc/$p/ns/pid" 2>/dev/null)" = "$ns" ] && n=$((n + 1)); done
	echo "$n"
}

# ---- a 50-process run, killed; another run untouched ---------------------------------------
rf_start --agent big -- /bin/sh -c "for i in \$(seq 50); do sleep 300 & done; touch '$WS/big.ready'; wait"
BIG_PID=$RF_PID BIG_OUT=$_RF_OUTF BIG_ERR=$_RF_ERRF
rf_start --agent other -- /bin/sh -c "touch '$WS/other.ready'; while [ ! -e '$WS/other.stop' ]; do sleep 0.05; done; echo done"
OTHER_PID=$RF_PID OTHER_OUT=$_RF_OUTF OTHER_ERR=$_RF_ERRF
wait_for "$WS/big.ready" && wait_for "$WS/other.ready"
check "both runs started" test -e "$WS/big.ready" -a -e "$WS/other.ready"
BIG=$(run_of_agent big)
OTHER=$(run_of_agent other)
check "both runs are registered" test -n "$BIG" -a -n "$OTHER"
is "$(ps_json | grep -c '"state":"running"')" 2 "ps lists both runs, running"
check "the big run's pid namespace is pinned for counting" pin_ns "$BIG"
pids=$(ns_procs)
n=$(printf '%s\n' "$pids" | grep -c .)
check "the big run has init, its shell and 50 sleeps ($n processes)" test "$n" -ge 52
out=$("$RF" kill --state-dir "$RF_STATE" --reason "test: stop it" "$BIG" 2>&1)
# (a reason like "@1000 ..." is only a reason: see the counter run below)
is "$?" 0 "ringfence kill RUN: exit 0 ($out)"
# kill returns once the run is gone: nothing of its namespace is left now
# shellcheck disable=SC2086
is "$(alive_in "$NS" $pids)" 0 "no process of the killed run survives (checked as soon as kill returned)"
left=$(ns_procs | grep -c .)
is "$left" 0 "... nor any other process of its pid namespace"
[ "$left" = 0 ] || diag "$(ns_report)"
unpin_ns
RF_PID=$BIG_PID _RF_OUTF=$BIG_OUT _RF_ERRF=$BIG_ERR
rf_wait
is "$RF_RC" 137 "ringfence run of the killed run exits 137"
like "$RF_ERR" "killed by uid 0 \\(root\\): test: stop it" "... saying who killed it and why"
k=$(records | grep "\"run\":\"$BIG\"" | grep '"event":"run.kill"')
like "$k" '"actor_uid":0' "run.kill records the actor's uid"
like "$k" '"actor_user":"root"' "... its user"
like "$k" '"reason":"test: stop it"' "... the reason"
like "$k" '"state":"running"' "... and the run's state"
like "$(records | grep "\"run\":\"$BIG\"" | grep '"event":"run.exit"')" '"status":137' "run.exit follows with 137"
is "$(ps_json | grep -c "\"run\":\"$BIG\"")" 0 "the killed run is no longer registered"
is "$(ps_json | grep "\"run\":\"$OTHER\"" | grep -c '"state":"running"')" 1 "the other run is untouched (still running)"

# ---- pause / resume ---------------------------------------------------------------------------
rf_start --agent counter -- /bin/sh -c "i=0; while :; do i=\$((i+1)); echo \$i >'$WS/count.tmp'; mv '$WS/count.tmp' '$WS/count'; sleep 0.02; done"
CNT_PID=$RF_PID CNT_OUT=$_RF_OUTF CNT_ERR=$_RF_ERRF
wait_for "$WS/count"
CNT=$(run_of_agent counter)
out=$("$RF" pause --state-dir "$RF_STATE" "$CNT" 2>&1)
is "$?" 0 "pause: exit 0 ($out)"
c1=$(cat "$WS/count")
sleep 0.5
c2=$(cat "$WS/count")
is "$c2" "$c1" "paused: the run's counter does not move"
is "$(ps_json | grep "\"run\":\"$CNT\"" | grep -c '"state":"paused"')" 1 "ps shows it paused"
"$RF" resume --state-dir "$RF_STATE" "$CNT" >/dev/null 2>&1
for _ in $(seq 1 1200); do # until it moves: up to 60 s on a loaded machine
	c3=$(cat "$WS/count")
	[ "${c3:-0}" -gt "${c2:-0}" ] && break
	sleep 0.05
done
check "resumed: the counter moves again ($c2 -> $c3)" test "${c3:-0}" -gt "${c2:-0}"
like "$(records | grep "\"run\":\"$CNT\"" | grep -c '"event":"run.pause"\|"event":"run.resume"')" '^2$' \
	"run.pause and run.resume are recorded"
"$RF" kill --state-dir "$RF_STATE" --reason "@1000 not me" "$CNT" >/dev/null 2>&1
RF_PID=$CNT_PID _RF_OUTF=$CNT_OUT _RF_ERRF=$CNT_ERR
rf_wait
is "$RF_RC" 137 "the counter run killed: 137"
k=$(records | grep "\"run\":\"$CNT\"" | grep '"event":"run.kill"')
like "$k" '"actor_uid":0' "a reason that looks like \"@1000\" does not change the recorded actor"
like "$k" '"reason":"@1000 not me"' "... it stays the reason"

# ---- a run forking during the kill ---------------------------------------------------------
rf_start --agent forker --pids 20000 -- /bin/sh -c "touch '$WS/fork.ready'; while :; do sleep 30 & done"
F_PID=$RF_PID F_OUT=$_RF_OUTF F_ERR=$_RF_ERRF
wait_for "$WS/fork.ready"
FRK=$(run_of_agent forker)
check "the forking run's pid namespace is pinned for counting" pin_ns "$FRK"
# it is forking: wait (bounded) until it has at least 50 processes
for _ in $(seq 1 1200); do
	n=$(ns_procs | grep -c .)
	[ "$n" -ge 50 ] && break
	sleep 0.05
done
check "the forking run has forked ($n processes)" test "$n" -ge 50
"$RF" kill --state-dir "$RF_STATE" "$FRK" >/dev/null 2>&1
is "$?" 0 "kill of a run that keeps forking: exit 0"
# any pid in that namespace, whether listed before or forked during the kill
left=$(ns_procs | grep -c .)
is "$left" 0 "... nothing of its namespace is left, including processes forked during the kill ($n seen before)"
[ "$left" = 0 ] || diag "$(ns_report)"
unpin_ns
RF_PID=$F_PID _RF_OUTF=$F_OUT _RF_ERRF=$F_ERR
rf_wait
is "$RF_RC" 137 "... its ringfence run exits 137"

# ---- kill --agent, --block ----------------------------------------------------------------
for i in 1 2; do
	rf_start --agent alpha -- /bin/sh -c "touch '$WS/alpha$i.ready'; sleep 300"
	eval "A${i}_PID=\$RF_PID A${i}_OUT=\$_RF_OUTF A${i}_ERR=\$_RF_ERRF"
done
wait_for "$WS/alpha1.ready" && wait_for "$WS/alpha2.ready"
out=$("$RF" kill --state-dir "$RF_STATE" --agent alpha --block --reason "alpha misbehaves" 2>&1)
is "$?" 0 "kill --agent alpha --block: exit 0"
is "$(grep -c '^killed ' <<<"$out")" 2 "... killed both of alpha's runs"
for i in 1 2; do
	eval "RF_PID=\$A${i}_PID _RF_OUTF=\$A${i}_OUT _RF_ERRF=\$A${i}_ERR"
	rf_wait
	is "$RF_RC" 137 "alpha run $i: 137"
done
is "$(ps_json | grep "\"run\":\"$OTHER\"" | grep -c '"state":"running"')" 1 "the other agent's run is still running"
rm -f "$WS/ran"
rf_run --agent alpha -- /bin/sh -c "touch '$WS/ran'"
is "$RF_RC" 125 "a new run of the blocked agent is refused (125)"
like "$RF_ERR" "agent alpha is blocked \\(by uid 0: alpha misbehaves\\)" "... saying so"
check "... and the command did not run" test ! -e "$WS/ran"
like "$(records | grep '"event":"run.refused"' | tail -n 1)" '"reason":"blocked"' "run.refused reason=blocked"
rf_run --agent beta -- true
is "$RF_RC" 0 "control: another agent still starts runs"
"$RF" unblock --state-dir "$RF_STATE" --agent alpha >/dev/null 2>&1
rf_run --agent alpha -- true
is "$RF_RC" 0 "after unblock, alpha starts runs again"
like "$(records | grep '"event":"control.block"')" '"agent":"alpha"' "control.block recorded"
like "$(records | grep '"event":"control.unblock"')" '"agent":"alpha"' "control.unblock recorded"

# ---- after a kill: grants revoked, egress connections closed ---------------------------------
printf 'killtest-%s' "$RANDOM$RANDOM" | "$RF" secret set --state-dir "$RF_STATE" ktok >/dev/null 2>&1
rf_mktemp /tmp
SRV=$REPLY
python3 - "$SRV" <<'PY' &
import socket, sys, os
d = sys.argv[1]
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(d + "/port.tmp", "w").write(str(s.getsockname()[1])); os.rename(d + "/port.tmp", d + "/port")
c, _ = s.accept()
c.recv(65536)
c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\nhello")
c.settimeout(60)
try:
    while c.recv(65536):
        pass
    open(d + "/eof", "w").write("eof")
except Exception as e:
    open(d + "/eof", "w").write("error " + str(e))
PY
register_pid $!
wait_for "$SRV/port"
PORT=$(cat "$SRV/port")
rf_start --agent holder --secret-broker k=store:ktok --allow-host "127.0.0.1:$PORT" -- /bin/sh -c \
	"ringfence-secret k >/dev/null && touch '$WS/h.read'
	 curl -s --noproxy '' -x http://127.0.0.1:3128 -o /dev/null 'http://127.0.0.1:$PORT/' &
	 sleep 300"
H_PID=$RF_PID H_OUT=$_RF_OUTF H_ERR=$_RF_ERRF
wait_for "$WS/h.read"
for _ in $(seq 1 1200); do
	[ "$(records | grep -c '"event":"egress.request"')" -gt 0 ] && break
	sleep 0.05
done
HLD=$(run_of_agent holder)
check "the holder run reads its secret and holds a connection" test -e "$WS/h.read"
check "... the test server does not see EOF yet" test ! -e "$SRV/eof"
"$RF" kill --state-dir "$RF_STATE" "$HLD" >/dev/null 2>&1
wait_for "$SRV/eof"
is "$(cat "$SRV/eof" 2>/dev/null)" eof "after the kill the connection held through egress is closed (the server sees EOF)"
RF_PID=$H_PID _RF_OUTF=$H_OUT _RF_ERRF=$H_ERR
rf_wait
rev=$(records | grep "\"run\":\"$HLD\"" | grep '"event":"secret.revoke"')
like "$rev" '"effect":"reads refused"' "the killed run's broker grant is revoked (secret.revoke)"
kseq=$(records | grep "\"run\":\"$HLD\"" | grep '"event":"run.kill"' | grep -o '"seq":[0-9]*' | cut -d: -f2)
rseq=$(grep -o '"seq":[0-9]*' <<<"$rev" | cut -d: -f2)
check "... after the run.kill record (seq $kseq < $rseq)" test "${rseq:-0}" -gt "${kseq:-999999999}"

# ---- the control socket refuses other uids ---------------------------------------------------
if as_user_setup; then
	chown -R 0:0 "$WS" "$RF_STATE" # the run below is root's
	chmod 0755 "$(dirname "$RF_STATE")"
	sock="$RF_STATE/runs/$OTHER/control.sock"
	is "$(as_user "$RF_PROBE" unix-connect "$sock")" "errno=EACCES" \
		"another uid cannot reach a run's control socket (0700 state dir): EACCES"
	chmod 0711 "$RF_STATE" "$RF_STATE/runs" "$RF_STATE/runs/$OTHER"
	chmod 0777 "$sock"
	reply=$(as_user python3 -c "import socket,sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.send(b'kill'); print(s.recv(1024).decode())" "$sock" 2>&1)
	chmod 0700 "$RF_STATE" "$RF_STATE/runs" "$RF_STATE/runs/$OTHER"
	chmod 0755 "$sock"
	like "$reply" "^err permission denied" "with the directories and the socket opened up, SO_PEERCRED still refuses it ($reply)"
	is "$(ps_json | grep "\"run\":\"$OTHER\"" | grep -c '"state":"running"')" 1 "... and the run lives on"
else
	skip "control socket vs another uid" "needs root"
	skip "control socket vs another uid (SO_PEERCRED)" "needs root"
	skip "control socket vs another uid (run lives)" "needs root"
fi

# ---- a supervisor killed with SIGKILL takes its run with it -----------------------------------
rf_start --agent crash -- /bin/sh -c "touch '$WS/crash.ready'; sleep 300"
C_PID=$RF_PID
wait_for "$WS/crash.ready"
CR=$(run_of_agent crash)
check "the crash run's pid namespace is pinned for counting" pin_ns "$CR"
kill -KILL "$C_PID"
wait "$C_PID" 2>/dev/null
# the kernel kills the run asynchronously (PDEATHSIG, then the namespace):
# wait for it, bounded (60 s)
for _ in $(seq 1 1200); do
	[ "$(ns_procs | grep -c .)" = 0 ] && break
	sleep 0.05
done
left=$(ns_procs | grep -c .)
is "$left" 0 "a supervisor killed with SIGKILL: its run dies with it (no orphan)"
[ "$left" = 0 ] || diag "$(ns_report)"
unpin_ns
is "$(ps_json | grep "\"run\":\"$CR\"" | grep -c '"state":"lost"')" 1 "ps shows that run as lost"

# ---- kill returns only once the namespace is empty, also when the supervisor dies meanwhile ----
# A process put into the run's pid namespace from the host (nsenter) has its
# parent outside: killed, it stays a zombie until that parent reaps it, and
# the kernel lets the namespace's init exit only after that. With the parent
# stopped, the run's namespace provably stays populated, so a kill that
# returns before the parent is continued returned early. Twice: with the
# supervisor alive (it confirms only after reaping init), and with the
# supervisor SIGKILLed while the kill waits (no confirmation comes: the
# kill must wait for the run's init itself).
held_run() { # held_run NAME: a run with a host-parented process in its pid namespace
	rf_start --agent "$1" -- /bin/sh -c "touch '$WS/$1.ready'; sleep 300"
	HL_PID=$RF_PID HL_OUT=$_RF_OUTF HL_ERR=$_RF_ERRF
	wait_for "$WS/$1.ready" || return 1
	HL=$(run_of_agent "$1")
	pin_ns "$HL" || return 1
	local init
	init=$("$RF" inspect --state-dir "$RF_STATE" "$HL" | grep -o '"init_pid":[0-9]*' | cut -d: -f2)
	nsenter -t "$init" -p -- sleep 300 &
	NE=$!
	register_pid "$NE"
	for _ in $(seq 1 1200); do # init, its shell, sleep, and the entered sleep
		[ "$(ns_procs | grep -c .)" -ge 4 ] && break
		sleep 0.05
	done
	[ "$(ns_procs | grep -c .)" -ge 4 ] && kill -STOP "$NE"
}
# not_returned PID: PID (a `ringfence kill`) is still running 3 s later. (An
# observation window, not a synchronisation: the namespace stays populated
# until the test continues the parent, so a kill that is gone returned early;
# 3 s of wall clock, well inside the kill's own 30 s bound.)
not_returned() {
	kill -0 "$1" 2>/dev/null || return 1
	sleep 3
	kill -0 "$1" 2>/dev/null
}
if ! command -v nsenter >/dev/null; then
	for _ in 1 2 3 4 5; do skip "kill vs a held namespace" "no nsenter on this host"; done
else
	for mode in alive crashed; do
		if ! held_run "held-$mode"; then
			not_ok "a run with a host-parented process in its namespace ($mode)" "$(ns_report)"
			continue
		fi
		"$RF" kill --state-dir "$RF_STATE" "$HL" >"$WS/held.kill" 2>&1 &
		K=$!
		for _ in $(seq 1 1200); do # the supervisor has the request
			records | grep "\"run\":\"$HL\"" | grep -q '"event":"run.kill"' && break
			sleep 0.05
		done
		if [ "$mode" = crashed ]; then
			kill -KILL "$HL_PID"
			wait "$HL_PID" 2>/dev/null
		fi
		n=$(ns_procs | grep -c .)
		check "supervisor $mode: while a zombie of the run waits for its stopped parent, kill has not returned ($n left in the namespace)" not_returned "$K"
		kill -CONT "$NE"
		wait "$K"
		rc=$?
		if [ "$mode" = crashed ]; then
			left=$(ns_procs_live | grep -c .) # init: the host's to reap
		else
			left=$(ns_procs | grep -c .) # the supervisor reaped init
		fi
		is "$rc:$left" 0:0 "supervisor $mode: once the parent reaps it, kill returns 0 and nothing of the namespace is left"
		[ "$left" = 0 ] || diag "$(ns_report)" "$(cat "$WS/held.kill")"
		wait "$NE" 2>/dev/null
		unpin_ns
		RF_PID=$HL_PID _RF_OUTF=$HL_OUT _RF_ERRF=$HL_ERR
		if [ "$mode" = alive ]; then
			rf_wait
			is "$RF_RC" 137 "supervisor alive: its ringfence run exits 137"
		fi
	done
fi

# ---- grant: a live run's egress changes on its next connection ------------------------------
rf_mktemp /tmp
GS=$REPLY
python3 - "$GS" <<'PY' &
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + "/port.tmp", "w").write(str(s.server_port))
os.rename(sys.argv[1] + "/port.tmp", sys.argv[1] + "/port")
s.serve_forever()
PY
register_pid $!
wait_for "$GS/port"
GP=$(cat "$GS/port")
rm -f "$WS"/go? "$WS"/res?
rf_start --agent granted -- /bin/sh -c "for n in 1 2 3; do while [ ! -e '$WS/go'\$n ]; do sleep 0.05; done
	curl -s -m 5 -o /dev/null -w '%{http_code}' --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:$GP/ >'$WS/res'\$n.tmp
	mv '$WS/res'\$n.tmp '$WS/res'\$n; done"
G_PID=$RF_PID G_OUT=$_RF_OUTF G_ERR=$_RF_ERRF
for _ in $(seq 1 1200); do GR=$(run_of_agent granted); [ -n "$GR" ] && break; sleep 0.05; done
touch "$WS/go1"
wait_for "$WS/res1"
is "$(cat "$WS/res1")" 403 "a run without the rule: its request is refused (403)"
out=$("$RF" grant --state-dir "$RF_STATE" "$GR" --allow-host "127.0.0.1:$GP" 2>&1)
is "$?" 0 "grant --allow-host on the live run: exit 0 ($out)"
touch "$WS/go2"
wait_for "$WS/res2"
is "$(cat "$WS/res2")" 200 "... its next connection is allowed (200)"
"$RF" pause --state-dir "$RF_STATE" "$GR" >/dev/null 2>&1
out=$("$RF" grant --state-dir "$RF_STATE" "$GR" --revoke-host "127.0.0.1:$GP" 2>&1)
like "$out" "paused: resume it first" "grant on a paused run: refused, saying why"
"$RF" resume --state-dir "$RF_STATE" "$GR" >/dev/null 2>&1
"$RF" grant --state-dir "$RF_STATE" "$GR" --revoke-host "127.0.0.1:$GP" >/dev/null 2>&1
touch "$WS/go3"
wait_for "$WS/res3"
is "$(cat "$WS/res3")" 403 "grant --revoke-host: refused again (403)"
out=$("$RF" grant --state-dir "$RF_STATE" "$GR" --revoke-host "127.0.0.1:$GP" 2>&1)
isnt "$?" 0 "revoking a rule the run does not have: an error ($out)"
RF_PID=$G_PID _RF_OUTF=$G_OUT _RF_ERRF=$G_ERR
rf_wait
is "$(records | grep "\"run\":\"$GR\"" | grep -c '"event":"egress.grant"')" 2 "both changes are recorded (egress.grant)"

# ---- --detach, logs, wait --------------------------------------------------------------------
id=$(cd "$WS" && "$RF" run --state-dir "$RF_STATE" --detach --agent detached -- /bin/sh -c 'echo from-the-run; sleep 0.5; exit 3' 2>"$WS/detach.err")
is "$?" 0 "run --detach returns at once (exit 0)"
like "$id" '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' "... printing the run id"
out=$("$RF" logs --state-dir "$RF_STATE" --follow "$id" 2>/dev/null)
like "$out" "from-the-run" "logs --follow shows its output until it ends"
"$RF" wait --state-dir "$RF_STATE" "$id"
is "$?" 3 "wait exits with the run's own status (3)"
id=$(cd "$WS" && "$RF" run --state-dir "$RF_STATE" --detach --log-max 1K -- /bin/sh -c 'yes | head -c 100000' 2>/dev/null)
"$RF" wait --state-dir "$RF_STATE" "$id"
size=$(stat -c %s "$RF_STATE/logs/$id.log")
check "a detached run's log stops at its --log-max (1 KiB: $size bytes with the note)" test "$size" -le 1200
like "$(tail -n 1 "$RF_STATE/logs/$id.log")" "output truncated" "... saying it was truncated"
out=$(cd "$WS" && "$RF" run --state-dir "$RF_STATE" --detach --memory 1T -- true 2>&1)
is "$?" 125 "a detached run that is refused: 125 at once ($out)"

touch "$WS/other.stop"
RF_PID=$OTHER_PID _RF_OUTF=$OTHER_OUT _RF_ERRF=$OTHER_ERR
rf_wait
is "$RF_RC" 0 "the other run, untouched by all of this, finishes normally"
is "$RF_OUT" "done" "... with its own output"
out=$("$RF" audit verify --state-dir "$RF_STATE" 2>&1)
is "$?" 0 "the audit chain verifies ($out)"

# ---- "as UID REQUEST" (acting for another uid) is for root peers only ------------------------
if is_root; then
	rf_mktemp /tmp
	AS_D=$REPLY
	chmod 0755 "$AS_D"
	mkdir "$AS_D/ws" "$AS_D/state"
	chown 65534:65534 "$AS_D/ws" "$AS_D/state"
	cp "$RF_BIN" "$AS_D/ringfence" && chmod 0755 "$AS_D/ringfence"
	(cd "$AS_D/ws" && exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		env HOME=/nonexistent "$AS_D/ringfence" run --state-dir "$AS_D/state" --agent asu -- \
		/bin/sh -c "touch '$AS_D/ws/ready'; while [ ! -e '$AS_D/ws/stop' ]; do sleep 0.05; done") \
		>/dev/null 2>"$AS_D/err" &
	AS_PID=$!
	register_pid "$AS_PID"
	if wait_for "$AS_D/ws/ready"; then
		ASR=$(ls "$AS_D/state/runs" | head -n 1)
		send() { # send WHO REQUEST: one request to the run's control socket, the reply
			local -a pre=()
			[ "$1" = user ] && pre=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
			"${pre[@]}" /usr/bin/python3 -c "import socket,sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.send(sys.argv[2].encode()); print(s.recv(1024).decode())" \
				"$AS_D/state/runs/$ASR/control.sock" "$2" 2>&1
		}
		like "$(send user 'as 0 status')" '^err permission denied: acting for another uid is for root peers' \
			"the run's own uid (not root) may not act for another uid: 'as 0 status' refused"
		like "$(send user 'as 0 kill')" '^err permission denied' "... nor 'as 0 kill'"
		like "$(send user 'status')" '^ok running' "control: its own plain status is answered"
		like "$(send root 'as 65534 status')" '^ok running' "control: root may act for another uid"
	else
		not_ok "a rootless run for the 'as' checks starts" "$(cat "$AS_D/err")"
	fi
	touch "$AS_D/ws/stop"
	wait "$AS_PID" 2>/dev/null
else
	for _ in 1 2 3 4; do skip "'as UID' from a non-root peer" "needs root (a second uid)"; done
fi

done_testing
