#!/usr/bin/env bash
# scripts/browser.sh — install the headless-browser harness the web console
# tests drive (tests/helpers/browser-drive.js): puppeteer-core at a pinned
# version, with npm (its own configured registry), into a cache directory
# outside the repository; the browser is Debian's chromium (scripts/deps.sh
# installs it), never one that puppeteer downloads.
#
#   scripts/browser.sh           install if needed; print "puppeteer=PATH"
#                                (the puppeteer-core package directory, for
#                                require()) and "chromium=PATH" (Debian's
#                                chromium)
#
#   RF_BROWSER_DIR  where (default /var/cache/ringfence-test/browser)
#
# puppeteer-core 24.x is the last line that runs on Node.js 18 (Debian 12's
# nodejs; 25.x needs 22.12 or later); it drives the chromium of Debian 12
# (bookworm-security follows upstream's stable releases) over the DevTools
# protocol. The package has no install script, and downloads no browser:
# scripts are not run anyway (--ignore-scripts).
#
# Idempotent and quick when present: a stamp names the installed version
# and node loads that version from the directory; otherwise a fresh install
# goes to a temporary sibling directory and is renamed into place, under a
# lock (concurrent callers wait). The install is world-readable: the tests
# run the browser as an unprivileged uid. Exit status: 0 installed (paths
# printed); 2 cannot install here (no node or npm, a node older than 18, no
# chromium, the registry not reachable) with the reason on stderr, so a
# test can skip saying why; 1 anything else.
set -euo pipefail

PUPPETEER_CORE_VERSION=24.43.1
DIR=${RF_BROWSER_DIR:-/var/cache/ringfence-test/browser}
STAMP="puppeteer-core@$PUPPETEER_CORE_VERSION"
PPT_REL=node_modules/puppeteer-core

cannot() {
	printf 'browser.sh: %s\n' "$1" >&2
	exit 2
}

command -v node >/dev/null || cannot "node is not installed (Debian: apt-get install nodejs)"
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) ||
	cannot "node does not run"
[ "$node_major" -ge 18 ] || cannot "node $(node --version) is older than 18 (puppeteer-core $PUPPETEER_CORE_VERSION needs 18)"

# Debian's chromium: /usr/bin/chromium, the package's launcher (it sources
# /etc/chromium.d and execs /usr/lib/chromium/chromium)
CHROMIUM=$(command -v chromium || true)
[ -n "$CHROMIUM" ] || cannot "chromium is not installed (Debian: apt-get install chromium; scripts/deps.sh)"
[[ "$(timeout 30 "$CHROMIUM" --version 2>/dev/null)" == Chromium\ * ]] ||
	cannot "$CHROMIUM --version does not answer"

# present DIR — puppeteer-core of the pinned version there, loadable
present() {
	[ "$(cat "$1/.ringfence-browser" 2>/dev/null)" = "$STAMP" ] || return 1
	[ "$(cd / && timeout 60 node -e \
		'const p = require(process.argv[1]); if (typeof p.launch !== "function") process.exit(1);
		 console.log(require(process.argv[1] + "/package.json").version)' \
		"$1/$PPT_REL" 2>/dev/null)" = "$PUPPETEER_CORE_VERSION" ]
}

report() {
	printf 'puppeteer=%s\nchromium=%s\n' "$DIR/$PPT_REL" "$CHROMIUM"
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
# PUPPETEER_SKIP_DOWNLOAD: were a script to run after all, still no browser
if ! PUPPETEER_SKIP_DOWNLOAD=1 timeout 900 npm install --prefix "$tmp" --no-save --no-package-lock \
	--no-audit --no-fund --ignore-scripts --loglevel=error \
	"puppeteer-core@$PUPPETEER_CORE_VERSION" \
	</dev/null >"$log" 2>&1; then
	# npm's error code and first message say why (ENOTFOUND, ETIMEDOUT, E404 ...)
	why=$(grep -m 1 '^npm error code ' "$log" || true)
	why="${why:+$why }$(grep -v '^npm error code ' "$log" | grep -m 2 '^npm error [^ ]' | tr '\n' ' ')"
	cannot "npm install failed: ${why:- see the npm log}"
fi
rm -f "$log"
printf '%s\n' "$STAMP" >"$tmp/.ringfence-browser"
chmod -R a+rX "$tmp"
present "$tmp" || cannot "npm installed puppeteer-core but node cannot load it from $tmp/$PPT_REL"
# replace an old or broken install as a whole
if [ -e "$DIR" ]; then
	mv -- "$DIR" "$tmp.old"
	trap 'rm -rf -- "$tmp" "$tmp.old"' EXIT
fi
mv -- "$tmp" "$DIR"
report
