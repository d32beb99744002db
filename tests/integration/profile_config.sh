#!/bin/bash
# tests/integration/profile_config.sh — the caller's own agent
# configuration under --profile claude-code, codex and gemini-cli (issue
# 16 audit: the profiles made the agent's settings but carried none of
# what users add to them). A fake caller home holds, for each agent, its
# custom commands (slash commands, prompts), sub-agents, skills, extensions
# and memory file, user-level MCP servers, hooks, and credential files; the
# agents are stand-ins (`exec "$@"`) so that what the run sees is read
# directly. Asserted for each agent:
#   - the directories are in the run's $HOME with their files (a file
#     reached through a symbolic link inside the home included; a skill's
#     script runnable), and read-only: a write, a new file, a removal, each
#     refused with EROFS (checked by errno), and the host files as they were;
#   - the MCP servers appear in the configuration the run's agent reads
#     (~/.claude.json's mcpServers, the workspace's local ones in its
#     project entry; config.toml's [mcp_servers.*]; settings.json's
#     mcpServers), without their tokens;
#   - hooks do not (Claude Code's and Gemini CLI's "hooks", Codex's notify
#     and [hooks]), nor credential files (auth.json, .credentials.json,
#     oauth_creds.json, a token file inside a carried directory), nor the
#     agents' credential helpers;
# and the refusals: a symbolic link that leaves the caller's home (125,
# naming it; its control: the same link into the home is carried), a file
# others may write, a file over the per-file bound. With --keep-state the
# carried directories cover the kept ones (read-only still) and nothing of
# them is written into the kept state. The real agents (scripts/agents.sh;
# skipped where they cannot be installed) list the caller's MCP servers
# from the run's configuration (`claude|codex|gemini mcp list`; Gemini
# CLI's extension's own too, and `gemini extensions list` shows the carried
# extension enabled), a server whose command the run lacks reported by the
# agent. Under sudo (SUDO_UID
# of a second user) the directories are read as that user, from its home
# in passwd: its 0600 files in its 0700 home are carried, root's $HOME's
# are not, and a file it may not read itself refuses the run.
#
# shellcheck disable=SC2016,SC2088 # $HOME, ~ and $ARGUMENTS are the run's, or text
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

px=$WS.prefix
fh=$WS.home
register_dir "$px"
register_dir "$fh"
mkdir -p "$px/bin"
for a in claude codex gemini; do
	printf '#!/bin/sh\nexec "$@"\n' >"$px/bin/$a"
	chmod 0755 "$px/bin/$a"
done
WSR=$(realpath "$WS")
RF_ENV=("PATH=$px/bin:$PATH" "HOME=$fh")

# PROBE_RO REL... — in the run: each $HOME/REL's errno for a write, a create and
# a removal (one line each: "PATH write=... create=... rm=...")
PROBE_RO='for f in "$@"; do f=$HOME/$f; w=$(./rf-probe write "$f" x); c=$(./rf-probe create "$f.new"); rm "$f" 2>/dev/null; echo "$f write=$w create=$c rm=$?"; done'

# ---- Claude Code ----------------------------------------------------------------------------------
mkdir -p "$fh/.claude/commands/team" "$fh/.claude/agents" "$fh/.claude/skills/pdf/scripts" "$fh/notes" "$fh/outside"
echo 'Review the diff: $ARGUMENTS' >"$fh/.claude/commands/review.md"
echo 'team command' >"$fh/.claude/commands/team/deploy.md"
echo 'linked command' >"$fh/notes/linked.md"
ln -s ../../notes/linked.md "$fh/.claude/commands/linked.md"
printf -- '---\nname: reviewer\n---\nYou review code.\n' >"$fh/.claude/agents/reviewer.md"
printf -- '---\nname: pdf\n---\nRun scripts/fill.sh\n' >"$fh/.claude/skills/pdf/SKILL.md"
printf '#!/bin/sh\necho skill-script-ran\n' >"$fh/.claude/skills/pdf/scripts/fill.sh"
chmod 0755 "$fh/.claude/skills/pdf/scripts/fill.sh"
echo "secret-in-tree-$$" >"$fh/.claude/skills/pdf/.credentials.json"
mkdir -p "$fh/.claude/skills/pdf/.git/objects"
echo 'ref: refs/heads/main' >"$fh/.claude/skills/pdf/.git/HEAD"
echo 'Always answer in English.' >"$fh/.claude/CLAUDE.md"
echo "{\"claudeAiOauth\": {\"accessToken\": \"sk-ant-oat-$$\"}}" >"$fh/.claude/.credentials.json"
printf '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "/h/guard-%s.sh"}]}]}, "apiKeyHelper": "/h/key.sh", "awsAuthRefresh": "/h/aws-%s", "model": "opus", "mcpServers": {"in-settings": {"command": "s-mcp", "env": {"S_SECRET": "s-%s"}}}}\n' "$$" "$$" "$$" >"$fh/.claude/settings.json"
printf '{"numStartups": 7, "oauthAccount": {"emailAddress": "me@example.test"}, "projects": {"%s": {"mcpServers": {"local-db": {"command": "db-mcp", "env": {"DB_PASSWORD": "pw-%s"}}}}}, "mcpServers": {"github": {"type": "http", "url": "https://mcp.example.test/", "headers": {"Authorization": "Bearer ghp-%s"}}, "files": {"command": "npx", "args": ["-y", "files-mcp"], "env": {"LOG": "debug"}}}}\n' "$WSR" "$$" "$$" >"$fh/.claude.json"
chmod -R go-w "$fh"
chmod 0600 "$fh/.claude.json" "$fh/.claude/.credentials.json"

rf_run --profile claude-code -- claude sh -c 'cd ~/.claude && find commands agents skills | sort; cat commands/linked.md; skills/pdf/scripts/fill.sh; echo; cat ~/.claude.json; echo; cat ~/.claude/settings.json; echo; ls -a ~/.claude'
is "$RF_RC" 0 "--profile claude-code with the caller's commands, agents, skills and MCP servers: the run starts"
like "$RF_OUT" $'commands/review.md\ncommands/team\ncommands/team/deploy.md' "... its slash commands in the run's ~/.claude/commands (a subdirectory's too)"
like "$RF_OUT" 'agents/reviewer.md' "... its sub-agents in ~/.claude/agents"
like "$RF_OUT" 'skills/pdf/SKILL.md' "... its skills in ~/.claude/skills"
like "$RF_OUT" 'linked command' "... a command reached through a symbolic link inside the caller's home: carried (the file it names)"
like "$RF_OUT" 'skill-script-ran' "... a skill's script runnable (its mode kept, the directory not noexec)"
unlike "$RF_OUT" "secret-in-tree-$$" "... a credential file inside a carried directory left out"
unlike "$RF_OUT" 'skills/pdf/\.git' "... and a skill's .git"
like "$RF_OUT" '"mcpServers":\{"github":\{"type":"http","url":"https://mcp.example.test/","headers":\{\}\},"files":\{"command":"npx","args":\["-y","files-mcp"\],"env":\{"LOG":"debug"\}\}\}' \
	"... the caller's user MCP servers in the run's ~/.claude.json"
like "$RF_OUT" "\"$WSR\":\\{\"hasTrustDialogAccepted\":true,\"mcpServers\":\\{\"local-db\":\\{\"command\":\"db-mcp\",\"env\":\\{\\}\\}\\}\\}" \
	"... the workspace's own (local scope) in its project entry"
unlike "$RF_OUT" "ghp-$$|pw-$$|sk-ant-oat-$$" "... without their tokens, and no OAuth token"
unlike "$RF_OUT" 'me@example.test|numStartups' "... nothing else of the caller's ~/.claude.json"
unlike "$RF_OUT" "guard-$$|hooks|apiKeyHelper|aws-$$" "... its settings without hooks or credential helpers"
like "$RF_OUT" '"model":"opus"' "... the rest of its settings kept"
like "$RF_OUT" '"mcpServers":\{"in-settings":\{"command":"s-mcp","env":\{\}\}\}' "... MCP servers in its settings.json too, without their secrets"
unlike "$RF_OUT" "s-$$" "... (the secret's value nowhere)"
like "$RF_OUT" 'CLAUDE.md' "... its memory file (CLAUDE.md) copied"
unlike "$RF_OUT" '\.credentials\.json' "... its .credentials.json not"
rf_run --profile claude-code -- claude sh -c "$PROBE_RO" - ".claude/commands/review.md" ".claude/agents/reviewer.md" ".claude/skills/pdf/SKILL.md"
out=$(sed -E 's|^[^ ]*/\.claude/||' <<<"$RF_OUT")
is "$out" "commands/review.md write=errno=EROFS create=errno=EROFS rm=1
agents/reviewer.md write=errno=EROFS create=errno=EROFS rm=1
skills/pdf/SKILL.md write=errno=EROFS create=errno=EROFS rm=1" \
	"... commands, agents and skills read-only: a write, a new file, a removal refused (EROFS)"
is "$(cat "$fh/.claude/commands/review.md")" 'Review the diff: $ARGUMENTS' "... the caller's files as they were"
check "... and the run made nothing in the caller's home" test ! -e "$fh/.claude/commands/review.md.new"
rf_run --profile claude-code -- claude sh -c './rf-probe write "$HOME/.claude/CLAUDE.md" mine; ./rf-probe write "$HOME/.claude.json" "{}"'
is "$RF_OUT" $'ok 4\nok 2' "... the memory file and ~/.claude.json are the run's own copies (writable, ending with it)"
is "$(cat "$fh/.claude/CLAUDE.md")" 'Always answer in English.' "... the caller's CLAUDE.md as it was"

# kept state: the carried directories cover the kept ones, read-only
rf_run --profile claude-code --keep-state -- claude sh -c 'cat ~/.claude/commands/review.md; ./rf-probe create "$HOME/.claude/commands/x"; echo kept >~/.claude/history.jsonl'
is "$RF_RC" 0 "--keep-state: the run starts"
is "$RF_OUT" $'Review the diff: $ARGUMENTS\nerrno=EROFS' "... the caller's commands over the kept directory, read-only"
kept=$(find "$RF_STATE/kept" -path '*claude-code/.claude' -type d | head -n 1)
check "... the run's own files kept" test -f "$kept/history.jsonl"
is "$(find "$kept/commands" "$kept/agents" "$kept/skills" -type f 2>/dev/null | wc -l)" 0 "... and nothing of the caller's written into the kept state"

# refusals: a link out of the home, a file others may write, a file too large
ln -s "$fh.outside" "$fh/.claude/commands/out"
mkdir -p "$fh.outside" && register_dir "$fh.outside"
echo private >"$fh.outside/x.md"
rf_run --profile claude-code -- claude true
is "$RF_RC" 125 "a symbolic link in ~/.claude/commands that leaves the caller's home: refused (125)"
like "$RF_ERR" "$fh/.claude/commands/out: a symbolic link to $fh.outside, outside your home" "... naming it and why"
rm "$fh/.claude/commands/out"
ln -s ../../outside "$fh/.claude/commands/out"
echo inside >"$fh/outside/x.md"
rf_run --profile claude-code -- claude sh -c 'cat ~/.claude/commands/out/x.md'
is "$RF_OUT" inside "control: a link to a directory inside the caller's home: carried"
rm "$fh/.claude/commands/out"
chmod o+w "$fh/.claude/agents/reviewer.md"
rf_run --profile claude-code -- claude true
is "$RF_RC" 125 "a carried file others may write: refused (125)"
like "$RF_ERR" "$fh/.claude/agents/reviewer.md: a file others may write \\(mode 0646\\)" "... naming it"
chmod o-w,g+w "$fh/.claude/agents/reviewer.md"
rf_run --profile claude-code -- claude true
is "$RF_RC" 125 "a carried group-writable file of root's (no private group for root): refused (125)"
like "$RF_ERR" "$fh/.claude/agents/reviewer.md: a group-writable file of root's" "... naming it"
chmod g-w "$fh/.claude/agents/reviewer.md"
head -c 1100000 /dev/zero >"$fh/.claude/skills/pdf/big.bin"
rf_run --profile claude-code -- claude true
is "$RF_RC" 125 "a carried file over 1 MiB: refused (125)"
like "$RF_ERR" 'big.bin: larger than 1048576 bytes' "... naming it and the bound"
rm "$fh/.claude/skills/pdf/big.bin"
out=$(env "${RF_ENV[@]}" "$RF_BIN" profile show claude-code)
like "$out" '~/.claude/\{commands,agents,skills\} in the run.s \$HOME \(yours, read-only' "profile show claude-code: the carried directories"

# ---- Codex ----------------------------------------------------------------------------------------
mkdir -p "$fh/.codex/prompts" "$fh/.codex/skills/lint"
echo 'Write release notes for $1' >"$fh/.codex/prompts/notes.md"
echo 'lint skill' >"$fh/.codex/skills/lint/SKILL.md"
echo 'Use tabs.' >"$fh/.codex/AGENTS.md"
echo "{\"OPENAI_API_KEY\": \"sk-auth-$$\"}" >"$fh/.codex/auth.json"
echo '{"hooks": {"Stop": [{"command": "/h/stop"}]}}' >"$fh/.codex/hooks.json"
printf 'model = "gpt-5.1-codex"\nnotify = [\n  "python3",\n  "/h/notify-%s.py",\n]\n[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]\n[mcp_servers.docs.env]\nDOCS_TOKEN = "tok-%s"\nLOG = "1"\n[hooks]\nstop = "/h/hook-%s"\n[tui]\nanimations = false\n' "$$" "$$" "$$" >"$fh/.codex/config.toml"
chmod -R go-w "$fh/.codex"
chmod 0600 "$fh/.codex/auth.json" "$fh/.codex/config.toml"
rf_run --profile codex -- codex sh -c 'cd ~/.codex && find prompts skills | sort; cat AGENTS.md config.toml; ls -a'
is "$RF_RC" 0 "--profile codex with the caller's prompts, skills and MCP servers: the run starts"
like "$RF_OUT" 'prompts/notes.md' "... its custom prompts in the run's ~/.codex/prompts"
like "$RF_OUT" 'skills/lint/SKILL.md' "... its skills in ~/.codex/skills"
like "$RF_OUT" 'Use tabs.' "... its AGENTS.md"
like "$RF_OUT" $'\\[mcp_servers.docs\\]\ncommand = "npx"\nargs = \\["-y", "docs-mcp"\\]' "... its MCP servers in the run's config.toml"
like "$RF_OUT" 'LOG = "1"' "... their settings kept"
unlike "$RF_OUT" "tok-$$|sk-auth-$$" "... without their tokens; no auth.json"
unlike "$RF_OUT" "notify|hook-$$|/h/stop|hooks.json|auth.json" "... no notify, no [hooks], no hooks.json, no auth.json"
like "$RF_OUT" $'\\[tui\\]\nanimations = false' "... the table after the hooks kept"
rf_run --profile codex -- codex sh -c "$PROBE_RO" - ".codex/prompts/notes.md" ".codex/skills/lint/SKILL.md"
out=$(sed -E 's|^[^ ]*/\.codex/||' <<<"$RF_OUT")
is "$out" "prompts/notes.md write=errno=EROFS create=errno=EROFS rm=1
skills/lint/SKILL.md write=errno=EROFS create=errno=EROFS rm=1" \
	"... prompts and skills read-only (EROFS)"

# ---- Gemini CLI -----------------------------------------------------------------------------------
mkdir -p "$fh/.gemini/commands/git" "$fh/.gemini/extensions/tools/dist" "$fh/.gemini/skills/sql"
printf 'description = "Commit"\nprompt = "Write a commit message"\n' >"$fh/.gemini/commands/git/commit.toml"
printf '{"name": "tools", "version": "1.0.0", "mcpServers": {"tools": {"command": "node", "args": ["${extensionPath}/dist/server.js"]}}}\n' >"$fh/.gemini/extensions/tools/gemini-extension.json"
echo 'console.log("server")' >"$fh/.gemini/extensions/tools/dist/server.js"
echo "CTX_API_KEY=ext-key-$$" >"$fh/.gemini/extensions/tools/.env"
echo "OTHER_KEY=ext-local-$$" >"$fh/.gemini/extensions/tools/.env.local"
echo '{"tools": {"overrides": ["user"]}}' >"$fh/.gemini/extensions/extension-enablement.json"
echo 'sql skill' >"$fh/.gemini/skills/sql/SKILL.md"
echo 'Be brief.' >"$fh/.gemini/GEMINI.md"
echo "{\"access_token\": \"ya29-$$\"}" >"$fh/.gemini/oauth_creds.json"
printf '{"mcpServers": {"jira": {"httpUrl": "https://jira.example.test/mcp", "headers": {"Authorization": "Bearer jira-%s"}, "timeout": 5000}}, "hooks": {"BeforeTool": [{"command": "/h/gem-hook-%s"}]}, "hooksConfig": {"enabled": true}, "ui": {"theme": "GitHub"}}\n' "$$" "$$" >"$fh/.gemini/settings.json"
chmod -R go-w "$fh/.gemini"
chmod 0600 "$fh/.gemini/oauth_creds.json" "$fh/.gemini/settings.json"
rf_run --profile gemini-cli -- gemini sh -c 'cd ~/.gemini && find commands extensions skills | sort; cat GEMINI.md settings.json; echo; ls -a'
is "$RF_RC" 0 "--profile gemini-cli with the caller's commands, extensions, skills and MCP servers: the run starts"
like "$RF_OUT" 'commands/git/commit.toml' "... its custom commands in the run's ~/.gemini/commands"
like "$RF_OUT" $'extensions/tools/dist/server.js\nextensions/tools/gemini-extension.json' "... its extensions in ~/.gemini/extensions (their MCP servers' files too)"
like "$RF_OUT" 'skills/sql/SKILL.md' "... its skills in ~/.gemini/skills"
like "$RF_OUT" 'Be brief.' "... its GEMINI.md"
like "$RF_OUT" '"mcpServers":\{"jira":\{"httpUrl":"https://jira.example.test/mcp","headers":\{\},"timeout":5000\}\}' "... its MCP servers in the run's settings.json"
unlike "$RF_OUT" "jira-$$|ya29-$$|oauth_creds" "... without their tokens; no oauth_creds.json"
unlike "$RF_OUT" 'extensions/tools/\.env' "... nor an extension's .env or .env.local (its settings: API keys)"
unlike "$RF_OUT" "gem-hook-$$|hooks" "... no hooks"
like "$RF_OUT" '"ui":\{"theme":"GitHub"\}' "... the rest of its settings kept"
rf_run --profile gemini-cli -- gemini sh -c "$PROBE_RO" - ".gemini/commands/git/commit.toml" ".gemini/extensions/tools/gemini-extension.json" ".gemini/skills/sql/SKILL.md"
out=$(sed -E 's|^[^ ]*/\.gemini/||' <<<"$RF_OUT")
is "$out" "commands/git/commit.toml write=errno=EROFS create=errno=EROFS rm=1
extensions/tools/gemini-extension.json write=errno=EROFS create=errno=EROFS rm=1
skills/sql/SKILL.md write=errno=EROFS create=errno=EROFS rm=1" \
	"... commands, extensions and skills read-only (EROFS)"
# a caller with none of it: nothing carried, the runs as before
rm -rf "$fh/.gemini/commands" "$fh/.gemini/extensions" "$fh/.gemini/skills"
rf_run --profile gemini-cli -- gemini sh -c 'ls ~/.gemini'
is "$RF_RC" 0 "a caller with no gemini commands, extensions or skills: the run starts"
unlike "$RF_OUT" 'commands|extensions|skills' "... and none is made"
RF_ENV=()

# ---- the real agents read what was carried (their own `mcp list`) -----------------------------
# Each pinned agent (scripts/agents.sh), by its profile, lists the caller's
# MCP servers from the run's configuration; a server whose command the run
# lacks is the agent's to report (not a refusal of ringfence's).
N_REAL=9
if agents=$("$RF_SRC/scripts/agents.sh" 2>/dev/null) && command -v node >/dev/null; then
	ab=$WS.agentbin
	register_dir "$ab"
	mkdir -p "$ab"
	# claude and codex by a link (their native binaries); gemini from its
	# node_modules/.bin, as npm installs it (a link to a link is mounted at
	# its ends only: PROFILES.md)
	gbin=
	while IFS='=' read -r name path; do
		if [ "$name" = gemini ]; then gbin=${path%/*}; else ln -s "$path" "$ab/$name"; fi
	done <<<"$agents"
	ah=$WS.agenthome
	register_dir "$ah"
	mkdir -p "$ah/.codex" "$ah/.gemini"
	printf '[mcp_servers.docs]\ncommand = "docs-mcp-absent"\nargs = ["-y"]\n[mcp_servers.docs.env]\nDOCS_TOKEN = "tok-%s"\n' "$$" >"$ah/.codex/config.toml"
	printf '{"mcpServers": {"jira": {"command": "jira-mcp-absent", "env": {"JIRA_TOKEN": "j-%s"}}}}\n' "$$" >"$ah/.gemini/settings.json"
	mkdir -p "$ah/.gemini/extensions/tools"
	printf '{"name": "tools", "version": "1.0.0", "contextFileName": "CTX.md", "mcpServers": {"ext-srv": {"command": "ext-mcp-absent"}}}\n' >"$ah/.gemini/extensions/tools/gemini-extension.json"
	echo 'extension context' >"$ah/.gemini/extensions/tools/CTX.md"
	printf '{"mcpServers": {"fs": {"command": "fs-mcp-absent", "args": []}}}\n' >"$ah/.claude.json"
	chmod -R go-w "$ah"
	RF_ENV=("PATH=$ab:$gbin:$PATH" "HOME=$ah")
	RF_RUN_TIMEOUT=120 rf_run --profile codex -- codex mcp list
	like "$RF_OUT" 'docs +docs-mcp-absent +-y' "codex mcp list in the run: the caller's MCP server"
	unlike "$RF_OUT" "tok-$$" "... without its token"
	RF_RUN_TIMEOUT=120 rf_run --profile gemini-cli -- gemini mcp list
	like "$RF_OUT$RF_ERR" 'jira: jira-mcp-absent' "gemini mcp list in the run: the caller's MCP server (it answers on stderr)"
	like "$RF_OUT$RF_ERR" 'Disconnected' "... its command absent in the run: the agent says so"
	like "$RF_OUT$RF_ERR" 'ext-srv \(from tools\): ext-mcp-absent' "... and the MCP server of the caller's extension (carried read-only)"
	RF_RUN_TIMEOUT=120 rf_run --profile gemini-cli -- gemini extensions list
	like "$RF_OUT$RF_ERR" $'Enabled \\(User\\): true' "gemini extensions list in the run: the caller's extension, enabled (its enablement read from the read-only directory)"
	like "$RF_OUT$RF_ERR" 'extensions/tools/CTX.md' "... its context file"
	RF_RUN_TIMEOUT=120 rf_run --profile claude-code -- claude mcp list
	like "$RF_OUT" 'fs: fs-mcp-absent' "claude mcp list in the run: the caller's MCP server (from ~/.claude.json)"
	like "$RF_OUT" 'Failed to connect' "... its command absent in the run: the agent says so"
	RF_ENV=()
else
	for _ in $(seq 1 "$N_REAL"); do skip "the real agents' mcp list" "scripts/agents.sh cannot install the agents here, or no node"; done
fi

# ---- under sudo: read with the caller's rights ------------------------------------------------
# The user sudo names (SUDO_UID) is the caller: its directories are read as
# it (its 0700 home, its 0600 files), from its home in passwd, not root's
# $HOME; a file in them it may not read itself refuses the run.
N_SUDO=28
if ! is_root || ! command -v useradd >/dev/null; then
	for _ in $(seq 1 "$N_SUDO"); do skip "sudo's caller" "needs root and useradd"; done
	done_testing
fi
rf_mktemp /tmp
SB=$REPLY
chmod 0755 "$SB"
SNAME=rft$(printf '%x' $$)c$RANDOM
SH=$SB/home
useradd -M -d "$SH" -s /bin/sh -U "$SNAME" || bail_out "cannot add user $SNAME"
register_user "$SNAME"
SU=$(id -u "$SNAME")
SG=$(id -g "$SNAME")
mkdir -p "$SH/ws" "$SH/.claude/commands"
echo 'the sudo caller command' >"$SH/.claude/commands/mine.md"
chown -R "$SU:$SG" "$SH"
chmod 0700 "$SH" "$SH/.claude" "$SH/.claude/commands"
chmod 0600 "$SH/.claude/commands/mine.md"
RH=$SB/roothome
mkdir -p "$RH/.claude/commands"
echo 'root command' >"$RH/.claude/commands/roots.md"
RF_CWD=$SH/ws
RF_ENV=("PATH=$px/bin:$PATH" HOME="$RH" SUDO_UID="$SU" SUDO_GID="$SG" SUDO_USER="$SNAME")
rf_run --profile claude-code -- claude sh -c 'cat ~/.claude/commands/*.md; ./rf-probe write "$HOME/.claude/commands/mine.md" x 2>/dev/null || true'
is "$RF_RC" 0 "under sudo: the run starts"
like "$RF_OUT" 'the sudo caller command' "... the caller's 0600 command in its 0700 home carried (read as it)"
unlike "$RF_OUT" 'root command' "... not the one in root's \$HOME"
root_only=$SH/.claude/commands/root-only.md
echo private >"$root_only"
chmod 0600 "$root_only"
rf_run --profile claude-code -- claude true
is "$RF_RC" 125 "under sudo: a file in the caller's commands that it may not read itself (root's 0600): refused (125)"
like "$RF_ERR" "$root_only: Permission denied" "... naming it"
rm -f "$root_only"
RF_ENV=()
RF_CWD=

# ---- a user private group: umask 002's modes ----------------------------------------------------
# Debian's and Ubuntu's useradd (USERGROUPS_ENAB) give a user a group of its
# own name, pam_umask then umask 002: its files are 0664, its directories
# 0775. Group write is the owner's alone there (shared/ownwrite.h), so, run
# as that user (rootless) and for it under sudo, its 0664 settings.json,
# 0775 commands directory with a 0664 command, and 0664 profile file are
# accepted and carried. The attack: once another user is in the group, or
# has it as its primary group, that user could have written them: refused,
# naming the file (a settings file, a carried directory, a profile file);
# and again accepted once it is gone (the control). A 0666 file: refused.
UB=$SB/upg
mkdir -p "$UB/bin" "$UB/state" "$SH/.config/ringfence/profiles"
printf '#!/bin/sh\nexec "$@"\n' >"$UB/bin/claude"
echo 'the private group command' >"$SH/.claude/commands/upg.md"
printf '{"model": "upg-%s"}\n' "$$" >"$SH/.claude/settings.json"
printf '{"version": 1, "env": {"RF_UPG": "upg-profile"}}\n' >"$SH/.config/ringfence/profiles/upg.json"
chown -R "$SU:$SG" "$SH" "$UB/state"
chmod 0755 "$UB" "$UB/bin" "$UB/bin/claude"
chmod 0775 "$SH/.claude/commands" "$SH/.config/ringfence/profiles"
chmod 0664 "$SH/.claude/settings.json" "$SH/.claude/commands/upg.md" "$SH/.config/ringfence/profiles/upg.json"
UPG_CMD='cat ~/.claude/commands/upg.md ~/.claude/settings.json; echo; printenv RF_UPG; true'
# upg_run [OPTIONS...] -- CMD...: ringfence run as the user itself
upg_run() {
	local st=$RF_STATE
	RF_STATE=$UB/state
	RF_CWD=$SH/ws
	RF_WRAP=(setpriv --reuid="$SU" --regid="$SG" --init-groups --inh-caps=-all
		env HOME="$SH" USER="$SNAME" LOGNAME="$SNAME" XDG_CONFIG_HOME="$SH/.config")
	RF_ENV=("PATH=$UB/bin:$PATH")
	rf_run "$@"
	RF_STATE=$st
	RF_CWD=
	RF_WRAP=()
	RF_ENV=()
}
# sudo_run [OPTIONS...] -- CMD...: root's run for the user (SUDO_UID)
sudo_run() {
	RF_CWD=$SH/ws
	RF_ENV=("PATH=$UB/bin:$PATH" HOME="$RH" SUDO_UID="$SU" SUDO_GID="$SG" SUDO_USER="$SNAME")
	rf_run "$@"
	RF_CWD=
	RF_ENV=()
}
upg_run --profile claude-code --profile upg -- claude sh -c "$UPG_CMD"
is "$RF_RC" 0 "as a user with a private group: its 0664 settings.json, 0775 commands, 0664 profile file: the run starts"
like "$RF_OUT" 'the private group command' "... its command carried"
like "$RF_OUT" "upg-$$" "... its settings copied"
like "$RF_OUT" 'upg-profile' "... its profile file applied"
sudo_run --profile claude-code -- claude sh -c "$UPG_CMD"
is "$RF_RC" 0 "under sudo for it: the run starts"
like "$RF_OUT" 'the private group command' "... its command carried (read as it)"
like "$RF_OUT" "upg-$$" "... its settings copied"

# the attack: a second user in the group
SNAME2=rft$(printf '%x' $$)d$RANDOM
useradd -M -d /nonexistent -s /usr/sbin/nologin -U "$SNAME2" || bail_out "cannot add user $SNAME2"
register_user "$SNAME2"
gpasswd -a "$SNAME2" "$SNAME" >/dev/null || bail_out "cannot add $SNAME2 to group $SNAME"
upg_run --profile claude-code -- claude true
is "$RF_RC" 125 "another user in the group (it could have written them): refused (125)"
like "$RF_ERR" "$SH/.claude/settings.json: a group-writable file whose group \\(gid $SG\\) is not your private group" "... naming the settings file and why"
chmod 0644 "$SH/.claude/settings.json"
upg_run --profile claude-code -- claude true
is "$RF_RC" 125 "... the carried directory: refused (125)"
like "$RF_ERR" "$SH/.claude/commands: a group-writable directory whose group \\(gid $SG\\) is not your private group" "... naming it"
chmod 0664 "$SH/.claude/settings.json"
upg_run --profile upg -- true
is "$RF_RC" 125 "... the profile file: refused (125)"
like "$RF_ERR" "upg.json is a group-writable file whose group \\(gid $SG\\) is not your private group" "... naming it"
sudo_run --profile claude-code -- claude true
is "$RF_RC" 125 "... under sudo: refused (125)"
like "$RF_ERR" "settings.json: a group-writable file whose group \\(gid $SG\\) is not uid $SU's private group" "... naming it"
gpasswd -d "$SNAME2" "$SNAME" >/dev/null

# ... a second group entry with the same gid listing that user (groupadd -o,
# a hand edit, files and a directory service overlapping): getgrgid shows
# the first entry only, but the user holds the gid (initgroups reads them all)
SDUP=rft$(printf '%x' $$)g$RANDOM
groupadd -o -g "$SG" "$SDUP" && gpasswd -a "$SNAME2" "$SDUP" >/dev/null || bail_out "cannot add group $SDUP"
like "$(setpriv --reuid="$SNAME2" --regid="$SNAME2" --init-groups id -G)" "(^| )$SG( |\$)" \
	"a duplicate gid entry: its member holds gid $SG (control: it could write the files)"
upg_run --profile claude-code -- claude true
is "$RF_RC/$(grep -c 'is not your private group' <<<"$RF_ERR")" "125/1" "... the settings file: refused (125), the group not private"
groupdel -f "$SDUP" # (its gid is a user's primary group: -f)
userdel "$SNAME2"

# ... a second user whose primary group it is (listed in no member list)
SNAME3=rft$(printf '%x' $$)e$RANDOM
useradd -M -d /nonexistent -s /usr/sbin/nologin -N -g "$SG" "$SNAME3" || bail_out "cannot add user $SNAME3"
register_user "$SNAME3"
upg_run --profile claude-code -- claude true
is "$RF_RC" 125 "another user whose primary group it is: refused (125)"
like "$RF_ERR" "settings.json: a group-writable file whose group \\(gid $SG\\) is not your private group" "... naming it"
userdel "$SNAME3" # before $SNAME's: the group must go with it
upg_run --profile claude-code --profile upg -- claude sh -c "$UPG_CMD"
is "$RF_RC" 0 "control: the group the user's alone again: the run starts"
like "$RF_OUT" "upg-$$" "... its settings copied"

chmod 0666 "$SH/.claude/settings.json"
upg_run --profile claude-code -- claude true
is "$RF_RC" 125 "a 0666 settings file (anyone could write it): refused (125)"
like "$RF_ERR" "$SH/.claude/settings.json: a file others may write \\(mode 0666\\)" "... naming it"
chmod 0664 "$SH/.claude/settings.json"

# a POSIX ACL: the mode's group bits are then its mask, and a named entry
# (setfacl -m u:OTHER:rw) lets another user write a file whose mode says
# only the private group may
if command -v setfacl >/dev/null && setfacl -m "u:65534:rw" "$SH/.claude/settings.json" 2>/dev/null; then
	upg_run --profile claude-code -- claude true
	is "$RF_RC" 125 "an ACL letting uid 65534 write the 0664 settings file: refused (125)"
	like "$RF_ERR" "$SH/.claude/settings.json: a file that an access ACL lets another user or group write" "... naming it and why"
	setfacl -b "$SH/.claude/settings.json"
	setfacl -m "g:65534:rw" "$SH/.config/ringfence/profiles/upg.json"
	upg_run --profile upg -- true
	is "$RF_RC" 125 "... a named group's write on the user's profile file: refused (125)"
	like "$RF_ERR" "upg.json is a file that an access ACL lets another user or group write" "... naming it"
	setfacl -m "g:65534:r" "$SH/.config/ringfence/profiles/upg.json"
	upg_run --profile claude-code --profile upg -- claude sh -c "$UPG_CMD"
	is "$RF_RC" 0 "control: the ACL's named entries only read (or none): the run starts"
	like "$RF_OUT" 'upg-profile' "... its profile file applied"
	setfacl -b "$SH/.config/ringfence/profiles/upg.json"
else
	for _ in 1 2 3 4 5 6; do skip "ACLs" "no setfacl, or this file system takes no ACL"; done
fi

done_testing
