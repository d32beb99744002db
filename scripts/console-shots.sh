#!/usr/bin/env bash
# scripts/console-shots.sh — regenerate the screenshots of the operator
# console in docs/ (docs/CONSOLE.md shows them) from the current UI:
#
#   docs/console-runs.png    the runs page
#   docs/console-run.png     one run's page: facts, buttons, output, its
#                            timeline with an egress refusal and the two
#                            proposals for it
#   docs/console-health.png  the audit health page and its chart
#
#   sudo scripts/console-shots.sh        (as root: the browser runs as 65534)
#
#   RF_BIN   the ringfence to show (default build/ringfence)
#
# In a temporary directory (a state dir, a workspace, the browser's
# directory) it starts four detached runs with distinct agents: "reviewer"
# (a sleep loop), "docs-writer" (one, paused), "builder" (--allow-host api.example.test; it asks its
# egress proxy for http://denied.example/, which ringfence itself refuses
# with a 403 — no host is reached, only loopback is used — then sleeps) and
# "tester" (prints a few lines and exits 0: the runs page lists live runs
# only, its start is in the health page's counts); then `ringfence console
# --state-dir DIR --listen 127.0.0.1:0 --allow-uid 65534`, and drives
# Debian's chromium with puppeteer-core (scripts/browser.sh installs it;
# tests/helpers/browser-drive.js) as uid 65534 through the console's login
# URL, at 1280x800 (the run's and health pages full length), writing the PNGs into
# docs/. The token is never written anywhere but the temporary directory.
#
# At the end, whatever happened: the runs it started are killed by their
# ids, the console stopped by its pid, the temporary directory removed.
# Nothing is killed by name or pattern.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RF=${RF_BIN:-$SRC/build/ringfence}
DRIVE=$SRC/tests/helpers/browser-drive.js

die() {
	printf 'console-shots.sh: %s\n' "$*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "run as root (the browser runs as uid 65534, its sandbox on)"
[ -x "$RF" ] || die "$RF missing (ninja -C build)"
paths=$("$SRC/scripts/browser.sh") || die "scripts/browser.sh failed (exit $?)"
PPT=$(sed -n 's/^puppeteer=//p' <<<"$paths")
CHROMIUM=$(sed -n 's/^chromium=//p' <<<"$paths")

tmp=$(mktemp -d /tmp/rf-console-shots.XXXXXXXX)
declare -a RUNS=()
console_pid=""
cleanup() {
	local r
	for r in "${RUNS[@]}"; do
		"$RF" kill --state-dir "$tmp/state" "$r" >/dev/null 2>&1 || true
		# (kill returns when nothing of the run is left; wait, for its status)
		timeout 20 "$RF" wait --state-dir "$tmp/state" "$r" >/dev/null 2>&1 || true
	done
	if [ -n "$console_pid" ]; then
		kill "$console_pid" 2>/dev/null || true
		wait "$console_pid" 2>/dev/null || true
	fi
	rm -rf -- "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

chmod 0755 "$tmp"
mkdir -p "$tmp/state" "$tmp/ws" "$tmp/b"
chown 65534:65534 "$tmp/b"
STATE=$tmp/state

# start_run AGENT RUN-ARGS... -- CMD... — a detached run in the workspace;
# its id recorded (RUNS) and in RUN_ID
start_run() {
	local agent=$1
	shift
	RUN_ID=$(cd "$tmp/ws" && "$RF" run --state-dir "$STATE" --detach --agent "$agent" "$@" \
		</dev/null 2>"$tmp/run.err") || true
	[ -n "$RUN_ID" ] || die "no run of $agent: $(cat "$tmp/run.err")"
	RUNS+=("$RUN_ID")
}

start_run tester --task unit-tests -- /bin/sh -c \
	'echo "running 42 tests"; echo "ok: 42 passed, 0 failed"; exit 0'
tester=$RUN_ID
start_run reviewer --task review-pr-17 -- /bin/sh -c \
	'echo "reviewing: waiting for changes"; while :; do sleep 5; done'
start_run builder --task fix-issue-42 --allow-host api.example.test -- /bin/sh -c \
	'echo "fetching http://denied.example/ through the egress proxy";
	 curl -sS -o /dev/null -w "HTTP %{http_code}\n" -x http://127.0.0.1:3128 http://denied.example/;
	 echo "building..."; while :; do sleep 5; done'
builder=$RUN_ID
start_run docs-writer --task update-readme -- /bin/sh -c \
	'echo "drafting"; while :; do sleep 5; done'
# (paused once it is running: a moment after --detach returns)
paused=no
for _ in $(seq 50); do
	"$RF" pause --state-dir "$STATE" "$RUN_ID" >/dev/null 2>"$tmp/pause.err" && paused=yes && break
	sleep 0.1
done
[ "$paused" = yes ] || die "cannot pause the docs-writer run: $(cat "$tmp/pause.err")"

# the builder's refusal is in the audit log; the tester has ended
for _ in $(seq 200); do
	"$RF" audit --state-dir "$STATE" --json --run "$builder" 2>/dev/null |
		grep -q '"event":"egress.deny"' && break
	sleep 0.1
done
"$RF" audit --state-dir "$STATE" --json --run "$builder" 2>/dev/null |
	grep -q '"event":"egress.deny"' || die "the builder's refusal never reached the audit log"
timeout 30 "$RF" wait --state-dir "$STATE" "$tester" >/dev/null 2>&1 || die "the tester run did not end well"

"$RF" console --state-dir "$STATE" --listen 127.0.0.1:0 --allow-uid 65534 \
	</dev/null >"$tmp/console.out" 2>"$tmp/console.err" &
console_pid=$!
url=""
for _ in $(seq 200); do
	url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/login?token=[0-9a-f]*' "$tmp/console.out" 2>/dev/null) && break
	kill -0 "$console_pid" 2>/dev/null || break
	sleep 0.05
done
[ -n "$url" ] || die "the console printed no URL: $(cat "$tmp/console.err")"
base=${url%%/login*}

# the steps, in a file the browser's uid reads (the token is in it)
cat >"$tmp/b/steps.json" <<EOF
[
 {"goto": "$url"},
 {"waitFor": "tr[data-run='$builder']"},
 {"eval": "new Promise(r => setTimeout(r, 1200))"},
 {"screenshot": "$tmp/b/runs.png", "fullPage": false},
 {"goto": "$base/run/$builder"},
 {"waitFor": "#timeline .proposal"},
 {"waitFor": "#output"},
 {"screenshot": "$tmp/b/run.png", "fullPage": true},
 {"goto": "$base/health"},
 {"eval": "new Promise(r => setTimeout(r, 1500))"},
 {"goto": "$base/health"},
 {"waitFor": "#verify .good"},
 {"waitFor": "#chart svg polyline"},
 {"screenshot": "$tmp/b/health.png", "fullPage": true},
 {"eval": "location.pathname"},
 {"console": true}
]
EOF
chown 65534:65534 "$tmp/b/steps.json"
chmod 0600 "$tmp/b/steps.json"
rc=0
(cd "$tmp/b" && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	env HOME=/nonexistent USER=nobody LOGNAME=nobody TMPDIR="$tmp/b" \
	timeout 180 node "$DRIVE" "$PPT" "$CHROMIUM" "$tmp/b/steps.json") \
	>"$tmp/drive.out" 2>"$tmp/drive.err" || rc=$?
if [ "$rc" != 0 ]; then
	# the failing step's line names no token (the URL is only in a goto's step)
	grep '"ok":false' "$tmp/drive.out" | sed 's/token=[0-9a-f]*/token=…/g' >&2 || true
	die "the browser's steps failed (exit $rc)"
fi
python3 - "$tmp/drive.out" <<'PY' || die "the pages reported errors (above)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
msgs = lines[-1]["value"]
bad = [m for m in msgs if m["type"] in ("error", "pageerror", "csp")]
for m in bad:
    print(m, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
for name in runs run health; do
	install -m 0644 "$tmp/b/$name.png" "$SRC/docs/console-$name.png"
	echo "docs/console-$name.png"
done
