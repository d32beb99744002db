#!/bin/bash
# tests/integration/console_browser.sh — `ringfence console` in a real
# browser (issue 18): Debian's headless Chromium, run as uid 65534 (it
# refuses root without --no-sandbox; here its own sandbox is on), driven
# by puppeteer-core (scripts/browser.sh, tests/helpers/browser-drive.js).
#
# Asserted: `chromium --headless=new --dump-dom` of the login URL prints a
# live run's id and agent; without the token it gets the 401 line and no
# run. In the driven browser: the login lands on the runs page with the
# session cookie HttpOnly and SameSite=Strict; a run whose agent holds a
# <script> element and quotes, and whose command holds markup and a control
# byte, renders inert (its text as given, the page's only script /app.js,
# nothing of it executed); a run started after the page loaded appears
# without a reload, within a second of its start (the page notes when its
# row appeared; the run's start is in the row); the page reports no error and no CSP violation; the
# run's page has a kill button, clicking it ends the run, the runs page
# then no longer lists it and the audit trail has run.kill with the
# operator's uid. A form on another origin that posts a kill to the console
# is refused (403) and the run lives on. Typing into the runs page's agent
# filter and choosing a state hides the other runs' rows and shows the
# matching one (none matching: the 'no runs' line). A uid whose daemon grant has no
# kill (the console as 65534 with --daemon) sees no kill button, and a kill
# it forges from the page with its own CSRF token gets 403.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (the browser runs as a second uid)"
command -v node >/dev/null || skip_all "no node (scripts/deps.sh installs nodejs)"
new_workspace
require_isolation
ROOTDIR=$(cd "$(dirname "$0")/../.." && pwd)
paths=$("$ROOTDIR/scripts/browser.sh" 2>"$RF_STATE.browser.err")
case $? in
0) ;;
2) skip_all "no browser harness here: $(head -n 1 "$RF_STATE.browser.err")" ;;
*) bail_out "scripts/browser.sh failed: $(head -n 3 "$RF_STATE.browser.err")" ;;
esac
PPT=$(sed -n 's/^puppeteer=//p' <<<"$paths")
CHROMIUM=$(sed -n 's/^chromium=//p' <<<"$paths")
DRIVE=$ROOTDIR/tests/helpers/browser-drive.js

rf_mktemp /tmp
TOP=$REPLY
chmod 0755 "$TOP"
mkdir -p "$TOP/b"
chown 65534:65534 "$TOP/b"
declare -a RUNS=()
cleanup_runs() {
	local r
	for r in "${RUNS[@]}"; do
		"$RF_BIN" kill --state-dir "$RF_STATE" "$r" >/dev/null 2>&1
	done
}
trap 'cleanup_runs; _rf_cleanup' EXIT

# drive NAME STEPS — the browser as 65534; its JSON lines in $TOP/NAME.out
drive() {
	printf '%s' "$2" >"$TOP/$1.steps"
	chmod 0644 "$TOP/$1.steps"
	(cd "$TOP/b" && TMPDIR=$TOP/b as_user timeout 120 node "$DRIVE" "$PPT" "$CHROMIUM" \
		"$TOP/$1.steps") >"$TOP/$1.out" 2>"$TOP/$1.err"
	DRIVE_RC=$?
}
# val NAME I — step I's value (JSON), or "!" and its error
val() {
	python3 -c 'import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("step") == int(sys.argv[2]):
        print(json.dumps(d["value"]) if d["ok"] else "!" + d["error"])' "$TOP/$1.out" "$2" 2>/dev/null
}
# start_console NAME RUNNER... — a console; URL_NAME, its login URL
start_console() {
	local name=$1 url="" pid
	shift
	"$@" >"$TOP/c.$name.out" 2>"$TOP/c.$name.err" </dev/null &
	pid=$!
	register_pid "$pid"
	for _ in $(seq 200); do
		url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/login?token=[0-9a-f]*' "$TOP/c.$name.out" 2>/dev/null)
		[ -n "$url" ] && break
		sleep 0.05
	done
	[ -n "$url" ] || bail_out "console $name printed no URL: $(cat "$TOP/c.$name.err")"
	printf -v "URL_$name" '%s' "$url"
}
start_run() { # start_run AGENT CMD ARGS... — a detached run; its id in RUN_ID
	local agent=$1
	shift
	RUN_ID=$(cd "$WS" && "$RF_BIN" run --state-dir "$RF_STATE" --detach --agent "$agent" -- "$@" \
		</dev/null 2>"$TOP/run.err")
	[ -n "$RUN_ID" ] || bail_out "no run: $(cat "$TOP/run.err")"
	RUNS+=("$RUN_ID")
}

CMD=$(printf 'x<i>"q\001')
ln -s /bin/sh "$WS/$CMD"
AGENT='ag<script>window.__pwned=1</script>"q'
start_run "$AGENT" "./$CMD" -c 'sleep 300'
run1=$RUN_ID
# the browsers run as uid 65534: served, as --allow-uid says
start_console root "$RF_BIN" console --state-dir "$RF_STATE" --listen 127.0.0.1:0 --allow-uid 65534
BASE=${URL_root%%/login*}

# --dump-dom
dump() { # dump URL — the DOM chromium prints, as 65534
	(cd "$TOP/b" && as_user env HOME="$TOP/b" XDG_CONFIG_HOME="$TOP/b/.config" \
		XDG_CACHE_HOME="$TOP/b/.cache" TMPDIR="$TOP/b" timeout 60 "$CHROMIUM" --headless=new \
		--disable-gpu --no-first-run --no-default-browser-check \
		--user-data-dir="$TOP/b/profile-$RANDOM" --dump-dom "$1" 2>/dev/null)
}
dom=$(dump "$URL_root")
like "$dom" "data-run=\"$run1\"" "chromium --dump-dom of the login URL: the live run's id"
like "$dom" 'ag&lt;script&gt;window.__pwned=1&lt;/script&gt;"q' "... and its agent, as text"
dom=$(dump "$BASE/")
like "$dom" "log in with the URL" "without the token: the 401 line"
unlike "$dom" "$run1" "... and no run"

# the operator's browser
late_agent=late-$$
# (started once the page watches for it: step 6 installs the observer that
# notes when its row appears)
(for _ in $(seq 1200); do
	grep -q '"step":6[,}]' "$TOP/op.out" 2>/dev/null && break
	sleep 0.05
done
cd "$WS" && "$RF_BIN" run --state-dir "$RF_STATE" --detach --agent "$late_agent" -- \
	/bin/sh -c 'sleep 300' </dev/null >"$TOP/late.id" 2>/dev/null) &
register_pid $!
drive op "[
 {\"goto\": \"$URL_root\"},
 {\"waitFor\": \"tr[data-run='$run1']\"},
 {\"text\": \"tr[data-run='$run1'] td.agent\"},
 {\"text\": \"tr[data-run='$run1'] td.command\"},
 {\"eval\": \"[document.scripts.length, document.scripts[0].src.replace(location.origin, ''), typeof window.__pwned]\"},
 {\"cookies\": true},
 {\"eval\": \"(window.__late = 0, new MutationObserver(() => { if (!window.__late \u0026\u0026 document.querySelector('tr[data-agent=\\\"$late_agent\\\"]')) window.__late = Date.now(); }).observe(document.body, {childList: true, subtree: true}), true)\"},
 {\"waitFor\": \"tr[data-agent='$late_agent']\", \"timeout\": 30000},
 {\"eval\": \"[window.__late, +document.querySelector('tr[data-agent=\\\"$late_agent\\\"] td.started').dataset.ms]\"},
 {\"eval\": \"performance.getEntriesByType('navigation').length\"},
 {\"goto\": \"$BASE/run/$run1\"},
 {\"count\": \"#do-kill\"},
 {\"click\": \"#do-kill\"},
 {\"eval\": \"location.pathname\"},
 {\"waitGone\": \"tr[data-run='$run1']\"},
 {\"screenshot\": \"$TOP/b/runs.png\", \"fullPage\": true},
 {\"goto\": \"$BASE/health\"},
 {\"waitFor\": \"#chart svg polyline\"},
 {\"console\": true}
]"
is "$DRIVE_RC" 0 "the browser's steps all ran ($(grep -m1 '"ok":false' "$TOP/op.out"))"
is "$(val op 0)" 200 "the login lands on the runs page (200)"
is "$(val op 2)" "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$AGENT")" \
	"the agent holding <script> and quotes: shown as text, as given"
is "$(val op 3)" '"./x<i>\"q\u2401"' "the command holding markup and a control byte: the byte visible (␁)"
is "$(val op 4)" '[1, "/app.js", "undefined"]' "... the page's only script is /app.js; nothing of the run's ran"
like "$(val op 5)" '"name": "rf_console", "httpOnly": true, "sameSite": "Strict"' \
	"the session cookie: HttpOnly, SameSite=Strict"
is "$(val op 7)" "true" "a run started after the page loaded appears in it"
is "$(val op 9)" 1 "... without a reload"
# when its row appeared (the page's clock) after the run's start (the
# host's, the same clock): within a second, a few ms allowed for the two
# clocks' millisecond granularity
late=$(val op 8 | python3 -c 'import json, sys
seen, start = json.load(sys.stdin)
print(seen - start if seen > 0 and start > 0 else "none")' 2>/dev/null)
within_a_second() { [ "${late:-none}" != none ] && [ "$late" -le 1005 ]; }
check "... within a second of its start (its row appeared ${late:-?} ms after)" within_a_second
is "$(val op 11)" 1 "the run's page has a kill button"
is "$(val op 13)" '"/"' "clicking it: back on the runs page"
is "$(val op 14)" "true" "... which no longer lists the run"
"$RF_BIN" audit --state-dir "$RF_STATE" --json --run "$run1" >"$TOP/audit1" 2>&1
like "$(grep -a '"event":"run.kill"' "$TOP/audit1")" "\"actor_uid\":0," \
	"... and the audit trail has run.kill with the operator's uid"
is "$(val op 17)" "true" "the audit health chart is drawn (SVG)"
is "$(val op 18)" "[]" "the pages reported no error and no CSP violation"
[ -s "$TOP/b/runs.png" ] && ok "a screenshot of the runs page" || not_ok "a screenshot of the runs page"

# another origin's form posts a kill
start_run victim /bin/sh -c 'sleep 300'
run2=$RUN_ID
mkdir -p "$TOP/evil"
cat >"$TOP/evil/index.html" <<HTML
<!DOCTYPE html><html><body><form id="f" method="post" action="$BASE/run/$run2/kill">
<input type="hidden" name="csrf" value="0000000000000000000000000000000000000000000000000000000000000000">
<button id="go" type="submit">go</button></form></body></html>
HTML
chmod -R a+rX "$TOP/evil"
start_listener_py() {
	local port
	# (exec: the pid recorded is the server's)
	(cd "$TOP/evil" && exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		/usr/bin/python3 -m http.server --bind 127.0.0.1 0 >"$TOP/evil.out" 2>&1) &
	register_pid $!
	for _ in $(seq 100); do
		port=$(grep -o 'port [0-9]*' "$TOP/evil.out" 2>/dev/null | grep -o '[0-9]*')
		[ -n "$port" ] && break
		sleep 0.05
	done
	EVIL=http://127.0.0.1:$port
}
start_listener_py
drive evil "[
 {\"goto\": \"$URL_root\"},
 {\"goto\": \"$EVIL/index.html\"},
 {\"click\": \"#go\"},
 {\"eval\": \"document.body.innerText\"}
]"
is "$(val evil 2)" '{"navigated": true, "status": 403}' "a kill posted by another origin's form: refused (403)"
like "$(val evil 3)" "not from this console's own page" "... saying why"
"$RF_BIN" ps --state-dir "$RF_STATE" >"$TOP/ps" 2>&1
like "$(cat "$TOP/ps")" "$run2 .*running" "... and the run lives on"

# the runs page's filters, typed and chosen as a person would: by agent
# (part of its name), by state (run2 paused, the late run running)
"$RF_BIN" pause --state-dir "$RF_STATE" "$run2" >/dev/null 2>&1
R2="tr[data-run='$run2']"
LATE="tr[data-agent='$late_agent']"
hidden="[document.querySelector(\\\"$R2\\\").hidden, document.querySelector(\\\"$LATE\\\").hidden, document.querySelector('#none').hidden]"
drive flt "[
 {\"goto\": \"$URL_root\"},
 {\"waitFor\": \"$R2[data-state='paused']\", \"timeout\": 10000},
 {\"waitFor\": \"$LATE\"},
 {\"eval\": \"$hidden\"},
 {\"type\": \"#f-agent\", \"keys\": \"vict\"},
 {\"eval\": \"$hidden\"},
 {\"type\": \"#f-agent\", \"keys\": \"late-\"},
 {\"eval\": \"$hidden\"},
 {\"type\": \"#f-agent\", \"keys\": \"\"},
 {\"select\": \"#f-state\", \"value\": \"paused\"},
 {\"eval\": \"$hidden\"},
 {\"select\": \"#f-state\", \"value\": \"running\"},
 {\"eval\": \"$hidden\"},
 {\"type\": \"#f-agent\", \"keys\": \"vict\"},
 {\"eval\": \"$hidden\"}
]"
is "$DRIVE_RC" 0 "the filters' steps all ran ($(grep -m1 '"ok":false' "$TOP/flt.out")$(tail -n 1 "$TOP/flt.err"))"
is "$(val flt 3)" "[false, false, true]" "control: no filter, both runs shown"
is "$(val flt 5)" "[false, true, true]" "agent filter 'vict': the victim's row shown, the other agent's hidden"
is "$(val flt 7)" "[true, false, true]" "agent filter 'late-': the other way round"
is "$(val flt 10)" "[false, true, true]" "state filter 'paused': the paused run shown, the running one hidden"
is "$(val flt 12)" "[true, false, true]" "state filter 'running': the other way round"
is "$(val flt 14)" "[true, true, false]" "both filters, matching no run: none shown, the 'no runs' line instead"
"$RF_BIN" resume --state-dir "$RF_STATE" "$run2" >/dev/null 2>&1

# a uid without the kill right: the daemon's grant for 65534 lists and reads
SOCK=$TOP/control.sock
cat >"$TOP/daemon.json" <<JSON
{"version": 1, "socket": "$SOCK", "socket_mode": "0666",
 "grants": [{"uid": 65534, "agents": ["watch"], "actions": ["list-runs", "get-run", "audit"],
             "all_uids": true}]}
JSON
chmod 0644 "$TOP/daemon.json"
rf_mktemp /tmp
DSTATE=$REPLY/state
mkdir -p "$DSTATE"
"$RF_BIN" daemon --state-dir "$DSTATE" --config "$TOP/daemon.json" 2>>"$TOP/daemon.err" &
register_pid $!
for _ in $(seq 600); do
	curl -s -m 1 --unix-socket "$SOCK" http://ringfence/v1/runs >/dev/null 2>&1 && break
	sleep 0.05
done
out=$(curl -s -m 20 --unix-socket "$SOCK" -H 'Content-Type: application/json' -d \
	"{\"argv\": [\"/bin/sh\", \"-c\", \"sleep 300\"], \"agent\": \"watch\", \"workspace\": \"$WS\"}" \
	http://ringfence/v1/runs)
run3=$(grep -o '"run":"[^"]*"' <<<"$out" | head -n 1 | cut -d'"' -f4)
[ -n "$run3" ] || bail_out "the daemon started no run: $out"
cp "$RF_BIN" "$TOP/ringfence"
chmod 0755 "$TOP/ringfence"
# (setpriv, not the as_user function: its pid must be the console's)
start_console nb setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	env HOME=/nonexistent "$TOP/ringfence" console --daemon --socket "$SOCK" --listen 127.0.0.1:0
NB=${URL_nb%%/login*}
drive nb "[
 {\"goto\": \"$URL_nb\"},
 {\"waitFor\": \"tr[data-run='$run3']\"},
 {\"goto\": \"$NB/run/$run3\"},
 {\"count\": \"#do-kill\"},
 {\"eval\": \"fetch('/run/$run3/kill', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'csrf=' + document.querySelector('input[name=csrf]').value}).then(r => r.status)\"}
]"
is "$DRIVE_RC" 0 "uid 65534's browser: its steps ran"
is "$(val nb 3)" 0 "a uid whose grant has no kill sees no kill button"
is "$(val nb 4)" 403 "... and a kill it forges with its own CSRF token gets 403"
curl -s -m 5 --unix-socket "$SOCK" "http://ringfence/v1/runs/$run3" >"$TOP/st"
like "$(cat "$TOP/st")" '"state":"running"' "... the run still runs"
curl -s -m 30 --unix-socket "$SOCK" -X POST "http://ringfence/v1/runs/$run3/kill" >/dev/null

# cookies are kept per host, not per port: a page on another loopback port
# (another user's server, a run's published port) sets 24 KB of them for
# 127.0.0.1, and every request to the console, the login URL's too, is
# then too large. The console's 431 clears the host's cookies
# (Clear-Site-Data), so the next request gets through.
cat >"$TOP/jam.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        for i in range(6):
            self.send_header("Set-Cookie", "jam%d=%s; Path=/" % (i, "x" * 4000))
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"jammed\n")
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$TOP/jam.py" >"$TOP/jam.port" 2>/dev/null &
register_pid $!
for _ in $(seq 100); do [ -s "$TOP/jam.port" ] && break; sleep 0.05; done
JAM=http://127.0.0.1:$(head -n 1 "$TOP/jam.port")/
drive jam "[
 {\"goto\": \"$URL_root\"},
 {\"goto\": \"$JAM\"},
 {\"eval\": \"new Promise(r => { const t0 = Date.now(); (function p() { const n = document.cookie.split(';').filter(c => c.trim().startsWith('jam')).length; if (n >= 6 || Date.now() - t0 > 15000) r(n); else setTimeout(p, 50); })(); })\"},
 {\"goto\": \"$BASE/\"},
 {\"goto\": \"$BASE/\"},
 {\"goto\": \"$BASE/\"},
 {\"goto\": \"$BASE/\"},
 {\"goto\": \"$BASE/\"},
 {\"goto\": \"$URL_root\"},
 {\"count\": \"tr[data-run]\"}
]"
is "$DRIVE_RC" 0 "a page on another loopback port fills the cookie jar: the browser's steps ran ($(head -c 300 "$TOP/jam.err"))"
is "$(val jam 0)" 200 "... the operator logged in first"
is "$(val jam 2)" 6 "... the other port's page set its six 4 KB cookies for 127.0.0.1 (its page sees them, within 15 s)"
# (the browser's cookie store takes the jar's last cookies, and clears
# them, a request or two later: five requests, what follows the first 431
# is what counts; without the clearing each of them is a 431)
seq_jam="$(val jam 3) $(val jam 4) $(val jam 5) $(val jam 6) $(val jam 7)"
like " $seq_jam" ' 431' "... then a request to the console is too large (431: $seq_jam)"
like " $seq_jam " ' 431( 431)* 401 ' "... which cleared the host's cookies: a later one gets through (401: log in again)"
is "$(val jam 8)" 200 "... and the login URL works again"
done_testing
