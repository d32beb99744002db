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
# itself escaped, so "\u001b" typed as text cannot pass for an ESC. A
# caller of `ringfence daemon`'s API whose argv[0] holds CSI/OSC sequences,
# BEL, BS, CR, DEL and C1 controls (U+009B, U+0085): `ringfence ps` (a live
# run), `ringfence audit` (control.start and run.start command=) and
# `ringfence wait` print no raw control, ps and audit show argv[0] escaped;
# audit --json keeps its exact bytes; an argv[0] that is not UTF-8 (raw
# bytes, a lone surrogate escape) is refused with 400, nothing started.
# Controls: a plain command, host and API argv[0] show as they are.
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

# a command whose name is not UTF-8 runs (registered with U+FFFD for each
# bad byte, as run.start records it), shown without a raw byte
notutf=$WS/t$'\xff\xc3'
cp /bin/true "$notutf"
rf_run -- "$notutf"
is "$RF_RC" 0 "a command whose name is not UTF-8 (t\\xff\\xc3) runs (0)"
like "$(audit_txt --event run.start | tail -n 1)" " command=[^ ]*/t"$'\xef\xbf\xbd\xef\xbf\xbd'" " \
	"... run.start shows each bad byte as U+FFFD"
rm -f "$notutf"

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

# ---- a daemon API caller's argv[0] (control.start, run.start, ps) -----------------------------
# A caller of `ringfence daemon` names the command: argv[0] holds CSI and
# OSC sequences, BEL, BS, CR, DEL and the C1 controls U+009B (CSI) and
# U+0085 (NEL), sent as JSON escapes. Everything human-readable shows it
# escaped; audit --json keeps the exact bytes. Bytes that are not UTF-8
# cannot be sent: the API refuses them (400) and starts nothing.
# raw_any TEXT: how many characters of TEXT would act on a terminal (C0
# other than newline, DEL, C1, bytes that are not UTF-8)
raw_any() {
	printf '%s' "$1" | python3 -c 'import sys
s = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
print(sum(1 for c in s if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f or 0xdc80 <= ord(c) <= 0xdcff))'
}
if ! is_root; then
	skip "a daemon API caller's argv[0] is shown escaped" "needs root (ringfence daemon)"
elif ! command -v curl >/dev/null; then
	skip "a daemon API caller's argv[0] is shown escaped" "needs curl"
else
	rf_mktemp /tmp
	DDIR=$REPLY
	SOCK=$DDIR/control.sock
	printf '{"version": 1, "socket": "%s"}\n' "$SOCK" >"$DDIR/daemon.json"
	"$RF_BIN" daemon --state-dir "$RF_STATE" --config "$DDIR/daemon.json" 2>>"$DDIR/daemon.err" &
	DPID=$!
	register_pid "$DPID"
	for _ in $(seq 1 600); do
		curl -s -m 1 --unix-socket "$SOCK" http://ringfence/v1/runs >/dev/null 2>&1 && break
		sleep 0.05
	done
	api_post() { # api_post BODY-FILE: status in API_S, body in API_B
		local out
		out=$(curl -s -m 20 -w '\n%{http_code}' --unix-socket "$SOCK" -X POST \
			-H 'Content-Type: application/json' --data-binary "@$1" http://ringfence/v1/runs)
		API_S=$(tail -n 1 <<<"$out")
		API_B=$(sed '$d' <<<"$out")
	}
	# the command a run of the workspace finds as ./NAME (cwd: the workspace)
	dname="d${ESC}[31m${ESC}]0;pwn${BEL}"$'\b\r\177'"${CSI1}"$'\302\205'
	dshown='\./d\\u001b\[31m\\u001b\]0;pwn\\u0007\\u0008\\r\\u007f\\u009b\\u0085'
	cp /bin/sh "$WS/$dname"
	cp /bin/sh "$WS/plain"
	rm -f "$WS/ready.d" "$WS/ready.p" "$WS/stop"
	loop() { printf '"-c", "touch %s; while [ ! -e %s ]; do sleep 0.05; done"' "$WS/$1" "$WS/stop"; }
	printf '{"argv": ["./d\\u001b[31m\\u001b]0;pwn\\u0007\\b\\r\\u007f\\u009b\\u0085", %s], "agent": "disp", "workspace": "%s"}' \
		"$(loop ready.d)" "$WS" >"$DDIR/evil.json"
	printf '{"argv": ["./plain", %s], "agent": "disp", "workspace": "%s"}' "$(loop ready.p)" "$WS" >"$DDIR/plain.json"
	api_post "$DDIR/evil.json"
	is "$API_S" 201 "the daemon starts a run whose argv[0] holds ESC, BEL, BS, CR, DEL and C1 controls (201)"
	DR=$(grep -o '"run":"[^"]*"' <<<"$API_B" | cut -d'"' -f4)
	api_post "$DDIR/plain.json"
	is "$API_S" 201 "control: the daemon starts a run of ./plain (201)"
	PR=$(grep -o '"run":"[^"]*"' <<<"$API_B" | cut -d'"' -f4)
	for _ in $(seq 1 600); do [ -e "$WS/ready.d" ] && [ -e "$WS/ready.p" ] && break; sleep 0.05; done
	ps_out=$("$RF_BIN" ps --state-dir "$RF_STATE")
	touch "$WS/stop"
	dline=$(grep -F "$DR" <<<"$ps_out")
	like "$dline" "^$DR .* running .* $dshown\$" "ringfence ps: the API caller's argv[0] shown escaped, whole"
	is "$(raw_any "$ps_out")" 0 "... and ps prints no raw control character"
	like "$(grep -F "$PR" <<<"$ps_out")" "^$PR .* running .* \\./plain\$" "control: ps shows a plain argv[0] as it is"
	timeout 60 "$RF_BIN" wait --state-dir "$RF_STATE" "$DR" >"$DDIR/wait.out" 2>&1
	is "$?" 0 "the run whose argv[0] holds the controls ended (0)"
	is "$(raw_any "$(cat "$DDIR/wait.out")")" 0 "... ringfence wait prints no raw control character"
	timeout 60 "$RF_BIN" wait --state-dir "$RF_STATE" "$PR" >/dev/null 2>&1
	is "$?" 0 "control: the run of ./plain ended (0)"

	out=$(audit_txt --run "$DR")
	is "$(raw_any "$out")" 0 "ringfence audit: the daemon run's records hold no raw control character"
	like "$(grep ' control\.start ' <<<"$out")" "actor_uid=0 .*command=$dshown\$" \
		"... control.start shows command= escaped"
	like "$(grep ' run\.start ' <<<"$out")" " command=$dshown " "... run.start shows command= escaped"
	out=$(audit_txt --run "$PR")
	like "$(grep ' control\.start ' <<<"$out")" ' command=\./plain$' "control: control.start shows ./plain as it is"
	like "$(grep ' run\.start ' <<<"$out")" ' command=\./plain ' "control: run.start shows ./plain as it is"
	# the stored records hold the exact bytes: the escaping above is the
	# display's, not a loss (and raw_any does see them when they are raw)
	js=$(audit_txt --json --run "$DR")
	for ev in control.start run.start; do
		got=$(grep "\"event\":\"$ev\"" <<<"$js" |
			python3 -c 'import json,sys; sys.stdout.buffer.write(json.loads(sys.stdin.read())["command"].encode())')
		is "$got" "./$dname" "audit --json: $ev keeps the exact bytes of argv[0]"
		isnt "$(raw_any "$got")" 0 "... which are raw controls once decoded (what the table must not print)"
	done
	like "$(grep '"event":"control.start"' <<<"$js")" '"command":"\./d\\u001b\[31m\\u001b\]0;pwn\\u0007\\u0008\\u000d\\u007f' \
		"... as JSON escapes"

	# not UTF-8: refused, nothing started, the refusal quotes no raw byte
	printf '{"argv": ["./e\377\376\200z"], "agent": "disp", "workspace": "%s"}' "$WS" >"$DDIR/bad.json"
	api_post "$DDIR/bad.json"
	is "$API_S" 400 "an argv[0] that is not UTF-8 is refused (400)"
	like "$API_B" 'invalid UTF-8 in string \(byte 0xff\)' "... saying which byte, as hex"
	is "$(raw_any "$API_B")" 0 "... with no raw byte in the answer"
	printf '{"argv": ["./e\\udc80z"], "agent": "disp", "workspace": "%s"}' "$WS" >"$DDIR/sur.json"
	api_post "$DDIR/sur.json"
	is "$API_S" 400 "an argv[0] with a lone surrogate escape (\\udc80) is refused (400)"
	is "$(audit_txt --event control.start | grep -c ' agent=disp ')" 2 "... and neither starts a run"
	rm -f "$WS/$dname" "$WS/plain" "$WS/ready.d" "$WS/ready.p" "$WS/stop"
fi

"$RF_BIN" audit verify --state-dir "$RF_STATE" >/dev/null 2>&1
is "$?" 0 "the log verifies"

done_testing
