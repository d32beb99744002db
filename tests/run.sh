#!/bin/bash
#
# tests/run.sh — run ringfence's test suite and summarise it.
#
#   tests/run.sh BUILD_DIR [TEST_BUILD_DIR]
#
# Runs every unit test executable BUILD_DIR/tests/unit/test_* and every
# tests/integration/*.sh, each under a timeout, each speaking TAP. The
# integration scripts get:
#   RF_BIN       BUILD_DIR/ringfence
#   RF_TEST_BIN  TEST_BUILD_DIR/ringfence (a -Dtest_build=true build); when
#                absent, RF_BIN if BUILD_DIR is itself a test build, else ""
#   RF_PROBE     BUILD_DIR/tests/helpers/rf-probe
#   RF_SRC       the repository root
#   RF_BIN_IS_TEST_BUILD  1 if BUILD_DIR is itself a -Dtest_build=true build
#
# Counting: each "ok" passes, each "not ok" fails, "# SKIP" skips, a failing
# "# TODO" counts as skipped. A script that bails out, crashes, times out,
# exits non-zero without reporting a failure, prints no TAP at all, or
# reports fewer tests than its plan adds one failure. Failures are listed
# with their diagnostics; the last line is exactly
#   N passed, N failed, N skipped
# and the exit status is non-zero iff anything failed.
#
# Environment: RF_TEST_TIMEOUT (seconds per script, default 900: a hang guard, not a time budget),
# RF_TEST_FILTER (run only scripts/executables whose name matches this ERE),
# RF_TEST_VERBOSE=1 (print every script's full TAP).

set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: tests/run.sh BUILD_DIR [TEST_BUILD_DIR]" >&2
	exit 2
fi

abspath() { (cd "$1" 2>/dev/null && pwd); }

RF_SRC=$(abspath "$(dirname "$0")/..")
BUILD_DIR=$(abspath "$1") || {
	echo "tests/run.sh: no build directory $1" >&2
	exit 2
}
TEST_BUILD_DIR=""
if [ $# -eq 2 ]; then
	TEST_BUILD_DIR=$(abspath "$2") || {
		echo "tests/run.sh: no test build directory $2" >&2
		exit 2
	}
fi

TIMEOUT=${RF_TEST_TIMEOUT:-900}
FILTER=${RF_TEST_FILTER:-}

is_test_build() {
	grep -qs '^#define RF_CONFIG_TEST_BUILD 1' "$1/config.h"
}

# The binary: BUILD_DIR/ringfence, or where meson leaves it (src/cli/).
find_bin() {
	local b
	for b in "$1/ringfence" "$1/src/cli/ringfence"; do
		[ -x "$b" ] && [ -f "$b" ] && printf '%s' "$b" && return 0
	done
	printf '%s' "$1/ringfence"
	return 1
}

RF_BIN=$(find_bin "$BUILD_DIR") || echo "tests/run.sh: no ringfence binary in $BUILD_DIR" >&2
RF_PROBE=$BUILD_DIR/tests/helpers/rf-probe
RF_TEST_BIN=""
if [ -n "$TEST_BUILD_DIR" ] && RF_TEST_BIN=$(find_bin "$TEST_BUILD_DIR"); then
	:
elif [ -n "$TEST_BUILD_DIR" ]; then
	RF_TEST_BIN=""
	echo "tests/run.sh: no ringfence in $TEST_BUILD_DIR; fault-injection tests will skip" >&2
elif is_test_build "$BUILD_DIR"; then
	RF_TEST_BIN=$RF_BIN
fi
# Whether RF_BIN itself has the test switches compiled in (then the
# "release binary has no switch" checks do not apply to it).
RF_BIN_IS_TEST_BUILD=0
is_test_build "$BUILD_DIR" && RF_BIN_IS_TEST_BUILD=1
export RF_BIN RF_TEST_BIN RF_PROBE RF_SRC RF_BIN_IS_TEST_BUILD
# `sudo make check`: root's runs in the suite are root's own, not the sudo
# user's (ringfence takes SUDO_UID as the caller); tests that want a sudo
# caller set it themselves
unset SUDO_UID SUDO_GID SUDO_USER SUDO_COMMAND

passed=0
failed=0
skipped=0
report=""  # failure details, printed at the end
todos=""   # failing TODO tests (known gaps), printed at the end
skips=""   # skipped tests with their reasons, printed at the end
controls="" # host controls (diag "control outside the sandbox: ..."), printed at the end
work=$(mktemp -d "/tmp/rf-run.$$.XXXXXXXX") || exit 2
trap 'rm -rf -- "$work"' EXIT

# add_failure NAME DETAILS — record a failure's report (counting is separate)
add_failure() {
	report+="FAIL $1"$'\n'
	[ -n "$2" ] && report+="$2"$'\n'
}

# run_one NAME CMD... — run one TAP producer and fold its results in.
run_one() {
	local name=$1
	shift
	local out=$work/out err=$work/err rc
	local p=0 f=0 s=0 n=0 plan="" bailed="" line cur="" in_fail=0
	local lc diag_buf=

	printf '%-40s ' "$name"
	# Own process group (timeout does that) so a timeout kills the whole
	# script, stdin closed so nothing waits on the terminal.
	# (The outer 2>/dev/null only silences bash's own "Segmentation fault"
	# notice; the script's stderr goes to $err.)
	{ timeout -k 10 "$TIMEOUT" "$@" </dev/null >"$out" 2>"$err"; } 2>/dev/null
	rc=$?

	while IFS= read -r line || [ -n "$line" ]; do
		lc=${line,,}
		if [[ $line =~ ^(not\ )?ok([[:space:]]|$) ]]; then
			# close a failure block
			[ "$in_fail" = 1 ] && add_failure "$name: $cur" "$diag_buf"
			in_fail=0
			n=$((n + 1))
			if [[ $lc =~ \#[[:space:]]*skip ]]; then
				s=$((s + 1))
				skips+="  $name: ${line#* - }"$'\n'
			elif [[ $lc =~ \#[[:space:]]*todo ]]; then
				# a TODO that fails is a known gap (listed, counted as
				# skipped); one that passes is a pass
				if [[ $line == not* ]]; then
					s=$((s + 1))
					todos+="  $name: $line"$'\n'
				else
					p=$((p + 1))
				fi
			elif [[ $line == not* ]]; then
				f=$((f + 1))
				cur=$line
				diag_buf=""
				in_fail=1
			else
				p=$((p + 1))
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
			if [ "$plan" = 0 ] && [[ $lc =~ skip ]]; then
				s=$((s + 1))
				plan=skip-all
				skips+="  $name: (all) ${line#*\# }"$'\n'
			fi
		elif [[ $line =~ ^Bail\ out! ]]; then
			bailed=$line
		elif [ "$in_fail" = 1 ] && [[ $line == \#* ]]; then
			diag_buf+="    $line"$'\n'
		fi
		# a host assumption's control, tried outside any sandbox: shown
		# whatever became of the cases that depend on it
		if [[ $line =~ ^#[[:space:]]+(control\ outside\ the\ sandbox:.*) ]]; then
			controls+="  $name: ${BASH_REMATCH[1]}"$'\n'
		fi
	done <"$out"
	[ "$in_fail" = 1 ] && add_failure "$name: $cur" "$diag_buf"

	local why=""
	if [ -n "$bailed" ]; then
		why=$bailed
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why="timed out after ${TIMEOUT}s (exit $rc)"
	elif [ "$rc" -ge 128 ]; then
		why="killed by signal $((rc - 128))"
	elif [ "$plan" != skip-all ] && [ "$n" = 0 ]; then
		why="no TAP output (exit $rc)"
	elif [ -n "$plan" ] && [ "$plan" != skip-all ] && [ "$plan" != "$n" ]; then
		why="planned $plan tests, ran $n (exit $rc)"
	elif [ -z "$plan" ]; then
		why="no plan (crashed after test $n?) (exit $rc)"
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		why="exited $rc without reporting a failure"
	fi
	if [ -n "$why" ]; then
		add_failure "$name: $why" "$(sed 's/^/    stderr: /' "$err" | tail -n 30)"
		f=$((f + 1))
	elif [ "$f" -gt 0 ] && [ -s "$err" ]; then
		report+="  ($name stderr, last lines)"$'\n'
		report+="$(sed 's/^/    stderr: /' "$err" | tail -n 15)"$'\n'
	fi

	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))

	if [ "$f" -gt 0 ]; then
		printf 'FAIL  (%d ok, %d not ok, %d skipped)\n' "$p" "$f" "$s"
	else
		printf 'ok    (%d ok, %d skipped)\n' "$p" "$s"
	fi
	if [ "${RF_TEST_VERBOSE:-0}" = 1 ]; then
		sed 's/^/    /' "$out"
	fi
}

filtered_out() {
	[ -n "$FILTER" ] && ! [[ $1 =~ $FILTER ]]
}

echo "ringfence tests: build $BUILD_DIR${RF_TEST_BIN:+, test build $RF_TEST_BIN}"

# (a) unit tests
found_unit=0
for t in "$BUILD_DIR"/tests/unit/test_*; do
	if [ ! -f "$t" ] || [ ! -x "$t" ]; then continue; fi
	found_unit=1
	name="unit/$(basename "$t")"
	filtered_out "$name" && continue
	run_one "$name" env RF_SRC="$RF_SRC" "$t"
done
[ "$found_unit" = 1 ] || echo "(no unit test executables in $BUILD_DIR/tests/unit)"

# (b) integration tests
for t in "$RF_SRC"/tests/integration/*.sh; do
	[ -f "$t" ] || continue
	name="integration/$(basename "$t")"
	filtered_out "$name" && continue
	run_one "$name" bash "$t"
done

if [ -n "$controls" ]; then
	echo
	echo "Host controls (tried outside any sandbox; the cases they gate skip where the host itself fails):"
	printf '%s' "$controls"
fi
if [ -n "$skips" ]; then
	echo
	echo "Skipped, with the reason:"
	printf '%s' "$skips"
fi
if [ -n "$todos" ]; then
	echo
	echo "Known gaps (TODO, not counted as failures):"
	printf '%s' "$todos"
fi
if [ "$failed" -gt 0 ]; then
	echo
	echo "Failures:"
	printf '%s' "$report"
	echo
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
