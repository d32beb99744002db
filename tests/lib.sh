# shellcheck shell=bash
# shellcheck disable=SC2034 # (variables set here are for the scripts that source it)
#
# tests/lib.sh — TAP helpers for ringfence's shell integration tests.
#
# Source it from a test script (bash). The runner (tests/run.sh) sets:
#   RF_BIN       the release ringfence binary
#   RF_TEST_BIN  a test build (-Dtest_build=true) or empty when there is none
#   RF_PROBE     tests/helpers/rf-probe
#   RF_SRC       the repository root
#
# Output is TAP: "ok N - name", "not ok N - name" followed by "# ..." lines
# of diagnostics, "ok N - name # SKIP reason", and the plan "1..N" at the end
# (done_testing). A script exits non-zero when any test failed.
#
# Everything a test creates is registered here and removed by the EXIT trap:
# temp directories by path, background processes by recorded pid (never by
# name or pattern). Names carry $$ and a random suffix so parallel runs and
# other instances never collide.

set -u

RF_BIN=${RF_BIN:-}
RF_TEST_BIN=${RF_TEST_BIN:-}
RF_PROBE=${RF_PROBE:-}
RF_SRC=${RF_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# Seconds one ringfence invocation may take before rf_wait kills it (a hang
# is then a failure with RF_RC=${_RF_HUNG_RC}, never a stuck suite).
RF_RUN_TIMEOUT=${RF_RUN_TIMEOUT:-60}
_RF_HUNG_RC=250

# Who runs the tests, and what the run's HOME is for that user.
RF_UID=$(id -u)
RF_GID=$(id -g)
HOST_HOME=$(getent passwd "$RF_UID" | cut -d: -f6)
if [ "$RF_UID" = 0 ]; then RF_HOME_IN=/root; else RF_HOME_IN=/home/$(id -un); fi
is_root() { [ "$RF_UID" = 0 ]; }

_rf_n=0
_rf_failed=0
_rf_dirs=()
_rf_pids=()
_rf_netns=()
_rf_users=()

# ---- TAP -------------------------------------------------------------------

# diag LINE... — diagnostics; multi-line arguments become several "#" lines.
diag() {
	local a line
	for a in "$@"; do
		[ -n "$a" ] || continue
		while IFS= read -r line || [ -n "$line" ]; do
			printf '#   %s\n' "$line"
		done <<<"$a"
	done
}

# Between todo_begin REASON and todo_end, results carry "# TODO REASON":
# known gaps planned for later work. A failing TODO is reported, not
# counted as a failure; a passing one shows the gap is closed.
_rf_todo=""
todo_begin() { _rf_todo=$1; }
todo_end() { _rf_todo=""; }
_rf_directive() { [ -z "$_rf_todo" ] || printf ' # TODO %s' "$_rf_todo"; }

ok() {
	_rf_n=$((_rf_n + 1))
	printf 'ok %d - %s%s\n' "$_rf_n" "$1" "$(_rf_directive)"
}

# not_ok NAME [DIAG...]
not_ok() {
	_rf_n=$((_rf_n + 1))
	[ -n "$_rf_todo" ] || _rf_failed=$((_rf_failed + 1))
	printf 'not ok %d - %s%s\n' "$_rf_n" "$1" "$(_rf_directive)"
	shift
	[ $# -gt 0 ] && diag "$@"
	return 0
}

# skip NAME REASON
skip() {
	_rf_n=$((_rf_n + 1))
	printf 'ok %d - %s # SKIP %s\n' "$_rf_n" "$1" "$(printf '%s' "$2" | tr '\n' ' ')"
}

# check NAME CMD... — ok if CMD succeeds.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" "command failed: $*"; fi
}

# is GOT WANT NAME
is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3" "got:  '$1'" "want: '$2'" "$(_rf_last_run_diag)"
	fi
}

# isnt GOT UNWANTED NAME
isnt() {
	if [ "$1" != "$2" ]; then
		ok "$3"
	else
		not_ok "$3" "got '$1', which it must not be" "$(_rf_last_run_diag)"
	fi
}

# like GOT ERE NAME — GOT matches the extended regex ERE.
like() {
	if [[ $1 =~ $2 ]]; then
		ok "$3"
	else
		not_ok "$3" "got:  '$1'" "want match: /$2/" "$(_rf_last_run_diag)"
	fi
}

# unlike GOT ERE NAME
unlike() {
	if [[ $1 =~ $2 ]]; then
		not_ok "$3" "got:  '$1'" "must not match: /$2/" "$(_rf_last_run_diag)"
	else
		ok "$3"
	fi
}

# The last rf_run, for failure diagnostics.
_rf_last_run_diag() {
	[ -n "${RF_CMDLINE:-}" ] || return 0
	printf 'last run: %s\nexit: %s\nstdout: %s\nstderr: %s' \
		"$RF_CMDLINE" "${RF_RC:-}" "${RF_OUT:-}" "${RF_ERR:-}"
}

# done_testing — print the plan, exit 1 if anything failed. Cleanup runs
# from the EXIT trap.
done_testing() {
	printf '1..%d\n' "$_rf_n"
	[ "$_rf_failed" -eq 0 ] && exit 0
	exit 1
}

# skip_all REASON — the whole script does not apply here.
skip_all() {
	printf '1..0 # SKIP %s\n' "$1"
	exit 0
}

# bail_out REASON — the harness itself is broken; stop.
bail_out() {
	printf 'Bail out! %s\n' "$1"
	exit 1
}

# ---- cleanup ---------------------------------------------------------------

# register_pid PID — kill (TERM, then KILL) and reap PID at exit.
register_pid() { _rf_pids+=("$1"); }

# register_dir DIR — rm -rf DIR at exit.
register_dir() { _rf_dirs+=("$1"); }

# register_netns NAME — `ip netns del NAME` at exit (after the pids are
# gone; a namespace's veth ends go with it). Only names this script made
# (rft<pid-hex>...) are ever deleted.
register_netns() { _rf_netns+=("$1"); }

# register_user NAME — `userdel NAME` at exit. Only names this script made
# (rft<pid-hex>...) are ever deleted.
register_user() { _rf_users+=("$1"); }

_rf_cleanup() {
	local p d
	# Only the test script itself cleans up. A forked child that has not yet
	# exec'd (a background job killed early) still carries these traps; it
	# must not remove what the script is using.
	[ "$BASHPID" = "$$" ] || return 0
	# A recorded pid is signalled only while it is still our child (bash
	# reaps finished jobs, and the kernel may hand the number to another).
	local -a live=()
	for p in "${_rf_pids[@]}"; do
		[ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = "$$" ] && live+=("$p")
	done
	for p in "${live[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${live[@]}"; do
		kill -0 "$p" 2>/dev/null && sleep 0.2 && kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for d in "${_rf_netns[@]}"; do
		case $d in
		"rft$(printf '%x' $$)"*) ip netns del "$d" 2>/dev/null ;;
		*) printf '# cleanup: refusing to delete netns %s\n' "$d" ;;
		esac
	done
	for d in "${_rf_users[@]}"; do
		case $d in
		"rft$(printf '%x' $$)"*) userdel "$d" 2>/dev/null ;;
		*) printf '# cleanup: refusing to delete user %s\n' "$d" ;;
		esac
	done
	for d in "${_rf_dirs[@]}"; do
		# Only ever a directory this script made with rf_mktemp.
		case ${d##*/} in
		"rf-test.$$."*) rm -rf -- "$d" "$d".* ;; # and its siblings ("$WS.head", ...)
		*) printf '# cleanup: refusing to remove %s\n' "$d" ;;
		esac
	done
}
trap _rf_cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# cgroup_own_deepest — this process's deepest cgroup path, when the others
# (of every hierarchy) are its prefixes, as on a hybrid host whose v1 memory
# cgroup is deeper than the rest: a path beneath it lies beneath ours in
# every hierarchy. Fails when they do not nest.
cgroup_own_deepest() {
	local deep=/ p
	while IFS=: read -r _ _ p; do
		[ ${#p} -gt ${#deep} ] && deep=$p
	done </proc/self/cgroup
	while IFS=: read -r _ _ p; do
		p=${p%/} # (a variable of its own: "${p%/}" in a case pattern does not match)
		case $deep/ in "$p"/*) ;; *) return 1 ;; esac
	done </proc/self/cgroup
	printf '%s\n' "${deep%/}"
}

# ---- workspaces ------------------------------------------------------------

# rf_mktemp [PARENT] — make a new unique directory under PARENT (default
# /tmp), registered for removal at exit; its path is left in REPLY. (Not
# $(...): registration must happen in this shell.)
rf_mktemp() {
	local parent=${1:-/tmp}
	REPLY=$(mktemp -d "$parent/rf-test.$$.XXXXXXXX") || bail_out "mktemp in $parent failed"
	register_dir "$REPLY"
}

# new_workspace — set WS (the run's workspace), RF_STATE (its state dir, in
# a separate temp dir so it is never inside the workspace) and PROBE (the
# probe copied into WS: a path that exists both on the host and inside).
new_workspace() {
	rf_mktemp /tmp
	WS=$REPLY
	rf_mktemp /tmp
	RF_STATE=$REPLY/state
	mkdir -p "$RF_STATE"
	install_probe
}

# install_probe — copy rf-probe into $WS (the sandbox sees only the workspace
# and the system directories, so the build tree's copy is not runnable there).
install_probe() {
	[ -x "$RF_PROBE" ] || bail_out "RF_PROBE ($RF_PROBE) is not an executable"
	if ! cp "$RF_PROBE" "$WS/rf-probe" || ! chmod 0755 "$WS/rf-probe"; then
		bail_out "cannot copy rf-probe"
	fi
	PROBE=$WS/rf-probe
}

# ---- running ringfence -------------------------------------------------------

# rf_start [RUN-OPTIONS...] -- CMD... — start `ringfence run` in the
# background, from $RF_CWD (default $WS), stdin from $RF_STDIN (default
# /dev/null), with --state-dir $RF_STATE. Sets RF_PID. $RF_AS_USER=1 runs it
# as uid 65534 (see as_user_setup); $RF_RUN_BIN overrides the binary;
# RF_ENV (array) adds environment assignments for ringfence itself.
rf_start() {
	local bin=${RF_RUN_BIN:-$RF_BIN} cwd=${RF_CWD:-$WS}
	local -a pre=()
	rf_mktemp /tmp
	_RF_OUTF=$REPLY/out
	_RF_ERRF=$REPLY/err
	if [ "${RF_AS_USER:-0}" = 1 ]; then
		bin=$_RF_USER_BIN
		pre=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all
			env HOME=/nonexistent USER=nobody LOGNAME=nobody)
	fi
	if [ "${#RF_ENV[@]}" -gt 0 ]; then
		pre+=(env "${RF_ENV[@]}")
	fi
	if [ "${#RF_WRAP[@]}" -gt 0 ]; then
		pre=("${RF_WRAP[@]}" "${pre[@]}")
	fi
	RF_CMDLINE="${pre[*]} $bin run --state-dir $RF_STATE $*"
	RF_STARTED_BIN=$bin
	# shellcheck disable=SC2164 # a missing cwd is part of what some tests check
	(
		cd "$cwd" 2>/dev/null || cd /
		exec "${pre[@]}" "$bin" run --state-dir "$RF_STATE" "$@" \
			<"${RF_STDIN:-/dev/null}" >"$_RF_OUTF" 2>"$_RF_ERRF"
	) &
	RF_PID=$!
}
RF_ENV=()
# RF_WRAP: a command line rf_start puts in front of ringfence (it must end
# by exec'ing its arguments), e.g. to start it in a mount namespace of its own
RF_WRAP=()

# rf_wait — wait for the run started by rf_start (at most RF_RUN_TIMEOUT s,
# then it is killed and RF_RC=250); set RF_RC, RF_OUT, RF_ERR.
rf_wait() {
	local sp done_pid=""
	sleep "$RF_RUN_TIMEOUT" &
	sp=$!
	wait -n -p done_pid "$RF_PID" "$sp"
	RF_RC=$?
	if [ "$done_pid" = "$sp" ]; then
		kill -KILL "$RF_PID" 2>/dev/null
		wait "$RF_PID" 2>/dev/null
		RF_RC=$_RF_HUNG_RC
		printf '# ringfence did not finish within %ss and was killed\n' "$RF_RUN_TIMEOUT"
	else
		kill "$sp" 2>/dev/null
		wait "$sp" 2>/dev/null
	fi
	RF_OUT=$(cat "$_RF_OUTF")
	RF_ERR=$(cat "$_RF_ERRF")
}

# rf_run [RUN-OPTIONS...] -- CMD... — run and wait; sets RF_RC, RF_OUT, RF_ERR.
rf_run() {
	rf_start "$@"
	rf_wait
}

# rf_probe SUBCOMMAND ARGS... — run the probe inside a default sandbox.
rf_probe() {
	rf_run -- "$PROBE" "$@"
}

# in_list WORD "W1 W2 ..." — WORD is one of the words.
in_list() {
	case " $2 " in *" $1 "*) return 0 ;; esac
	return 1
}

# first_line TEXT — the first line of TEXT.
first_line() { printf '%s\n' "$1" | head -n 1; }

# field TEXT KEY — value of "KEY=value" among space/newline separated words.
field() {
	local w
	for w in $1; do
		case $w in "$2="*) printf '%s' "${w#"$2"=}" && return 0 ;; esac
	done
	return 1
}

# ---- unprivileged runs -------------------------------------------------------

# as_user_setup — prepare the current workspace for runs as uid 65534: copy
# the ringfence binary into a 0755 directory that uid can reach, hand the
# workspace and state dir to it. Then RF_AS_USER=1 rf_run ... or as_user CMD.
# Returns 1 (and does nothing) unless the tests run as root.
as_user_setup() {
	local d
	is_root || return 1
	rf_mktemp /tmp
	d=$REPLY
	chmod 0755 "$d"
	if ! cp "$RF_BIN" "$d/ringfence" || ! chmod 0755 "$d/ringfence"; then
		bail_out "cannot copy ringfence"
	fi
	_RF_USER_BIN=$d/ringfence
	chown -R 65534:65534 "$WS" "$RF_STATE" || bail_out "cannot chown workspace"
	chmod 0755 "$(dirname "$RF_STATE")"
}

# as_user CMD... — run CMD as uid/gid 65534 with no capabilities.
as_user() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		env HOME=/nonexistent USER=nobody LOGNAME=nobody "$@"
}

# ---- host-side helpers ---------------------------------------------------------

# start_bg VAR CMD... — start CMD in the background, register its pid, store
# it in VAR.
start_bg() {
	local var=$1
	shift
	"$@" &
	register_pid "$!"
	printf -v "$var" '%s' "$!"
}

# start_listener VAR KIND ADDR... — rf-probe listen on the host; waits until
# it listens; VAR gets the bound port (tcp) or 0. Uses the build tree's probe.
start_listener() {
	local var=$1 out line="" pid
	shift
	rf_mktemp /tmp
	out=$REPLY
	"$RF_PROBE" listen "$@" >"$out/l" 2>&1 &
	pid=$!
	register_pid "$pid"
	for _ in $(seq 1 100); do
		line=$(head -n 1 "$out/l")
		[ -n "$line" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	case $line in
	"ok "*) printf -v "$var" '%s' "${line#ok }" ;;
	*) bail_out "listener '$*' did not start: $line" ;;
	esac
}

# require_isolation — the safety interlock for attack scripts: a run must
# be in its own user, mount, pid and net namespaces, else the script bails
# out instead of running its attacks against the host. (The attacks are
# shaped to be harmless even then; this is the second line of defence.)
require_isolation() {
	local host inner kind
	host=$("$RF_PROBE" ns self)
	rf_probe ns self
	inner=$RF_OUT
	[[ $inner =~ ^ok\  ]] || bail_out "cannot start an isolated run: rc=$RF_RC $RF_ERR"
	for kind in user mnt pid net; do
		if [ "$(field "$host" "$kind")" = "$(field "$inner" "$kind")" ]; then
			bail_out "the run shares the host's $kind namespace: refusing to run attacks"
		fi
	done
}

# require_oci — OCI: ringfence-oci beside RF_BIN (the OCI runtime tests),
# else bail out.
require_oci() {
	OCI=$(dirname "$RF_BIN")/ringfence-oci
	[ -x "$OCI" ] || bail_out "no ringfence-oci beside $RF_BIN"
}

# require_bin — bail out when there is no binary or probe to test.
require_bin() {
	[ -x "$RF_BIN" ] || bail_out "RF_BIN ($RF_BIN) is not an executable"
	[ -x "$RF_PROBE" ] || bail_out "RF_PROBE ($RF_PROBE) is not an executable"
}
