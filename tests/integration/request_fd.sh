#!/bin/bash
# tests/integration/request_fd.sh — `ringfence run --request-fd 3`, the
# entry by which the daemon starts a run's supervisor with its typed request
# (src/supervisor/runwire.h) in a sealed memfd, exercised without the daemon
# (daemon_caller.sh checks that the daemon uses it):
#   - root's request runs: the overlay's environment, the request's run id
#     (in the audit log), the workspace inode it names;
#   - a workspace inode other than the workspace's: refused (125, not run);
#   - from a uid other than root: refused (125, not run): the request names
#     whom the run is for;
#   - an fd that is not a sealed memfd: refused (125); a malformed request:
#     refused at its key (125, not run).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "the daemon's entry is root's (the test runs as uid $RF_UID)"
new_workspace
chmod 0755 "$WS" "$(dirname "$RF_STATE")"
HELPER=$RF_SRC/tests/helpers/request-fd.py

# request FILE RUN-ID ARGV-JSON [EXTRA-TOP-LEVEL-MEMBERS] — a request of
# root's for a run in $WS whose overlay sets FROM_REQ=$VAL
request() {
	printf '{"version":1,"run":"%s","state_dir":"%s","caller_uid":0,%s"log_max":1048576,"mask_output":false,"keep_state":false,"policy":{"version":1,"identity":{"agent":"rq-agent"},"workspace":"%s","env":{"FROM_REQ":"%s"}},"profiles":[],"argv":%s}' \
		"$2" "$RF_STATE" "${4:-}" "$WS" "$VAL" "$3" >"$1"
}
# start [HELPER-OPTIONS...] FILE — RC, OUT (stdout and stderr)
start() {
	OUT=$(cd "$WS" && timeout 60 python3 "$HELPER" "${@:1:$#-1}" "$RF_BIN" "${!#}" 2>&1)
	RC=$?
}
uuid() { cat /proc/sys/kernel/random/uuid; }

VAL=from-request-$RANDOM$RANDOM
REQ=$WS.req
ID=$(uuid)

# ---- the legitimate path ---------------------------------------------------------
request "$REQ" "$ID" "[\"/bin/sh\",\"-c\",\"echo env=\$FROM_REQ; touch $WS/ran\"]"
start "$REQ"
is "$RC" 0 "root's request: the run exits 0 ($OUT)"
like "$OUT" "env=$VAL" "... with the overlay's environment"
check "... and the command ran in the workspace" test -e "$WS/ran"
like "$(cat "$RF_STATE"/audit/*.jsonl 2>/dev/null)" "\"run\":\"$ID\"" "... under the request's run id (audit log)"
like "$(cat "$RF_STATE"/audit/*.jsonl 2>/dev/null)" '"agent":"rq-agent"' "... and the overlay's agent"

# ---- the workspace inode ------------------------------------------------------------
rm -f "$WS/ran"
read -r dev ino < <(stat -c '%d %i' "$WS")
request "$REQ" "$(uuid)" "[\"/bin/sh\",\"-c\",\"touch $WS/ran\"]" "\"workspace_inode\":{\"dev\":$dev,\"ino\":$ino},"
start "$REQ"
is "$RC" 0 "a request naming the workspace's own inode: runs"
check "... the command ran" test -e "$WS/ran"
rm -f "$WS/ran"
request "$REQ" "$(uuid)" "[\"/bin/sh\",\"-c\",\"touch $WS/ran\"]" "\"workspace_inode\":{\"dev\":$dev,\"ino\":$((ino + 1))},"
start "$REQ"
is "$RC" 125 "a request naming another inode (a workspace swapped after the daemon's check): 125"
like "$OUT" 'not the directory that was checked' "... saying so"
check "... and the command did not run" test ! -e "$WS/ran"

# ---- who may use it ----------------------------------------------------------------
request "$REQ" "$(uuid)" "[\"/bin/sh\",\"-c\",\"touch $WS/ran\"]"
chmod 0644 "$REQ"
start --uid 65534 "$REQ"
is "$RC" 125 "the same request from uid 65534: 125"
like "$OUT" 'only root \(the daemon\) starts runs for a caller' "... because only root may name the caller"
check "... and the command did not run" test ! -e "$WS/ran"
start --unsealed "$REQ"
is "$RC" 125 "an fd that is not sealed (its writer could still change it): 125"
like "$OUT" 'not a sealed memfd' "... saying so"
check "... and the command did not run" test ! -e "$WS/ran"

# ---- malformed requests --------------------------------------------------------------
request "$REQ" "$(uuid)" "[\"/bin/sh\",\"-c\",\"touch $WS/ran\"]" '"bogus":1,'
start "$REQ"
is "$RC" 125 "a request with an unknown key: 125"
like "$OUT" '^ringfence: .*bogus: run request: unknown key$' "... one line, at the key"
check "... and the command did not run" test ! -e "$WS/ran"
request "$REQ" "NOT-A-UUID" "[\"/bin/sh\",\"-c\",\"touch $WS/ran\"]"
start "$REQ"
is "$RC" 125 "a request with a bad run id: 125"
like "$OUT" 'run: run request: not a lower-case UUID' "... at the key"
request "$REQ" "$(uuid)" "[]"
start "$REQ"
is "$RC" 125 "a request without a command: 125"
like "$OUT" 'argv: run request: empty' "... at the key"
check "... and nothing ran" test ! -e "$WS/ran"

done_testing
