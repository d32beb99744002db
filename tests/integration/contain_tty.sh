#!/bin/bash
# tests/integration/contain_tty.sh — with a terminal on stdin (script(1)
# provides one), the run gets a pseudo-terminal of its own: its own session
# and controlling tty on its own devpts, and TIOCSTI inside cannot push
# keystrokes into the terminal that started it. Control: the same TIOCSTI
# run directly on that terminal does inject (so the detection works).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
command -v script >/dev/null || skip_all "script(1) (util-linux) is not installed"
new_workspace
require_isolation

tiocsti_legacy=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)

# The scenario runs inside script(1): its stdin/stdout are a pty, "the
# user's terminal". Sections are marked so the output can be parsed.
cat >"$WS/scenario.sh" <<'EOF'
rf() { "$RF_BIN" run --state-dir "$RF_STATE" -- "$@"; }
echo "== host-tty"; "$PROBE" tty
echo "== control-inject"; "$PROBE" tiocsti 0 Q
echo "== control-drain"; "$PROBE" tty-drain
echo "== tty"; rf "$PROBE" tty
echo "== session"; rf "$PROBE" setsid-check
echo "== inject0"; rf "$PROBE" tiocsti 0 Z
echo "== inject1"; rf "$PROBE" tiocsti 1 Y
echo "== inject2"; rf "$PROBE" tiocsti 2 X
echo "== drain"; "$PROBE" tty-drain
echo "== exit"; rf /bin/sh -c 'exit 7'; echo "rc=$?"
echo "== end"
EOF
export RF_BIN RF_STATE PROBE
# script(1)'s stdin must not reach EOF while the scenario runs (it would
# forward an EOF character into the terminal): a FIFO this shell holds open.
rf_mktemp /tmp
mkfifo "$REPLY/stdin"
exec 8<>"$REPLY/stdin"
out=$(cd "$WS" && timeout -k 5 120 script -qec "bash $WS/scenario.sh" /dev/null <"$REPLY/stdin" 2>&1 | tr -d '\r')
exec 8<&-

section() { # NAME — the lines after "== NAME" up to the next marker
	printf '%s\n' "$out" | awk -v n="== $1" '$0 == n {on=1; next} /^== / {on=0} on'
}

like "$out" '== end' "the scenario ran to the end under script(1)"
like "$(section host-tty)" '^ok name=/dev/pts/' "control: the scenario's stdin is a terminal"

if [ "$tiocsti_legacy" = 0 ]; then
	skip "control: TIOCSTI on the host terminal injects" "dev.tty.legacy_tiocsti=0 on this host"
else
	like "$(section control-drain)" '^ok \[Q\]$' "control: TIOCSTI on the host terminal injects (detection works)"
fi

like "$(section tty)" '^ok name=/dev/pts/[0-9]+ own=1 dev=' "inside, stdin is a pty on the devpts mounted in the run"
host_dev=$(field "$(section host-tty)" dev)
inner_dev=$(field "$(section tty)" dev)
if [ -n "$inner_dev" ] && [ "$inner_dev" != "$host_dev" ]; then
	ok "... a devpts instance of its own, not the host's ($inner_dev vs $host_dev)"
else
	not_ok "... a devpts instance of its own, not the host's" "run: '$inner_dev' host: '$host_dev'"
fi
sess=$(section session)
like "$sess" '^ok ' "read the run's session"
sid=$(field "$sess" sid)
if [ -n "$sid" ] && [ "$sid" != 0 ]; then
	ok "the run has its own session (sid=$sid)"
else
	not_ok "the run has its own session" "$sess"
fi
is "$(field "$sess" ctty)" 1 "the run has a controlling tty"

for s in inject0 inject1 inject2; do
	# Inside, TIOCSTI on its own pty may work or be refused; either way it
	# must not reach the outer terminal (checked below).
	like "$(section "$s")" '(ok|errno=E[A-Z]+)$' "TIOCSTI inside ran ($s)"
done
drain=$(section drain)
is "$drain" "ok []" "nothing injected inside reached the host terminal's input"
is "$(section exit)" "rc=7" "exit status passes through in pty mode"

if [ "$(section tty)" = "" ] || [[ ! $out =~ "== end" ]]; then
	diag "full output:" "$out"
fi

done_testing
