#!/bin/bash
# tests/integration/profile.sh — `--profile NAME` and `ringfence profile
# list|show` (issue 16): the built-ins are listed; a profile's command is
# found on the caller's PATH and its tree mounted (a tool of the test's own
# in a prefix outside /usr, run by name; its control: without the profile,
# the run does not see it); a profile whose command the host lacks refuses the run saying so;
# names are checked; a user profile (a policy file under
# $XDG_CONFIG_HOME/ringfence/profiles) applies and wins over a built-in of
# its name; the git profile gives the run the caller's identity, so a
# commit works (its control: without it, git refuses to commit). The
# install tree is what the command needs and nothing around it (an audit
# found the common root of a link and its target mounted): Claude Code's
# native installer layout (~/.local/bin/claude -> ~/.local/share/claude/
# versions/X) runs by profile and by the hint's mounts while a keyring
# file beside it in ~/.local/share stays out of the run (its controls: the
# file is on the host, and a run given ~/.local reads it); ~/bin/claude ->
# ~/proj/claude runs, also where ~ is the run's own home (it was 125);
# /x/a/bin/claude -> /x/b/claude leaves /x/private out. The agent
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
like "$RF_ERR" 'mine.json is a file others may write \(mode 0666\); refusing it' "... saying why"
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
like "$(tr '\n' ' ' <<<"$RF_OUT")" '\[features\] plugins = false api_key_model_discovery = false' \
	"... the plugin sync and the model list refresh off"
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
printf '// mine, with comments (Gemini CLI reads JSONC)\n{"mcpServers": {"gh": {"command": "gh-mcp", /* its env */ "env": {"GITHUB_TOKEN": "ghp-g%s", "LOG": "1"}, "headers": {"Authorization": "Bearer g%s"}}}, "general": {"enableAutoUpdate": true}}\n' "$$" "$$" >"$fh/.gemini/settings.json"
chmod 0600 "$fh/.gemini/settings.json"
rf_run --profile gemini-cli -- gemini sh -c 'cat ~/.gemini/settings.json'
is "$RF_RC" 0 "--profile gemini-cli with the caller's settings.json with comments: the run starts"
unlike "$RF_OUT" "ghp-g$$|Bearer g$$" "... an MCP server's token and header not in the run's copy"
like "$RF_OUT" '"command":"gh-mcp","env":\{"LOG":"1"\}' "... the rest of it kept"
like "$RF_OUT" '"general":\{"enableAutoUpdate":false,"enableAutoUpdateNotification":false\}.*"privacy":\{"usageStatisticsEnabled":false\}' \
	"... the update check and usage statistics off (their hosts are not allowed)"
printf '{"a": 1 /* open\n' >"$fh/.gemini/settings.json"
rf_run --profile gemini-cli -- gemini true
is "$RF_RC" 125 "a settings.json that is not JSON once its comments are out: refused (125)"
like "$RF_ERR" 'settings.json: not a JSON object' "... saying why"
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
	# a $HOME of another user's for root (sudo -E or doas keepenv, without
	# SUDO_UID): a link there could lead root to its own private files
	rf_mktemp /tmp
	oh=$REPLY
	mkdir -p "$oh/.claude" "$WS/rootonly"
	echo '{"model": "root-private"}' >"$WS/rootonly/settings.json"
	chmod 0600 "$WS/rootonly/settings.json"
	rm -rf "$oh/.claude"
	ln -s "$WS/rootonly" "$oh/.claude"
	chown -h 65534 "$oh" "$oh/.claude"
	RF_ENV=("PATH=$px/bin:$PATH" "HOME=$oh")
	rf_run --profile claude-code -- claude sh -c 'cat ~/.claude/settings.json'
	is "$RF_RC" 125 "root's run with another user's \$HOME (a link there to root's files): refused (125)"
	like "$RF_ERR" "HOME \($oh\) is uid 65534's, not root's" "... saying why"
	unlike "$RF_OUT" 'root-private' "... nothing of root's file reached a run"
	chown 0 "$oh"
	rf_run --profile claude-code -- claude sh -c 'echo ran'
	is "$RF_RC" 0 "control: the same \$HOME of root's own: the run starts"
	RF_ENV=("PATH=$px/bin:$PATH" "HOME=$fh")
else
	for _ in 1 2 3 4 5 6; do skip "another user's file" "needs root"; done
fi
chmod 0666 "$fh/.claude/settings.json"
rf_run --profile claude-code -- claude true
is "$RF_RC" 125 "a settings file others may write: refused (125)"
like "$RF_ERR" 'settings.json: a file others may write \(mode 0666\); a profile copies it into the run, so it is refused' "... saying why"
RF_ENV=()

# ---- the install tree, and nothing around it -----------------------------------------------------
# Claude Code's native installer: ~/.local/bin/claude -> ~/.local/share/
# claude/versions/X, a keyring of the user's beside it in ~/.local/share
th=$WS.treehome
register_dir "$th"
mkdir -p "$th/.local/bin" "$th/.local/share/claude/versions" "$th/.local/share/keyrings"
printf '#!/bin/sh\necho "native claude"\nexec "$@"\n' >"$th/.local/share/claude/versions/2.0.76"
chmod 0755 "$th/.local/share/claude/versions/2.0.76"
ln -s "$th/.local/share/claude/versions/2.0.76" "$th/.local/bin/claude"
key=$th/.local/share/keyrings/secret
printf 'keyring-secret-%s\n' "$$" >"$key"
chmod 0644 "$key" # readable once mounted: its absence is what keeps it out
# shellcheck disable=SC2016 # expanded by the run's shell
readkey='cat "$0" 2>&1; echo "cat=$?"'
is "$(cat "$key")" "keyring-secret-$$" "control: the keyring file is there on the host ($key)"
rf_run --ro "$th/.local" -- sh -c "$readkey" "$key"
like "$RF_OUT" "keyring-secret-$$" "control: a run given ~/.local (what was mounted for this layout) reads it"
out=$(HOME=$th PATH="$th/.local/bin:$PATH" "$RF_BIN" profile show claude-code)
like "$out" "--ro $th/.local/bin"$'\n'"  --ro $th/.local/share/claude/versions"$'\n' \
	"profile show claude-code, ~/.local/bin/claude -> ~/.local/share/claude/versions/X: the link's directory and the versions directory"
unlike "$out" "--ro ($th|$th/.local|$th/.local/share)"$'\n' "... not ~/.local, ~/.local/share or \$HOME"
RF_ENV=("PATH=$th/.local/bin:$PATH" "HOME=$th")
rf_run --profile claude-code -- claude sh -c "$readkey" "$key"
is "$RF_RC" 0 "--profile claude-code with Claude Code's native layout: the run starts"
like "$RF_OUT" "^native claude"$'\n' "... claude runs, found on the caller's PATH"
unlike "$RF_OUT" "keyring-secret-$$" "... and the keyring file beside its versions is not in the run"
like "$RF_OUT" "(No such file or directory|Permission denied)"$'\n'"cat=1" "... (ENOENT/EACCES: $(tail -n 2 <<<"$RF_OUT" | head -n 1))"
rf_run -- claude --version
is "$RF_RC" 127 "without the profile: not found in the run (127)"
like "$RF_ERR" "the host has it at $th/.local/bin/claude, which the run does not see: add --ro $th/.local/bin --ro $th/.local/share/claude/versions and call it by that path" \
	"... the hint names the link's directory and the versions directory"
RF_ENV=()
rf_run --ro "$th/.local/bin" --ro "$th/.local/share/claude/versions" -- "$th/.local/bin/claude" sh -c "$readkey" "$key"
like "$RF_OUT" "^native claude"$'\n' "following the hint runs it"
unlike "$RF_OUT" "keyring-secret-$$" "... and the keyring file is not in the run"

# ~/bin/claude -> ~/proj/claude: ~/bin and ~/proj, never $HOME
mkdir -p "$th/bin" "$th/proj"
cp "$th/.local/share/claude/versions/2.0.76" "$th/proj/claude"
ln -s ../proj/claude "$th/bin/claude"
printf 'home-secret-%s\n' "$$" >"$th/secret"
out=$(HOME=$th PATH="$th/bin:$PATH" "$RF_BIN" profile show claude-code)
like "$out" "--ro $th/bin"$'\n'"  --ro $th/proj"$'\n' "profile show claude-code, ~/bin/claude -> ~/proj/claude: ~/bin and ~/proj"
unlike "$out" "--ro $th"$'\n' "... not \$HOME"
RF_ENV=("PATH=$th/bin:$PATH" "HOME=$th")
rf_run --profile claude-code -- claude sh -c "$readkey" "$th/secret"
RF_ENV=()
is "$RF_RC" 0 "--profile claude-code with ~/bin/claude -> ~/proj/claude: the run starts"
like "$RF_OUT" "^native claude"$'\n' "... claude runs"
unlike "$RF_OUT" "home-secret-$$" "... and a file in \$HOME is not in the run"
# where ~ is the run's own home ($RF_HOME_IN, a tmpfs in a mount namespace
# of the test's own): mounting it read-only made the run fail (125)
if is_root && command -v unshare >/dev/null; then
	# shellcheck disable=SC2016 # expanded by the wrapper's shell
	RF_WRAP=(unshare -m sh -c 'mount -t tmpfs rf-home "$0" && mkdir "$0/bin" "$0/proj" &&
		cp "$1" "$0/proj/claude" && ln -s ../proj/claude "$0/bin/claude" &&
		echo "home-secret" >"$0/secret" && shift && exec "$@"' "$RF_HOME_IN" "$th/proj/claude")
	RF_ENV=("PATH=$RF_HOME_IN/bin:$PATH" "HOME=$RF_HOME_IN")
	rf_run --profile claude-code -- claude sh -c "$readkey" "$RF_HOME_IN/secret"
	is "$RF_RC" 0 "... where ~ is the run's own home ($RF_HOME_IN/bin -> proj): the run starts (not 125)"
	like "$RF_OUT" "^native claude"$'\n' "... claude runs"
	unlike "$RF_OUT" "home-secret" "... and the file in that home is not in the run"
	rf_run --profile claude-code --ro "$RF_HOME_IN" -- claude true
	is "$RF_RC" 125 "control: with that home read-only (what was mounted for this layout) the run fails (125)"
	RF_ENV=()
	RF_WRAP=()
else
	for t in "the run's own home: the run starts" "... claude runs" "... the file in that home not in the run" "control: 125"; do
		skip "$t" "needs root (a mount namespace with a home of its own)"
	done
fi

# /x/a/bin/claude -> /x/b/claude: each directory, not /x with x/private in it
far=$WS.far
register_dir "$far"
mkdir -p "$far/a/bin" "$far/b" "$far/private"
cp "$th/proj/claude" "$far/b/claude"
ln -s "$far/b/claude" "$far/a/bin/claude"
printf 'far-private-%s\n' "$$" >"$far/private/p"
out=$(PATH="$far/a/bin:$PATH" "$RF_BIN" profile show claude-code)
like "$out" "--ro $far/a/bin"$'\n'"  --ro $far/b"$'\n' "profile show claude-code, /x/a/bin/claude -> /x/b/claude: /x/a/bin and /x/b"
unlike "$out" "--ro $far"$'\n' "... not their common parent /x"
RF_ENV=("PATH=$far/a/bin:$PATH")
rf_run --profile claude-code -- claude sh -c "$readkey" "$far/private/p"
RF_ENV=()
is "$RF_RC" 0 "--profile claude-code with /x/a/bin/claude -> /x/b/claude: the run starts"
like "$RF_OUT" "^native claude"$'\n' "... claude runs"
unlike "$RF_OUT" "far-private-$$" "... and /x/private is not in the run"

# a version manager's shims on PATH (pyenv: ROOT/shims/python3 execs pyenv,
# which cannot work in a run): the global version's interpreter is found
# instead (ROOT/version names it), and mounted
ph=$th/pyenv-home
mkdir -p "$ph/.pyenv/shims" "$ph/.pyenv/versions/9.9/bin"
printf '#!/bin/sh\necho shim-ran; exit 99\n' >"$ph/.pyenv/shims/python3"
printf '#!/bin/sh\necho "real interpreter 9.9"\n' >"$ph/.pyenv/versions/9.9/bin/python3"
chmod 0755 "$ph/.pyenv/shims/python3" "$ph/.pyenv/versions/9.9/bin/python3"
echo 9.9 >"$ph/.pyenv/version"
chmod -R a+rX "$ph"
RF_ENV=("PATH=$ph/.pyenv/shims:/usr/bin:/bin" "HOME=$ph")
rf_run --profile python -- python3
is "$RF_RC/$RF_OUT" "0/real interpreter 9.9" "--profile python with pyenv's shims first on PATH: the global version's python3 runs, not the shim"
echo system >"$ph/.pyenv/version"
rf_run --profile python -- python3 -c 'print("system python")'
is "$RF_RC/$RF_OUT" "0/system python" "... a global version of 'system': the next PATH entry's (/usr/bin/python3)"
RF_ENV=()
out=$(HOME=$ph PATH="$ph/.pyenv/shims:/usr/bin:/bin" "$RF_BIN" profile show python)
unlike "$out" "shims" "control: profile show never names the shim directory"

done_testing
