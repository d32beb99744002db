#!/usr/bin/env bash
# display.sh — run- and caller-chosen bytes never reach the operator's
# terminal raw (issue 13, section 2).
#
# Asserts: a command whose argv[0] holds an OSC sequence (ESC ] 0;pwn BEL)
# is refused with 127 and its error line, `ringfence audit` (run.start
# command=, run.exit note=) and `ringfence ps` (a live run) show it escaped
# (\u001b ... \u0007) with no raw ESC or BEL; a SOCKS5 request naming a
# host with ESC and a C1 CSI (U+009B) is recorded as egress.deny and shown
# escaped by `ringfence audit`; `audit --json` keeps the exact bytes (JSON
# escapes that decode to the original string); a literal backslash is
# itself escaped, so "\u001b" typed as text cannot pass for an ESC. Controls:
# a plain command and host show as they are.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

ESC=$'\033'
BEL=$'\007'
CSI1=$'\302\233' # U+009B, the one-byte CSI of C1, as UTF-8
raw_controls() { printf '%s' "$1" | LC_ALL=C grep -c "[$ESC$BEL]\|$CSI1"; }
audit_txt() { "$RF_BIN" audit --state-dir "$RF_STATE" "$@"; }

# ---- argv[0] with an OSC title sequence --------------------------------------------------
evil="x${ESC}]0;pwn${BEL}"
rf_run -- "$evil"
is "$RF_RC" 127 "a command named with ESC ] 0;pwn BEL does not exist: 127"
is "$(raw_controls "$RF_ERR")" 0 "... its error line holds no raw ESC or BEL"
like "$RF_ERR" 'x\\u001b\]0;pwn\\u0007: command not found' "... and shows the name escaped"
out=$(audit_txt)
is "$(raw_controls "$out")" 0 "ringfence audit: no raw ESC or BEL in the table"
like "$out" 'run.start .* command=x\\u001b\]0;pwn\\u0007 ' "... run.start shows command= escaped"
like "$out" 'run.exit .* note=x\\u001b\]0;pwn\\u0007: command not found' "... run.exit's note too"
js=$(audit_txt --json --event run.start | tail -n 1)
got=$(printf '%s' "$js" | python3 -c 'import json,sys; sys.stdout.write(json.loads(sys.stdin.read())["command"])')
is "$got" "$evil" "audit --json keeps the exact bytes of the command (JSON-escaped)"
like "$js" '"command":"x\\u001b\]0;pwn\\u0007"' "... as JSON escapes"

# control: a plain command is shown as it is
rf_run -- /bin/true
like "$(audit_txt --event run.start | tail -n 1)" ' command=/bin/true ' "control: a plain command is shown unchanged"

# a backslash is escaped itself: the text \u001b is not an ESC
cp /bin/true "$WS/"'b\u001b'
rf_run -- "$WS/"'b\u001b'
is "$RF_RC" 0 "control: a command with a backslash in its name runs"
like "$(audit_txt --event run.start | tail -n 1)" ' command=[^ ]*/b\\\\u001b ' \
	"a literal backslash shows as \\\\: typed text cannot pass for an escape"

# ---- ps: a live run whose argv[0] holds the sequence -----------------------------------------
live="$WS/sh${ESC}]0;pwn${BEL}"
cp /bin/sh "$live"
rm -f "$WS/ready" "$WS/stop"
rf_start -- "$live" -c "touch '$WS/ready'; while [ ! -e '$WS/stop' ]; do sleep 0.05; done"
for _ in $(seq 1 200); do [ -e "$WS/ready" ] && break; sleep 0.05; done
ps_out=$("$RF_BIN" ps --state-dir "$RF_STATE")
touch "$WS/stop"
rf_wait
is "$RF_RC" 0 "control: the run whose argv[0] holds the sequence ran and ended (0)"
is "$(raw_controls "$ps_out")" 0 "ringfence ps: no raw ESC or BEL"
like "$ps_out" 'sh\\u001b\]0;pwn\\u0007' "... the command shown escaped"
rm -f "$live" "$WS/"'b\u001b' "$WS/ready" "$WS/stop"

# ---- a SOCKS5 host name with ESC and C1 CSI (egress.deny) ----------------------------------------
cp "$RF_SRC/tests/helpers/egress-client.py" "$WS/ec.py"
host="a${ESC}]0;pwn${BEL}${CSI1}2J.test"
rf_run -- python3 "$WS/ec.py" socks "$host" 80
like "$(first_line "$RF_OUT")" '^socks REP=[1-9]' "a SOCKS5 CONNECT to a host with ESC and CSI is refused"
out=$(audit_txt --event egress.deny)
is "$(raw_controls "$out")" 0 "ringfence audit: the refused host holds no raw ESC, BEL or C1 CSI"
like "$out" 'host=a\\u001b\]0;pwn\\u0007\\u009b2J\.test ' "... it is shown escaped (\\u001b, \\u0007, \\u009b)"
js=$(audit_txt --json --event egress.deny | tail -n 1)
got=$(printf '%s' "$js" | python3 -c 'import json,sys; sys.stdout.buffer.write(json.loads(sys.stdin.read())["host"].encode())')
is "$got" "$host" "audit --json keeps the host's exact bytes"

"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "the log verifies"

done_testing
