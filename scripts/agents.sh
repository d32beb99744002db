#!/usr/bin/env bash
# scripts/agents.sh — install the three real agent CLIs the agent tests run
# (tests/integration/agents_inject.sh): Claude Code (@anthropic-ai/claude-code),
# the Codex CLI (@openai/codex) and Gemini CLI (@google/gemini-cli), at
# pinned versions, with npm (its own configured registry), into a cache
# directory outside the repository.
#
#   scripts/agents.sh            install if needed; print "claude=PATH",
#                                "codex=PATH" (the native binaries) and
#                                "gemini=PATH" (its node_modules/.bin link)
#
#   RF_AGENTS_DIR   where (default /var/cache/ringfence-test/agents)
#
# Both packages ship native binaries in per-platform packages (optional
# dependencies): Claude Code a self-contained ELF executable
# (@anthropic-ai/claude-code-linux-x64/claude; it needs no node at run
# time), Codex a static musl executable (@openai/codex-linux-x64/vendor/
# x86_64-unknown-linux-musl/bin/codex). Install scripts are not run (the
# Claude Code postinstall only copies that same binary to bin/claude.exe);
# the paths printed are the platform packages' own binaries. Gemini CLI is
# a node program (one bundle, no dependencies beyond optional native ones);
# it runs with the host's node (20 or later).
#
# Idempotent and quick when present: a stamp names the installed versions
# and both binaries answer --version with them; otherwise a fresh install
# goes to a temporary sibling directory and is renamed into place, under a
# lock (concurrent callers wait). Exit status: 0 installed (paths printed);
# 2 cannot install here (no npm, an unsupported platform, the registry not
# reachable) with the reason on stderr, so a test can skip saying why;
# 1 anything else.
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
GEMINI_CLI_VERSION=0.61.0
DIR=${RF_AGENTS_DIR:-/var/cache/ringfence-test/agents}
STAMP="claude-code@$CLAUDE_CODE_VERSION codex@$CODEX_VERSION gemini-cli@$GEMINI_CLI_VERSION"

cannot() {
	printf 'agents.sh: %s\n' "$1" >&2
	exit 2
}

case "$(uname -m)" in
x86_64) plat=linux-x64 triple=x86_64-unknown-linux-musl ;;
aarch64) plat=linux-arm64 triple=aarch64-unknown-linux-musl ;;
*) cannot "no agent binaries for $(uname -m)" ;;
esac
CLAUDE_REL=node_modules/@anthropic-ai/claude-code-$plat/claude
CODEX_REL=node_modules/@openai/codex-$plat/vendor/$triple/bin/codex
GEMINI_REL=node_modules/.bin/gemini

# present DIR — both binaries there, of the pinned versions
present() {
	[ "$(cat "$1/.ringfence-agents" 2>/dev/null)" = "$STAMP" ] || return 1
	[[ "$(HOME=/nonexistent timeout 30 "$1/$CLAUDE_REL" --version 2>/dev/null)" == "$CLAUDE_CODE_VERSION "* ]] ||
		return 1
	[ "$(HOME=/nonexistent timeout 30 "$1/$CODEX_REL" --version 2>/dev/null | tail -n 1)" = \
		"codex-cli $CODEX_VERSION" ] || return 1
	[ "$(HOME=/nonexistent timeout 60 "$1/$GEMINI_REL" --version 2>/dev/null | tail -n 1)" = \
		"$GEMINI_CLI_VERSION" ] || return 1
}

report() {
	printf 'claude=%s\ncodex=%s\ngemini=%s\n' "$DIR/$CLAUDE_REL" "$DIR/$CODEX_REL" "$DIR/$GEMINI_REL"
	exit 0
}

present "$DIR" && report

command -v npm >/dev/null || cannot "npm is not installed (Debian: apt-get install npm)"
parent=$(dirname "$DIR")
mkdir -p "$parent" || cannot "cannot create $parent"
exec 9>"$DIR.lock" || cannot "cannot create $DIR.lock"
flock -w 900 9 || cannot "another install holds $DIR.lock"
present "$DIR" && report # installed while we waited

tmp=$(mktemp -d "$DIR.new.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
log=$tmp/npm.log
if ! timeout 900 npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund \
	--ignore-scripts --loglevel=error \
	"@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" \
	"@google/gemini-cli@$GEMINI_CLI_VERSION" \
	</dev/null >"$log" 2>&1; then
	# npm's error code and first message say why (ENOTFOUND, ETIMEDOUT, E404 ...)
	why=$(grep -m 1 '^npm error code ' "$log" || true)
	why="${why:+$why }$(grep -v '^npm error code ' "$log" | grep -m 2 '^npm error [^ ]' | tr '\n' ' ')"
	cannot "npm install failed: ${why:- see the npm log}"
fi
rm -f "$log"
printf '%s\n' "$STAMP" >"$tmp/.ringfence-agents"
chmod 0755 "$tmp"
present "$tmp" || cannot "npm installed the packages but the $plat binaries do not run ($tmp/$CLAUDE_REL, $tmp/$CODEX_REL, $tmp/$GEMINI_REL)"
# replace an old or broken install as a whole
if [ -e "$DIR" ]; then
	mv -- "$DIR" "$tmp.old"
	trap 'rm -rf -- "$tmp" "$tmp.old"' EXIT
fi
mv -- "$tmp" "$DIR"
report
