#!/usr/bin/env bash
# agents_tools.sh — the agents' own tool calls inside a run (issue 16):
# under --profile claude-code, codex and gemini-cli, a mock API that
# answers as a model making one shell tool call (tests/helpers/mock-*.py
# --tool-command) gets the agent to run a shell command in the run's
# workspace, then the command's output back in the agent's next request;
# the agent prints the mock's reply with that output. Each agent's own
# sandbox either works inside the run or its profile turns it off: what
# each does is asserted below and in docs/PROFILES.md.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own)"
command -v ip >/dev/null && command -v nsenter >/dev/null && command -v python3 >/dev/null &&
	command -v openssl >/dev/null ||
	skip_all "needs ip, nsenter, python3 and openssl"
# shellcheck source=tests/helpers/agents-net.bash
. "$RF_SRC/tests/helpers/agents-net.bash"

A_ADDR=$net.15 G_ADDR=$net.16 O_ADDR=$net.17
for a in "$A_ADDR" "$G_ADDR" "$O_ADDR"; do ip -n "$HNS" addr add "$a/24" dev "$VB"; done
TOOLCMD='echo tool-ran >tool.out && echo hello-from-tool && pwd'
start_mock anthropic-tool mock-anthropic.py "$A_ADDR" --key-file "$M/anthropic.key" \
	--reply "$REPLY_A" --cert "$M/api.anthropic.com.pem" --certkey "$M/api.anthropic.com.key" \
	--tool-command "$TOOLCMD"
start_mock gemini-tool mock-gemini.py "$G_ADDR" --key-file "$M/gemini.key" --reply "$REPLY_G" \
	--cert "$M/generativelanguage.googleapis.com.pem" \
	--certkey "$M/generativelanguage.googleapis.com.key" --tool-command "$TOOLCMD"
start_mock openai-tool mock-openai.py "$O_ADDR" --key-file "$M/openai.key" --ws accept \
	--reply "$REPLY_O" --cert "$M/api.openai.com.pem" --certkey "$M/api.openai.com.key" \
	--tool-command "$TOOLCMD"
AGBIN=${CLAUDE%%/node_modules/*}/node_modules/.bin
mkdir -p "$AG/bin"
ln -sf "$CLAUDE" "$AG/bin/claude"
WSNAME=$(basename "$WS")
# quiet_since N NAME: no egress.deny after audit line N (the profile turns
# off what would reach hosts a run does not allow), no storm notice
lines_now() { records | wc -l; }
quiet_since() {
	local d
	d=$(records | tail -n "+$(($1 + 1))" | grep '"egress.deny"' |
		sed 's/.*"\(host\|key\)":"\([^"]*\)".*/\2/;t;s/.*/(a refusal)/' | sort | uniq -c | tr '\n' ' ')
	is "$d" "" "$2: no refused connection (egress.deny) in the run"
	unlike "$RF_ERR" 'keeps trying' "... and no refusal storm notice"
}

# ---- Claude Code: its Bash tool ------------------------------------------------------------------
rm -f "$WS/tool.out"
l0=$(lines_now)
PATH="$AG/bin:$AGBIN:$PATH" ANTHROPIC_API_KEY="$KEY_A" er --profile claude-code \
	--add-host "api.anthropic.com:$A_ADDR" --upstream-ca "$WS/upstream-ca.pem" -e CLAUDE_CODE_MAX_RETRIES=1 \
	--timeout 120s -- claude -p "Run the test command." --allowedTools Bash
is "$RF_RC" 0 "--profile claude-code: claude -p with a Bash tool call: exit 0"
is "$(cat "$WS/tool.out" 2>/dev/null)" "tool-ran" "... the tool's shell command ran in the run's workspace"
like "$RF_OUT" "^$REPLY_A \\| tool output: hello-from-tool" "... and its output went back to the API (the reply quotes it)"
like "$(mocklog anthropic-tool | grep tool_output | head -n 1)" 'hello-from-tool' "... the mock got the tool result"
quiet_since "$l0" "--profile claude-code, a tool call"

# Claude Code's own sandbox (bubblewrap in a user namespace) cannot start
# in a run: enabled in the caller's settings, Claude Code warns and runs
# each command unsandboxed. The profile's copy of the settings turns it
# off (the run is the sandbox): no warning, the command runs.
fh=$WS.home
register_dir "$fh"
mkdir -p "$fh/.claude"
printf '{"sandbox": {"enabled": true}, "mine": 1}\n' >"$fh/.claude/settings.json"
rm -f "$WS/tool.out"
HOME=$fh PATH="$AG/bin:$AGBIN:$PATH" ANTHROPIC_API_KEY="$KEY_A" er --profile claude-code \
	--add-host "api.anthropic.com:$A_ADDR" --upstream-ca "$WS/upstream-ca.pem" -e CLAUDE_CODE_MAX_RETRIES=1 \
	--timeout 120s -- sh -c 'cat ~/.claude/settings.json >settings.seen; exec claude -p "Run the test command." --allowedTools Bash'
is "$RF_RC" 0 "Claude Code's sandbox enabled in the caller's settings: claude -p with the tool call: exit 0"
like "$(cat "$WS/settings.seen" 2>/dev/null)" '"mine":1,"sandbox":\{"enabled":false\}\}$' \
	"... the run's copy of the settings turns it off (the caller's keys kept)"
unlike "$RF_ERR" 'Sandbox disabled' "... so Claude Code does not warn that it cannot start"
is "$(cat "$WS/tool.out" 2>/dev/null)" "tool-ran" "... and the tool's command ran in the run"
like "$(cat "$fh/.claude/settings.json")" '"enabled": true' "... the caller's settings untouched"
# control: the caller's settings as they are (the run's copy replaced by
# them): Claude Code's sandbox cannot start in a run and says so
cp "$fh/.claude/settings.json" "$WS/caller-settings.json"
HOME=$fh PATH="$AG/bin:$AGBIN:$PATH" ANTHROPIC_API_KEY="$KEY_A" er --profile claude-code \
	--add-host "api.anthropic.com:$A_ADDR" --upstream-ca "$WS/upstream-ca.pem" -e CLAUDE_CODE_MAX_RETRIES=1 \
	--timeout 120s -- sh -c 'cp "$0" ~/.claude/settings.json; exec claude -p "Run the test command." --allowedTools Bash' \
	"$WS/caller-settings.json"
like "$RF_ERR" 'Sandbox disabled.*cannot start here' "control: with the caller's settings as they are, Claude Code's sandbox cannot start in a run"

# ---- Codex CLI: exec_command ------------------------------------------------------------------------
# Its own sandbox (bubblewrap in a user namespace, for workspace-write and
# read-only) cannot start in a run: the profile's copy of the caller's
# config sets sandbox_mode = "danger-full-access" in place of the
# caller's (the run is the sandbox).
mkdir -p "$fh/.codex"
# (a model Codex knows: for one its catalog lacks it offers no tools;
# nothing in it about updates, analytics or plugins: the profile's copy
# turns those off)
printf 'model = "gpt-5.1-codex"\nsandbox_mode = "workspace-write"\n[tui]\nanimations = false\n' \
	>"$fh/.codex/config.toml"
cp "$fh/.codex/config.toml" "$WS/caller-codex.toml"
rm -f "$WS/tool.out"
l0=$(lines_now)
HOME=$fh PATH="$AGBIN:$PATH" CODEX_API_KEY="$KEY_O" er --profile codex \
	--add-host "api.openai.com:$O_ADDR" --upstream-ca "$WS/upstream-ca.pem" --timeout 120s -- \
	sh -c 'cat ~/.codex/config.toml >codex.seen; exec codex exec --skip-git-repo-check "Run the test command."'
is "$RF_RC" 0 "--profile codex: codex exec with an exec_command tool call: exit 0"
is "$(cat "$WS/tool.out" 2>/dev/null)" "tool-ran" "... the tool's shell command ran in the run's workspace"
like "$RF_OUT" "$REPLY_O \\| tool output: .*hello-from-tool" "... and its output went back to the API (the reply quotes it)"
is "$(head -n 1 "$WS/codex.seen" 2>/dev/null)" 'sandbox_mode = "danger-full-access"' \
	"... the run's copy of the caller's config turns Codex's own sandbox off"
unlike "$(cat "$WS/codex.seen" 2>/dev/null)" 'workspace-write' "... in place of the caller's sandbox_mode (TOML refuses a key twice)"
like "$(tr '\n' ' ' <"$WS/codex.seen" 2>/dev/null)" 'model = "gpt-5.1-codex" .*\[tui\] animations = false' \
	"... the rest of the caller's config kept"
like "$(tr '\n' ' ' <"$WS/codex.seen" 2>/dev/null)" 'check_for_update_on_startup = false .*\[analytics\] enabled = false .*\[features\] plugins = false api_key_model_discovery = false' \
	"... with the update check, analytics, the plugin sync and the model list refresh off (added by the profile)"
quiet_since "$l0" "--profile codex with the caller's config"
# control: the caller's config as it is: Codex's sandbox cannot start in a
# run, and the command does not run
rm -f "$WS/tool.out"
HOME=$fh PATH="$AGBIN:$PATH" CODEX_API_KEY="$KEY_O" er --profile codex \
	--add-host "api.openai.com:$O_ADDR" --upstream-ca "$WS/upstream-ca.pem" --timeout 120s -- \
	sh -c 'cp "$0" ~/.codex/config.toml; exec codex exec --skip-git-repo-check "Run the test command."' \
	"$WS/caller-codex.toml"
check "control: with the caller's sandbox_mode as it is, the command does not run in a run" test ! -e "$WS/tool.out"
like "$RF_OUT" 'tool output: .*bwrap' "... Codex's sandbox could not start (its error is the tool's output)"

# ---- Gemini CLI: run_shell_command ----------------------------------------------------------------
# Its own sandbox (a docker or podman container) is off by its profile
# (GEMINI_SANDBOX=false): a run has no container engine. In -p mode the
# shell tool is offered only with --yolo (else no command runs at all).
rm -f "$WS/tool.out"
l0=$(lines_now)
PATH="$AGBIN:$PATH" GEMINI_API_KEY="$KEY_G" er --profile gemini-cli \
	--add-host "generativelanguage.googleapis.com:$G_ADDR" --upstream-ca "$WS/upstream-ca.pem" \
	--timeout 120s -- sh -c 'echo "GEMINI_SANDBOX=$GEMINI_SANDBOX" >gemini.sandbox; exec gemini -p "Run the test command." --yolo'
is "$RF_RC" 0 "--profile gemini-cli: gemini -p --yolo with a run_shell_command tool call: exit 0"
is "$(cat "$WS/tool.out" 2>/dev/null)" "tool-ran" "... the tool's shell command ran in the run's workspace"
like "$RF_OUT" "$REPLY_G \\| tool output: .*hello-from-tool" "... and its output went back to the API (the reply quotes it)"
is "$(cat "$WS/gemini.sandbox" 2>/dev/null)" "GEMINI_SANDBOX=false" "... with Gemini CLI's own sandbox off by the profile"
like "$(mocklog gemini-tool | grep '"tool":' | head -n 1)" 'run_shell_command' "... the mock offered the call to run_shell_command"
quiet_since "$l0" "--profile gemini-cli, a tool call"

done_testing
