#!/usr/bin/env bash
# wait.sh — `ringfence wait RUN` reports how a detached run ended (issue 13).
#
# Asserts: for 25 detached runs, each holding a secret grant (whose revoke
# records are written as the run ends) and each exiting with its own
# status, `ringfence wait` right after the start exits with exactly that
# status — never "no record of how run … ended" (the supervisor left the
# registry before its run.exit was in the log: wait saw the run gone and
# read the log too early). A control: a run exiting 0 waits to 0.
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

"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "the log of those runs verifies"

done_testing
