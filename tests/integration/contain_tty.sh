#!/bin/bash
# tests/integration/contain_tty.sh — with a terminal on stdin (script(1)
# provides one), the run gets a pseudo-terminal of its own: its own session
# and controlling tty on its own devpts, and TIOCSTI inside cannot push
# keystrokes into the terminal that started it. Control: the same TIOCSTI
# run directly on that terminal does inject (so the detection works).
#
# The run's terminal output (tests/helpers/fake-term.py plays the
# operator's terminal): OSC 52, a title, a DCS and an APC printed by the
# run never reach the terminal, while the SGR and cursor sequences around
# them do, in order; with --raw-terminal all of them arrive (the control).
# Queries (DA1, OSC 11 ?) pass, and replies the terminal sends 150 and 500
# ms later are consumed by ringfence, not left for the next program on the
# terminal; control: the same queries printed by a host program leave the
# replies there. Without a pty but with a terminal on stdout, the same
# sequences and the queries are dropped; with --mask-output values are
# masked and sequences still dropped; and so they are when `ringfence logs`
# shows a detached run's log on a terminal.
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

# ---- the run's terminal output -------------------------------------------------
if ! command -v python3 >/dev/null; then
	skip "the run's terminal output is filtered" "python3 is not installed (tests/helpers/fake-term.py)"
	done_testing # (exits)
fi
FAKE_TERM=$RF_SRC/tests/helpers/fake-term.py
rf_mktemp /tmp
TT=$REPLY
# the host side of the pty saw exactly these bytes (file) — as a C string
seen() { od -An -c "$1" | tr -s ' \n' ' '; }
has_bytes() { grep -qaF -- "$(printf '%b' "$2")" "$1"; }
printf '%s\n' "printf 'A\033[1;31mB\033]52;c;ZXZpbA==\aC\033]2;pwned-title\033\\\\D\033P+q544e\033\\\\E\033_Gf=100;QUFB\033\\\\F\033[0m\033[5;5HG\\n'" >"$WS/emit.sh"
printf '%s\n' "printf '\033[1mQ\033[c\033]11;?\a'" >"$WS/query.sh"
printf '%s\n' "stty -icanon -echo min 9 time 0; printf '\033[c'; head -c 9 | od -An -c" >"$WS/readreply.sh"
ft() { # OUTFILE DELAYS CMD... — run CMD on a fake terminal; its report in $ft_out
	local f=$1 d=$2
	shift 2
	ft_out=$(cd "$WS" && timeout -k 5 120 python3 "$FAKE_TERM" --out "$f" --delays "$d" -- "$@" 2>&1)
}

ft "$TT/raw" 150 "$RF_BIN" run --state-dir "$RF_STATE" --raw-terminal -- /bin/sh "$WS/emit.sh"
like "$ft_out" 'exit=0' "control: --raw-terminal: the run ran on the fake terminal"
if has_bytes "$TT/raw" '\033]52;c;ZXZpbA==\a' && has_bytes "$TT/raw" '\033]2;pwned-title' &&
	has_bytes "$TT/raw" '\033P+q544e' && has_bytes "$TT/raw" '\033_Gf=100'; then
	ok "control: with --raw-terminal OSC 52, the title, the DCS and the APC reach the terminal (detection works)"
else
	not_ok "control: with --raw-terminal OSC 52, the title, the DCS and the APC reach the terminal" "$(seen "$TT/raw")"
fi

ft "$TT/filtered" 150 "$RF_BIN" run --state-dir "$RF_STATE" -- /bin/sh "$WS/emit.sh"
like "$ft_out" 'exit=0' "the run ran on the fake terminal (default: filtered)"
if has_bytes "$TT/filtered" 'A\033[1;31mBCDEF\033[0m\033[5;5HG'; then
	ok "the text, SGR and cursor sequences arrive, in order"
else
	not_ok "the text, SGR and cursor sequences arrive, in order" "$(seen "$TT/filtered")"
fi
for s in '\033]52;' '\033]2;' '\033P' '\033_' 'pwned-title' 'ZXZpbA=='; do
	if has_bytes "$TT/filtered" "$s"; then
		not_ok "nothing of $s reaches the terminal" "$(seen "$TT/filtered")"
	else
		ok "nothing of $s reaches the terminal"
	fi
done

# queries: the terminal answers DA1 150 ms and OSC 11 500 ms later
ft "$TT/host-q" 150,500 /bin/sh "$WS/query.sh"
if [[ $ft_out =~ leaked=1b5b3f36323b3232631b5d31313b7267623a ]]; then
	ok "control: a host program's DA1 and OSC 11 replies reach the next program (detection works)"
else
	not_ok "control: a host program's DA1 and OSC 11 replies reach the next program" "$ft_out"
fi
ft "$TT/run-q" 150,500 "$RF_BIN" run --state-dir "$RF_STATE" -- /bin/sh "$WS/query.sh"
like "$ft_out" 'queries=2' "the run's DA1 and OSC 11 queries reach the terminal"
like "$ft_out" 'replies=2' "... which answers both, 150 and 500 ms later"
like "$ft_out" 'exit=0' "... the run's status is its own"
like "$ft_out" 'leaked=$' "... and no reply is left for the next program on the terminal"

ft "$TT/run-read" 150 "$RF_BIN" run --state-dir "$RF_STATE" -- /bin/sh "$WS/readreply.sh"
if grep -qaE '033 +\[ +\? +6 +2 +; +2 +2 +c' "$TT/run-read"; then
	ok "a run that asks (DA1) reads the terminal's reply itself"
else
	not_ok "a run that asks (DA1) reads the terminal's reply itself" "$ft_out $(seen "$TT/run-read")"
fi
like "$ft_out" 'leaked=$' "... and nothing is left over"

# no pty (stdin is not a terminal), stdout is one: filtered, queries dropped
# shellcheck disable=SC2016 # (expanded by the inner sh)
ft "$TT/nopty" 150 /bin/sh -c 'exec "$0" run --state-dir "$1" -- /bin/sh "$2" </dev/null; ' \
	"$RF_BIN" "$RF_STATE" "$WS/emit.sh"
if has_bytes "$TT/nopty" 'A\033[1;31mBCDEF\033[0m\033[5;5HG' && ! has_bytes "$TT/nopty" '\033]52;'; then
	ok "without a pty, output to a terminal is filtered too"
else
	not_ok "without a pty, output to a terminal is filtered too" "$(seen "$TT/nopty")"
fi
# shellcheck disable=SC2016 # (expanded by the inner sh)
ft "$TT/nopty-q" 150 /bin/sh -c 'exec "$0" run --state-dir "$1" -- /bin/sh "$2" </dev/null; ' \
	"$RF_BIN" "$RF_STATE" "$WS/query.sh"
like "$ft_out" 'queries=0' "... and queries are dropped (nobody would read the replies)"
if has_bytes "$TT/nopty-q" '\033[1mQ'; then
	ok "... while the SGR and text next to them arrive"
else
	not_ok "... while the SGR and text next to them arrive" "$(seen "$TT/nopty-q")"
fi

# --mask-output on a pty: masked first, then filtered
# shellcheck disable=SC2016 # (expanded by the run's sh)
printf '%s\n' 'printf "v=%s \033]52;c;eA==\a end\n" "$TOK"' >"$WS/secret.sh"
RF_TTY_SECRET=hunter2-tty-secret ft "$TT/masked" 150 "$RF_BIN" run --state-dir "$RF_STATE" \
	--secret TOK=env:RF_TTY_SECRET --mask-output -- /bin/sh "$WS/secret.sh"
if has_bytes "$TT/masked" 'v=***  end' && ! has_bytes "$TT/masked" 'hunter2' &&
	! has_bytes "$TT/masked" '\033]52;'; then
	ok "--mask-output on a pty: the bound value is masked and OSC 52 dropped"
else
	not_ok "--mask-output on a pty: the bound value is masked and OSC 52 dropped" "$ft_out $(seen "$TT/masked")"
fi

# a detached run's log, shown on a terminal by `ringfence logs`
logs_id=$(cd "$WS" && "$RF_BIN" run --state-dir "$RF_STATE" --detach -- /bin/sh "$WS/emit.sh" </dev/null)
"$RF_BIN" wait --state-dir "$RF_STATE" "$logs_id" >/dev/null 2>&1 # the run is over (its status is not the point)
ft "$TT/logs-raw" 150 "$RF_BIN" logs --state-dir "$RF_STATE" --raw-terminal "$logs_id"
if has_bytes "$TT/logs-raw" '\033]52;c;ZXZpbA==\a'; then
	ok "control: the log holds the run's OSC 52 (logs --raw-terminal shows it)"
else
	not_ok "control: the log holds the run's OSC 52 (logs --raw-terminal shows it)" "$ft_out $(seen "$TT/logs-raw")"
fi
ft "$TT/logs" 150 "$RF_BIN" logs --state-dir "$RF_STATE" "$logs_id"
if has_bytes "$TT/logs" 'A\033[1;31mBCDEF\033[0m\033[5;5HG' && ! has_bytes "$TT/logs" '\033]52;' &&
	! has_bytes "$TT/logs" '\033P' && ! has_bytes "$TT/logs" '\033_'; then
	ok "ringfence logs to a terminal filters the log as a live run's output is filtered"
else
	not_ok "ringfence logs to a terminal filters the log as a live run's output is filtered" "$(seen "$TT/logs")"
fi

done_testing
