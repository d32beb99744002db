#!/usr/bin/env bash
# audit.sh — the audit trail of `ringfence run` (issue 4, first part).
#
# Asserts: every run leaves run.start and run.exit, with its own run id and
# identity, in the state dir's log, and `ringfence audit verify` passes;
# `audit --run ID --json` finds exactly that run's records; tampering with a
# record (a flipped byte) makes verify fail naming the seq; a truncated tail
# is caught with a saved head (`audit head`) and not without, and verify then
# says how far it checked and how to anchor a head; the log lives
# only in the state dir (not inside the run); a value passed with --env never
# reaches the log; a run whose run.start cannot be written (a full disk, in a
# private mount namespace of this test) is refused with 125 and the command
# did not run; 20 runs at once share one chain that verifies, each with its
# start and exit; a limit kill is recorded with its status and reason; the
# wake-loop breaker refuses unknown triggers, over-long causal chains and
# bursts per (agent, task), and records run.refused.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

LOG="$RF_STATE/audit"
seg() { ls "$LOG"/audit-*.jsonl 2>/dev/null | sort | tail -n 1; }

rf_run --agent audit-agent --on-behalf-of alice@example.org --task T-42 --env SECRETISH=hunter2-not-logged -- \
	/bin/sh -c 'echo "$RINGFENCE_RUN_ID"'
is "$RF_RC" 0 "a run: exit 0"
id=$(first_line "$RF_OUT")
like "$id" '^[0-9a-f]{8}-[0-9a-f]{4}-7' "the run printed its id"
check "the audit log exists in the state dir" test -n "$(seg)"
n_start=$(grep -c "\"event\":\"run.start\".*\"run\":\"$id\"" "$LOG"/audit-*.jsonl)
n_exit=$(grep -c "\"event\":\"run.exit\".*\"run\":\"$id\"" "$LOG"/audit-*.jsonl)
is "$n_start:$n_exit" "1:1" "one run.start and one run.exit for the run"
start=$(grep -h "\"event\":\"run.start\".*\"run\":\"$id\"" "$LOG"/audit-*.jsonl)
like "$start" '"agent":"audit-agent"' "run.start names the agent"
like "$start" '"on_behalf_of":"alice@example.org"' "... the principal"
like "$start" '"task":"T-42"' "... the task"
like "$start" '"started_by":"uid:' "... who started it"
like "$start" '"policy_digest":"[0-9a-f]{64}"' "... the policy digest"
like "$start" '"layers":"landlock_abi=[0-9]+ cgroup=' "... the layers applied"
unlike "$(cat "$LOG"/audit-*.jsonl)" 'hunter2-not-logged' "a value passed with --env never reaches the log"

"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "audit verify: the log is intact"
out=$("$RF_BIN" audit --state-dir "$RF_STATE" --run "$id" --json)
is "$(printf '%s\n' "$out" | grep -c '')" 2 "audit --run ID --json: exactly the run's two records"

# the log is not reachable from inside a run
rf_probe ls "$LOG"
is "$RF_OUT" "errno=ENOENT" "inside a run the audit log does not exist (ENOENT)"

# a saved head, then more records, then a truncated tail
"$RF_BIN" audit head --state-dir "$RF_STATE" >"$WS.head"
rf_run -- /bin/true
rf_run -- /bin/true
out=$("$RF_BIN" audit verify --state-dir "$RF_STATE" --head "$WS.head" 2>&1)
is "$?" 0 "verify with a saved head: the log reaches it"
like "$out" 'signed checkpoints, the last at seq [0-9]+, reaches the saved head \(seq [0-9]+\)' \
	"... naming the last signed checkpoint and the head's seq ($out)"
s=$(seg)
cp "$s" "$WS.seg"
head -n 2 "$WS.seg" >"$s"
out=$("$RF_BIN" audit verify --state-dir "$RF_STATE" 2>&1)
is "$?" 0 "a truncated tail passes without a saved head (why heads are anchored off-host)"
like "$out" 'records 1\.\.2 \(last seq 2,' "... and verify says how far it checked: records 1..2 ($out)"
unlike "$out" 'audit log intact' "... without calling the log intact"
like "$out" 'not checked: records cut from the end' "... it says truncation of the tail is not seen without a head"
like "$out" 'ringfence audit head > head\.json.*ringfence audit verify --head head\.json' "... and how to anchor one"
err=$("$RF_BIN" audit verify --state-dir "$RF_STATE" --head "$WS.head" 2>&1 >/dev/null)
is "$?" 1 "with the saved head, verify of the truncated log exits 1"
like "$err" 'truncated before seq [0-9]+ \(log ends at seq 2\)' "... naming the truncation ($err)"
cp "$WS.seg" "$s"

# a flipped byte in a middle record
line2=$(sed -n 2p "$s")
sed -i '2s/"run.exit"/"run.exiT"/' "$s"
err=$("$RF_BIN" audit verify --state-dir "$RF_STATE" 2>&1 >/dev/null)
rc=$?
is "$rc" 1 "a modified record: verify exits 1"
like "$err" 'seq 2' "... naming the first bad seq ($err)"
cp "$WS.seg" "$s"
[ -n "$line2" ] || true
"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "restored: intact again"

# 20 runs at once share one chain
pids=()
for i in $(seq 1 20); do
	"$RF_BIN" run --state-dir "$RF_STATE" -w "$WS" -- /bin/true >/dev/null 2>"$WS.par.$i" &
	pids+=($!)
done
fails=0 why=""
for i in $(seq 1 20); do
	wait "${pids[$((i - 1))]}" || { fails=$((fails + 1)); why="$why $(grep -v 'note:' "$WS.par.$i")"; }
	rm -f "$WS.par.$i"
done
if [ "$fails" = 0 ]; then ok "20 runs at once: all exit 0"; else not_ok "20 runs at once: all exit 0" "$fails failed:$why"; fi
"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "... and the shared chain verifies"
starts=$(grep -h '"event":"run.start"' "$LOG"/audit-*.jsonl | grep -o '"run":"[^"]*"' | sort -u | wc -l)
exits=$(grep -h '"event":"run.exit"' "$LOG"/audit-*.jsonl | grep -o '"run":"[^"]*"' | sort -u | wc -l)
is "$starts:$exits" "$starts:$starts" "... every run has both its start and its exit ($starts runs)"

# a limit kill is recorded with its status and reason (where cgroups hold pids)
if is_root; then
	rf_run --pids 16 -- /bin/sh -c 'echo "$RINGFENCE_RUN_ID"; b() { b | b & }; b; sleep 10'
	lid=$(first_line "$RF_OUT")
	if [ "$RF_RC" = 137 ]; then
		exitrec=$(grep -h "\"event\":\"run.exit\".*\"run\":\"$lid\"" "$LOG"/audit-*.jsonl)
		like "$exitrec" '"status":137' "a limit kill: run.exit records status 137"
		like "$exitrec" 'pids limit' "... and the limit that fired"
	else
		skip "limit kill record" "no pids cgroup here (exit $RF_RC)"
	fi
fi

# ---- the wake-loop breaker -----------------------------------------------------------
# --triggered-by must name a run of this instance's log; a causal chain
# longer than 8 runs and a burst of more than 30 runs of one (agent, task)
# in 10 minutes are refused before anything runs, and recorded.
rm -f "$WS/ran"
rf_run --triggered-by 01a22c00-0000-7000-8000-000000000000 -- touch "$WS/ran"
is "$RF_RC" 125 "an unknown --triggered-by run id is refused (125)"
like "$RF_ERR" 'no such run' "... stderr says the trigger is unknown"
check "... and the command did not run" test ! -e "$WS/ran"
prev=""
chain_ok=0
for i in $(seq 1 8); do
	if [ -n "$prev" ]; then
		rf_run --agent looper --triggered-by "$prev" -- /bin/sh -c 'echo "$RINGFENCE_RUN_ID"'
	else
		rf_run --agent looper -- /bin/sh -c 'echo "$RINGFENCE_RUN_ID"'
	fi
	[ "$RF_RC" = 0 ] && chain_ok=$((chain_ok + 1))
	prev=$(first_line "$RF_OUT")
done
is "$chain_ok" 8 "a causal chain of 8 runs is allowed"
rf_run --agent looper --triggered-by "$prev" -- touch "$WS/ran"
is "$RF_RC" 125 "the 9th run of the chain is refused (125)"
like "$RF_ERR" 'wake loop: the causal chain exceeds 8' "... stderr names the loop"
check "... and the command did not run" test ! -e "$WS/ran"
like "$("$RF_BIN" audit --state-dir "$RF_STATE" --event run.refused --json | tail -n 1)" \
	'"detail":"wake loop: the causal chain exceeds 8 runs \(' "... run.refused records the reason and the chain"
first=$("$RF_BIN" audit --state-dir "$RF_STATE" --agent looper --event run.start --json | head -n 1 | grep -o '"run":"[^"]*"' | cut -d'"' -f4)
n_chain=$("$RF_BIN" audit --state-dir "$RF_STATE" --chain "$first" --event run.start --json | grep -c '')
is "$n_chain" 8 "audit --chain RUN: the run and every run it caused (8)"
burst_ok=0
for i in $(seq 1 30); do
	rf_run --agent burster --task T-burst -- /bin/true
	[ "$RF_RC" = 0 ] && burst_ok=$((burst_ok + 1))
done
is "$burst_ok" 30 "30 runs of one (agent, task) within the window are allowed"
rf_run --agent burster --task T-burst -- touch "$WS/ran"
is "$RF_RC" 125 "the 31st is refused (125)"
like "$RF_ERR" 'wake loop: 30 runs of agent burster for task T-burst' "... stderr names the burst"
check "... and the command did not run" test ! -e "$WS/ran"
rf_run --agent burster --task T-other -- /bin/true
is "$RF_RC" 0 "another task of the same agent still runs"
"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "the log with the refusals verifies"

# ---- the run's identity token ---------------------------------------------------------
# /run/ringfence/identity inside the run: a PASETO v4.public token; valid
# while the run lives, rejected after it ended, tampered, or under another
# instance's key.
rf_start --agent tokener --task T-tok -- /bin/sh -c "cat /run/ringfence/identity >'$WS/tok'; while [ ! -e '$WS/tok.stop' ]; do sleep 0.05; done"
for _ in $(seq 1 100); do [ -s "$WS/tok" ] && break; sleep 0.05; done
tok=$(cat "$WS/tok" 2>/dev/null)
like "$tok" '^v4\.public\.' "the run reads its identity token at /run/ringfence/identity"
out=$("$RF_BIN" identity verify --state-dir "$RF_STATE" "$tok" 2>&1)
like "$out" '^valid: run=.* agent=tokener .*task=T-tok' "identity verify: valid while the run lives ($out)"
c=${tok:40:1}
[ "$c" = Q ] && r=R || r=Q
"$RF_BIN" identity verify --state-dir "$RF_STATE" "${tok:0:40}$r${tok:41}" >/dev/null 2>&1
is "$?" 1 "a tampered token is rejected"
other=$WS.other-state
mkdir -p "$other"
"$RF_BIN" run --state-dir "$other" -w "$WS" -- /bin/true >/dev/null 2>&1
err=$("$RF_BIN" identity verify --state-dir "$other" "$tok" 2>&1 >/dev/null)
like "$err" 'does not verify' "another instance's key rejects it"
touch "$WS/tok.stop"
rf_wait
err=$("$RF_BIN" identity verify --state-dir "$RF_STATE" "$tok" 2>&1 >/dev/null)
like "$err" 'has ended' "after the run ended the token is rejected"
like "$(cat "$RF_STATE/audit/jwks.json")" '"kty":"OKP","crv":"Ed25519"' "the public key is published as JWKS in the state dir"
rm -rf "$other" "$WS/tok" "$WS/tok.stop"

# --follow streams records as they land
"$RF_BIN" audit --state-dir "$RF_STATE" --follow --json >"$WS.follow" 2>/dev/null &
fpid=$!
for _ in $(seq 1 50); do [ -e "$WS.follow" ] && break; sleep 0.05; done
sleep 0.3
rf_run -- /bin/sh -c 'echo "$RINGFENCE_RUN_ID"'
fid=$(first_line "$RF_OUT")
for _ in $(seq 1 50); do grep -q "\"run\":\"$fid\"" "$WS.follow" && break; sleep 0.1; done
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
like "$(cat "$WS.follow")" "\"event\":\"run.start\".*\"run\":\"$fid\"" "audit --follow: a new run's record is streamed"
rm -f "$WS.follow"

# global options before the command: ringfence --state-dir DIR audit ...
out=$("$RF_BIN" --state-dir "$RF_STATE" audit --json 2>&1)
rc=$?
is "$rc" 0 "ringfence --state-dir DIR audit: the option before the command is accepted"
like "$out" '"event":"run.start"' "... and that state dir's log is read"
out=$("$RF_BIN" --state-dir="$RF_STATE" audit verify 2>&1)
is "$?" 0 "ringfence --state-dir=DIR audit verify: the = form too"
out=$("$RF_BIN" --state-dir "$WS.none" audit --state-dir "$RF_STATE" --json 2>&1)
like "$out" '"event":"run.start"' "... the command's own --state-dir wins over the global one"
check "... and the global one made no directory" test ! -e "$WS.none"
out=$("$RF_BIN" --state-dir 2>&1)
is "$?" 2 "ringfence --state-dir with no directory: usage error (2)"
like "$out" 'state-dir: a directory' "... saying what is missing"

# full disk: run.start cannot be written -> 125, the command does not run
if is_root && command -v unshare >/dev/null; then
	mnt=$WS.full
	mkdir -p "$mnt"
	rm -f "$WS/ran"
	out=$(unshare -m sh -c "mount --make-rprivate / && mount -t tmpfs -o size=64k tmpfs '$mnt' &&
		mkdir '$mnt/st' && dd if=/dev/zero of='$mnt/fill' bs=4k 2>/dev/null;
		'$RF_BIN' run --state-dir '$mnt/st' -w '$WS' -- touch '$WS/ran'; echo rc=\$?" 2>&1)
	like "$out" 'rc=125' "full disk: the run is refused (125)"
	like "$out" 'cannot write the audit log' "... stderr says the audit log could not be written"
	check "... and the command did not run" test ! -e "$WS/ran"
	rmdir "$mnt" 2>/dev/null
else
	skip "full disk" "needs root for a private tmpfs"
fi

done_testing
