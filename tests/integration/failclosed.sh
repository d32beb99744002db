#!/bin/bash
# tests/integration/failclosed.sh — fail closed. With a test build
# ($RF_TEST_BIN, -Dtest_build=true), RINGFENCE_TEST_FAIL=<step> makes one
# setup step fail: the run must exit 125 with exactly one stderr line naming
# that step, and the command must not have run. The release build ($RF_BIN)
# contains no such switch at all. Layer switches (RINGFENCE_TEST_SKIP=<layer>)
# show that the containment tests can go red: with the layer left out, the
# attack they check succeeds.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

STEPS="userns uidmap mountns pidns netns ipcns utsns cgroupns rootfs system etc proc dev tmp
	home workspace pivot hostname loopback dns egress secrets rlimits caps nnp session cwd"

# ---- the release build has no switch ---------------------------------------------------

if [ "${RF_BIN_IS_TEST_BUILD:-0}" = 1 ]; then
	skip "the release binary does not contain RINGFENCE_TEST" "RF_BIN is a test build here"
else
	is "$(grep -c RINGFENCE_TEST "$RF_BIN")" 0 "the release binary does not contain the string RINGFENCE_TEST"
	RF_ENV=(RINGFENCE_TEST_FAIL=userns RINGFENCE_TEST_SKIP=netns)
	rf_run -- "$PROBE" write "$WS/release-marker"
	RF_ENV=()
	is "$RF_RC" 0 "the release binary ignores RINGFENCE_TEST_FAIL: the run succeeds"
	check "... and the command ran" test -e "$WS/release-marker"
	start_listener PORT0 tcp 127.0.0.1 0
	RF_ENV=(RINGFENCE_TEST_SKIP=netns)
	rf_probe tcp-connect 127.0.0.1 "$PORT0"
	RF_ENV=()
	is "$RF_OUT" "errno=ECONNREFUSED" "the release binary ignores RINGFENCE_TEST_SKIP=netns"
fi

if [ -z "$RF_TEST_BIN" ] || [ ! -x "$RF_TEST_BIN" ]; then
	skip "fault injection and layer switches" "no test build (RF_TEST_BIN unset; build with -Dtest_build=true)"
	done_testing
fi

if [ "$(grep -c RINGFENCE_TEST_FAIL "$RF_TEST_BIN")" -gt 0 ]; then
	ok "control: the test binary does contain RINGFENCE_TEST_FAIL (the grep above can see it)"
else
	not_ok "control: the test binary does contain RINGFENCE_TEST_FAIL" "$RF_TEST_BIN"
fi
RF_RUN_BIN=$RF_TEST_BIN

rf_run -- "$PROBE" write "$WS/control-marker"
is "$RF_RC" 0 "control: the test build runs a command when nothing is injected"
check "control: ... and the command ran" test -e "$WS/control-marker"

# ---- one failing step at a time ------------------------------------------------------------

for step in $STEPS; do
	marker=$WS/marker-$step
	RF_ENV=("RINGFENCE_TEST_FAIL=$step")
	rf_run -- "$PROBE" write "$marker"
	RF_ENV=()
	is "$RF_RC" 125 "$step fails: exit 125"
	n_lines=$(printf '%s' "$RF_ERR" | grep -c '')
	if [ "$n_lines" = 1 ] && [[ $RF_ERR =~ ^ringfence:\  ]] && [[ $RF_ERR =~ (^|[^a-z])$step([^a-z]|$) ]]; then
		ok "$step fails: one stderr line naming '$step'"
	else
		not_ok "$step fails: one stderr line naming '$step'" "stderr ($n_lines lines): $RF_ERR"
	fi
	if [ -e "$marker" ]; then
		not_ok "$step fails: the command did not run" "$marker exists"
	else
		ok "$step fails: the command did not run"
	fi
done

# ---- the command child ends before it executes -------------------------------------------
# It is made before START and waits for it with every layer on; killed
# meanwhile (the test build kills it there), init must not report an exec
# that never happened: 125 and one line, never the child's signal (137).

marker=$WS/marker-exec-gone
RF_ENV=("RINGFENCE_TEST_FAIL=exec")
rf_run -- "$PROBE" write "$marker"
RF_ENV=()
is "$RF_RC" 125 "a command child that ends before it executes: exit 125 (not 137, its signal)"
like "$RF_ERR" "not started: the run's command process ended before it could execute it" \
	"... one line saying the command never started"
check "... and the command did not run" test ! -e "$marker"

# The pty step only exists with a terminal on stdin.
if command -v script >/dev/null; then
	export RF_TEST_BIN RF_STATE PROBE WS
	# shellcheck disable=SC2016 # expanded by the shell script(1) starts
	out=$(cd "$WS" && RINGFENCE_TEST_FAIL=pty timeout -k 5 60 script -qec \
		'"$RF_TEST_BIN" run --state-dir "$RF_STATE" -- "$PROBE" write "$WS/marker-pty"; echo "rc=$?"' \
		/dev/null </dev/null 2>&1 | tr -d '\r')
	like "$out" '(^|'$'\n'')rc=125$' "pty fails (stdin a terminal): exit 125"
	like "$out" 'ringfence: [^'$'\n'']*pty' "pty fails: the message names 'pty'"
	check "pty fails: the command did not run" test ! -e "$WS/marker-pty"
else
	skip "pty fails (stdin a terminal)" "script(1) is not installed"
fi

# ---- layer switches: the attack succeeds without its layer -----------------------------------

# netns: the host's loopback listener becomes reachable.
start_listener PORT tcp 127.0.0.1 0
rf_probe tcp-connect 127.0.0.1 "$PORT"
is "$RF_OUT" "errno=ECONNREFUSED" "with the net namespace: host loopback listener refused"
RF_ENV=(RINGFENCE_TEST_SKIP=netns)
rf_probe tcp-connect 127.0.0.1 "$PORT"
RF_ENV=()
is "$RF_OUT" "ok" "RINGFENCE_TEST_SKIP=netns: the host loopback listener IS reachable (the net test can go red)"

# Layers whose switch the sandbox may not implement yet: the demo runs the
# attack with the switch; if the attack is still blocked, the switch is not
# there (SKIP) — unless the binary claims to know the switch.
# layer_demo LAYER NAME PROBE-ARGS... -- expected-ok-regex
start_bg HOSTPID sleep 300
layer_demo() {
	local layer=$1 name=$2 want=$3
	shift 3
	RF_ENV=("RINGFENCE_TEST_SKIP=$layer")
	rf_probe "$@"
	RF_ENV=()
	if [[ $RF_OUT =~ $want ]]; then
		ok "RINGFENCE_TEST_SKIP=$layer: $name"
	else
		skip "RINGFENCE_TEST_SKIP=$layer: $name" "switch not implemented by this build (got: $RF_OUT)"
	fi
}
layer_demo pidns "a host process can be signalled (the pid test can go red)" '^ok$' kill "$HOSTPID" 0
layer_demo mountns "/etc/shadow is readable (the fs test can go red)" '^ok ' read /etc/shadow
# caps and nnp are also enforced by seccomp (sethostname is refused; the
# filter and Landlock need no_new_privs), so their demos switch those off too.
layer_demo caps,seccomp "capabilities remain (the caps test can go red)" '^ok' sethostname
layer_demo nnp,seccomp,landlock "no_new_privs unset (the nnp test can go red)" 'NoNewPrivs:?[[:space:]=]*0' status

done_testing
