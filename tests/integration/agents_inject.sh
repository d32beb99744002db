#!/usr/bin/env bash
# agents_inject.sh — three real agents from npm under ringfence with their
# API key injected: `claude -p` (Claude Code), `codex exec` (Codex CLI) and,
# by its profile, `gemini -p` (Gemini CLI) talk to mock APIs at their real
# API names over HTTPS and print the mock's fixed reply, while the run
# holds only a placeholder.
#
# The agents are installed by scripts/agents.sh (pinned versions, into a
# cache directory outside the repository; the test skips, saying why, when
# npm cannot fetch them) and bound into the run read-only (--ro): both are
# native executables (Claude Code's platform package ships one; Codex's a
# static musl one), no node at run time.
#
# The test host (tests/helpers/egress-net.bash) gets three more addresses:
# api.anthropic.com (tests/helpers/mock-anthropic.py: the Messages API,
# SSE; a WebSocket upgrade declined with 426 — Claude Code never asks for
# one, curl in a run does), and api.openai.com twice
# (tests/helpers/mock-openai.py: the Responses API over a WebSocket,
# accepted, and one declining the upgrade with 426, where Codex falls back
# to SSE). Their certificates come from a CA this test makes (openssl);
# ringfence verifies them with --upstream-ca. A mock answers only the real
# key (else the API's 401 JSON) and logs every request's method, path and
# auth headers: the test reads there that the real key arrived and the
# placeholder never did.
#
# Each CLI runs with the environment ringfence gives a run, proxy
# variables included: both use the proxy naturally (HTTPS_PROXY; CONNECT,
# then TLS terminated with the run CA; Codex's WebSocket too), and once
# more with every proxy variable removed (the captured path); the
# records' "via" says which path a connection took. Both trust the run CA
# through the run's system bundle (/etc/ssl/certs/ca-certificates.crt):
# each still works with NODE_EXTRA_CA_CERTS or SSL_CERT_FILE unset.
#
# Neither CLI needs anything in HOME for a one-shot prompt (`claude -p`
# does no onboarding; `codex exec` makes ~/.codex). Claude Code reads the
# key from ANTHROPIC_API_KEY, Codex from CODEX_API_KEY.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own)"
command -v ip >/dev/null && command -v nsenter >/dev/null && command -v python3 >/dev/null &&
	command -v openssl >/dev/null && command -v curl >/dev/null ||
	skip_all "needs ip, nsenter, python3, openssl and curl"
# shellcheck source=tests/helpers/agents-net.bash
. "$RF_SRC/tests/helpers/agents-net.bash"

A_ADDR=$net.11 O_ADDR=$net.12 OD_ADDR=$net.13 G_ADDR=$net.14
for a in "$A_ADDR" "$O_ADDR" "$OD_ADDR" "$G_ADDR"; do ip -n "$HNS" addr add "$a/24" dev "$VB"; done
start_mock anthropic mock-anthropic.py "$A_ADDR" --key-file "$M/anthropic.key" \
	--reply "$REPLY_A" --cert "$M/api.anthropic.com.pem" --certkey "$M/api.anthropic.com.key"
start_mock openai mock-openai.py "$O_ADDR" --key-file "$M/openai.key" --ws accept \
	--reply "$REPLY_O" --cert "$M/api.openai.com.pem" --certkey "$M/api.openai.com.key"
start_mock openai-nows mock-openai.py "$OD_ADDR" --key-file "$M/openai.key" --ws decline \
	--reply "$REPLY_O" --cert "$M/api.openai.com.pem" --certkey "$M/api.openai.com.key"
start_mock gemini mock-gemini.py "$G_ADDR" --key-file "$M/gemini.key" --reply "$REPLY_G" \
	--cert "$M/generativelanguage.googleapis.com.pem" --certkey "$M/generativelanguage.googleapis.com.key"

set_secret anthropic "$KEY_A"
set_secret anthropic_bad "$BAD_A"
set_secret openai "$KEY_O"
set_secret openai_bad "$BAD_O"

# ---- Claude Code: claude -p ----------------------------------------------------------------------
CLAUDE_DIR=${CLAUDE%/*}
# no telemetry, error reporting, update checks or other hosts: the run may
# reach api.anthropic.com only (anything else would be an egress.deny)
CLAUDE_ENV=(-e DISABLE_AUTOUPDATER=1 -e DISABLE_TELEMETRY=1 -e DISABLE_ERROR_REPORTING=1
	-e CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 -e CLAUDE_CODE_MAX_RETRIES=1)
claude_run() { # SECRET [WRAPPER...] — claude -p with ANTHROPIC_API_KEY injected from store:SECRET
	local secret=$1
	shift
	rm -f "$WS/claude.env"
	er --inject "ANTHROPIC_API_KEY=store:$secret@api.anthropic.com" --allow-host api.anthropic.com \
		--add-host "api.anthropic.com:$A_ADDR" --upstream-ca "$WS/upstream-ca.pem" \
		--ro "$CLAUDE_DIR" "${CLAUDE_ENV[@]}" --timeout 90s -- "$@" \
		sh -c 'cat /proc/self/environ >claude.env; exec "$0" -p "$1"' "$CLAUDE" \
		"Reply with the fixed test answer."
}

n0=$(injects ANTHROPIC_API_KEY)
rm -f "$M/anthropic.log"
claude_run anthropic
PH_A=$(envof "$WS/claude.env" ANTHROPIC_API_KEY)
is "$RF_RC" 0 "claude -p under ringfence with ANTHROPIC_API_KEY injected: exit 0"
has_line "$RF_OUT" "$REPLY_A" "... it printed the mock's fixed reply"
like "$PH_A" '^[A-Za-z0-9_-]{22,}$' "the run's ANTHROPIC_API_KEY is a placeholder (${#PH_A} characters)"
isnt "$PH_A" "$KEY_A" "... not the key"
unlike "$(tr '\0' '\n' <"$WS/claude.env" 2>/dev/null)" "$KEY_A" "... and no variable of the CLI's environment holds the key"
ok_n=$(mocklog anthropic | grep '"path": "/v1/messages' | grep -c "\"x-api-key\": \"$KEY_A\"")
is "$((ok_n >= 1))" 1 "the mock's POST /v1/messages arrived with x-api-key = the real key ($ok_n)"
like "$(mocklog anthropic | grep '"path": "/v1/messages' | head -1)" '"stream": true' "... streamed (SSE)"
if [ -n "$PH_A" ] && mocklog anthropic | grep -qF -- "$PH_A"; then
	not_ok "the placeholder never reached the mock" "$(mocklog anthropic)"
else
	ok "the placeholder never reached the mock"
fi
unlike "$(mocklog anthropic | grep '"path": "/v1/messages' | grep -v '"status": 200')" . \
	"... and every /v1/messages request was answered 200 (no 401)"
is "$(($(injects ANTHROPIC_API_KEY) - n0 >= 1))" 1 "secret.inject recorded for the CLI's requests"
like "$(records | grep '"secret.inject"' | grep '"name":"ANTHROPIC_API_KEY"' | tail -1)" '"path":"/v1/messages' \
	"... naming POST /v1/messages"
like "$(records | grep '"egress.tls"' | grep 'api.anthropic.com' | grep '"side":"upstream"' | tail -1)" \
	'"side":"upstream"' "egress.tls: the upstream (the mock, by --upstream-ca) verified"
via_a=$(via api.anthropic.com)
is "$via_a" proxy "Claude Code with the run's environment uses the proxy (HTTPS_PROXY): egress.allow via proxy"
unlike "$(records)" "$KEY_A" "the audit log holds no key"
diag "Claude Code requests: $(mocklog anthropic | sed 's/"x-api-key": "[^"]*"/"x-api-key": …/')"
unlike "$(mocklog anthropic)" '"upgrade": "websocket"' "Claude Code never asked for a WebSocket (this mock would decline one)"
# the mock's refusal of an upgrade reaches a client in the run as it is
rm -f "$M/anthropic.log"
er --inject "ANTHROPIC_API_KEY=store:anthropic@api.anthropic.com" --allow-host api.anthropic.com \
	--add-host "api.anthropic.com:$A_ADDR" --upstream-ca "$WS/upstream-ca.pem" -- sh -c \
	'curl -sS -m 20 -o /dev/null -w "%{http_code}\n" -H "x-api-key: $ANTHROPIC_API_KEY" \
		-H "Connection: Upgrade" -H "Upgrade: websocket" -H "Sec-WebSocket-Version: 13" \
		-H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" https://api.anthropic.com/v1/messages'
is "$RF_OUT" 426 "a WebSocket upgrade to api.anthropic.com (curl in the run): the mock's 426 relayed"
like "$(mocklog anthropic | grep '"upgrade": "websocket"' | head -1)" "\"x-api-key\": \"$KEY_A\".*\"status\": 426" \
	"... the upgrade request carried the real key, and was declined"

# the stream is relayed as it comes: deltas 0.4 s apart reach a client in
# the run apart (nothing held back until the end of the response)
cat >"$WS/sse.py" <<'PY'
import json, os, time, urllib.request
body = json.dumps({"model": "claude-mock", "max_tokens": 64, "stream": True,
                   "metadata": {"mock_delay_s": 0.4},
                   "messages": [{"role": "user", "content": "hi"}]}).encode()
req = urllib.request.Request("https://api.anthropic.com/v1/messages", data=body, headers={
    "x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
    "content-type": "application/json"})
t0 = time.monotonic()
with urllib.request.urlopen(req, timeout=30) as r:
    for line in r:
        if line.startswith(b"event: "):
            print("%.2f %s" % (time.monotonic() - t0, line[7:].decode().strip()), flush=True)
PY
er --inject "ANTHROPIC_API_KEY=store:anthropic@api.anthropic.com" --allow-host api.anthropic.com \
	--add-host "api.anthropic.com:$A_ADDR" --upstream-ca "$WS/upstream-ca.pem" -- python3 sse.py
first=$(awk '$2 == "content_block_delta" {print $1; exit}' <<<"$RF_OUT")
last=$(awk '$2 == "message_stop" {print $1}' <<<"$RF_OUT")
is "$(grep -c ' content_block_delta$' <<<"$RF_OUT")" "$(wc -w <<<"$REPLY_A" | tr -d ' ')" \
	"SSE through the terminating egress: every content_block_delta arrived"
if [ -n "$first" ] && [ -n "$last" ] && awk -v f="$first" -v l="$last" 'BEGIN { exit !(l - f >= 1.5) }'; then
	ok "... as they came: the first delta at ${first}s, message_stop at ${last}s"
else
	not_ok "... as they came (the first delta well before message_stop)" "$RF_OUT" "$RF_ERR"
fi

# control: the wrong key in the store — the mock's 401, and the CLI says so
rm -f "$M/anthropic.log"
claude_run anthropic_bad
isnt "$RF_RC" 0 "control, a wrong key in the store: claude -p fails ($RF_RC)"
like "$RF_OUT$RF_ERR" 'Invalid API key' "... saying the API key is invalid (the mock's 401)"
unlike "$RF_OUT" "$REPLY_A" "... no reply printed"
like "$(mocklog anthropic | grep '"status": 401' | head -1)" "\"x-api-key\": \"$BAD_A\"" \
	"... the mock got the (wrong) stored value and answered 401"

# the captured path: the same run with every proxy variable removed. (Does
# this build capture? The probe waits a moment: a DNS query in a run's
# first milliseconds is sometimes refused with "a run resolves no names
# itself", as if the run did not capture: about 1 in 50 runs of a bare
# getent; the CLIs ask later.)
er --add-host "api.anthropic.com:$A_ADDR" --allow-host api.anthropic.com -- \
	sh -c 'sleep 0.2; getent ahostsv4 api.anthropic.com'
CAPTURES=0
case "$RF_OUT" in 198.18.*) CAPTURES=1 ;; esac
if [ "$CAPTURES" = 1 ]; then
	rm -f "$M/anthropic.log"
	claude_run anthropic "${NP[@]}"
	is "$RF_RC" 0 "claude -p without proxy variables (captured, TLS terminated there): exit 0"
	has_line "$RF_OUT" "$REPLY_A" "... it printed the mock's fixed reply"
	like "$(mocklog anthropic | grep '"path": "/v1/messages' | head -1)" "\"x-api-key\": \"$KEY_A\".*\"status\": 200" \
		"... the mock got the real key"
	is "$(via api.anthropic.com)" capture "... egress.allow via capture"
else
	skip "Claude Code on the captured path" "this build does not capture (getent: rc $RF_RC, $RF_OUT $RF_ERR)"
fi

# ---- Codex CLI: codex exec --------------------------------------------------------------------
CODEX_DIR=${CODEX%/*}
# Codex takes an API key from CODEX_API_KEY (OPENAI_API_KEY is not used
# for auth by `codex exec` 0.171); it needs nothing in HOME (it makes
# ~/.codex on first use). Without a profile the run's HOME gets a
# config.toml (here, by hand) that turns off what would reach other hosts:
# analytics (ab.chatgpt.com), the update check and the plugin sync
# (github.com, api.github.com, chatgpt.com), and the model list's refresh
# (chatgpt.com, ~20 attempts in 10 s: a refusal storm). The codex profile
# sets the same in the config.toml it makes (below, without this one).
CODEX_TOML='check_for_update_on_startup = false
[analytics]
enabled = false
[features]
plugins = false
api_key_model_discovery = false
'
codex_run() { # SECRET ADDR [WRAPPER...] — codex exec with CODEX_API_KEY injected, api.openai.com at ADDR
	local secret=$1 addr=$2
	shift 2
	rm -f "$WS/codex.env"
	er --inject "CODEX_API_KEY=store:$secret@api.openai.com" --allow-host api.openai.com \
		--add-host "api.openai.com:$addr" --upstream-ca "$WS/upstream-ca.pem" \
		--ro "$CODEX_DIR" --timeout 90s -- "$@" \
		sh -c 'mkdir -p "$HOME/.codex" && printf "%s" "$2" >"$HOME/.codex/config.toml" &&
			cat /proc/self/environ >codex.env && exec "$0" exec --skip-git-repo-check "$1"' \
		"$CODEX" "Reply with the fixed test answer." "$CODEX_TOML"
}

# the Responses API over a WebSocket (the mock accepts the upgrade)
n0=$(injects CODEX_API_KEY)
rm -f "$M/openai.log"
codex_run openai "$O_ADDR"
PH_O=$(envof "$WS/codex.env" CODEX_API_KEY)
is "$RF_RC" 0 "codex exec under ringfence with CODEX_API_KEY injected (WebSocket): exit 0"
has_line "$RF_OUT" "$REPLY_O" "... it printed the mock's fixed reply"
like "$PH_O" '^[A-Za-z0-9_-]{22,}$' "the run's CODEX_API_KEY is a placeholder (${#PH_O} characters)"
unlike "$(tr '\0' '\n' <"$WS/codex.env" 2>/dev/null)" "$KEY_O" "... and no variable of the CLI's environment holds the key"
like "$(mocklog openai | grep '"status": 101' | head -1)" "\"authorization\": \"Bearer $KEY_O\"" \
	"the WebSocket upgrade (GET /v1/responses) arrived with the real key and was accepted (101)"
like "$(mocklog openai)" '"ws": "response.create"' "... and Codex's response.create came over the relayed WebSocket"
if [ -n "$PH_O" ] && mocklog openai | grep -qF -- "$PH_O"; then
	not_ok "the placeholder never reached the mock" "$(mocklog openai)"
else
	ok "the placeholder never reached the mock"
fi
is "$(($(injects CODEX_API_KEY) - n0 >= 1))" 1 "secret.inject recorded for the upgrade request"
like "$(records | grep '"secret.inject"' | grep '"name":"CODEX_API_KEY"' | tail -1)" '"path":"/v1/responses' \
	"... naming /v1/responses"
via_o=$(via api.openai.com)
is "$via_o" proxy "Codex with the run's environment uses the proxy (HTTPS_PROXY) for the WebSocket too: via proxy"
diag "Codex requests (WebSocket mock): $(mocklog openai | sed 's/Bearer [^"]*"/Bearer …"/')"

if [ "$CAPTURES" = 1 ]; then
	rm -f "$M/openai.log"
	codex_run openai "$O_ADDR" "${NP[@]}"
	is "$RF_RC" 0 "codex exec without proxy variables (captured, the WebSocket terminated there): exit 0"
	has_line "$RF_OUT" "$REPLY_O" "... it printed the mock's fixed reply"
	like "$(mocklog openai | grep '"status": 101' | head -1)" "\"authorization\": \"Bearer $KEY_O\"" \
		"... the upgrade arrived with the real key (101)"
	like "$(mocklog openai)" '"ws": "response.create"' "... and response.create over the WebSocket"
	is "$(via api.openai.com)" capture "... egress.allow via capture"
else
	skip "Codex on the captured path" "this build does not capture"
fi

# the Responses API over SSE (this mock declines the upgrade with 426)
n0=$(injects CODEX_API_KEY)
rm -f "$M/openai-nows.log"
codex_run openai "$OD_ADDR"
PH_O2=$(envof "$WS/codex.env" CODEX_API_KEY)
is "$RF_RC" 0 "codex exec, the WebSocket declined (426): exit 0"
has_line "$RF_OUT" "$REPLY_O" "... it fell back to SSE and printed the mock's fixed reply"
like "$(mocklog openai-nows | grep '"status": 426' | head -1)" "\"authorization\": \"Bearer $KEY_O\"" \
	"the declined upgrade carried the real key"
like "$(mocklog openai-nows | grep '"method": "POST"' | grep '"stream": true' | head -1)" \
	"\"authorization\": \"Bearer $KEY_O\"" "POST /v1/responses (stream) arrived with the real key"
if [ -n "$PH_O2" ] && mocklog openai-nows | grep -qF -- "$PH_O2"; then
	not_ok "the placeholder never reached the mock" "$(mocklog openai-nows)"
else
	ok "the placeholder never reached the mock"
fi
is "$(($(injects CODEX_API_KEY) - n0 >= 2))" 1 "secret.inject recorded for the upgrade and the POST"
isnt "$PH_O2" "$PH_O" "a placeholder is new for every run"
unlike "$(records)" "$KEY_O" "the audit log holds no key"
diag "Codex requests (declining mock): $(mocklog openai-nows | sed 's/Bearer [^"]*"/Bearer …"/')"

# control: the wrong key in the store — the mock's 401, and the CLI says so
rm -f "$M/openai.log"
codex_run openai_bad "$O_ADDR"
isnt "$RF_RC" 0 "control, a wrong key in the store: codex exec fails ($RF_RC)"
like "$RF_OUT$RF_ERR" '401 Unauthorized' "... saying 401 Unauthorized (the mock's answer)"
unlike "$RF_OUT" "$REPLY_O" "... no reply printed"
like "$(mocklog openai | grep '"status": 401' | head -1)" "\"authorization\": \"Bearer $BAD_O\"" \
	"... the mock got the (wrong) stored value and answered 401"

# ---- the same agents by profile (issue 16): --profile claude-code / codex --------------------------
# A normal profile run reaches its API only: each agent's update check,
# telemetry, model list refresh and plugin sync are off by the profile, so
# the run makes no refused connection (egress.deny) at all, and no refusal
# storm notice. (quiet_since N NAME: no egress.deny after audit line N, and
# no storm notice on RF_ERR)
lines_now() { records | wc -l; }
quiet_since() {
	local d
	d=$(records | tail -n "+$(($1 + 1))" | grep '"egress.deny"' |
		sed 's/.*"\(host\|key\)":"\([^"]*\)".*/\2/;t;s/.*/(a refusal)/' | sort | uniq -c | tr '\n' ' ')
	is "$d" "" "$2: no refused connection (egress.deny) in the run"
	unlike "$RF_ERR" 'keeps trying' "... and no refusal storm notice"
}
# Found on the caller's PATH (the npm install's node_modules/.bin), their
# node_modules tree mounted read-only and .bin first on the run's PATH, the
# API host allowed, the caller's key (from its environment) injected: no
# --ro, --allow-host, --inject or -e of the caller's own.
# (Claude Code's own .bin/claude is a stub where npm ran no install
# scripts: a bin directory of the caller's links to the native binary, as
# a user's ~/.local/bin would; the profile mounts both trees)
AGBIN=${CLAUDE%%/node_modules/*}/node_modules/.bin
mkdir -p "$AG/bin"
ln -sf "$CLAUDE" "$AG/bin/claude"
rm -f "$M/anthropic.log" "$WS/claude.env"
l0=$(lines_now)
PATH="$AG/bin:$AGBIN:$PATH" ANTHROPIC_API_KEY="$KEY_A" er --profile claude-code \
	--add-host "api.anthropic.com:$A_ADDR" --upstream-ca "$WS/upstream-ca.pem" -e CLAUDE_CODE_MAX_RETRIES=1 \
	--timeout 90s -- sh -c 'cat /proc/self/environ >claude.env; exec claude -p "$0"' "Reply with the fixed test answer."
is "$RF_RC" 0 "--profile claude-code: claude -p, found on the caller's PATH: exit 0"
has_line "$RF_OUT" "$REPLY_A" "... it printed the mock's fixed reply"
PH_P=$(envof "$WS/claude.env" ANTHROPIC_API_KEY)
like "$PH_P" '^[A-Za-z0-9_-]{22,}$' "... its ANTHROPIC_API_KEY a placeholder (the caller's key injected)"
like "$(envof "$WS/claude.env" PATH)" "^$AG/bin:" "... its directory first on the run's PATH"
is "$(envof "$WS/claude.env" DISABLE_TELEMETRY)" 1 "... telemetry off"
ok_n=$(mocklog anthropic | grep '"path": "/v1/messages' | grep -c "\"x-api-key\": \"$KEY_A\"")
is "$((ok_n >= 1))" 1 "... the mock got the real key from the caller's environment ($ok_n)"
quiet_since "$l0" "--profile claude-code: claude -p"
# Codex with the config.toml its profile makes (nothing of the test's),
# and network.on_refusal_storm "kill": a normal run is not one
rm -f "$M/openai.log"
printf '{"version": 1, "network": {"on_refusal_storm": "kill"}}\n' >"$WS/storm-kill.json"
l0=$(lines_now)
PATH="$AGBIN:$PATH" CODEX_API_KEY="$KEY_O" er --profile codex -p "$WS/storm-kill.json" \
	--add-host "api.openai.com:$O_ADDR" --upstream-ca "$WS/upstream-ca.pem" --timeout 90s -- \
	sh -c 'cat ~/.codex/config.toml >codex.seen; exec codex exec --skip-git-repo-check "$0"' \
	"Reply with the fixed test answer."
is "$RF_RC" 0 "--profile codex: codex exec (codex.js run by node), found on the caller's PATH, the profile's config.toml, on_refusal_storm kill: exit 0"
has_line "$RF_OUT" "$REPLY_O" "... it printed the mock's fixed reply"
like "$(mocklog openai | grep '"status": 101' | head -1)" "\"authorization\": \"Bearer $KEY_O\"" \
	"... the mock got the real key from the caller's environment"
like "$(tr '\n' ' ' <"$WS/codex.seen" 2>/dev/null)" '\[features\] plugins = false api_key_model_discovery = false' \
	"... the profile's config.toml turns the plugin sync and the model list refresh off"
quiet_since "$l0" "--profile codex: codex exec"
# Gemini CLI (a node program) by its profile: the key from GEMINI_API_KEY
# (the run holds a placeholder), the workspace trusted for a headless run
GN=generativelanguage.googleapis.com
rm -f "$M/gemini.log" "$WS/gemini.env"
PATH="$AGBIN:$PATH" er --profile gemini-cli --timeout 60s -- gemini --version
is "$RF_OUT" "$(sed -n 's/^GEMINI_CLI_VERSION=//p' "$RF_SRC/scripts/agents.sh")" \
	"--profile gemini-cli: gemini --version (node and the bundle found on the caller's PATH)"
l0=$(lines_now)
PATH="$AGBIN:$PATH" GEMINI_API_KEY="$KEY_G" er --profile gemini-cli \
	--add-host "$GN:$G_ADDR" --upstream-ca "$WS/upstream-ca.pem" --timeout 90s -- \
	sh -c 'cat /proc/self/environ >gemini.env; exec gemini -p "$0"' "Reply with the fixed test answer."
is "$RF_RC" 0 "--profile gemini-cli: gemini -p with GEMINI_API_KEY injected: exit 0"
has_line "$RF_OUT" "$REPLY_G" "... it printed the mock's fixed reply"
PH_G=$(envof "$WS/gemini.env" GEMINI_API_KEY)
like "$PH_G" '^[A-Za-z0-9_-]{22,}$' "... its GEMINI_API_KEY a placeholder (${#PH_G} characters)"
unlike "$(tr '\0' '\n' <"$WS/gemini.env" 2>/dev/null)" "$KEY_G" "... and no variable of the CLI's environment holds the key"
ok_n=$(mocklog gemini | grep 'streamGenerateContent' | grep -c "\"x-goog-api-key\": \"$KEY_G\".*\"status\": 200")
is "$((ok_n >= 1))" 1 "... the mock's streamGenerateContent arrived with x-goog-api-key = the real key ($ok_n)"
if [ -n "$PH_G" ] && mocklog gemini | grep -qF -- "$PH_G"; then
	not_ok "... the placeholder never reached the mock" "$(mocklog gemini)"
else
	ok "... the placeholder never reached the mock"
fi
like "$(records | grep '"secret.inject"' | grep '"name":"GEMINI_API_KEY"' | tail -1)" 'GenerateContent' \
	"... secret.inject recorded, naming the request"
quiet_since "$l0" "--profile gemini-cli: gemini -p (usage statistics, the update check off by its settings.json)"
diag "Gemini CLI requests: $(mocklog gemini | sed 's/"x-goog-api-key": "[^"]*"/"x-goog-api-key": …/')"

# Their TUIs, by profile, on a terminal (tests/helpers/tui-drive.py: a pty
# that answers the terminal queries they make): each starts, shows its
# screen (a welcome, login, trust or prompt screen: whichever the fresh
# run's $HOME leads to) and exits on Ctrl-C, pressed as a keyboard does
# (0x03 on the terminal), again each second until it goes.
# tui NAME REGEX ENV... -- RUN-ARGS...: started/ctrlc/exit in TUI_OUT
tui() {
	local name=$1 re=$2
	shift 2
	local -a envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	# in the client namespace with the test's resolver, as er() runs
	TUI_L0=$(lines_now)
	TUI_OUT=$(cd "$WS" && env PATH="$AG/bin:$AGBIN:$PATH" "${envs[@]}" \
		unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift &&
			exec nsenter --net=/run/netns/"$0" "$@"' "$CNS" "$TH/resolv.conf" \
		python3 "$RF_SRC/tests/helpers/tui-drive.py" --expect "$re" --out "$M/$name.tui" --timeout 60 -- \
		"$RF_BIN" run --state-dir "$RF_STATE" -w "$WS" "$@")
}
for agent in claude codex gemini; do
	case $agent in
	# Claude Code's TUI checks api.anthropic.com and platform.claude.com
	# (GET /api/hello, /v1/oauth/hello) before its first screen; the
	# profile's ~/.claude.json takes it past onboarding, the folder-trust
	# question and the API key question straight to its prompt. The login
	# host is terminated here by an HTTP rule only so that it is verified
	# with the test CA (its real certificate is public: passed through)
	claude) tui claude 'shift\+tab\s*to\s*cycle' ANTHROPIC_API_KEY="$KEY_A" -- --profile claude-code \
		--add-host "api.anthropic.com:$A_ADDR" --add-host "platform.claude.com:$A_ADDR" \
		--allow-http 'platform.claude.com GET /**' --upstream-ca "$WS/upstream-ca.pem" --timeout 90s -- claude ;;
	codex) tui codex 'Codex|OpenAI|ChatGPT' CODEX_API_KEY="$KEY_O" -- --profile codex \
		--add-host "api.openai.com:$O_ADDR" --upstream-ca "$WS/upstream-ca.pem" --timeout 90s -- codex ;;
	gemini) tui gemini 'Gemini|Type\s*your' GEMINI_API_KEY="$KEY_G" -- --profile gemini-cli \
		--add-host "$GN:$G_ADDR" --upstream-ca "$WS/upstream-ca.pem" --timeout 90s -- gemini ;;
	esac
	is "$(sed -n 's/^started=//p' <<<"$TUI_OUT")" 1 "$agent's TUI under its profile, on a terminal: its screen is up"
	ex=$(sed -n 's/^exit=//p' <<<"$TUI_OUT")
	presses=$(sed -n 's/^ctrlc=//p' <<<"$TUI_OUT")
	if [ "${presses:-0}" -ge 1 ] && [ "$ex" != timeout ] && [ "$ex" != 124 ] && [ "$ex" != 125 ]; then
		ok "... it exits on Ctrl-C ($presses pressed, exit $ex)"
	else
		not_ok "... it exits on Ctrl-C" "$TUI_OUT" "$(tail -c 2000 "$M/$agent.tui" | tr -d '\033' | tail -n 20)"
	fi
	# (the storm notice of a terminal run comes at its end, on the terminal)
	RF_ERR=$(cat "$M/$agent.tui" 2>/dev/null)
	quiet_since "$TUI_L0" "... $agent's TUI: its update check, model catalog, plugin install off"
done

# control: without the profile the command is not there
PATH="$AGBIN:$PATH" er --timeout 30s -- claude --version
is "$RF_RC" 127 "control: without --profile, claude (on the caller's PATH) is not found in a run (127)"
like "$RF_ERR" "add --ro ${AGBIN%/.bin} " "... and the hint names the tree the profile mounts"
PATH="$AG/bin:$PATH" er --timeout 30s -- claude --version
like "$RF_ERR" "add --ro $AG/bin --ro ${CLAUDE%/*} " "... a link to a binary elsewhere: the hint names both trees"

# what else the CLIs tried to reach (refused: no rule allows it)
denied=$(records | grep '"egress.deny"' | sed -n 's/.*"host":"\([^"]*\)".*"reason":"\([^"]*\)".*/\1: \2/p' | sort -u)
diag "egress.deny during the agent runs: ${denied:-none}"

# AGENTS_DEBUG=DIR keeps the audit records and the mocks' logs there
[ -n "${AGENTS_DEBUG:-}" ] && { records >"$AGENTS_DEBUG/records.jsonl"; cp "$M"/*.log "$M"/*.tui "$AGENTS_DEBUG/" 2>/dev/null; }
done_testing
