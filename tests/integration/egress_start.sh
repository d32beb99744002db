#!/usr/bin/env bash
# egress_start.sh — an egress process that cannot be started (run.c,
# sup_egress_start and sup_egress_lost): each try is one loss, recorded as
# egress.lost with the error; the connection still queued starts the next
# try; after the fourth, every listener closes, so the connections are
# refused, and nothing is tried again. Before, a failed start left the
# listeners open with the connection queued, and the supervisor spawned
# egress processes one after another for as long as the run lived (an
# adversarial review saw ~3,100 in a few seconds).
#
# The failure is one that stays: a run with TLS termination (an HTTP
# rule) whose TLS module is damaged. The first run fills the state dir's
# trust cache; the module's entry there is then overwritten in place with
# zeros (same size, owner and mode: the keeper takes it as it is), so each
# egress process fails to load it before its lockdown. The control: the
# same run with the entry intact starts its egress process, which answers
# a refused request with 403.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (the trust cache is the state dir's, root's)"
command -v python3 >/dev/null || skip_all "needs python3"
new_workspace
records() { cat "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null; }

# the run's client: N connections to the run's proxy, one request each,
# each outcome on a line ("answered STATUS", "refused", "reset", "timeout")
cat >"$WS/conn.py" <<'PY'
import socket, sys
for i in range(int(sys.argv[1])):
    try:
        s = socket.create_connection(("127.0.0.1", 3128), 5)
        s.settimeout(5)
        s.sendall(b"GET http://svc.test/x HTTP/1.1\r\nHost: svc.test\r\n\r\n")
        d = s.recv(100)
        print("answered " + d.split(b" ")[1].decode() if d else "reset")
    except ConnectionRefusedError:
        print("refused")
    except ConnectionResetError:
        print("reset")
    except socket.timeout:
        print("timeout")
PY
RUN=(--allow-host svc.test --add-host svc.test:192.0.2.1 --allow-http 'svc.test:80 GET /ok')

# ---- control: the module intact ----------------------------------------------------------------
rf_run -w "$WS" "${RUN[@]}" -- python3 conn.py 1
is "$RF_RC" 0 "control: a run with an HTTP rule runs"
is "$RF_OUT" "answered 403" "... its egress process starts and refuses the request the rule does not allow (403)"
is "$(records | grep -c '"event":"egress.lost"')" 0 "... no egress.lost"
entry=$(find "$RF_STATE/tls-cache" -maxdepth 1 -name 'module-*' -type f | head -n 1)
like "$entry" 'module-' "the trust cache holds the TLS module's entry"

# ---- the module's cache entry damaged ----------------------------------------------------------
python3 - "$entry" <<'PY'
import os, sys
p = sys.argv[1]
n = os.path.getsize(p)
with open(p, "r+b") as f:
    f.write(b"\0" * n)
PY
rf_run -w "$WS" "${RUN[@]}" -- python3 conn.py 3
is "$RF_RC" 0 "with the module's entry damaged: the run still runs to its end"
first=$(first_line "$RF_OUT")
ok_first=0
case $first in refused | reset) ok_first=1 ;; esac
is "$ok_first" 1 "... its first connection is refused or reset (got: $first), not left waiting"
is "$(printf '%s\n' "$RF_OUT" | sed -n '2,3p' | tr '\n' ' ')" "refused refused " \
	"... and the next ones are refused (ECONNREFUSED): the listeners are closed"
lost=$(records | grep '"event":"egress.lost"')
is "$(printf '%s\n' "$lost" | grep -c .)" 4 "egress.lost recorded four times (three tries after the first), not in a loop"
like "$(printf '%s\n' "$lost" | tail -n 1)" '"then":"egress closed: connections are refused"' \
	"... the fourth closes the listeners"
like "$(printf '%s\n' "$lost" | tail -n 1)" '"times":4' "... and counts four"
error=$(printf '%s\n' "$lost" | head -n 1 | grep -o '"error":"[^"]*"')
like "$error" '^"error":"' "... each says why the start failed ($error)"
unlike "$error" 'went on its own' "... a failed start, not a process that went"

done_testing
