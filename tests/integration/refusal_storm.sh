#!/bin/bash
# tests/integration/refusal_storm.sh — refusal storms (issue 16): a client
# that retries what will never be allowed (25 refusals of one destination
# within a few seconds, EGRESS_STORM_COUNT = 20 in 10 s) gets its caller one
# stderr line saying so, once, naming the destination and why; a few
# refusals get none (the control); with network.on_refusal_storm "kill"
# the same storm ends the run (SIGKILL, 137), says why, and run.kill
# records it; with a terminal the notice waits for the run's end. No
# network is needed: the run has no allow rule, so its
# egress process refuses every request itself (403).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
command -v python3 >/dev/null || skip_all "needs python3"
new_workspace

# N requests to the run's proxy for http://storm.test/ (each refused 403),
# then a marker line; the count of 403s on stdout
cat >"$WS/storm.py" <<'PY'
import os, socket, sys
n = int(sys.argv[1])
host, port = os.environ["HTTP_PROXY"].rsplit("/", 1)[-1].rsplit(":", 1)
refused = 0
for _ in range(n):
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall(b"GET http://storm.test/ HTTP/1.1\r\nHost: storm.test\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        data += b
    s.close()
    refused += data.startswith(b"HTTP/1.1 403")
print("refused=%d" % refused, flush=True)
PY

rf_run -- python3 storm.py 3
is "$RF_OUT" "refused=3" "control: 3 requests to a host no rule allows, each refused (403)"
is "$RF_RC" 0 "... the run ends normally"
unlike "$RF_ERR" 'keeps trying' "... and no storm notice for 3 refusals"

rf_run -- python3 storm.py 25
is "$RF_OUT" "refused=25" "25 requests to the same refused host, each refused (403)"
is "$RF_RC" 0 "... the run ends normally (network.on_refusal_storm defaults to notice)"
like "$RF_ERR" 'ringfence: the run keeps trying storm\.test:80 refused 20 times within 10 s \(no allow rule matches' \
	"... and the caller is told, naming the destination and why"
is "$(grep -c 'keeps trying' <<<"$RF_ERR")" 1 "... once"

# with a terminal (the run gets a pty, a full-screen program may own it):
# the notice waits for the run's end, after everything the run printed
if command -v script >/dev/null; then
	rf_mktemp /tmp
	mkfifo "$REPLY/stdin"
	exec 8<>"$REPLY/stdin"
	out=$(cd "$WS" && timeout -k 5 120 script -qec "'$RF_BIN' run --state-dir '$RF_STATE' -- sh -c 'python3 storm.py 25; echo run-output-end'" /dev/null <"$REPLY/stdin" 2>&1 | tr -d '\r')
	exec 8<&-
	like "$out" 'refused=25' "with a terminal: the same storm"
	end_at=$(grep -n 'run-output-end' <<<"$out" | head -n 1 | cut -d: -f1)
	note_at=$(grep -n 'keeps trying' <<<"$out" | head -n 1 | cut -d: -f1)
	check "... the notice comes after all the run printed (line ${note_at:-none} after ${end_at:-none})" \
		test "${note_at:-0}" -gt "${end_at:-999999}"
else
	skip "with a terminal: the storm notice is held back" "script(1) is not installed"
	skip "... after all the run printed" "script(1) is not installed"
fi

cat >"$WS/kill.json" <<'JSON'
{"version": 1, "network": {"on_refusal_storm": "kill"}}
JSON
"$RF_BIN" policy check "$WS/kill.json" >/dev/null 2>&1
is "$?" 0 "a policy with network.on_refusal_storm \"kill\" is valid"
rf_run -p "$WS/kill.json" -- sh -c 'python3 storm.py 25; python3 storm.py 5; echo survived'
is "$RF_RC" 137 "on_refusal_storm kill: the storm ends the run (SIGKILL, 137)"
unlike "$RF_OUT" 'survived' "... before it could go on"
like "$RF_ERR" 'killed by .*refusal storm: storm\.test:80 refused 20 times within 10 s' "... and says why"
like "$(cat "$RF_STATE"/audit/audit-*.jsonl | grep '"event":"run.kill"' | tail -n 1)" \
	'"reason":"refusal storm: storm\.test:80 refused 20 times' "... recorded as run.kill with the reason"

printf '{"version": 1, "network": {"on_refusal_storm": "ignore"}}\n' >"$WS/bad.json"
out=$("$RF_BIN" policy check "$WS/bad.json" 2>&1)
is "$?" 1 "network.on_refusal_storm \"ignore\": refused by the policy check"
like "$out" 'network.on_refusal_storm: must be "notice" or "kill"' "... saying what it may be"

done_testing
