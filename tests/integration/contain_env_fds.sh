#!/bin/bash
# tests/integration/contain_env_fds.sh — what the run inherits: a clean,
# allowlisted environment (ringfence's own secrets absent), only fds 0-2,
# no capabilities in any set, no_new_privs, core size 0, a session of its
# own; the supervisor itself is not dumpable and has core size 0.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
require_isolation

# ---- environment -------------------------------------------------------------------

secret=rf-secret-$$-$RANDOM$RANDOM
RF_ENV=("RF_TEST_SECRET_TOKEN=$secret" "AWS_SECRET_ACCESS_KEY=$secret"
	"GITHUB_TOKEN=$secret" "SSH_AUTH_SOCK=/tmp/$secret.sock" "LD_LIBRARY_PATH=/nonexistent-$secret")
rf_run --env RF_VISIBLE=yes -- "$PROBE" env
RF_ENV=()
is "$(first_line "$RF_OUT")" ok "read the run's environment"
unlike "$RF_OUT" "$secret" "no value of ringfence's own environment reaches the run"
unlike "$RF_OUT" '(^|'$'\n'')(RF_TEST_SECRET_TOKEN|AWS_SECRET_ACCESS_KEY|GITHUB_TOKEN|SSH_AUTH_SOCK|LD_LIBRARY_PATH)=' \
	"no secret-looking name of ringfence's environment reaches the run"
like "$RF_OUT" '(^|'$'\n'')RF_VISIBLE=yes('$'\n''|$)' "control: --env NAME=VALUE does reach it"
names=$(printf '%s\n' "$RF_OUT" | tail -n +2 | sed 's/=.*//' | sort | tr '\n' ' ')
extra=""
for n in $names; do
	in_list "$n" "PATH HOME USER LOGNAME SHELL TERM LANG TMPDIR RINGFENCE_RUN_ID RINGFENCE_AGENT RF_VISIBLE HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY http_proxy https_proxy all_proxy no_proxy" ||
		extra+=" $n"
done
is "$extra" "" "the environment holds only the allowlist (got: $names)"

# ---- file descriptors -----------------------------------------------------------------

rf_mktemp /tmp
fdir=$REPLY
: >"$fdir/f"
exec 3<"$fdir/f" 4>"$fdir/g" 5<>"$fdir/h" 6</dev/null 7</etc/hostname 8>"$fdir/i" 9<"$fdir"
host_fds=$("$RF_PROBE" fds)
like "$host_fds" '^ok 0 1 2 3 4 5 6 7 8 9( |$)' "control: fds 3..9 are open in ringfence's caller"
rf_probe fds
exec 3<&- 4>&- 5<&- 6<&- 7<&- 8>&- 9<&-
is "$RF_OUT" "ok 0 1 2" "only fds 0 1 2 are open inside"

# ---- credentials and process attributes ---------------------------------------------------

rf_probe status
status=$RF_OUT
zero=0000000000000000
for k in CapInh CapPrm CapEff CapBnd CapAmb; do
	like "$status" "(^|"$'\n'")$k=$zero("$'\n'"|$)" "$k is empty"
done
like "$status" '(^|'$'\n'')NoNewPrivs=1('$'\n''|$)' "no_new_privs is set"
if is_root; then
	like "$("$RF_PROBE" status)" $'\n''CapEff=0*[1-9a-f]' "control: the probe does see capabilities on the host (root)"
fi

rf_probe rlimit-core
is "$RF_OUT" "ok 0 0" "core size limit is 0 (soft and hard)"

rf_probe setsid-check
sess=$RF_OUT
like "$sess" '^ok ' "read the session"
sid=$(field "$sess" sid)
if [ -n "$sid" ] && [ "$sid" != 0 ]; then
	ok "the run has a session of its own (its leader is inside, sid=$sid)"
else
	not_ok "the run has a session of its own (its leader is inside)" "$sess"
fi
is "$(field "$sess" leader)" 1 "the command leads its session"
is "$(field "$sess" ctty)" 0 "without a terminal on stdin there is no controlling tty"

# ---- the supervisor ---------------------------------------------------------------------

# As an unprivileged caller, a dumpable supervisor's /proc files would be
# owned by that caller; a non-dumpable one's by root.
new_workspace
as_user_setup && export RF_AS_USER=1
rf_start -- /bin/sh -c ": >'$WS/running'; while [ ! -e '$WS/go' ]; do sleep 0.05; done"
sup=$RF_PID
# Wait (bounded) until the command runs: the supervisor is set up by then.
for _ in $(seq 1 1200); do
	[ -e "$WS/running" ] && break
	kill -0 "$sup" 2>/dev/null || break
	sleep 0.05
done
# (/proc/PID/comm stays readable even when the process is not dumpable.)
if [ -e "$WS/running" ] && [ "$(cat "/proc/$sup/comm" 2>/dev/null)" = ringfence ]; then
	if is_root && [ "${RF_AS_USER:-0}" != 1 ]; then
		skip "the supervisor is not dumpable" "needs an unprivileged caller to observe"
	else
		is "$(stat -c %u "/proc/$sup/environ")" 0 "the supervisor is not dumpable (its /proc/PID/environ is root's)"
	fi
	core=$(awk '/^Max core file size/ {print $5, $6}' "/proc/$sup/limits")
	is "$core" "0 0" "the supervisor's core size limit is 0"
else
	not_ok "the supervisor is not dumpable" "could not observe pid $sup as a running ringfence"
	not_ok "the supervisor's core size limit is 0" "could not observe pid $sup"
fi
touch "$WS/go"
rf_wait
is "$RF_RC" 0 "(that run ended normally)"
unset RF_AS_USER

done_testing
