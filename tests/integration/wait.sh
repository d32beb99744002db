#!/usr/bin/env bash
# wait.sh — `ringfence wait RUN` reports how a detached run ended (issue 13).
#
# Asserts: for 25 detached runs, each holding a secret grant (whose revoke
# records are written as the run ends) and each exiting with its own
# status, `ringfence wait` right after the start exits with exactly that
# status — never "no record of how run … ended" (the supervisor left the
# registry before its run.exit was in the log: wait saw the run gone and
# read the log too early); the same for runs waited on from their run.start,
# before they register (as a daemon run is). Controls: a run exiting 0 waits
# to 0; an id with no record at all exits 1 at once.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

id=$(VAR=v-control "$RF_BIN" run --state-dir "$RF_STATE" -w "$WS" --detach -- /bin/true 2>"$WS.err")
like "$id" '^[0-9a-f]{8}-' "control: a detached run prints its id ($(cat "$WS.err"))"
"$RF_BIN" wait --state-dir "$RF_STATE" "$id" 2>"$WS.err"
is "$?" 0 "control: wait on a run exiting 0 exits 0 ($(cat "$WS.err"))"

wrong=0 why=""
for i in $(seq 1 25); do
	st=$((100 + i))
	id=$(VAR=v-$i "$RF_BIN" run --state-dir "$RF_STATE" -w "$WS" --detach --secret X=env:VAR \
		-- /bin/sh -c "exit $st" 2>"$WS.err")
	if [ -z "$id" ]; then
		wrong=$((wrong + 1))
		why="$why [run $i did not start: $(cat "$WS.err")]"
		continue
	fi
	"$RF_BIN" wait --state-dir "$RF_STATE" "$id" 2>"$WS.err"
	rc=$?
	if [ "$rc" != "$st" ]; then
		wrong=$((wrong + 1))
		why="$why [run $i: wait exited $rc, want $st: $(cat "$WS.err")]"
	fi
done
is "$wrong" 0 "25 detached runs with a secret grant: wait reports each one's own status"
[ "$wrong" = 0 ] || diag "$why"
rm -f "$WS.err"

# A run whose start is recorded but that has not registered yet (the daemon
# answers a start before its run registers; here `run --run-id` in the
# background, waited on as soon as its run.start is in the log): wait waits
# for it instead of saying there is no record.
wrong=0 why=""
for i in $(seq 1 10); do
	st=$((60 + i))
	rid=$(printf '%08x-%04x-7%03x-8%03x-%012x' "$$" "$i" "$((RANDOM % 4096))" "$((RANDOM % 4096))" "$(date +%s%N | cut -c1-12)")
	"$RF_BIN" run --state-dir "$RF_STATE" -w "$WS" --run-id "$rid" -- /bin/sh -c "exit $st" \
		>/dev/null 2>&1 &
	bg=$!
	# synchronise on the record itself, not on time
	for _ in $(seq 1 2000); do
		grep -qs "\"event\":\"run.start\".*\"run\":\"$rid\"" "$RF_STATE"/audit/audit-*.jsonl && break
		kill -0 "$bg" 2>/dev/null || break
	done
	"$RF_BIN" wait --state-dir "$RF_STATE" "$rid" 2>"$WS.err"
	rc=$?
	wait "$bg"
	if [ "$rc" != "$st" ]; then
		wrong=$((wrong + 1))
		why="$why [run $i: wait exited $rc, want $st: $(cat "$WS.err")]"
	fi
done
is "$wrong" 0 "10 runs waited on from their run.start, before they register: each one's own status"
[ "$wrong" = 0 ] || diag "$why"
rm -f "$WS.err"

"$RF_BIN" wait --state-dir "$RF_STATE" 01a20000-0000-7000-8000-000000000000 2>"$WS.err"
is "$?" 1 "control: wait on a run id with no record at all exits 1"
like "$(cat "$WS.err")" 'no record of how run 01a20000-0000-7000-8000-000000000000 ended' "... saying so"
rm -f "$WS.err"

"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "the log of those runs verifies"

done_testing
