#!/usr/bin/env bash
# daemon_reserve.sh — the reserve the daemon keeps for root on its state
# dir's file system (issue 13: one uid filling that disk got root's runs
# refused with 125, their audit records failing to be written).
#
# The state dir is a 32 MiB tmpfs mounted here (a name of this run's own,
# unmounted at exit by the path recorded when it was mounted), the reserve
# (ceiling.state_reserve) 8 MiB, and the disk filled by the test itself
# (fallocate, as root). Asserts: with less than the reserve free, a start
# by uid 65534 is refused (403 naming ceiling.state_reserve) while root's
# start still goes ahead (201, and its run.start is in the audit log);
# with the filler gone, uid 65534's start is served again (201, the
# control); with a little more than the reserve free, uid 65534's run
# that prints 2 MB has its log capped to what is left above the reserve
# (its default log_bytes, 4 MiB, would eat into it), and the reserve is
# still free after it.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (a second uid, a tmpfs of its own)"
command -v curl >/dev/null || skip_all "needs curl"
command -v fallocate >/dev/null || skip_all "needs fallocate"
new_workspace
RF=$RF_BIN
RESERVE=$((8 << 20))

# Stop the daemon (its runs die with it) before unmounting the tmpfs it
# writes to, then lib.sh's cleanup (which would only empty a mounted
# directory). Only the path this script mounted is ever unmounted.
MOUNTED=""
DPID=""
# shellcheck disable=SC2317 # (called from the EXIT trap)
reserve_cleanup() {
	[ "$BASHPID" = "$$" ] || return 0
	if [ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null; then
		for _ in $(seq 1 300); do
			kill -0 "$DPID" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	if [ -n "$MOUNTED" ]; then
		# runs still closing their files keep it busy for a moment: detach it then
		umount "$MOUNTED" 2>/dev/null || umount -l "$MOUNTED" ||
			printf '# cleanup: cannot unmount %s\n' "$MOUNTED"
	fi
	_rf_cleanup
}
trap reserve_cleanup EXIT

rf_mktemp /tmp
BASE=$REPLY
STATE=$BASE/state
mkdir "$STATE"
if ! mount -t tmpfs -o size=32m,mode=0700 "rft$(printf '%x' $$)-reserve-$RANDOM" "$STATE"; then
	skip_all "cannot mount a tmpfs here"
fi
MOUNTED=$STATE
records() { cat "$STATE"/audit/audit-*.jsonl; }
# bytes free on the state dir's file system (what an unprivileged writer may use)
free_bytes() { stat -f -c '%a %S' "$STATE" | awk '{ printf "%d\n", $1 * $2 }'; }

rf_mktemp /tmp
SOCKDIR=$REPLY
chmod 0755 "$SOCKDIR"
SOCK=$SOCKDIR/control.sock
rf_mktemp /tmp
NBWS=$REPLY
chown 65534:65534 "$NBWS"
chmod 0755 "$NBWS"
cat >"$WS.conf" <<JSON
{"version": 1, "socket": "$SOCK", "socket_mode": "0666",
 "grants": [{"uid": 65534, "agents": ["nb"], "actions": ["start-run", "get-run"]}],
 "ceiling": {"state_reserve": "8M"}}
JSON
chmod 0644 "$WS.conf"

"$RF" daemon --state-dir "$STATE" --config "$WS.conf" 2>>"$WS.daemon.err" &
DPID=$!
register_pid "$DPID"
for _ in $(seq 1 600); do
	curl -s -m 1 --unix-socket "$SOCK" http://ringfence/v1/runs >/dev/null 2>&1 && break
	sleep 0.05
done
check "the daemon serves a state dir on a 32 MiB tmpfs" test -S "$SOCK"

api() { # api METHOD PATH [BODY]: status in API_S, body in API_B
	local out
	out=$(curl -s -m 20 -w '\n%{http_code}' --unix-socket "$SOCK" -X "$1" \
		${3:+-H 'Content-Type: application/json' -d "$3"} "http://ringfence$2")
	API_S=$(tail -n 1 <<<"$out")
	API_B=$(sed '$d' <<<"$out")
}
api_nb() { # the same, as uid 65534
	local out
	out=$(as_user curl -s -m 20 -w '\n%{http_code}' --unix-socket "$SOCK" -X "$1" \
		${3:+-H 'Content-Type: application/json' -d "$3"} "http://ringfence$2")
	API_S=$(tail -n 1 <<<"$out")
	API_B=$(sed '$d' <<<"$out")
}
run_of() { grep -o '"run":"[^"]*"' <<<"$1" | head -n 1 | cut -d'"' -f4; }
# until RUN's run.exit is recorded (its log is whole by then), bounded
wait_exit() {
	for _ in $(seq 1 1200); do
		records 2>/dev/null | grep -q "\"event\":\"run.exit\".*\"run\":\"$1\"" && return 0
		sleep 0.05
	done
	return 1
}
startrec() { records | grep "\"run\":\"$1\"" | grep '"event":"run.start"'; }
# until the daemon has no run going (its runs reaped: a run of uid 65534
# still going reserves its log cap against the room above the reserve)
# shellcheck disable=SC2317 # (called through check)
wait_idle() {
	local out
	for _ in $(seq 1 1200); do
		out=$(curl -s -m 20 --unix-socket "$SOCK" http://ringfence/v1/daemon)
		grep -q '"quiescent":true' <<<"$out" && grep -q '"runs":0[,}]' <<<"$out" && return 0
		sleep 0.05
	done
	return 1
}

# ---- the disk filled to below the reserve -------------------------------------------------------
F=$(free_bytes)
fallocate -l $((F - RESERVE / 2)) "$STATE/filler"
F1=$(free_bytes)
check "the state dir's file system filled to below the reserve ($F1 bytes free, reserve $RESERVE)" \
	test "$F1" -lt "$RESERVE" -a "$F1" -gt $((RESERVE / 4))
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\"}"
is "$API_S" 403 "uid 65534's start with less than the reserve free: 403"
like "$API_B" "ceiling\\.state_reserve" "... naming the reserve"
like "$API_B" "$RESERVE are kept for root" "... and its size"
is "$(records | grep -c '"event":"control.start".*"actor_uid":65534')" 0 "... and no run of uid 65534 was started"
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"echo root-ran\"],\"agent\":\"nb\",\"workspace\":\"$WS\"}"
is "$API_S" 201 "root's start still goes ahead (201)"
RR=$(run_of "$API_B")
wait_exit "$RR"
like "$(startrec "$RR")" '"event":"run.start"' "... its run.start is in the audit log"
like "$(records | grep "\"run\":\"$RR\"" | grep '"event":"run.exit"')" '"status":0[,}]' "... and its run.exit, status 0"
like "$(cat "$STATE/logs/$RR.log" 2>/dev/null)" "root-ran" "... and its output in its log"

# ---- the control: the filler removed -----------------------------------------------------------
rm -f "$STATE/filler"
api_nb POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"echo nb-ran\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\"}"
is "$API_S" 201 "with the filler removed, uid 65534's start: 201"
RN=$(run_of "$API_B")
wait_exit "$RN"
like "$(startrec "$RN")" '"event":"run.start"' "... its run.start is in the audit log"
like "$(cat "$STATE/logs/$RN.log" 2>/dev/null)" "nb-ran" "... and its output in its log"

# ---- a log capped above the reserve -----------------------------------------------------------
ROOM=$((256 << 10))
check "the daemon has no run going" wait_idle
F=$(free_bytes)
fallocate -l $((F - RESERVE - ROOM)) "$STATE/filler"
big="head -c 2000000 /dev/zero | tr '\\\\0' x"
api_nb POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"$big\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\"}"
is "$API_S" 201 "with 256 KiB free above the reserve, uid 65534's run that prints 2 MB starts (201)"
RB=$(run_of "$API_B")
wait_exit "$RB"
sz=$(stat -c %s "$STATE/logs/$RB.log" 2>/dev/null)
check "... its log is capped to the room above the reserve ($sz bytes, at most $ROOM)" \
	test "${sz:-0}" -gt $((ROOM / 2)) -a "${sz:-0}" -le $((ROOM + 256))
like "$(tail -c 200 "$STATE/logs/$RB.log" 2>/dev/null)" "output truncated: the log reached its --log-max" \
	"... saying so"
F2=$(free_bytes)
check "... and the reserve is still free after it ($F2 bytes; the run's records take a few KiB)" \
	test "$F2" -ge $((RESERVE - (64 << 10)))

done_testing
