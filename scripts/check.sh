#!/bin/sh
# scripts/check.sh — what `make check` runs after building:
#   1. the whole suite against the release build (fault-injection tests use
#      the separate test build),
#   2. the whole suite again against the ASan+UBSan build,
#   3. a smoke run of every libFuzzer target over its seed corpus.
# Ends with one line "N passed, N failed, N skipped" totalling all three.
set -u
cd "$(dirname "$0")/.." || exit 1

total_p=0 total_f=0 total_s=0
add() { # add counts from a "N passed, N failed, N skipped" line
	set -- $(printf '%s\n' "$1" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\{0,1\}$/\1 \2 \4/p')
	[ $# -ge 2 ] || { total_f=$((total_f + 1)); return; }
	total_p=$((total_p + $1)) total_f=$((total_f + $2)) total_s=$((total_s + ${3:-0}))
}

log=$(mktemp /tmp/rf-check.XXXXXX)
trap 'rm -f "$log"' EXIT

echo "== suite: release build (build/, fault injection from build-test/)"
tests/run.sh build build-test 2>&1 | tee "$log"
add "$(tail -n 1 "$log")"

echo "== suite: ASan+UBSan build (build-asan/)"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
tests/run.sh build-asan build-asan 2>&1 | tee "$log"
add "$(tail -n 1 "$log")"

echo "== fuzz smoke (libFuzzer, seed corpora + 20000 runs each)"
for t in build-asan/tests/fuzz/fuzz_*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=$(basename "$t")
	corpus=tests/fuzz/corpus/${name#fuzz_}
	work=$(mktemp -d /tmp/rf-fuzz.XXXXXX)
	[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/ 2>/dev/null
	# a crashing input is kept in /tmp (named in the output), never in the tree
	if "$t" -runs=20000 -max_len=4096 -artifact_prefix="$work.crash-" "$work" >"$work.log" 2>&1; then
		echo "ok - fuzz $name"
		total_p=$((total_p + 1))
		rm -f "$work".crash-*
	else
		echo "not ok - fuzz $name"
		tail -n 30 "$work.log"
		ls "$work".crash-* 2>/dev/null | sed 's/^/# kept: /'
		total_f=$((total_f + 1))
	fi
	rm -rf "$work" "$work.log"
done

echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
