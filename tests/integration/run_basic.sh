#!/bin/bash
# tests/integration/run_basic.sh — `ringfence run` basics: exit statuses
# (own, 128+N, 124, 125, 126, 127), stdio pass-through, cwd, the run id,
# HOME, hostname, environment flags; as root and as an unprivileged uid.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

UUID7_RE='^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
WS_REAL=$(cd "$WS" && pwd -P)

# ---- exit statuses -----------------------------------------------------------

rf_run -- /bin/sh -c 'exit 0'
is "$RF_RC" 0 "exit status 0 passes through"
rf_run -- /bin/sh -c 'exit 3'
is "$RF_RC" 3 "exit status 3 passes through"
rf_run -- /bin/sh -c 'exit 125'
is "$RF_RC" 125 "the command's own 125 passes through"
rf_run -- /bin/sh -c 'kill -TERM $$'
is "$RF_RC" 143 "killed by SIGTERM inside -> 128+15"

# A caller that ignores SIGCHLD (inherited across exec): the run's init
# must still reap its command itself, or the run never ends.
chld_wrap=(bash -c 'trap "" CHLD; exec "$@"' bash)
ign=$("${chld_wrap[@]}" sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status)
if (((0x$ign >> 16) & 1)); then
	ok "control: the wrapper leaves SIGCHLD ignored across exec (SigIgn $ign)"
else
	not_ok "control: the wrapper leaves SIGCHLD ignored across exec" "SigIgn $ign"
fi
RF_WRAP=("${chld_wrap[@]}")
rf_run -- /bin/sh -c 'exit 7'
RF_WRAP=()
is "$RF_RC" 7 "a caller that ignores SIGCHLD: the command's status still comes back"
rf_run -- /bin/sh -c 'kill -KILL $$'
is "$RF_RC" 137 "killed by SIGKILL inside -> 128+9"
rf_run -- /bin/sh -c 'kill -SEGV $$'
is "$RF_RC" 139 "killed by SIGSEGV inside -> 128+11"

rf_run --timeout 1s -- "$PROBE" listen tcp 127.0.0.1 0
is "$RF_RC" 124 "--timeout ends a run that would not end -> 124"
rf_run --timeout 60s -- /bin/sh -c 'exit 4' # (in time even on a loaded host)
is "$RF_RC" 4 "--timeout does not change the status of a run that ends in time"

# 125: ringfence refuses, the command never runs, one "ringfence: " line.
refused() { # NAME RUN-ARGS... (the command is appended)
	local name=$1 marker
	shift
	marker=$WS/marker.$RANDOM$RANDOM
	rf_run "$@" -- "$PROBE" write "$marker"
	is "$RF_RC" 125 "$name: exit 125"
	like "$RF_ERR" '^ringfence: [^'$'\n'']+$' "$name: one 'ringfence: ' line on stderr"
	if [ -e "$marker" ]; then
		not_ok "$name: the command did not run" "marker $marker exists"
	else
		ok "$name: the command did not run"
	fi
}
printf '{\n  "version": 1,\n  "bogus_key": true\n}\n' >"$WS/unknown-key.json"
printf '{ "version": 1,\n' >"$WS/truncated.json"
refused "policy file missing" -p "$WS/no-such-policy.json"
refused "policy with an unknown key" -p "$WS/unknown-key.json"
refused "truncated policy" -p "$WS/truncated.json"
refused "unknown flag" --no-such-flag
refused "bad --timeout" --timeout banana
refused "bad --env" --env NOEQUALSSIGN
rf_run -p "$WS/unknown-key.json" -- /bin/true
like "$RF_ERR" 'unknown-key\.json:3:[0-9]+' "policy errors name file:line:col"
like "$RF_ERR" 'bogus_key' "policy errors name the key"

rf_run --
is "$RF_RC" 125 "no command -> 125"

# 126 / 127
printf '#!/bin/sh\necho should-not-run\n' >"$WS/not-executable.sh"
chmod 0644 "$WS/not-executable.sh"
rf_run -- "$WS/not-executable.sh"
is "$RF_RC" 126 "a file without the exec bit -> 126"
unlike "$RF_OUT" 'should-not-run' "... and it did not run"
rf_run -- "$WS"
is "$RF_RC" 126 "a directory as the command -> 126"
rf_run -- "rf-no-such-command-$$"
is "$RF_RC" 127 "a command not on PATH -> 127"
like "$RF_ERR" "rf-no-such-command-$$" "... and stderr names it"
rf_run -- /nonexistent-dir/cmd
is "$RF_RC" 127 "a missing absolute path -> 127"
unlike "$RF_ERR" 'the host has it' "... and no hint: the host has no such command either"
# a command the host has and the run does not see (an npm-style prefix: its
# bin/ links into lib/node_modules): the hint names it and the tree to mount
hb=$WS.hostbin
register_dir "$hb"
mkdir -p "$hb/pfx/bin" "$hb/pfx/lib/node_modules/tool"
printf '#!/bin/sh\necho hint-tool-ran\n' >"$hb/pfx/lib/node_modules/tool/cli.sh"
chmod 0755 "$hb/pfx/lib/node_modules/tool/cli.sh"
ln -s ../lib/node_modules/tool/cli.sh "$hb/pfx/bin/rf-hint-tool-$$"
RF_ENV=("PATH=$hb/pfx/bin:$PATH")
rf_run -- "rf-hint-tool-$$"
RF_ENV=()
is "$RF_RC" 127 "a command only the host has -> 127"
like "$RF_ERR" "the host has it at $hb/pfx/bin/rf-hint-tool-$$, which the run does not see: add --ro $hb/pfx and call it by that path" \
	"... with a hint naming it and the prefix to mount"
is "$(wc -l <<<"$RF_ERR")" 1 "... in one line"
rf_run --ro "$hb/pfx" -- "$hb/pfx/bin/rf-hint-tool-$$"
is "$RF_OUT" "hint-tool-ran" "... and following the hint runs it"

# ---- stdio -------------------------------------------------------------------

rf_run -- /bin/echo hello-stdout
is "$RF_OUT" hello-stdout "stdout passes through"
rf_run -- /bin/sh -c 'echo hello-stderr >&2'
like "$RF_ERR" '(^|'$'\n'')hello-stderr($|'$'\n'')' "stderr passes through"
is "$RF_OUT" "" "... and does not land on stdout"
printf 'hello-stdin\n' >"$WS/stdin.txt"
RF_STDIN=$WS/stdin.txt rf_run -- /bin/cat
is "$RF_OUT" hello-stdin "stdin passes through"
head -c 1048576 /dev/urandom >"$WS/big.bin"
RF_STDIN=$WS/big.bin rf_run -- /bin/cat
if cmp -s "$WS/big.bin" "$_RF_OUTF"; then
	ok "1 MiB of binary stdin comes back byte for byte on stdout"
else
	not_ok "1 MiB of binary stdin comes back byte for byte on stdout" \
		"got $(wc -c <"$_RF_OUTF") bytes, rc=$RF_RC"
fi

# ---- the run's surroundings ----------------------------------------------------

rf_probe cwd
is "$RF_OUT" "ok $WS_REAL" "cwd inside is the workspace"

rf_probe env
env_in=$RF_OUT
run_id=$(printf '%s\n' "$env_in" | sed -n 's/^RINGFENCE_RUN_ID=//p')
like "$run_id" "$UUID7_RE" "RINGFENCE_RUN_ID is a UUIDv7"
rf_probe env
run_id2=$(printf '%s\n' "$RF_OUT" | sed -n 's/^RINGFENCE_RUN_ID=//p')
like "$run_id2" "$UUID7_RE" "a second run has a UUIDv7 too"
isnt "$run_id2" "$run_id" "two runs have different ids"

home_in=$(printf '%s\n' "$env_in" | sed -n 's/^HOME=//p')
is "$home_in" "$RF_HOME_IN" "HOME inside is $RF_HOME_IN"
host_home=$HOST_HOME
rf_mktemp /tmp
ts=$(basename "$REPLY")
rf_run -- /bin/sh -c "'$PROBE' write \"\$HOME/rf-home.$ts\" && '$PROBE' read \"\$HOME/rf-home.$ts\" && '$PROBE' ls \"\$HOME\""
like "$RF_OUT" "^ok 9"$'\n'"ok rf-probe\."$'\n'"ok (.* )?rf-home\.$ts( |$)" "HOME inside exists and is writable"
if [ -e "$host_home/rf-home.$ts" ]; then
	rm -f -- "$host_home/rf-home.$ts"
	not_ok "a write to HOME inside does not reach the host home" "$host_home/rf-home.$ts appeared on the host"
else
	ok "a write to HOME inside does not reach the host home"
fi
# The host home is not what HOME shows inside: an entry of the host home is absent.
entry=$(find "$host_home" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | head -n 1)
if [ -z "$entry" ] && [ -d "$host_home" ] && [ -w "$host_home" ]; then
	rf_mktemp "$host_home"
	entry=$(basename "$REPLY")
fi
if [ -n "$entry" ]; then
	rf_probe stat "$host_home/$entry"
	is "$RF_OUT" "errno=ENOENT" "the host home's content is not visible inside (its $entry is absent)"
else
	skip "the host home's content is not visible inside" "the caller's home $host_home is empty or missing"
fi

rf_probe hostname
is "$RF_OUT" "ok ringfence" "hostname inside is 'ringfence'"
rf_probe id
is "$RF_OUT" "ok uid=$RF_UID gid=$RF_GID euid=$RF_UID egid=$RF_GID" "the caller's uid/gid inside (uid $RF_UID, its own user namespace)"

rf_run --agent my-agent --env RF_EXTRA=extra-value -- "$PROBE" env
like "$RF_OUT" $'\n''RINGFENCE_AGENT=my-agent('$'\n''|$)' "--agent sets RINGFENCE_AGENT"
like "$RF_OUT" $'\n''RF_EXTRA=extra-value('$'\n''|$)' "--env NAME=VALUE reaches the run"
rf_run -- "$PROBE" env
like "$RF_OUT" $'\n''TMPDIR=/tmp('$'\n''|$)' "TMPDIR is /tmp"
like "$RF_OUT" $'\n''PATH=/' "PATH is set"

# ---- as an unprivileged user ---------------------------------------------------

new_workspace
if ! as_user_setup; then
	skip "runs as an unprivileged uid" "not root: the runs above already were unprivileged"
	done_testing
fi
WS_REAL=$(cd "$WS" && pwd -P)
export RF_AS_USER=1
rf_probe id
is "$RF_OUT" "ok uid=65534 gid=65534 euid=65534 egid=65534" "unprivileged: the caller's uid inside"
rf_run -- /bin/sh -c 'exit 3'
is "$RF_RC" 3 "unprivileged: exit status passes through"
rf_run -- /bin/sh -c 'kill -TERM $$'
is "$RF_RC" 143 "unprivileged: 128+N on a signal"
rf_run --timeout 1s -- "$PROBE" listen tcp 127.0.0.1 0
is "$RF_RC" 124 "unprivileged: --timeout -> 124"
rf_run -- "rf-no-such-command-$$"
is "$RF_RC" 127 "unprivileged: not found -> 127"
rf_probe cwd
is "$RF_OUT" "ok $WS_REAL" "unprivileged: cwd is the workspace"
rf_probe write "$WS/user-file"
is "$RF_OUT" "ok 9" "unprivileged: the workspace is writable"
is "$(stat -c %u "$WS/user-file" 2>/dev/null)" 65534 "unprivileged: the file belongs to the caller on the host"
rf_run -- /bin/sh -c "'$PROBE' write \"\$HOME/x\" && echo \"HOME=\$HOME\""
like "$RF_OUT" $'\n''HOME=/home/nobody$' "unprivileged: HOME is /home/<user> and writable"
rf_probe hostname
is "$RF_OUT" "ok ringfence" "unprivileged: hostname"
rf_probe env
like "$RF_OUT" $'\n''RINGFENCE_RUN_ID=[0-9a-f-]{36}('$'\n''|$)' "unprivileged: RINGFENCE_RUN_ID set"
unset RF_AS_USER

done_testing
