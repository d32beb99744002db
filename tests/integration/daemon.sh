#!/usr/bin/env bash
# daemon.sh — `ringfence daemon` and its control API (issue 7).
#
# Asserts: the API lists, starts, shows, pauses, resumes and kills runs
# (the kill records the API caller as the actor); kill of an agent with
# block refuses its new runs (409) until unblocked; malformed, oversized,
# unknown and wrong-method requests get a JSON error with the right
# status and change nothing; a client that sends half a request does not
# block anyone else; the audit stream serves records; the request parser
# runs as nobody with no capabilities, no_new_privs and seccomp. With a
# real second uid (65534): it starts runs only for its agents, cannot see
# or kill root's runs, cannot bind a secret outside its ACL, cannot go
# beyond the ceiling, cannot get the daemon to use a workspace it cannot
# use itself. A daemon killed with SIGKILL leaves no process of its runs;
# the next daemon records run.lost, removes the registration and the
# cgroup; the audit chain verifies. The daemon's fds and memory after N
# and 2N run lifecycles are the same, each taken once the daemon reports
# itself quiescent (GET /v1/daemon: no other client, no request in
# progress, no stream; the runs counted) — no sleep stands in for that.
# Audit reads are scoped: uid 65534's `audit` grant for agent nb shows
# the records of its own nb runs, not root's nb runs nor other agents'
# (the stream too); root sees all. Resource ceilings: every API run
# records a memory limit; a request above its grant's limits is refused
# (403); a run's log stops at the grant's log_bytes, saying so; a uid past
# its state_bytes is refused while root still starts runs; a grant's cpus
# and timeout ceilings: a start above either is refused (403 naming the
# ceiling), one below both starts with what it asked for, one naming
# neither gets the ceilings (the reserve kept for root on the state dir's
# file system: daemon_reserve.sh). Every daemon
# child (parser, egress, exec provider, audit stream) has no capability,
# an empty bounding set and no_new_privs.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (a second uid, cgroups)"
command -v curl >/dev/null || skip_all "needs curl"
new_workspace
RF=$RF_BIN
records() { cat "$RF_STATE"/audit/audit-*.jsonl; }

# the socket in a directory uid 65534 can reach; the state dir stays 0700
rf_mktemp /tmp
SOCKDIR=$REPLY
chmod 0755 "$SOCKDIR"
SOCK=$SOCKDIR/control.sock
rf_mktemp /tmp
NBWS=$REPLY
chown 65534:65534 "$NBWS"
chmod 0755 "$NBWS"
rf_mktemp /tmp
PRIV=$REPLY
chmod 0700 "$PRIV"
printf 'daemon-%s' "$RANDOM$RANDOM" | "$RF" secret set --state-dir "$RF_STATE" tok >/dev/null 2>&1
printf 'rootonly-%s' "$RANDOM" | "$RF" secret set --state-dir "$RF_STATE" rt >/dev/null 2>&1
# an exec provider that leaves its own /proc status where the test reads it
PROVST=$WS.provider.status
cat >"$WS.conf" <<JSON
{"version": 1, "socket": "$SOCK", "socket_mode": "0666",
 "grants": [{"uid": 65534, "agents": ["nb"],
             "actions": ["start-run", "list-runs", "get-run", "kill", "pause", "resume", "audit"]},
            {"uid": 65534, "agents": ["nbq"], "actions": ["start-run", "get-run"],
             "limits": {"memory": "128M", "log_bytes": "16K", "state_bytes": "24K"}},
            {"uid": 65534, "agents": ["nbc"], "actions": ["start-run", "get-run"],
             "limits": {"cpus": "1", "timeout": "10m"}}],
 "ceiling": {"allow_hosts": ["api.example.test:443"], "max_timeout": "1h", "runs_per_uid": 2},
 "secrets": {"tok": {"name": "TOK", "deliver": "broker", "from": "store:tok",
                     "agents": ["nb"], "uids": [65534]},
             "rt": {"name": "RT", "deliver": "env", "from": "store:rt", "uids": [0]},
             "rt2": {"name": "RT", "deliver": "env", "from": "store:tok", "uids": [0]},
             "ex": {"name": "EX", "deliver": "env", "uids": [0],
                    "exec": ["/bin/sh", "-c", "cat /proc/self/status >'$PROVST'; echo provided"]}}}
JSON
chmod 0644 "$WS.conf"

start_daemon() {
	"$RF" daemon --state-dir "$RF_STATE" --config "$WS.conf" 2>>"$WS.daemon.err" &
	DPID=$!
	register_pid "$DPID"
	# ready when it answers (a socket file may be left by a daemon that was killed)
	for _ in $(seq 1 600); do
		curl -s -m 1 --unix-socket "$SOCK" http://ringfence/v1/runs >/dev/null 2>&1 && break
		sleep 0.05
	done
}
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
# bounded polls of observable state (generous bounds: a loaded host is slow)
wait_for() { for _ in $(seq 1 600); do [ -e "$1" ] && return 0; sleep 0.05; done; return 1; }
wait_registered() { for _ in $(seq 1 600); do [ -d "$RF_STATE/runs/$1" ] && return 0; sleep 0.05; done; return 1; }
# the daemon's own report (GET /v1/daemon) of SOCK (or $2): one field
dstate() { # dstate FIELD [SOCKET]
	local sock=${2:-}
	curl -s -m 20 --unix-socket "${sock:-$SOCK}" http://ringfence/v1/daemon |
		grep -o "\"$1\":[a-z0-9]*" | cut -d: -f2
}
# wait_quiescent [RUNS]: until the daemon reports no other client, no
# request in progress and no stream (and, given, exactly RUNS runs);
# QUIET_FDS is then its open fds. Bounded (60 s): a client that sends
# nothing is dropped after 10 s.
wait_quiescent() {
	local out want=${1:-}
	QUIET_FDS=""
	for _ in $(seq 1 1200); do
		out=$(curl -s -m 20 --unix-socket "$SOCK" http://ringfence/v1/daemon)
		if grep -q '"quiescent":true' <<<"$out" &&
			{ [ -z "$want" ] || grep -q "\"runs\":$want[,}]" <<<"$out"; }; then
			QUIET_FDS=$(grep -o '"fds":[0-9]*' <<<"$out" | cut -d: -f2)
			QUIET_RUNS=$(grep -o '"runs":[0-9]*' <<<"$out" | cut -d: -f2)
			return 0
		fi
		sleep 0.05
	done
	return 1
}
# wait_pending N [SOCKET]: until N requests of other clients are in progress
wait_pending() {
	for _ in $(seq 1 600); do
		[ "$(dstate pending "${2:-}")" -ge "$1" ] 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# what a daemon before the typed run request left: a run's secret bindings
# in STATE_DIR/daemon (root's 0600 files), swept at the start
mkdir -m 0700 "$RF_STATE/daemon"
printf '{"version":1,"secrets":[]}\n' >"$RF_STATE/daemon/00000000-0000-4000-8000-000000000000.json"
start_daemon
check "the daemon listens on its socket" test -S "$SOCK"
check "... and has swept an older daemon's per-run binding files, their directory too" \
	test ! -e "$RF_STATE/daemon"
ppid=$(pgrep -P "$DPID" | head -n 1)
st=$(cat "/proc/$ppid/status" 2>/dev/null)
puid=$(awk '/^Uid:/ {print $2}' <<<"$st")
check "the request parser runs as a uid of its own ($puid: not root, not nobody)" \
	test -n "$puid" -a "${puid:-0}" != 0 -a "${puid:-0}" != 65534
like "$st" $'NoNewPrivs:\t1' "... with no_new_privs"
like "$st" $'Seccomp:\t2' "... under a seccomp filter"
like "$st" $'CapEff:\t0000000000000000' "... no capabilities"
like "$st" $'CapBnd:\t0000000000000000' "... bounding set included"
# the parser only ever holds one caller's bytes: another uid gets a fresh one
parser_pid() { ps -o pid=,uid= --ppid "$DPID" | awk -v u="$puid" '$2 == u { print $1 }' | head -n 1; }
api GET /v1/runs
P1=$(parser_pid)
api_nb GET /v1/runs
P2=$(parser_pid)
api_nb GET /v1/runs
P3=$(parser_pid)
api GET /v1/runs
P4=$(parser_pid)
check "a request of another uid is parsed by a fresh parser ($P1 -> $P2)" test -n "$P1" -a -n "$P2" -a "$P1" != "$P2"
is "$P3" "$P2" "... the same uid's next request by the same one"
check "... and root's next request by a fresh one again ($P3 -> $P4)" test -n "$P4" -a "$P4" != "$P3"

# ---- the API, as root ---------------------------------------------------------------------------
api GET /v1/runs
is "$API_S" 200 "GET /v1/runs: 200"
is "$API_B" '{"runs":[]}' "... no runs yet"
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"echo r1-output; touch '$WS/r1.ready'; sleep 3600\"],\"agent\":\"alpha\",\"workspace\":\"$WS\"}"
is "$API_S" 201 "POST /v1/runs: 201"
R1=$(run_of "$API_B")
wait_for "$WS/r1.ready"
wait_registered "$R1"
api GET "/v1/runs/$R1"
is "$API_S" 200 "GET /v1/runs/RUN: 200"
like "$API_B" '"state":"running"' "... running"
like "$API_B" '"supervisor":\{"state":"running"' "... with its supervisor's view"
api POST "/v1/runs/$R1/pause"
is "$API_S" 200 "pause: 200 ($API_B)"
api GET "/v1/runs/$R1"
like "$API_B" '"state":"paused"' "... paused"
api POST "/v1/runs/$R1/resume"
is "$API_S" 200 "resume: 200"

# A supervisor that does not answer blocks no one: the daemon sends the
# pause and collects the answer in its loop, serving other clients
# meanwhile, and gives up with 500 after DAEMON_CTL_MS (5 s).
spid=$(grep -o '"pid":[0-9]*' "$RF_STATE/runs/$R1/info.json" | head -n 1 | cut -d: -f2)
if [ -n "$spid" ] && kill -STOP "$spid"; then
	rm -f "$WS.pause-late"
	(
		api POST "/v1/runs/$R1/pause"
		printf '%s %s\n' "$API_S" "$API_B" >"$WS.pause-late"
	) &
	pp=$!
	check "the pause waits on the stopped supervisor (the daemon reports it in progress)" wait_pending 1
	api GET /v1/runs/01234567-89ab-7def-8123-456789abcdef
	is "$API_S" 404 "while a pause waits on a stopped supervisor, another client is answered (404)"
	check "... before the pause has its answer" test ! -e "$WS.pause-late"
	wait "$pp"
	like "$(cat "$WS.pause-late" 2>/dev/null)" '^500 .*no answer in time' \
		"... and the pause gets 500 'no answer in time'"
	kill -CONT "$spid"
	# the stopped supervisor still holds the request: it pauses the run once
	# it runs again; resume it then
	for _ in $(seq 1 100); do
		api GET "/v1/runs/$R1"
		grep -q '"state":"paused"' <<<"$API_B" && break
		sleep 0.05
	done
	api POST "/v1/runs/$R1/resume"
	api GET "/v1/runs/$R1"
	like "$API_B" '"state":"running"' "... and once it runs again the run is resumed and running"
else
	for _ in 1 2 3 4; do not_ok "a stopped supervisor blocks no one" "no supervisor pid for $R1"; done
fi
api POST "/v1/runs/$R1/kill" '{"reason":"api says stop"}'
is "$API_S" 200 "kill: 200"
is "$API_B" "{\"killed\":[\"$R1\"]}" "... names the run"
k=$(records | grep "\"run\":\"$R1\"" | grep '"event":"run.kill"')
like "$k" '"reason":"api says stop"' "run.kill records the reason given through the API"
like "$k" '"actor_uid":0' "... and the API caller as the actor"
like "$(records | grep "\"run\":\"$R1\"" | grep '"event":"control.start"')" '"actor_uid":0' \
	"control.start records who started it"
like "$(cat "$RF_STATE/logs/$R1.log" 2>/dev/null)" "r1-output" "the run's output went to its log"

# The listing asks every supervisor at once: one that does not answer
# (stopped) costs the listing its 1 s and shows "?", the others still
# give their own view; `ringfence ps` the same.
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"touch '$WS/ls1.ready'; sleep 3600\"],\"agent\":\"alpha\",\"workspace\":\"$WS\"}"
RL1=$(run_of "$API_B")
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"touch '$WS/ls2.ready'; sleep 3600\"],\"agent\":\"alpha\",\"workspace\":\"$WS\"}"
RL2=$(run_of "$API_B")
wait_for "$WS/ls1.ready"
wait_for "$WS/ls2.ready"
wait_registered "$RL1"
wait_registered "$RL2"
lpid=$(grep -o '"pid":[0-9]*' "$RF_STATE/runs/$RL1/info.json" | head -n 1 | cut -d: -f2)
if [ -n "$lpid" ] && kill -STOP "$lpid"; then
	api POST "/v1/runs/$RL2/pause" # an authorised change: the next listing asks every supervisor
	api POST "/v1/runs/$RL2/resume"
	api GET /v1/runs
	one_run() { python3 -c 'import json,sys; r=[x for x in json.loads(sys.argv[1])["runs"] if x.get("run")==sys.argv[2]]; print(json.dumps(r[0], separators=(",", ":")) if r else "")' "$API_B" "$1" 2>/dev/null; }
	l1=$(one_run "$RL1")
	l2=$(one_run "$RL2")
	is "$API_S" 200 "a listing with one supervisor stopped: 200"
	like "$l1" '"state":"\?"' "... the stopped one's state: ? (no answer in its 1 s)"
	like "$l2" '"supervisor":\{"state":"running"' "... the other's supervisor view is there"
	ps_out=$("$RF" ps --state-dir "$RF_STATE" 2>&1)
	like "$(grep "^$RL1" <<<"$ps_out")" " \? " "ringfence ps: the stopped one is ?"
	like "$(grep "^$RL2" <<<"$ps_out")" " running " "... the other running"
	kill -CONT "$lpid"
else
	for _ in 1 2 3 4 5; do not_ok "a listing with one supervisor stopped" "no supervisor pid for $RL1"; done
fi
api POST "/v1/runs/$RL1/kill"
is "$API_S" 200 "... both killed after (1)"
api POST "/v1/runs/$RL2/kill"
is "$API_S" 200 "... both killed after (2)"

# env: what `run -e` takes, through the API (issue 16)
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"echo env=\$RF_API_ENV; touch '$WS/env.done'\"],\"agent\":\"alpha\",\"workspace\":\"$WS\",\"env\":{\"RF_API_ENV\":\"from the api\"}}"
is "$API_S" 201 "a start with env: 201"
RE=$(run_of "$API_B")
for _ in $(seq 1 600); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$RE\"" && break; sleep 0.05; done
like "$(cat "$RF_STATE/logs/$RE.log" 2>/dev/null)" "env=from the api" "... the run has the variable"
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"alpha\",\"workspace\":\"$WS\",\"env\":{\"RINGFENCE_RUN_ID\":\"x\"}}"
is "$API_S" 400 "env naming a variable ringfence sets (RINGFENCE_*): 400"
like "$API_B" 'env.RINGFENCE_RUN_ID' "... naming it"
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"alpha\",\"workspace\":\"$WS\",\"env\":{\"A=B\":\"x\"}}"
is "$API_S" 400 "env with an invalid name: 400"
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"alpha\",\"workspace\":\"$WS\",\"env\":{\"X\":1}}"
is "$API_S" 400 "env with a value that is not a string: 400"

# publish: a run started through the API for uid 65534 publishes a host
# loopback port that uid (and root) reach, and no other uid (issue 16)
read -r PUBP < <(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
PUBSRV="import socket,os
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(('127.0.0.1',8766)); s.listen(4)
open('pub.ready','w').close()
for _ in range(2):
    c,_=s.accept(); c.sendall(b'from-run'); c.close()"
PUBCLI='import socket,sys
try:
    s=socket.create_connection(("127.0.0.1",int(sys.argv[1])),timeout=10); print(s.recv(100).decode() or "eof")
except OSError as e: print("error", e.errno)'
api_nb POST /v1/runs "$(python3 -c 'import json,sys; print(json.dumps({"argv":["/usr/bin/python3","-c",sys.argv[1]],"agent":"nb","workspace":sys.argv[2],"publish":[sys.argv[3]+":8766"],"timeout":"2m"}))' "$PUBSRV" "$NBWS" "$PUBP")"
is "$API_S" 201 "a start with publish, as uid 65534: 201"
RP1=$(run_of "$API_B")
wait_for "$NBWS/pub.ready" || diag "the run's server did not start"
is "$(setpriv --reuid=65533 --regid=65533 --clear-groups /usr/bin/python3 -c "$PUBCLI" "$PUBP" | sed 's/error 104/eof/')" "eof" \
	"... uid 65533 connecting to the published port: closed, nothing relayed"
is "$(as_user /usr/bin/python3 -c "$PUBCLI" "$PUBP")" "from-run" "... the caller (uid 65534) reaches the run's server"
is "$(/usr/bin/python3 -c "$PUBCLI" "$PUBP")" "from-run" "... and root does"
like "$(records | grep "\"run\":\"$RP1\"" | grep '"event":"publish.refused"')" '"peer_uid":65533' \
	"... publish.refused records uid 65533"
for _ in $(seq 1 600); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$RP1\"" && break; sleep 0.05; done
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\",\"publish\":[\"0.0.0.0:80:80\"]}"
is "$API_S" 400 "publish of a non-loopback address through the API: 400"

# kill an agent, with block
for i in 1 2; do
	api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"touch '$WS/b$i.ready'; sleep 3600\"],\"agent\":\"beta\",\"workspace\":\"$WS\"}"
	eval "B$i=\$(run_of \"\$API_B\")"
done
wait_for "$WS/b1.ready" && wait_for "$WS/b2.ready"
wait_registered "$B1" && wait_registered "$B2"
api POST /v1/agents/beta/kill '{"block":true,"reason":"beta loops"}'
is "$API_S" 200 "kill --agent through the API: 200"
like "$API_B" "$B1" "... killed the first"
like "$API_B" "$B2" "... and the second"
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"beta\",\"workspace\":\"$WS\"}"
is "$API_S" 409 "a blocked agent's new run: 409"
like "$API_B" "agent beta is blocked" "... saying why"
api DELETE /v1/agents/beta/block
is "$API_S" 200 "unblock: 200"
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"beta\",\"workspace\":\"$WS\"}"
is "$API_S" 201 "... and beta starts runs again"

# ---- bad input -----------------------------------------------------------------------------------
api POST /v1/runs '{"argv": ["x"], "agent": "a", "workspace": "/w", "exec": ["vault"]}'
is "$API_S" 400 "an exec provider in a request: 400"
like "$API_B" '"error":"unknown key \\"exec\\"' "... a JSON error naming the key"
api POST /v1/runs '{not json'
is "$API_S" 400 "malformed JSON: 400"
api GET /v1/runs/01a22cbe-7447-79cf-8a48-7ea8d9c44033
is "$API_S" 404 "an unknown run id: 404"
api GET /v1/nothing
is "$API_S" 404 "an unknown resource: 404"
api PUT /v1/runs
is "$API_S" 405 "a wrong method: 405"
big=$(head -c 70000 /dev/zero | tr '\0' 'a')
api POST /v1/runs "{\"argv\":[\"$big\"]}"
is "$API_S" 413 "a body over 64 KiB: 413"
# the answer comes before the body was read: the daemon keeps reading and
# dropping it (a lingering close), so a client still sending is not reset
# before it reads the 413 (curl's status was 000 when it was)
linger=$(python3 - "$SOCK" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(20)
s.sendall(b"POST /v1/runs HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 300000\r\n\r\n")
head = s.recv(64).split(b"\r\n")[0].decode()
try:
    s.sendall(b"a" * 300000)
    sent = "sent"
except OSError as e:
    sent = "send failed: %s" % e
s.shutdown(socket.SHUT_WR)
while s.recv(4096):
    pass
print(head, sent)
PY
)
is "$linger" "HTTP/1.1 413 Content Too Large sent" "... and a client still sending the body after the 413 is read to the end, not reset"
api GET /v1/runs
is "$API_B" "$(curl -s --unix-socket "$SOCK" http://ringfence/v1/runs)" "... none of it changed anything"
# a client that sends half a request and waits blocks nobody
python3 - "$SOCK" "$WS.half" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.send(b"POST /v1/runs HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
open(sys.argv[2], "w").write("sent")
time.sleep(15)
PY
register_pid $!
wait_for "$WS.half"
t0=$(date +%s%N)
api GET /v1/runs
t1=$(date +%s%N)
is "$API_S" 200 "while a client sits on half a request, others are served (in $(((t1 - t0) / 1000000)) ms)"

# ---- the audit stream ---------------------------------------------------------------------------
api GET /v1/audit
is "$API_S" 200 "GET /v1/audit: 200"
like "$API_B" '"event":"control.start"' "... the records, as JSON lines"
# streams are capped per uid (4) and end with their client
streams() { ps -o args= --ppid "$DPID" | grep -c -- ' audit .*--follow'; }
spids=()
for i in 1 2 3 4; do
	curl -s -N -m 60 --unix-socket "$SOCK" "http://ringfence/v1/audit?follow=1" >"$WS.stream$i" &
	register_pid $!
	spids+=($!)
done
for _ in $(seq 1 600); do [ "$(streams)" = 4 ] && break; sleep 0.05; done
is "$(streams)" 4 "four audit streams of one uid are served"
spid1=$(ps -o pid=,args= --ppid "$DPID" | awk '/ audit .*--follow/ {print $1; exit}')
sst=$(cat "/proc/$spid1/status" 2>/dev/null)
like "$sst" $'CapEff:\t0000000000000000' "an audit stream has no capabilities"
like "$sst" $'CapBnd:\t0000000000000000' "... an empty bounding set"
like "$sst" $'NoNewPrivs:\t1' "... and no_new_privs"
api GET "/v1/audit?follow=1"
is "$API_S" 503 "... a fifth is refused (503)"
like "$API_B" "too many audit streams" "... saying why"
kill "${spids[@]}" 2>/dev/null
wait "${spids[@]}" 2>/dev/null
for _ in $(seq 1 600); do [ "$(streams)" = 0 ] && break; sleep 0.05; done
is "$(streams)" 0 "... and once their clients are gone the streams end (no new record needed)"
api GET /v1/audit
is "$API_S" 200 "... after which a stream is served again"

# ---- a second uid --------------------------------------------------------------------------------
api_nb POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"ringfence-secret TOK >/dev/null && echo read; sleep 3600\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\",\"secrets\":[\"tok\"]}"
is "$API_S" 201 "uid 65534 starts a run of its agent, with its secret ($API_B)"
NB=$(run_of "$API_B")
wait_registered "$NB"
for _ in $(seq 1 100); do grep -q read "$RF_STATE/logs/$NB.log" 2>/dev/null && break; sleep 0.05; done
like "$(cat "$RF_STATE/logs/$NB.log")" "read" "... which reads its secret through the broker"
api GET "/v1/runs/$NB"
like "$API_B" '"uid":65534' "the run shows whom it was started for (uid 65534), not the daemon"
out=$(as_user "$RF" run --caller-uid 0 -- true 2>&1)
is "$?" 125 "--caller-uid from anyone but root: 125"
like "$out" "only root may name another caller" "... saying so"
# ceiling.runs_per_uid is 2 here: a second run, then no third while both go
api_nb POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"sleep 3600\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\"}"
is "$API_S" 201 "uid 65534's second run at once: 201"
NB2=$(run_of "$API_B")
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\"}"
is "$API_S" 503 "... a third while both go: 503 (ceiling.runs_per_uid 2)"
like "$API_B" "runs going" "... saying why"
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$WS\"}"
is "$API_S" 201 "... while root still starts runs (it is not counted)"
wait_registered "$NB2"
api_nb POST "/v1/runs/$NB2/kill"
is "$API_S" 200 "... and once uid 65534 kills one of its runs"
for _ in $(seq 1 100); do
	api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\"}"
	[ "$API_S" = 201 ] && break
	sleep 0.05
done
is "$API_S" 201 "... it may start another"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"other\",\"workspace\":\"$NBWS\"}"
is "$API_S" 403 "uid 65534 cannot start runs for an agent it does not own"
# the run just started counts against the ceiling until it is reaped: a
# bounded poll until the answer is about the secret, not the ceiling (503)
for _ in $(seq 1 200); do
	api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\",\"secrets\":[\"rt\"]}"
	[ "$API_S" != 503 ] && break
	sleep 0.05
done
is "$API_S" 403 "... cannot bind a secret outside its ACL"
like "$API_B" "secret rt: not granted" "... saying so"
# two secrets of one name and delivery: one would replace the other
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"echo RT=\$RT\"],\"agent\":\"alpha\",\"workspace\":\"$WS\",\"secrets\":[\"rt\",\"rt2\"]}"
is "$API_S" 400 "root's start with two secrets binding RT as env: 400"
like "$API_B" 'secrets: rt2 binds the name an earlier secret of the start binds' "... saying which"
unlike "$API_B" '"run":' "... and no run was started"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$PRIV\"}"
is "$API_S" 403 "... cannot have the daemon use a workspace it cannot use itself (0700 root's)"
like "$API_B" "cannot use it: Permission denied" "... checked with its own credentials"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\",\"allow_hosts\":[\"evil.test:443\"]}"
is "$API_S" 403 "... cannot reach beyond the operator's ceiling"
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"curl -s -o /dev/null -x http://127.0.0.1:3128 http://x.test/; touch '$WS/ra.ready'; sleep 3600\"],\"agent\":\"alpha\",\"workspace\":\"$WS\"}"
RA=$(run_of "$API_B")
wait_registered "$RA"
wait_for "$WS/ra.ready"
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"sleep 3600\"],\"agent\":\"gamma\",\"workspace\":\"$WS\"}"
RG=$(run_of "$API_B")
wait_registered "$RG"
api POST "/v1/runs/$RG/grant" '{"allow_host": "127.0.0.1:9"}'
is "$API_S" 200 "POST .../grant: a live egress change ($API_B)"
like "$API_B" '"result":"allowed 127.0.0.1:9"' "... confirmed"
api POST "/v1/runs/$RG/grant" '{"allow_host": "127.0.0.1:9", "x": 1}'
is "$API_S" 400 "... a grant body with more than one key: 400"
api POST "/v1/runs/$RG/kill"
api_nb POST "/v1/runs/$NB/grant" '{"allow_host": "api.example.test:443"}'
isnt "$API_S" 200 "uid 65534 has no grant action: its runs' egress is not changed ($API_S)"
api_nb GET /v1/runs
unlike "$API_B" "$RA" "uid 65534 does not see root's runs of other agents"
like "$API_B" "$NB" "... but sees its own"
api_nb POST "/v1/runs/$RA/kill"
is "$API_S" 404 "... cannot kill them (404: it is not told they exist)"
api GET "/v1/runs/$RA"
like "$API_B" '"state":"running"' "... and the run is untouched"
api_nb POST "/v1/runs/$NB/pause"
is "$API_S" 200 "uid 65534 pauses its own agent's run"
like "$(records | grep "\"run\":\"$NB\"" | grep '"event":"run.pause"')" '"actor_uid":65534' \
	"... recorded with the caller (65534) as the actor, not the daemon"
api_nb POST "/v1/runs/$NB/resume"
like "$(records | grep "\"run\":\"$NB\"" | grep '"event":"run.resume"')" '"actor_uid":65534' \
	"... and so is its resume"
api_nb POST /v1/agents/nb/kill '{"block":true,"reason":"for everyone"}'
is "$API_S" 403 "uid 65534 may kill agent nb's runs but not block nb: kill with block is 403"
like "$API_B" "may not block agent nb" "... naming the missing right"
is "$(records | grep '"event":"control.block"' | grep -c '"agent":"nb"')" 0 "... and no block was recorded"
api GET "/v1/runs/$NB"
like "$API_B" '"state":"running"' "... nor any run killed"
api_nb POST "/v1/runs/$NB/kill" '{"reason":"mine"}'
is "$API_S" 200 "uid 65534 kills its own agent's run"
like "$(records | grep "\"run\":\"$NB\"" | grep '"event":"run.kill"')" '"actor_uid":65534' \
	"... recorded with uid 65534 as the actor"

# ---- exec providers are locked down ---------------------------------------------------------------
rm -f "$PROVST"
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"test -n \\\"\$EX\\\" && touch '$WS/ex.ready'\"],\"agent\":\"alpha\",\"workspace\":\"$WS\",\"secrets\":[\"ex\"]}"
is "$API_S" 201 "a run with an exec-provided secret starts ($API_B)"
wait_for "$WS/ex.ready"
check "... and gets the provider's value" test -e "$WS/ex.ready"
pst=$(cat "$PROVST" 2>/dev/null)
like "$pst" $'CapEff:\t0000000000000000' "the exec provider ran with no capabilities"
like "$pst" $'CapBnd:\t0000000000000000' "... an empty bounding set"
like "$pst" $'NoNewPrivs:\t1' "... and no_new_privs"

# ---- audit reads are scoped ------------------------------------------------------------------------
# uid 65534's audit grant names agent nb (not all_uids): its own nb runs'
# records only. Root's run of agent nb is another uid's run of nb.
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$WS\",\"task\":\"root-nb\"}"
is "$API_S" 201 "root starts a run of agent nb (another uid's run of nb)"
RNB0=$(run_of "$API_B")
for _ in $(seq 1 600); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$RNB0\"" && break; sleep 0.05; done
api GET /v1/audit
like "$API_B" "\"run\":\"$RNB0\"" "root's audit read shows root's nb run (control)"
like "$API_B" "\"run\":\"$NB\"" "... and uid 65534's nb run"
like "$API_B" "\"run\":\"$RA\"" "... and agent alpha's run"
like "$API_B" '"event":"control.block"' "... and records tied to no run"
api_nb GET /v1/audit
is "$API_S" 200 "uid 65534 reads the audit log with its grant (200)"
like "$API_B" "\"event\":\"run.start\".*\"run\":\"$NB\"" "... it sees its own nb run's records"
unlike "$API_B" "\"run\":\"$RNB0\"" "... not root's run of the same agent nb"
unlike "$API_B" "\"run\":\"$RA\"" "... not agent alpha's runs"
unlike "$API_B" '"event":"control.block"' "... nor records tied to no run"
unlike "$API_B" '"task":"root-nb"' "... (nothing of root's nb run at all)"
# the stream: started first, then another uid's nb run and one of its own
as_user curl -s -N -m 60 --unix-socket "$SOCK" "http://ringfence/v1/audit?follow=1" >"$WS.nbstream" &
NBS=$!
register_pid "$NBS"
for _ in $(seq 1 600); do grep -q "\"run\":\"$NB\"" "$WS.nbstream" 2>/dev/null && break; sleep 0.05; done
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$WS\",\"task\":\"root-nb-2\"}"
RNB1=$(run_of "$API_B")
for _ in $(seq 1 600); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$RNB1\"" && break; sleep 0.05; done
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\"}"
NB3=$(run_of "$API_B")
# the stream is in log order: once it shows NB3's start, RNB1's records
# (all logged before it) were either sent or withheld
for _ in $(seq 1 600); do grep -q "\"event\":\"run.start\".*\"run\":\"$NB3\"" "$WS.nbstream" 2>/dev/null && break; sleep 0.05; done
kill "$NBS" 2>/dev/null
wait "$NBS" 2>/dev/null
like "$(cat "$WS.nbstream")" "\"event\":\"run.start\".*\"run\":\"$NB3\"" "uid 65534's audit stream shows its new nb run as it starts"
unlike "$(cat "$WS.nbstream")" "\"run\":\"$RNB1\"" "... but not root's nb run started before it"
unlike "$(cat "$WS.nbstream")" "\"run\":\"$RA\"" "... nor agent alpha's"

# ---- resource ceilings -----------------------------------------------------------------------------
# every API run has a memory limit, on cgroup v1 and v2 hosts alike
startrec() { records | grep "\"run\":\"$1\"" | grep '"event":"run.start"'; }
lm=$(startrec "$NB3" | grep -o '"limit_memory":[0-9]*' | cut -d: -f2)
check "uid 65534's API run records a memory limit (limit_memory=$lm)" test "${lm:-0}" -gt 0
lm=$(startrec "$RNB1" | grep -o '"limit_memory":[0-9]*' | cut -d: -f2)
is "$lm" $((2 << 30)) "... and root's, the default 2 GiB"
# the one run going by now is RA (the others ended or were killed; a
# supervisor still exiting counts until it is reaped)
NBQRUNS=1
check "the daemon reports itself quiescent, with RA its one run" wait_quiescent "$NBQRUNS"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbq\",\"workspace\":\"$NBWS\",\"memory\":\"1G\"}"
is "$API_S" 403 "a start asking for more memory than its grant's limit (128M): 403"
like "$API_B" "memory: 1G is above uid 65534's ceiling" "... saying so"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbq\",\"workspace\":\"$NBWS\",\"pids\":100000}"
is "$API_S" 403 "... and more pids than the ceiling (1024): 403"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbq\",\"workspace\":\"$NBWS\",\"memory\":\"64M\"}"
is "$API_S" 201 "... while asking for less is allowed (201)"
NQ=$(run_of "$API_B")
for _ in $(seq 1 600); do startrec "$NQ" | grep -q limit_memory && break; sleep 0.05; done
like "$(startrec "$NQ")" '"limit_memory":67108864' "... and the run has that limit"
# the log cap (grant: log_bytes 16K, state_bytes 24K). A run of the uid
# still going reserves its whole log cap: NQ must be over and reaped first
# (else NQ1 gets what is left beside NQ's reservation, 8K)
for _ in $(seq 1 1200); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$NQ\"" && break; sleep 0.05; done
wait_quiescent "$NBQRUNS"
big="head -c 100000 /dev/zero | tr '\\\\0' x"
api_nb POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"$big\"],\"agent\":\"nbq\",\"workspace\":\"$NBWS\"}"
is "$API_S" 201 "a run that prints 100 KB starts ($API_B)"
NQ1=$(run_of "$API_B")
# its log is whole once its run.exit is recorded (the supervisor closes the
# log first); the run count alone could be met by another run ending
for _ in $(seq 1 1200); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$NQ1\"" && break; sleep 0.05; done
wait_quiescent "$NBQRUNS"
sz=$(stat -c %s "$RF_STATE/logs/$NQ1.log" 2>/dev/null)
check "... its log stops at the grant's log_bytes (16K: $sz bytes)" test "${sz:-0}" -ge 16384 -a "${sz:-0}" -le 16640
like "$(tail -c 200 "$RF_STATE/logs/$NQ1.log")" "output truncated: the log reached its --log-max" "... saying so"
api_nb POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"$big\"],\"agent\":\"nbq\",\"workspace\":\"$NBWS\"}"
is "$API_S" 201 "a second such run takes what is left of uid 65534's state_bytes (24K)"
NQ2=$(run_of "$API_B")
for _ in $(seq 1 1200); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$NQ2\"" && break; sleep 0.05; done
wait_quiescent "$NBQRUNS"
sz2=$(stat -c %s "$RF_STATE/logs/$NQ2.log" 2>/dev/null)
check "... its log capped to the rest ($sz2 bytes)" test "${sz2:-0}" -gt 0 -a "${sz2:-0}" -lt 16384
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbq\",\"workspace\":\"$NBWS\"}"
is "$API_S" 403 "a uid past its state_bytes is refused (403)"
like "$API_B" "limits.state_bytes" "... naming the limit"
api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbq\",\"workspace\":\"$WS\"}"
is "$API_S" 201 "... while root still starts runs (its runs are not counted against it)"
# cpus and timeout: no default ceiling (docs/API.md); grant nbc's are 1 CPU
# and 10 minutes, which a request may only narrow
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbc\",\"workspace\":\"$NBWS\",\"cpus\":\"2\"}"
is "$API_S" 403 "a start asking for more CPUs than its grant's ceiling (2 > 1): 403"
like "$API_B" "cpus: 2 is above uid 65534's ceiling of 1\\.000" "... naming the ceiling"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbc\",\"workspace\":\"$NBWS\",\"timeout\":\"1h\"}"
is "$API_S" 403 "a start asking for a longer timeout than its grant's ceiling (1h > 10m): 403"
like "$API_B" "timeout: 1h is above uid 65534's ceiling of 10m" "... naming the ceiling"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbc\",\"workspace\":\"$NBWS\",\"cpus\":\"0.5\",\"timeout\":\"5m\"}"
is "$API_S" 201 "... while asking for less of both is allowed (201)"
NC1=$(run_of "$API_B")
for _ in $(seq 1 1200); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$NC1\"" && break; sleep 0.05; done
like "$(startrec "$NC1")" '"limit_cpus_milli":500' "... and the run has half a CPU"
like "$(startrec "$NC1")" '"timeout_ms":300000' "... and a 5 minute timeout"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nbc\",\"workspace\":\"$NBWS\"}"
is "$API_S" 201 "a start naming neither (201)"
NC2=$(run_of "$API_B")
for _ in $(seq 1 1200); do records | grep -q "\"event\":\"run.exit\".*\"run\":\"$NC2\"" && break; sleep 0.05; done
like "$(startrec "$NC2")" '"limit_cpus_milli":1000' "... gets the grant's ceilings: 1 CPU"
like "$(startrec "$NC2")" '"timeout_ms":600000' "... and 10 minutes"
# (uid 65534's runs are over and reaped before the cases below: runs_per_uid)
check "the daemon reports itself quiescent, with RA its one run" wait_quiescent "$NBQRUNS"

# ---- the review's cases ------------------------------------------------------------------------
# a workspace the caller may write but does not own would lend it the owner's identity
rf_mktemp /tmp
STICKY=$REPLY
chmod 1777 "$STICKY"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$STICKY\"}"
is "$API_S" 403 "uid 65534: a root-owned 1777 workspace is refused (a run acts as its workspace's owner)"
like "$API_B" "not owned by uid 65534" "... saying so"
# the check follows no symlink and no /proc magic link (no owner oracle
# through a root process's cwd), and holds no capability
ln -s "$NBWS" "$WS.nblink"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$WS.nblink\"}"
is "$API_S" 403 "uid 65534: a workspace path through a symlink is refused (403)"
like "$API_B" "symbolic links" "... by the check itself (ELOOP), before any run"
api_nb POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"/proc/$DPID/cwd/.\"}"
is "$API_S" 403 "uid 65534: the daemon's /proc/PID/cwd as a workspace is refused (403)"
unlike "$API_B" "not owned" "... without saying whose it is (no magic link followed)"
rm -f "$WS.nblink"
# one uid cannot take every connection: root is still served
python3 - "$SOCK" "$WS.idle" <<'PY' &
import os, socket, sys, time
os.setgid(65534); os.setuid(65534)
socks = []
for i in range(40):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); socks.append(s)
    except OSError:
        pass
open(sys.argv[2], "w").write(str(len(socks)))
for _ in range(600):  # held until the test is done with them (bounded)
    if os.path.exists(sys.argv[2] + ".done"):
        break
    time.sleep(0.05)
PY
register_pid $!
wait_for "$WS.idle"
api GET /v1/runs
is "$API_S" 200 "40 idle connections of uid 65534: root is still served"
out=$(as_user curl -s -m 5 --unix-socket "$SOCK" -w '%{http_code}' -o /dev/null http://ringfence/v1/runs)
like "$out" '^(503|000)$' "... and uid 65534's own next request is refused, 503 or reset (its connections are capped: $out)"
touch "$WS.idle.done"
# a kill waiting on a slow run does not hold the daemon for anyone else
api POST /v1/runs "{\"argv\":[\"/bin/sh\",\"-c\",\"sleep 3600\"],\"agent\":\"slow\",\"workspace\":\"$WS\"}"
RS=$(run_of "$API_B")
wait_registered "$RS"
spid=$(grep -o '"pid":[0-9]*' <<<"$(curl -s --unix-socket "$SOCK" "http://ringfence/v1/runs/$RS")" | head -n 1 | cut -d: -f2)
kill -STOP "$spid"
curl -s -m 20 --unix-socket "$SOCK" -d '{}' "http://ringfence/v1/runs/$RS/kill" >"$WS.slowkill" &
register_pid $!
wait_pending 1
t0=$(date +%s%N)
api GET /v1/audit
t1=$(date +%s%N)
is "$API_S" 200 "while a kill waits on a stopped supervisor, the daemon serves others ($(((t1 - t0) / 1000000)) ms)"
kill -CONT "$spid"
for _ in $(seq 1 600); do [ -s "$WS.slowkill" ] && break; sleep 0.05; done
like "$(cat "$WS.slowkill")" "\"killed\":\[\"$RS\"\]" "... and the kill completes once the supervisor runs again"

# the parser dies: a new one serves, the runs go on
pp=$(parser_pid) # by its uid: the daemon's other children are runs
check "the parser is found by its uid ($pp)" test -n "$pp"
if [ -n "$pp" ]; then kill -KILL "$pp"; fi
# the daemon notices the parser's socket closing and starts another: wait
# for that new parser process (by its uid), not for a fixed time
for _ in $(seq 1 600); do
	np=$(parser_pid)
	[ -n "$np" ] && [ "$np" != "$pp" ] && break
	sleep 0.05
done
api GET /v1/runs
is "$API_S" 200 "after the parser is killed, the daemon serves with a new one"
like "$API_B" "$RA" "... and the runs go on"

# ---- leak check: N and 2N run lifecycles ------------------------------------------------------------
# Each count is taken once the daemon reports itself quiescent with the
# runs it had before (its started runs reaped): connections of earlier
# cases that are still open, or runs still ending, cannot skew it.
# one run is going by now: RA (every other run of the cases above ended or
# was killed); a supervisor still exiting is counted until it is reaped
RUNS0=1
check "the daemon reports itself quiescent, with RA its one run, before the lifecycles" \
	wait_quiescent "$RUNS0"
lifecycle() {
	local i
	for i in $(seq 1 "$1"); do
		api POST /v1/runs "{\"argv\":[\"/bin/true\"],\"agent\":\"leak\",\"workspace\":\"$WS\"}"
		api GET /v1/runs
	done
	wait_quiescent "$RUNS0"
}
lifecycle 15
fd1=$QUIET_FDS
rss1=$(awk '/VmRSS/ {print $2}' "/proc/$DPID/status")
lifecycle 15
lifecycle 15
fd2=$QUIET_FDS
rss2=$(awk '/VmRSS/ {print $2}' "/proc/$DPID/status")
check "... and again after them, with the runs it had ($RUNS0)" test -n "$fd1" -a -n "$fd2"
is "$fd2" "$fd1" "the daemon's open fds after 30 more run lifecycles: the same ($fd1)"
if grep -qa __asan_init "$RF"; then
	# ASan keeps freed memory in quarantine: RSS says nothing there (leaks: LeakSanitizer)
	skip "... and its memory: $rss1 KiB then $rss2 KiB" "a sanitizer build"
else
	check "... and its memory: $rss1 KiB then $rss2 KiB (within 64 KiB)" test $((rss2 - rss1)) -le 64
fi

# ---- SIGKILL the daemon mid-run ---------------------------------------------------------------------
ra=$(curl -s --unix-socket "$SOCK" "http://ringfence/v1/runs/$RA")
init=$(grep -o '"init_pid":[0-9]*' <<<"$ra" | cut -d: -f2)
egress=$(grep -o '"egress_pid":[0-9]*' <<<"$ra" | cut -d: -f2)
sup=$(grep -o '"pid":[0-9]*' <<<"$ra" | head -n 1 | cut -d: -f2)
check "the run holds an egress process ($egress) before the daemon is killed" test "${egress:-0}" -gt 0
est=$(cat "/proc/$egress/status" 2>/dev/null)
like "$est" $'CapEff:\t0000000000000000' "... which has no capabilities"
like "$est" $'CapBnd:\t0000000000000000' "... an empty bounding set"
like "$est" $'NoNewPrivs:\t1' "... no_new_privs"
like "$est" $'Seccomp:\t2' "... and its seccomp filter"
ns=$(readlink "/proc/$init/ns/pid")
# held open while counting, so the kernel cannot hand its inode number to
# another, newer namespace (which would be counted as "left")
exec {nsfd}<"/proc/$init/ns/pid"
cgdir=$(grep -o '^0::.*' /proc/self/cgroup | cut -d: -f3)
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
check "the run's pid namespace is known ($ns)" test -n "$ns"
# processes in that namespace, counted in one pass (a readlink per process
# takes minutes on a loaded host with a thousand processes)
in_ns() { ls -l /proc/[0-9]*/ns/pid 2>/dev/null | grep -cF -- "$ns"; }
left=1
for _ in $(seq 1 600); do
	left=$(in_ns)
	[ "$left" = 0 ] && break
	sleep 0.05
done
is "$left" 0 "a daemon killed with SIGKILL: no process of its runs is left"
exec {nsfd}<&-
gone() { local st; st=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null); [ -z "$st" ] || [ "$st" = Z ]; }
for _ in $(seq 1 600); do gone "$egress" && gone "$sup" && break; sleep 0.05; done
check "... nor its supervisor ($sup)" gone "$sup"
check "... nor its egress process ($egress)" gone "$egress"
check "... its run is still registered (lost) until the next daemon" test -d "$RF_STATE/runs/$RA"
start_daemon
check "a new daemon starts" test -S "$SOCK"
like "$(records | grep "\"run\":\"$RA\"" | grep '"event":"run.lost"')" '"agent":"alpha"' \
	"the new daemon records run.lost for it"
check "... removes its registration" test ! -e "$RF_STATE/runs/$RA"
if [ -d "/sys/fs/cgroup/unified$cgdir" ]; then
	check "... and its cgroup" test ! -e "/sys/fs/cgroup/unified$cgdir/ringfence-$RA"
else
	skip "... and its cgroup" "no unified cgroup tree here"
fi
kill -TERM "$DPID"
wait "$DPID" 2>/dev/null
is "$?" 0 "SIGTERM stops the daemon cleanly"
check "... removing its socket" test ! -e "$SOCK"
out=$("$RF" audit verify --state-dir "$RF_STATE" 2>&1)
is "$?" 0 "the audit chain verifies ($out)"

# ---- a workspace check that hangs holds only its own request (test build) ---------------------
# RINGFENCE_TEST_CHECK_STALL (test builds only) makes the check child hang
# like a lookup on a stalled FUSE or NFS path would.
if [ -n "$RF_TEST_BIN" ] && [ -x "$RF_TEST_BIN" ]; then
	SOCK2=$SOCKDIR/stall.sock
	sed "s|\"socket\": \"$SOCK\"|\"socket\": \"$SOCK2\"|" "$WS.conf" >"$WS.stall.conf"
	chmod 0644 "$WS.stall.conf"
	RINGFENCE_TEST_CHECK_STALL=1 "$RF_TEST_BIN" daemon --state-dir "$RF_STATE" \
		--config "$WS.stall.conf" 2>>"$WS.daemon.err" &
	D2=$!
	register_pid "$D2"
	for _ in $(seq 1 600); do
		curl -s -m 1 --unix-socket "$SOCK2" http://ringfence/v1/runs >/dev/null 2>&1 && break
		sleep 0.05
	done
	rm -f "$WS.stalled"
	(
		out=$(as_user curl -s -m 20 -w '\n%{http_code}' --unix-socket "$SOCK2" \
			-d "{\"argv\":[\"/bin/true\"],\"agent\":\"nb\",\"workspace\":\"$NBWS\"}" \
			http://ringfence/v1/runs)
		printf '%s\n' "$out" >"$WS.stalled"
	) &
	sp=$!
	for _ in $(seq 1 600); do [ "$(dstate checks "$SOCK2")" = 1 ] && break; sleep 0.05; done
	is "$(dstate checks "$SOCK2")" 1 "a start waits on its hanging workspace check (the daemon reports it)"
	out=$(curl -s -m 5 -w '%{http_code}' -o /dev/null --unix-socket "$SOCK2" http://ringfence/v1/runs)
	is "$out" 200 "while a workspace check hangs, the daemon answers another client (200)"
	check "... before the hanging start has its answer" test ! -e "$WS.stalled"
	wait "$sp"
	is "$(tail -n 1 "$WS.stalled")" 403 "... and the hanging start is refused once its check times out (403)"
	like "$(cat "$WS.stalled")" "timed out" "... saying so"
	kill -TERM "$D2"
	wait "$D2" 2>/dev/null
else
	for _ in 1 2 3 4 5; do skip "a hanging workspace check" "no test build (RF_TEST_BIN)"; done
fi

done_testing
