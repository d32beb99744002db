#!/usr/bin/env bash
# tests/helpers/browser-smoke.sh — a self-check of the headless-browser
# harness (scripts/browser.sh, tests/helpers/browser-drive.js, Debian's
# chromium) on this machine, outside the test suite.
#
#   tests/helpers/browser-smoke.sh
#
# Installs the harness if needed (scripts/browser.sh), serves a small page
# (a button whose external script changes a text, sets a cookie, removes a
# spinner; a link to a second page; a CSP that refuses an inline script)
# with `python3 -m http.server` on 127.0.0.1 and a port the kernel picks,
# and drives it with browser-drive.js: goto, text, texts, count, attr,
# click (without and with a navigation), waitFor, waitGone, eval, cookies,
# fetch, console (the CSP violation among the messages), screenshot and,
# with the sandbox on, chrome://sandbox saying it is sandboxed; then a
# failing step (exit 1, the run stops there); then `chromium --headless=new
# --dump-dom` of the page. Each browser runs as uid/gid 65534 (nobody) with
# no capabilities and HOME=/nonexistent when this runs as root — as
# tests/lib.sh's as_user runs things — else as the caller. Every temporary
# profile must be gone afterwards.
#
# Prints PASS or FAIL (with what failed) as its last line; exit 0 on PASS,
# 1 on FAIL, 77 with SKIP and the reason when the harness cannot be
# installed here (browser.sh's exit 2). RF_BROWSER_NO_SANDBOX=1 is passed
# on (chromium without its sandbox; the chrome://sandbox check is left out).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DRIVE=$SRC/tests/helpers/browser-drive.js

fails=()
fail() { fails+=("$1"); }

tmp=$(mktemp -d /tmp/rf-browser-smoke.XXXXXXXX)
server_pid=""
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf -- "$tmp"
}
trap cleanup EXIT

rc=0
paths=$("$SRC/scripts/browser.sh" 2>"$tmp/browser.err") || rc=$?
if [ "$rc" = 2 ]; then
	echo "SKIP: $(cat "$tmp/browser.err")"
	exit 77
elif [ "$rc" != 0 ]; then
	cat "$tmp/browser.err" >&2
	echo "FAIL: scripts/browser.sh exited $rc"
	exit 1
fi
PPT=$(sed -n 's/^puppeteer=//p' <<<"$paths")
CHROMIUM=$(sed -n 's/^chromium=//p' <<<"$paths")

# as_browser CMD... — CMD as the unprivileged uid (65534 when root)
if [ "$(id -u)" = 0 ]; then
	as_browser() {
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			env HOME=/nonexistent USER=nobody LOGNAME=nobody "$@"
	}
	owner=65534:65534
else
	as_browser() { "$@"; }
	owner=$(id -u):$(id -g)
fi

# the site; out/ is the browser's: its TMPDIR (profiles) and the screenshot
chmod 0755 "$tmp"
mkdir "$tmp/www" "$tmp/out"
chown "$owner" "$tmp/out"
cat >"$tmp/www/index.html" <<'EOF'
<!doctype html>
<html><head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="script-src 'self'">
<title>rf smoke</title>
</head><body>
<h1>ringfence browser smoke</h1>
<p id="msg">before</p>
<button id="btn" type="button">Press</button>
<div id="spinner">working</div>
<ul><li>a</li><li>b</li></ul>
<a id="next" href="page2.html">next</a>
<script>document.getElementById('msg').textContent = 'inline ran';</script>
<script src="app.js"></script>
</body></html>
EOF
cat >"$tmp/www/app.js" <<'EOF'
document.cookie = 'rf_smoke=1; SameSite=Strict; path=/';
document.getElementById('btn').addEventListener('click', () => {
  const msg = document.getElementById('msg');
  msg.textContent = 'after';
  msg.classList.add('done');
  document.getElementById('spinner').remove();
  console.log('smoke: clicked');
});
EOF
cat >"$tmp/www/page2.html" <<'EOF'
<!doctype html>
<html><head><meta charset="utf-8"><title>page 2</title></head>
<body><h1 id="p2">second page</h1></body></html>
EOF

python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$tmp/www" \
	</dev/null >"$tmp/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 100); do
	port=$(sed -n 's/^Serving HTTP on [0-9.]* port \([0-9]*\) .*/\1/p' "$tmp/server.log")
	[ -n "$port" ] && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	cat "$tmp/server.log" >&2
	echo "FAIL: the http server did not start"
	exit 1
fi
url=http://127.0.0.1:$port

# drive NAME STEPS — run browser-drive.js; its output in $tmp/NAME.out,
# its exit status in drive_rc, the seconds it took in drive_secs
drive() {
	local t0=$SECONDS
	drive_rc=0
	as_browser env TMPDIR="$tmp/out" RF_BROWSER_NO_SANDBOX="${RF_BROWSER_NO_SANDBOX:-}" \
		timeout 120 node "$DRIVE" "$PPT" "$CHROMIUM" "$2" \
		>"$tmp/$1.out" 2>"$tmp/$1.err" || drive_rc=$?
	drive_secs=$((SECONDS - t0))
}

sandbox_steps=""
if [ "${RF_BROWSER_NO_SANDBOX:-}" != 1 ]; then
	sandbox_steps=', {"goto": "chrome://sandbox"}, {"eval": "document.body.innerText"}'
fi
steps='[
	{"goto": "'$url'/"},
	{"text": "#msg"},
	{"click": "#btn"},
	{"waitFor": "#msg.done"},
	{"waitGone": "#spinner"},
	{"text": "#msg"},
	{"texts": "li"},
	{"count": "li"},
	{"attr": "#next", "name": "href"},
	{"eval": "document.title"},
	{"cookies": true},
	{"fetch": "/", "method": "POST", "body": "x=1", "headers": {"content-type": "text/plain"}},
	{"console": true},
	{"screenshot": "'$tmp/out/page.png'", "fullPage": true},
	{"click": "#next"},
	{"text": "#p2"}'"$sandbox_steps"'
]'
drive main "$steps"
[ "$drive_rc" = 0 ] || fail "browser-drive.js exited $drive_rc: $(tail -n 1 "$tmp/main.out") $(head -c 2000 "$tmp/main.err")"

# each line against what it must say
if ! python3 - "$tmp/main.out" "$tmp/out/page.png" "${RF_BROWSER_NO_SANDBOX:-}" <<'EOF'; then
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
want = {
    0: lambda v: v == 200,
    1: lambda v: v == "before",  # the inline script was refused
    2: lambda v: v == {"navigated": False, "status": None},
    3: lambda v: v is True,
    4: lambda v: v is True,
    5: lambda v: v == "after",
    6: lambda v: v == ["a", "b"],
    7: lambda v: v == 2,
    8: lambda v: v == "page2.html",
    9: lambda v: v == "rf smoke",
    10: lambda v: {"name": "rf_smoke", "httpOnly": False, "sameSite": "Strict"}.items()
        <= next((c for c in v if c["name"] == "rf_smoke"), {}).items(),
    11: lambda v: v == {"status": 501},  # http.server has no POST
    12: lambda v: any(m["type"] == "log" and m["text"] == "smoke: clicked" for m in v)
        and any(m["type"] == "error" and "Content Security Policy" in m["text"] for m in v)
        and any(m["type"] == "csp" and m["text"].startswith("script-src") for m in v),
    13: lambda v: v == sys.argv[2],
    14: lambda v: v == {"navigated": True, "status": 200},
    15: lambda v: v == "second page",
}
if sys.argv[3] != "1":
    want[16] = lambda v: v == 200
    want[17] = lambda v: "You are adequately sandboxed." in v
bad = 0
for i, check in want.items():
    line = lines[i] if i < len(lines) else None
    if not line or line.get("step") != i or not line.get("ok") or not check(line.get("value")):
        print(f"step {i}: {json.dumps(line)}", file=sys.stderr)
        bad += 1
if len(lines) != len(want):
    print(f"{len(lines)} lines, {len(want)} expected", file=sys.stderr)
    bad += 1
sys.exit(1 if bad else 0)
EOF
	fail "browser-drive.js printed what it should not (above)"
fi
[ "$(head -c 8 "$tmp/out/page.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "no PNG screenshot at $tmp/out/page.png"
main_secs=$drive_secs

# a failing step ends the run: exit 1, no line after it
drive failing '[{"goto": "'"$url"'/"}, {"waitFor": "#nothing-here", "timeout": 300}, {"count": "li"}]'
if [ "$drive_rc" != 1 ] || [ "$(wc -l <"$tmp/failing.out")" != 2 ] ||
	! grep -q '^{"step":1,"ok":false,"error":"[^"]' "$tmp/failing.out"; then
	fail "a failing step: exit $drive_rc, output: $(cat "$tmp/failing.out")"
fi

# bad steps are a usage error, before any browser starts
drive usage '[{"nosuchstep": 1}]'
[ "$drive_rc" = 2 ] || fail "unknown step: exit $drive_rc, not 2"

leftover=$(find "$tmp/out" -mindepth 1 -maxdepth 1 ! -name page.png)
[ -z "$leftover" ] || fail "left in TMPDIR: $leftover"

# chromium by itself: --dump-dom of the page after the script ran
prof=$tmp/out/dump
as_browser mkdir "$prof"
dump_rc=0
as_browser env HOME="$prof" XDG_CONFIG_HOME="$prof/.config" XDG_CACHE_HOME="$prof/.cache" TMPDIR="$prof" \
	timeout 60 "$CHROMIUM" --headless=new --disable-gpu --no-first-run --no-default-browser-check \
	--user-data-dir="$prof/profile" --dump-dom "$url/" \
	>"$tmp/dump.out" 2>"$tmp/dump.err" || dump_rc=$?
if [ "$dump_rc" != 0 ] || ! grep -q '<ul><li>a</li><li>b</li></ul>' "$tmp/dump.out"; then
	fail "chromium --dump-dom: exit $dump_rc, $(head -c 500 "$tmp/dump.out") $(grep -v dbus "$tmp/dump.err" | head -c 1000)"
fi

if [ "${#fails[@]}" -gt 0 ]; then
	printf '  %s\n' "${fails[@]}"
	echo "FAIL"
	exit 1
fi
echo "browser-smoke: chromium $("$CHROMIUM" --version 2>/dev/null | awk '{print $2}'), puppeteer-core from $PPT, as uid $(as_browser id -u), ${main_secs}s for the main run"
echo "PASS"
