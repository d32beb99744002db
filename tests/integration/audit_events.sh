#!/usr/bin/env bash
# audit_events.sh — a run's own events, its audit budget, and the
# wake-loop breaker's configuration (issue 4, second part).
#
# Asserts: the run's resolver (127.0.0.1:53 in its network namespace, a
# socket its supervisor serves) answers every query REFUSED at once and
# records dns.refused, coalesced per name into one "N more refused queries
# for NAME" summary; a run flooding the log with distinct names is
# throttled by its own budget (an audit.throttled record; its
# audit.budget totals add up exactly to what it sent and to the records in
# the log) while a second run, at the same time, still gets its events
# recorded; the chain verifies. The loop limits come from the policy
# (audit.max_chain_depth, audit.max_runs_per_window); --triggered-by
# accepts a run identity token of this instance (and refuses a tampered
# one or another instance's, recorded as run.refused reason=trigger);
# `audit --chain` shows a run's ancestors and descendants; --audience sets
# the token's aud.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

LOG="$RF_STATE/audit"
records() { cat "$LOG"/audit-*.jsonl; }
run_id_of() { first_line "$1"; }

# ---- the DNS stub --------------------------------------------------------------------
rf_run -- /bin/sh -c "echo \"\$RINGFENCE_RUN_ID\"; '$PROBE' dns once.example 1; '$PROBE' dns rep.example 7"
is "$RF_RC" 0 "a run that resolves names: exit 0"
id=$(run_id_of "$RF_OUT")
is "$(printf '%s\n' "$RF_OUT" | sed -n 2p)" "ok rcode=REFUSED n=1" \
	"the run's resolver answers REFUSED (no name resolution inside a run)"
is "$(printf '%s\n' "$RF_OUT" | sed -n 3p)" "ok rcode=REFUSED n=7" "... every time"
n=$(records | grep "\"run\":\"$id\"" | grep '"event":"dns.refused"' | grep -c '"name":"once.example"')
is "$n" 1 "dns.refused records the name once.example"
n=$(records | grep "\"run\":\"$id\"" | grep '"event":"dns.refused"' | grep -c '"name":"rep.example"')
is "$n" 1 "7 queries for rep.example: one record..."
sum=$(records | grep "\"run\":\"$id\"" | grep '"coalesced":true' | grep '"key":"rep.example"')
like "$sum" '"count":6' "... and one summary counting the 6 repeats"
like "$sum" '"summary":"6 more refused queries for rep.example"' "... saying so"
# control: outside a run the probe's query does not get this answer (nothing
# of ours listens on the host's 127.0.0.1:53, or a real resolver answers)
out=$("$PROBE" dns once.example 1 2>&1)
isnt "$out" "ok rcode=REFUSED n=1" "control: on the host the same query is not answered by the run's stub ($out)"

# ---- the budget: a flooding run is throttled, another run is not -----------------------
cat >"$WS.budget.json" <<'JSON'
{"version": 1, "audit": {"event_rate": 1, "event_burst": 40}}
JSON
rm -f "$WS/flood.done" "$WS/flood.stop"
rf_start -p "$WS.budget.json" --agent flooder -- /bin/sh -c \
	"echo \"\$RINGFENCE_RUN_ID\"; '$PROBE' dns flood.example 300 distinct; touch '$WS/flood.done';
	 while [ ! -e '$WS/flood.stop' ]; do sleep 0.05; done"
A_PID=$RF_PID A_OUTF=$_RF_OUTF A_ERRF=$_RF_ERRF
for _ in $(seq 1 1200); do [ -e "$WS/flood.done" ] && break; sleep 0.05; done
check "the flooding run sent its 300 queries" test -e "$WS/flood.done"
# a second run while the first one is throttled and still running
rf_run --agent bystander -- /bin/sh -c "echo \"\$RINGFENCE_RUN_ID\"; '$PROBE' dns bystander.example 1"
is "$RF_RC" 0 "a second run at the same time: exit 0"
bid=$(run_id_of "$RF_OUT")
n=$(records | grep "\"run\":\"$bid\"" | grep -c '"name":"bystander.example"')
is "$n" 1 "... its dns.refused is recorded while the flooder is throttled"
touch "$WS/flood.stop"
RF_PID=$A_PID _RF_OUTF=$A_OUTF _RF_ERRF=$A_ERRF
rf_wait
is "$RF_RC" 0 "the flooding run itself still ran to its end (exit 0)"
like "$(sed -n 2p "$A_OUTF")" '^ok rcode=REFUSED n=300$' "... and every one of its queries was answered REFUSED"
aid=$(run_id_of "$RF_OUT")
thr=$(records | grep "\"run\":\"$aid\"" | grep -c '"event":"audit.throttled"')
ok_if=$([ "$thr" -ge 1 ] && echo 1 || echo 0)
is "$ok_if" 1 "the flooding run was throttled: audit.throttled recorded ($thr)"
written=$(records | grep "\"run\":\"$aid\"" | grep '"event":"dns.refused"' | grep -vc '"coalesced":true')
budget=$(records | grep "\"run\":\"$aid\"" | grep '"event":"audit.budget"')
like "$budget" '"refused":[1-9]' "... its audit.budget counts refused events"
w=$(printf '%s' "$budget" | grep -o '"written":[0-9]*' | cut -d: -f2)
r=$(printf '%s' "$budget" | grep -o '"refused":[0-9]*' | cut -d: -f2)
c=$(printf '%s' "$budget" | grep -o '"coalesced":[0-9]*' | cut -d: -f2)
is "$((w + r + c))" 300 "... written + refused + coalesced = the 300 queries it sent"
is "$written" "$w" "... and the log holds exactly the $w records it was allowed"
[ "$w" -lt 300 ] && lt=1 || lt=0
is "$lt" 1 "... fewer than it sent ($w < 300)"
"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "the log verifies after the flood"

# ---- loop limits from the policy ------------------------------------------------------
cat >"$WS.loop.json" <<'JSON'
{"version": 1, "audit": {"max_chain_depth": 2, "max_runs_per_window": 3, "loop_window": "10m"}}
JSON
rm -f "$WS/ran"
rf_run -p "$WS.loop.json" --agent chainer -- /bin/sh -c 'echo "$RINGFENCE_RUN_ID"'
r1=$(run_id_of "$RF_OUT")
rf_run -p "$WS.loop.json" --agent chainer --triggered-by "$r1" -- /bin/sh -c 'echo "$RINGFENCE_RUN_ID"'
is "$RF_RC" 0 "audit.max_chain_depth 2: a run caused by a run is allowed"
r2=$(run_id_of "$RF_OUT")
rf_run -p "$WS.loop.json" --agent chainer --triggered-by "$r2" -- touch "$WS/ran"
is "$RF_RC" 125 "... the third run of the chain is refused (125)"
like "$RF_ERR" "exceeds 2 runs \\($r2 <- $r1" "... naming the chain"
check "... and the command did not run" test ! -e "$WS/ran"
ref=$(records | grep '"event":"run.refused"' | tail -n 1)
like "$ref" '"reason":"loop"' "run.refused reason=loop"
like "$ref" "\"detail\":\"wake loop: the causal chain exceeds 2 runs \\($r2 <- $r1" "... with the chain"
for i in 1 2 3; do rf_run -p "$WS.loop.json" --agent burst3 --task T3 -- /bin/true; done
is "$RF_RC" 0 "audit.max_runs_per_window 3: three runs of (burst3, T3) are allowed"
rf_run -p "$WS.loop.json" --agent burst3 --task T3 -- touch "$WS/ran"
is "$RF_RC" 125 "... the fourth is refused (125)"
like "$RF_ERR" '3 runs of agent burst3 for task T3 in the last 600 s \(limit 3\)' "... saying so"
check "... and the command did not run" test ! -e "$WS/ran"

# ---- a run identity token as the trigger ----------------------------------------------
rf_start --agent tokener --audience platform.example -- /bin/sh -c \
	"cat /run/ringfence/identity >'$WS/tok'; echo \"\$RINGFENCE_RUN_ID\"; while [ ! -e '$WS/tok.stop' ]; do sleep 0.05; done"
T_PID=$RF_PID T_OUTF=$_RF_OUTF T_ERRF=$_RF_ERRF
for _ in $(seq 1 1200); do [ -s "$WS/tok" ] && break; sleep 0.05; done
tok=$(cat "$WS/tok" 2>/dev/null)
like "$("$RF_BIN" identity verify --state-dir "$RF_STATE" "$tok" 2>&1)" 'aud=platform.example' \
	"--audience sets the token's aud"
rf_run --agent tokener --triggered-by "$tok" -- /bin/sh -c 'echo "$RINGFENCE_RUN_ID"'
is "$RF_RC" 0 "--triggered-by TOKEN: a valid run identity token is accepted"
child=$(run_id_of "$RF_OUT")
touch "$WS/tok.stop"
RF_PID=$T_PID _RF_OUTF=$T_OUTF _RF_ERRF=$T_ERRF
rf_wait
parent=$(run_id_of "$RF_OUT")
like "$(records | grep '"event":"run.start"' | grep "\"run\":\"$child\"")" "\"triggered_by\":\"$parent\"" \
	"... and run.start records the token's run as triggered_by"
c=${tok:40:1}
[ "$c" = Q ] && x=R || x=Q
rf_run --agent tokener --triggered-by "${tok:0:40}$x${tok:41}" -- touch "$WS/ran"
is "$RF_RC" 125 "a tampered token as trigger is refused (125)"
like "$RF_ERR" 'not a valid run identity token of this instance' "... saying why"
check "... and the command did not run" test ! -e "$WS/ran"
like "$(records | grep '"event":"run.refused"' | tail -n 1)" '"reason":"trigger"' "... recorded as run.refused reason=trigger"
other=$WS.other-state
mkdir -p "$other"
"$RF_BIN" run --state-dir "$other" -w "$WS" -- /bin/true >/dev/null 2>&1
"$RF_BIN" run --state-dir "$other" -w "$WS" --triggered-by "$tok" -- touch "$WS/ran" >/dev/null 2>&1
is "$?" 125 "another instance refuses this instance's token as trigger (125)"
check "... and the command did not run" test ! -e "$WS/ran"
rm -rf "$other"

# ---- audit --chain: ancestors and descendants -----------------------------------------
chain=$("$RF_BIN" audit --state-dir "$RF_STATE" --chain "$r2" --event run.start --json | grep -o '"run":"[^"]*"' | cut -d'"' -f4 | tr '\n' ' ')
like "$chain" "$r1" "audit --chain R2 shows its ancestor R1"
like "$chain" "$r2" "... and R2 itself"
chain=$("$RF_BIN" audit --state-dir "$RF_STATE" --chain "$parent" --event run.start --json | grep -o '"run":"[^"]*"' | cut -d'"' -f4 | tr '\n' ' ')
like "$chain" "$child" "audit --chain PARENT shows the run its token triggered"
n=$("$RF_BIN" audit --state-dir "$RF_STATE" --chain "$parent" --agent chainer --event run.start --json | grep -c '')
is "$n" 0 "audit --chain PARENT --agent chainer: filters combine (none of that chain is chainer's)"
n=$("$RF_BIN" audit --state-dir "$RF_STATE" --chain "$parent" --agent tokener --event run.start --json | grep -c '')
is "$n" 2 "audit --chain PARENT --agent tokener: the chain's two runs"

rm -f "$WS.budget.json" "$WS.loop.json" "$WS/tok" "$WS/tok.stop" "$WS/flood.done" "$WS/flood.stop"
done_testing
