#!/bin/bash
# tests/integration/profile.sh — `--profile NAME` and `ringfence profile
# list|show` (issue 16): the built-ins are listed; a profile's command is
# found on the caller's PATH and its tree mounted (a tool of the test's own
# in a prefix outside /usr, run by name; its control: without the profile,
# the run does not see it); a profile whose command the host lacks refuses the run saying so;
# names are checked; a user profile (a policy file under
# $XDG_CONFIG_HOME/ringfence/profiles) applies and wins over a built-in of
# its name; the git profile gives the run the caller's identity, so a
# commit works (its control: without it, git refuses to commit). The agent
# profiles end to end (claude -p, codex exec): agents_inject.sh.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

out=$("$RF_BIN" profile list)
for p in node python git npm pip claude-code codex gemini-cli; do
	if grep -q "^$p " <<<"$out"; then ok "profile list: $p"; else not_ok "profile list: $p" "$out"; fi
done

# a command of a built-in profile, in a prefix of the caller's (the node
# profile's `node`, a stand-in script, first on the caller's PATH)
px=$WS.prefix
register_dir "$px"
mkdir -p "$px/bin" "$px/lib/node"
printf '#!/bin/sh\necho "stand-in node $*"\n' >"$px/lib/node/node"
chmod 0755 "$px/lib/node/node"
ln -s ../lib/node/node "$px/bin/node"
RF_ENV=("PATH=$px/bin:$PATH")
rf_run -- node --version
unlike "$RF_OUT" 'stand-in' "control: without the profile the run does not see the caller's prefix (not its node)"
rf_run --profile node -- node --version
is "$RF_OUT" "stand-in node --version" "--profile node: found on the caller's PATH, its prefix mounted, run by name"
out=$(PATH="$px/bin:$PATH" "$RF_BIN" profile show node)
like "$out" "--ro $px"$'\n' "profile show node: the prefix it mounts"
like "$out" "PATH=$px/bin:" "... and the directory it puts first on PATH"
RF_ENV=()

# a profile whose command the host lacks
RF_ENV=("PATH=/usr/bin:/bin")
rf_run --profile gemini-cli -- true
RF_ENV=()
is "$RF_RC" 125 "--profile gemini-cli without gemini on the caller's PATH: refused (125)"
like "$RF_ERR" 'gemini is not on your PATH' "... saying what is missing"
rf_run --profile no-such-profile -- true
is "$RF_RC" 125 "an unknown profile: refused (125)"
like "$RF_ERR" 'no such profile' "... saying so"
rf_run --profile ../../etc/passwd -- true
is "$RF_RC" 125 "a profile name with a path in it: refused (125)"
like "$RF_ERR" 'a name of a-z, 0-9' "... saying what a name is"

# a user profile: a policy file; it wins over a built-in of its name
cfg=$WS.config
register_dir "$cfg"
mkdir -p "$cfg/ringfence/profiles"
printf '{"version": 1, "env": {"RF_PROFILE_TEST": "mine"}}\n' >"$cfg/ringfence/profiles/mine.json"
printf '{"version": 1, "env": {"RF_PROFILE_TEST": "my node"}}\n' >"$cfg/ringfence/profiles/node.json"
RF_ENV=("XDG_CONFIG_HOME=$cfg")
rf_run --profile mine -- printenv RF_PROFILE_TEST
is "$RF_OUT" "mine" "a user profile (a policy file) applies"
rf_run --profile node -- printenv RF_PROFILE_TEST
is "$RF_OUT" "my node" "... and wins over the built-in of its name"
RF_ENV=()
# a profile file the caller must not trust: another user's, or writable by others
if is_root; then
	cp "$cfg/ringfence/profiles/mine.json" "$cfg/ringfence/profiles/theirs.json"
	chown 1234:1234 "$cfg/ringfence/profiles/theirs.json"
	RF_ENV=("XDG_CONFIG_HOME=$cfg")
	rf_run --profile theirs -- printenv RF_PROFILE_TEST
	RF_ENV=()
	is "$RF_RC" 125 "a profile file owned by another user: refused (125)"
	like "$RF_ERR" 'is not a regular file of yours or root' "... saying why"
fi
chmod 0666 "$cfg/ringfence/profiles/mine.json"
RF_ENV=("XDG_CONFIG_HOME=$cfg")
rf_run --profile mine -- printenv RF_PROFILE_TEST
RF_ENV=()
is "$RF_RC" 125 "a profile file others may write: refused (125)"
chmod 0644 "$cfg/ringfence/profiles/mine.json"
out=$(XDG_CONFIG_HOME=$cfg "$RF_BIN" profile list)
like "$out" "mine +policy file $cfg/ringfence/profiles/mine.json" "profile list: the user's profiles too"

# git: the caller's identity, so the run can commit (never its credential helpers)
if command -v git >/dev/null; then
	home=$WS.home
	register_dir "$home"
	mkdir -p "$home"
	printf '[user]\n\tname = Profile Tester\n\temail = tester@example.test\n[credential]\n\thelper = store\n' >"$home/.gitconfig"
	git -C "$WS" init -q 2>/dev/null
	echo x >"$WS/f"
	RF_ENV=("HOME=$home")
	rf_run -- sh -c 'git add f && git commit -q -m one'
	isnt "$RF_RC" 0 "control: without the git profile, the run cannot commit (no identity)"
	rf_run --profile git -- sh -c 'git add f && git commit -q -m one && git log -1 --format="%an <%ae>"; git config --get credential.helper; echo helper=$?; git config --global user.name; git config --global user.email'
	RF_ENV=()
	is "$(first_line "$RF_OUT")" "Profile Tester <tester@example.test>" "--profile git: the commit carries the caller's name and email"
	like "$RF_OUT" 'helper=1' "... and no credential helper of the caller's reached the run"
	like "$RF_OUT" $'Profile Tester\ntester@example.test$' "... its ~/.gitconfig (git's global file) holds that identity: git config user.name answers"
	# a config that includes a FIFO: git would wait on it for ever; the
	# profile gives up on the identity after a bound, and the run starts
	mkfifo "$home/fifo"
	printf '[include]\n\tpath = %s/fifo\n' "$home" >>"$home/.gitconfig"
	RF_ENV=("HOME=$home")
	rf_run --profile git -- true
	RF_ENV=()
	is "$RF_RC" 0 "--profile git with a ~/.gitconfig that includes a FIFO: the run starts (git config given up on, not waited for)"
else
	skip "git profile" "no git"
	skip "... identity" "no git"
	skip "... no credential helper" "no git"
	skip "... ~/.gitconfig" "no git"
	skip "... a FIFO included" "no git"
fi

# the agent's configuration in the run's $HOME: a per-run copy of the
# caller's own settings file (writable in the run, never written back), and
# made for the run: Claude Code's onboarding done and the workspace trusted
# (~/.claude.json), Codex's workspace trusted and its update check off
printf '#!/bin/sh\nexec "$@"\n' >"$px/lib/node/claude"
printf '#!/bin/sh\nexec "$@"\n' >"$px/lib/node/codex"
chmod 0755 "$px/lib/node/claude" "$px/lib/node/codex"
ln -s ../lib/node/claude "$px/bin/claude"
ln -s ../lib/node/codex "$px/bin/codex"
fh=$WS.home
register_dir "$fh"
mkdir -p "$fh/.claude"
printf '{"hooks": {}, "mine": "settings of the caller", "env": {"ANTHROPIC_API_KEY": "sk-ant-real-%s", "FOO": "bar"}, "apiKeyHelper": "/home/me/key.sh"}\n' "$$" >"$fh/.claude/settings.json"
chmod 0600 "$fh/.claude/settings.json"
WSR=$(realpath "$WS")
RF_ENV=("PATH=$px/bin:$PATH" "HOME=$fh")
rf_run --profile claude-code -- claude sh -c 'cat ~/.claude/settings.json; cat ~/.claude.json; echo; echo run-wrote >~/.claude/settings.json && echo wrote'
is "$RF_RC" 0 "--profile claude-code with the caller's ~/.claude/settings.json: the run starts"
like "$RF_OUT" '"mine":"settings of the caller"' "... the run reads a copy of the caller's settings in its ~/.claude"
like "$RF_OUT" '"env":\{"FOO":"bar"\}' "... its env kept but for what looks like a credential"
unlike "$RF_OUT" "sk-ant-real-$$" "... so the caller's API key written there never reaches the run (it is injected from the environment instead)"
unlike "$RF_OUT" 'apiKeyHelper' "... nor its apiKeyHelper"
like "$RF_OUT" '"sandbox":\{"enabled":false\}' "... and Claude Code's own sandbox off"
like "$RF_OUT" "\"hasCompletedOnboarding\":true.*\"projects\":\\{\"$WSR\":\\{\"hasTrustDialogAccepted\":true\\}" \
	"... its ~/.claude.json: onboarding done, the workspace ($WSR) trusted"
like "$RF_OUT" 'wrote' "... the copy is the run's to change"
like "$(cat "$fh/.claude/settings.json")" "^\\{\"hooks\": \\{\\}, \"mine\": \"settings of the caller\", \"env\": \\{\"ANTHROPIC_API_KEY\": \"sk-ant-real-$$\"" \
	"... and the caller's file is untouched after the run wrote its copy"
check "... and the run made nothing in the caller's home" test ! -e "$fh/.claude.json"
rf_run --profile codex -- codex sh -c 'cat ~/.codex/config.toml'
like "$RF_OUT" "\\[projects.\"$WSR\"\\]"$'\n''trust_level = "trusted"' "--profile codex: the workspace trusted in the run's ~/.codex/config.toml"
like "$RF_OUT" 'check_for_update_on_startup = false' "... the update check off"
# the caller's own config.toml: its credential lines left out, the names
# of variables (env_key) kept
mkdir -p "$fh/.codex"
printf 'model = "gpt-5.1-codex"\n# old token = sk-old-%s\n[model_providers.corp]\nenv_key = "CORP_KEY"\nexperimental_bearer_token = "sk-bearer-%s"\nhttp_headers = { "Authorization" = "Bearer sk-hdr-%s" }\n[mcp_servers.gh.env]\nGITHUB_TOKEN = "ghp-%s"\nLOG = "1"\n' "$$" "$$" "$$" "$$" >"$fh/.codex/config.toml"
chmod 0600 "$fh/.codex/config.toml"
rf_run --profile codex -- codex sh -c 'cat ~/.codex/config.toml'
unlike "$RF_OUT" "sk-old-$$|sk-bearer-$$|sk-hdr-$$|ghp-$$" "--profile codex with the caller's config.toml: no credential of it in the run's copy"
like "$RF_OUT" 'env_key = "CORP_KEY"' "... the name of a key's variable kept"
like "$RF_OUT" 'LOG = "1"' "... and the rest"
rm -rf "$fh/.codex"
# Gemini CLI's settings: an MCP server's credentials left out
printf '#!/bin/sh\nexec "$@"\n' >"$px/lib/node/gemini"
chmod 0755 "$px/lib/node/gemini"
ln -s ../lib/node/gemini "$px/bin/gemini"
mkdir -p "$fh/.gemini"
printf '{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp-g%s", "LOG": "1"}, "headers": {"Authorization": "Bearer g%s"}}}}\n' "$$" "$$" >"$fh/.gemini/settings.json"
chmod 0600 "$fh/.gemini/settings.json"
rf_run --profile gemini-cli -- gemini sh -c 'cat ~/.gemini/settings.json'
unlike "$RF_OUT" "ghp-g$$|Bearer g$$" "--profile gemini-cli with the caller's settings: an MCP server's token and header not in the run's copy"
like "$RF_OUT" '"command":"gh-mcp","env":\{"LOG":"1"\}' "... the rest of it kept"
rm -rf "$fh/.gemini"
ln -s settings.json "$fh/.claude/CLAUDE.md"
rf_run --profile claude-code -- claude true
is "$RF_RC" 125 "a symbolic link where a profile copies a file: refused (125)"
like "$RF_ERR" "$fh/.claude/CLAUDE.md: a symbolic link" "... saying which and why"
rm -f "$fh/.claude/CLAUDE.md"
if is_root; then
	chown 65534 "$fh/.claude/settings.json"
	rf_run --profile claude-code -- claude true
	is "$RF_RC" 125 "another user's file where root's profile copies one (sudo -E): refused (125)"
	like "$RF_ERR" "not a file of yours or root's" "... saying why"
	chown 0 "$fh/.claude/settings.json"
else
	skip "another user's file" "needs root"
	skip "... saying why" "needs root"
fi
chmod 0666 "$fh/.claude/settings.json"
rf_run --profile claude-code -- claude true
is "$RF_RC" 125 "a settings file others may write: refused (125)"
RF_ENV=()

done_testing
