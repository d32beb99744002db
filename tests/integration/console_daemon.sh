#!/bin/bash
# tests/integration/console_daemon.sh — `ringfence console --daemon`: the
# daemon's fleet through its API, with the rights of the uid that started
# the console (issue 18).
#
# Asserted: uid 65534, whose grant lists runs of agent "watch" and reads
# their audit records but may not kill, sees the run root started (in the
# first HTML response and in /api/runs) and its timeline, is shown no
# kill, pause or grant button, and a kill it forges anyway (with its own
# session's valid CSRF token) is refused (403) with the run still running.
# Root's console shows the buttons, and its kill ends the run with run.kill
# in the audit trail naming uid 0 and the console as the reason. Given
# pause, resume, grant and block for agent "ops", uid 65534's console
# pauses, resumes, grants a host and blocks the agent through the daemon,
# each recorded with uid 65534 as the actor. Its "add to the agent's
# policy" is recorded by the daemon (console.proposal, actor_uid 65534); a
# forged rule that is no HOST:PORT is refused (400), and so is a proposal
# for a run of an agent its grants do not name (404, the console 403).
# A run's page shows its output through the daemon (GET /v1/runs/RUN/
# output), its bound secret masked, and its health page the daemon's
# verification of its log (GET /v1/audit/verify).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (a second uid)"
command -v curl >/dev/null || skip_all "needs curl"
new_workspace
require_isolation

rf_mktemp /tmp
TOP=$REPLY
chmod 0755 "$TOP"
SOCK=$TOP/control.sock
as_user_setup || bail_out "cannot prepare a second uid"
NBBIN=$_RF_USER_BIN
cat >"$TOP/daemon.json" <<JSON
{"version": 1, "socket": "$SOCK", "socket_mode": "0666",
 "grants": [{"uid": 65534, "agents": ["watch"], "actions": ["list-runs", "get-run", "audit"],
             "all_uids": true},
            {"uid": 65534, "agents": ["ops"],
             "actions": ["list-runs", "get-run", "audit", "pause", "resume", "grant", "block"],
             "all_uids": true}],
 "ceiling": {"allow_hosts": ["allowed.test:443", "denied.test:443"]},
 "secrets": {"sv": {"name": "SV", "deliver": "env", "from": "store:sv", "uids": [0]}}}
JSON
chmod 0644 "$TOP/daemon.json"
# (as_user_setup handed them to 65534: the daemon's are root's)
chown -R root:root "$RF_STATE" "$WS"
# a secret root's runs may bind: its value printed by a run is masked in
# the run's log, and so in the output its page shows through the daemon
SECRET=masked-$RANDOM$RANDOM$RANDOM
printf '%s' "$SECRET" | "$RF_BIN" secret set --state-dir "$RF_STATE" sv >"$TOP/secret.out" 2>&1 ||
	bail_out "cannot set the secret: $(cat "$TOP/secret.out")"
# daemon_up — this test's daemon started (DPID), its socket answering
daemon_up() {
	"$RF_BIN" daemon --state-dir "$RF_STATE" --config "$TOP/daemon.json" 2>>"$TOP/daemon.err" &
	DPID=$!
	register_pid "$DPID"
	for _ in $(seq 600); do
		curl -s -m 1 --unix-socket "$SOCK" http://ringfence/v1/runs >/dev/null 2>&1 && break
		sleep 0.05
	done
}
# api_run AGENT — a `sleep 300` run of AGENT started through the API as
# root, waited for until it runs; its id in REPLY
api_run() {
	local out
	out=$(curl -s -m 20 --unix-socket "$SOCK" -H 'Content-Type: application/json' -d \
		"{\"argv\": [\"/bin/sh\", \"-c\", \"sleep 300\"], \"agent\": \"$1\", \"workspace\": \"$WS\"}" \
		http://ringfence/v1/runs)
	REPLY=$(grep -o '"run":"[^"]*"' <<<"$out" | head -n 1 | cut -d'"' -f4)
	[ -n "$REPLY" ] || bail_out "the daemon started no run: $out $(cat "$TOP/daemon.err")"
	for _ in $(seq 600); do
		curl -s -m 5 --unix-socket "$SOCK" "http://ringfence/v1/runs/$REPLY" |
			grep -q '"state":"running"' && break
		sleep 0.05
	done
}
daemon_up
api_run watch
run=$REPLY

# console NAME RUNNER... — a console (as RUNNER, with the arguments in
# EXTRA), its URL in URL_NAME
EXTRA=()
console() {
	local name=$1 url="" i pid
	shift
	"$@" console --daemon --socket "$SOCK" "${EXTRA[@]}" --listen 127.0.0.1:0 >"$TOP/$name.out" \
		2>"$TOP/$name.err" </dev/null &
	pid=$!
	register_pid "$pid"
	for i in $(seq 200); do
		url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/login?token=[0-9a-f]*' "$TOP/$name.out" 2>/dev/null)
		[ -n "$url" ] && break
		sleep 0.05
	done
	[ -n "$url" ] || bail_out "console $name printed no URL: $(cat "$TOP/$name.err")"
	printf -v "URL_$name" '%s' "$url"
	printf -v "PID_$name" '%s' "$pid"
}
c() {
	CODE=$(curl -s -o "$TOP/body" -w '%{http_code}' --max-time 30 "$@")
	BODY=$(cat "$TOP/body")
}
# (setpriv, not the as_user function: a function in the background is a
# subshell whose pid is not the console's, and the console would outlive it)
console nb setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	env HOME=/nonexistent "$NBBIN"
console root "$RF_BIN"
NB=${URL_nb%%/login*}
RT=${URL_root%%/login*}

# uid 65534: sees, may not kill
c -c "$TOP/jar.nb" "$URL_nb"
is "$CODE" 303 "uid 65534 logs in to its console"
c -b "$TOP/jar.nb" "$NB/"
like "$BODY" "data-run=\"$run\"" "... the daemon's run its grant lists is in the first HTML response"
c -b "$TOP/jar.nb" "$NB/api/runs"
like "$BODY" "\"run\":\"$run\"" "... and in /api/runs"
c -b "$TOP/jar.nb" "$NB/run/$run"
is "$CODE" 200 "... its page (200)"
like "$BODY" 'data-event="run.start"' "... its timeline through the daemon's audit API"
unlike "$BODY" 'id="do-kill"' "... and no kill button: its grant has no kill"
unlike "$BODY" 'id="do-pause"|id="do-allow-host"' "... nor pause or grant"
csrf=$(printf '%s' "$BODY" | grep -o 'name="csrf" value="[0-9a-f]*"' | head -n 1 | grep -o '[0-9a-f]\{64\}')
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf" "$NB/run/$run/kill"
is "$CODE" 403 "a kill uid 65534 forges with its own valid CSRF token: refused (403)"
is "$BODY" "refused: this uid may not do that to the run" \
	"... saying this uid may not (its rights), not that the request is forged (CSRF)"
curl -s -m 5 --unix-socket "$SOCK" "http://ringfence/v1/runs/$run" >"$TOP/st"
like "$(cat "$TOP/st")" '"state":"running"' "... the run still runs"
grep -q "kill" <(curl -s -m 20 --unix-socket "$SOCK" http://ringfence/v1/audit | grep "\"run\":\"$run\"" |
	grep '"event":"run.kill"') && not_ok "... and no run.kill was recorded" ||
	ok "... and no run.kill was recorded"

# "Add to the agent's policy" through the daemon: recorded by the daemon
# (POST /v1/runs/RUN/proposal) with uid 65534, the console's operator, as
# the actor; a rule that is no HOST:PORT is refused (400) by the console
# and by the daemon alike; a run of an agent uid 65534's grants do not
# name is not found (404), its console says refused, and nothing is recorded
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf&host=denied.test%3A443" "$NB/run/$run/propose"
is "$CODE" 200 "uid 65534 proposes denied.test:443 for agent watch's policy (200)"
like "$BODY" 'id="fragment">\{&quot;network&quot;: \{&quot;allow&quot;: \[&quot;denied.test:443&quot;\]\}\}' \
	"... shown the policy fragment"
unlike "$BODY" 'not recorded' "... and not told it was not recorded"
rec=$(curl -s -m 20 --unix-socket "$SOCK" "http://ringfence/v1/audit?run=$run" |
	grep -a '"event":"console.proposal"')
like "$rec" '"actor_uid":65534' "... console.proposal recorded by the daemon, naming uid 65534"
like "$rec" '"rule":"denied.test:443"' "... and the rule"
like "$rec" "\"run\":\"$run\"" "... and the run"
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf&host=a%22%3Cb" "$NB/run/$run/propose"
is "$CODE" 400 "a proposal of something that is no HOST:PORT: refused by the console (400)"
nb_api() { setpriv --reuid=65534 --regid=65534 --clear-groups curl -s -m 20 --unix-socket "$SOCK" "$@"; }
out=$(nb_api -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"rule": "a\"<b:443"}' "http://ringfence/v1/runs/$run/proposal")
is "$out" 400 "... and the same rule forged to the daemon as uid 65534: 400"
out=$(nb_api -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"rule": "denied.test:0443"}' "http://ringfence/v1/runs/$run/proposal")
is "$out" 400 "... a port that is not the canonical one: 400"
api_run other
runx=$REPLY
out=$(nb_api -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"rule": "denied.test:443"}' "http://ringfence/v1/runs/$runx/proposal")
is "$out" 404 "a proposal for a run of agent other (no grant of uid 65534 names it): 404"
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf&host=denied.test%3A443" "$NB/run/$runx/propose"
is "$CODE" 403 "... and through uid 65534's console: refused (403)"
out=$(curl -s -m 20 --unix-socket "$SOCK" "http://ringfence/v1/audit?run=$runx")
like "$out" '"event":"run.start"' "control: root reads run other's records"
unlike "$out" '"event":"console.proposal"' "... and no console.proposal among them"

# a run's output through the daemon (GET /v1/runs/RUN/output): a run of
# agent watch prints a known line and its bound secret; uid 65534's console,
# without the daemon's state dir, shows the line on the run's page and
# never the secret's value (the supervisor masked it in the log)
LINE=known-line-$RANDOM$RANDOM
out=$(curl -s -m 20 --unix-socket "$SOCK" -H 'Content-Type: application/json' -d \
	"{\"argv\": [\"/bin/sh\", \"-c\", \"echo $LINE; echo \\\"secret=\$SV\\\"; echo '<b>x</b>'; sleep 300\"], \"agent\": \"watch\", \"workspace\": \"$WS\", \"secrets\": [\"sv\"]}" \
	http://ringfence/v1/runs)
runp=$(grep -o '"run":"[^"]*"' <<<"$out" | head -n 1 | cut -d'"' -f4)
[ -n "$runp" ] || bail_out "the daemon started no run: $out $(cat "$TOP/daemon.err")"
for _ in $(seq 600); do
	curl -s -m 5 --unix-socket "$SOCK" "http://ringfence/v1/runs/$runp/output" | grep -q '<b>x</b>' &&
		break
	sleep 0.05
done
out=$(nb_api -i "http://ringfence/v1/runs/$runp/output")
like "$out" "$LINE" "GET /v1/runs/RUN/output as uid 65534 (get-run on watch): the run's line"
like "$out" 'secret=\*\*\*' "... its secret masked"
unlike "$out" "$SECRET" "... never its value"
like "$out" 'Content-Type: text/plain' "... as text/plain"
out=$(nb_api "http://ringfence/v1/runs/$runp/output?tail=9")
is "$out" "<b>x</b>" "... ?tail=9: the last 9 bytes"
out=$(nb_api -o /dev/null -w '%{http_code}' "http://ringfence/v1/runs/$runp/output?tail=65537")
is "$out" 400 "... ?tail past 65536: 400"
out=$(nb_api -o /dev/null -w '%{http_code}' "http://ringfence/v1/runs/$runx/output")
is "$out" 404 "... a run of agent other (no grant of uid 65534 names it): 404"
c -b "$TOP/jar.nb" "$NB/run/$runp"
is "$CODE" 200 "uid 65534's console, through the API alone: the run's page (200)"
like "$BODY" "<pre id=\"output\" class=\"output\">$LINE" "... shows the run's output"
like "$BODY" 'secret=\*\*\*' "... its secret masked"
unlike "$BODY" "$SECRET" "... never its value"
like "$BODY" '&lt;b&gt;x&lt;/b&gt;' "... and the markup it printed inert"
curl -s -m 20 --unix-socket "$SOCK" -X POST "http://ringfence/v1/runs/$runp/kill" >/dev/null
curl -s -m 20 --unix-socket "$SOCK" -X POST "http://ringfence/v1/runs/$runx/kill" >/dev/null

# root: may
c -c "$TOP/jar.rt" "$URL_root"
c -b "$TOP/jar.rt" "$RT/run/$run"
like "$BODY" 'id="do-kill"' "root's console shows the kill button"
csrf=$(printf '%s' "$BODY" | grep -o 'name="csrf" value="[0-9a-f]*"' | head -n 1 | grep -o '[0-9a-f]\{64\}')
c -b "$TOP/jar.rt" -H "Origin: $RT" -d "csrf=$csrf" "$RT/run/$run/kill"
is "$CODE" 303 "root's kill: done (303)"
curl -s -m 5 --unix-socket "$SOCK" "http://ringfence/v1/runs/$run" >"$TOP/st"
unlike "$(cat "$TOP/st")" '"state":"running"' "... the run is gone"
rec=$(curl -s -m 20 --unix-socket "$SOCK" http://ringfence/v1/audit | grep "\"run\":\"$run\"" |
	grep '"event":"run.kill"')
like "$rec" '"actor_uid":0' "... run.kill names uid 0"
like "$rec" '"reason":"operator console"' "... and the console"

# egress counts through the daemon: a run refused a destination. A console
# that reads only the API does not know them and says so ("—", null); root's
# console given the daemon's state dir counts them from its log
out=$(curl -s -m 20 --unix-socket "$SOCK" -H 'Content-Type: application/json' -d \
	"{\"argv\": [\"/bin/sh\", \"-c\", \"curl -s -m 5 -o /dev/null https://denied.test/; sleep 300\"], \"agent\": \"watch\", \"workspace\": \"$WS\", \"allow_hosts\": [\"allowed.test:443\"]}" \
	http://ringfence/v1/runs)
rund=$(grep -o '"run":"[^"]*"' <<<"$out" | head -n 1 | cut -d'"' -f4)
[ -n "$rund" ] || bail_out "the daemon started no run: $out $(cat "$TOP/daemon.err")"
for _ in $(seq 200); do
	curl -s -m 20 --unix-socket "$SOCK" "http://ringfence/v1/audit?run=$rund" |
		grep -q '"event":"egress.deny"' && break
	sleep 0.05
done
EXTRA=(--state-dir "$RF_STATE")
console rs "$RF_BIN"
EXTRA=()
RS=${URL_rs%%/login*}
c -c "$TOP/jar.rs" "$URL_rs"
ROW="([^/]|/[^t]|/t[^r])*" # within one table row
c -b "$TOP/jar.rs" "$RS/"
like "$BODY" "data-run=\"$rund\"$ROW<td class=\"egress\">0 / 1</td>" \
	"root's console with the daemon's state dir: the refusal counted (0 / 1)"
c -b "$TOP/jar.rs" "$RS/api/runs"
like "$BODY" "\"run\":\"$rund\"[^}]*\"egress_allowed\":0,\"egress_refused\":1" "... and in /api/runs"
c -b "$TOP/jar.nb" "$NB/"
like "$BODY" "data-run=\"$rund\"$ROW<td class=\"egress\">—</td>" \
	"uid 65534's console, through the API alone: not known, shown as —"
unlike "$BODY" "data-run=\"$rund\"$ROW<td class=\"egress\">0 / 0</td>" "... never as 0 / 0"
c -b "$TOP/jar.nb" "$NB/api/runs"
like "$BODY" "\"run\":\"$rund\"[^}]*\"egress_allowed\":null,\"egress_refused\":null" \
	"... null in /api/runs"
curl -s -m 20 --unix-socket "$SOCK" -X POST "http://ringfence/v1/runs/$rund/kill" >/dev/null

# uid 65534 on agent "ops", whose grant has pause, resume, grant and block
# (no kill): its console's actions go through the daemon, which records
# them with uid 65534 as the actor, not the daemon's own uid 0
api_run ops
runo=$REPLY
# audit_of EVENT — the daemon's records of EVENT for run ops (or for no run)
audit_of() {
	curl -s -m 20 --unix-socket "$SOCK" http://ringfence/v1/audit | grep -a "\"event\":\"$1\"" |
		grep -a "$2"
}
c -b "$TOP/jar.nb" "$NB/run/$runo"
like "$BODY" 'id="do-pause"' "uid 65534, on agent ops: its console shows pause (its grant)"
unlike "$BODY" 'id="do-kill"' "... but no kill (not in its grant; the control above: none on watch)"
csrf=$(printf '%s' "$BODY" | grep -o 'name="csrf" value="[0-9a-f]*"' | head -n 1 | grep -o '[0-9a-f]\{64\}')
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf" "$NB/run/$runo/pause"
is "$CODE" 200 "uid 65534 pauses the ops run through the daemon (200)"
like "$BODY" 'id="note">pause: ok' "... the page says so"
curl -s -m 5 --unix-socket "$SOCK" "http://ringfence/v1/runs/$runo" >"$TOP/st"
like "$(cat "$TOP/st")" '"state":"paused"' "... the daemon says paused"
like "$(audit_of run.pause "\"run\":\"$runo\"")" '"actor_uid":65534' \
	"... run.pause names uid 65534, the console's operator"
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf" "$NB/run/$runo/resume"
is "$CODE" 200 "... and resumes it (200)"
like "$(audit_of run.resume "\"run\":\"$runo\"")" '"actor_uid":65534' "... run.resume names uid 65534"
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf&host=beyond.test%3A443" "$NB/run/$runo/allow-host"
is "$CODE" 403 "uid 65534 granting a host beyond the daemon's ceiling: refused (403)"
is "$BODY" "refused by the daemon" "... by the daemon (the console let it through: its grant has grant)"
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf&host=denied.test%3A443" "$NB/run/$runo/allow-host"
is "$CODE" 200 "uid 65534 grants denied.test:443 to the run through the daemon (200)"
like "$BODY" 'id="note">allow-host: ok' "... the page says so"
like "$(audit_of egress.grant "\"run\":\"$runo\"")" '"actor_uid":65534.*"rule":"denied.test:443"|"rule":"denied.test:443".*"actor_uid":65534' \
	"... egress.grant names uid 65534 and the rule"
c -b "$TOP/jar.nb" -H "Origin: $NB" -d "csrf=$csrf" "$NB/run/$runo/block"
is "$CODE" 200 "uid 65534 blocks agent ops through the daemon (200)"
unlike "$BODY" 'id="note">block: refused' "... not refused"
like "$(audit_of control.block '"agent":"ops"')" '"actor_uid":65534' "... control.block names uid 65534"
out=$(curl -s -m 20 --unix-socket "$SOCK" -H 'Content-Type: application/json' -d \
	"{\"argv\": [\"/bin/true\"], \"agent\": \"ops\", \"workspace\": \"$WS\"}" \
	-w ' %{http_code}' http://ringfence/v1/runs)
unlike "$out" '"run":"' "... and the daemon starts no new run of ops ($out)"
curl -s -m 20 --unix-socket "$SOCK" -X DELETE "http://ringfence/v1/agents/ops/block" >/dev/null
curl -s -m 20 --unix-socket "$SOCK" -X POST "http://ringfence/v1/runs/$runo/kill" >/dev/null

# the log's verification through the API (GET /v1/audit/verify, the
# audit right): the daemon verifies its own log in a child and keeps the
# result for the log as it was; uid 65534's console shows it on its
# health page without the daemon's state dir
v=""
for _ in $(seq 200); do
	v=$(nb_api "http://ringfence/v1/audit/verify")
	[[ $v =~ \"current\":true ]] && break
	sleep 0.05
done
like "$v" '^\{"state":"verified","current":true,"at_ms":[0-9]+,"records":[1-9][0-9]*,' \
	"GET /v1/audit/verify as uid 65534: the daemon verified its log ($v)"
like "$v" '"head":"\{' "... with its signed head"
v2=$(nb_api "http://ringfence/v1/audit/verify")
is "$v2" "$v" "... asked again of an unchanged log: the same result (kept, not verified again)"
out=$(setpriv --reuid=65533 --regid=65533 --clear-groups curl -s -m 20 --unix-socket "$SOCK" \
	-o /dev/null -w '%{http_code}' "http://ringfence/v1/audit/verify")
is "$out" 403 "... uid 65533, no audit grant: 403"
for _ in $(seq 100); do
	c -b "$TOP/jar.nb" "$NB/health"
	[[ $BODY =~ class=\"good\"\>verified ]] && break
	sleep 0.1
done
like "$BODY" 'id="verify"><span class="good">verified</span>: records 1\.\.[1-9]' \
	"uid 65534's health page, through the API alone: the log verified by the daemon"
like "$BODY" 'verified by the daemon' "... saying by whom"
like "$BODY" 'id="head">\{' "... and the signed head"

# A log past 16 MiB (JSON_OUTPUT_MAX, what the console could once hold of
# one answer): the run page's timeline (GET /v1/audit?run=RUN) and the
# health page (the log line by line) still work. Above, on a small log,
# is the control. The daemon is stopped while bench-audit appends.
c -b "$TOP/jar.rt" "$RT/health"
small=$(printf '%s' "$BODY" | grep -o 'id="records">[0-9]*' | grep -o '[0-9]*$')
check "control: root's health page counts the small log's records (${small:-none})" [ "${small:-0}" -gt 0 ]
BENCH_AUDIT=${RF_PROBE%/tests/helpers/rf-probe}/src/audit/bench-audit
if [ -x "$BENCH_AUDIT" ]; then
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	"$BENCH_AUDIT" 60000 "$RF_STATE" >"$TOP/bench-audit.out" 2>&1 ||
		bail_out "bench-audit: $(cat "$TOP/bench-audit.out")"
	bytes=$(cat "$RF_STATE"/audit/audit-*.jsonl | wc -c)
	check "the daemon's log is past 16 MiB ($bytes bytes)" [ "$bytes" -gt $((16 << 20)) ]
	daemon_up
	api_run watch
	run2=$REPLY
	a=$(curl -s -m 20 --unix-socket "$SOCK" "http://ringfence/v1/audit?run=$run2")
	like "$a" "\"run\":\"$run2\".*\"event\":\"run.start\"|\"event\":\"run.start\".*\"run\":\"$run2\"" \
		"GET /v1/audit?run=RUN: the run's run.start"
	unlike "$a" '"run":"0190c3e2-7b1a-7f00-8000-000000000001"' "... and no other run's record"
	c -b "$TOP/jar.rt" "$RT/run/$run2"
	is "$CODE" 200 "past 16 MiB: root's page of a new run (200)"
	like "$BODY" 'data-event="run.start"' "... shows its run.start in its timeline"
	c -b "$TOP/jar.nb" "$NB/run/$run2"
	like "$BODY" 'data-event="run.start"' "... and so does uid 65534's (its grant's scope)"
	c -b "$TOP/jar.rt" "$RT/health"
	big=$(printf '%s' "$BODY" | grep -o 'id="records">[0-9]*' | grep -o '[0-9]*$')
	check "... root's health page counts every record (${big:-none})" [ "${big:-0}" -gt 60000 ]
	unlike "$BODY" 'could not be read whole' "... and read the log whole"
	c -b "$TOP/jar.rt" "$RT/run/$run2"
	csrf=$(printf '%s' "$BODY" | grep -o 'name="csrf" value="[0-9a-f]*"' | head -n 1 | grep -o '[0-9a-f]\{64\}')
	c -b "$TOP/jar.rt" -H "Origin: $RT" -d "csrf=$csrf" "$RT/run/$run2/kill"
	is "$CODE" 303 "... and its kill is done (303)"
else
	for _ in 1 2 3 4 5 6 7 8 9 10; do skip "a log past 16 MiB" "no bench-audit next to $RF_PROBE"; done
fi
done_testing
