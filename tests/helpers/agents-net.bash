# shellcheck shell=bash
# tests/helpers/agents-net.bash — what the agent tests share
# (agents_inject.sh, agents_tools.sh): the real agent CLIs from npm
# (scripts/agents.sh; the test skips, saying why, when npm cannot fetch
# them), the test host of egress-net.bash, a test CA with certificates for
# the agents' API hosts (api.anthropic.com also as platform.claude.com),
# keys and fixed replies, and helpers to start mocks and read what they
# and the audit log saw. Sourced after tests/lib.sh, require_bin and the
# root check.

new_workspace
rf_mktemp /tmp
AG=$REPLY
"$RF_SRC/scripts/agents.sh" >"$AG/paths" 2>"$AG/err"
case $? in
0) ;;
2) skip_all "the agent CLIs cannot be installed here: $(tr '\n' ' ' <"$AG/err")" ;;
*) bail_out "scripts/agents.sh failed: $(tr '\n' ' ' <"$AG/err")" ;;
esac
CLAUDE=$(sed -n 's/^claude=//p' "$AG/paths")
GEMINI=$(sed -n 's/^gemini=//p' "$AG/paths")
CODEX=$(sed -n 's/^codex=//p' "$AG/paths")
[ -x "$CLAUDE" ] && [ -x "$CODEX" ] && [ -x "$GEMINI" ] || bail_out "scripts/agents.sh printed no binaries: $(cat "$AG/paths")"
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

# ---- the test CA, the mocks' certificates, the mocks --------------------------------------------
M=$TH/mock
mkdir -p "$M"
ossl() { openssl "$@" >/dev/null 2>&1 || bail_out "openssl $1 failed"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$M/ca.key" \
	-out "$M/ca.pem" -days 1 -subj "/CN=ringfence agents test CA $$" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
for name in api.anthropic.com api.openai.com generativelanguage.googleapis.com; do
	ossl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$M/$name.key" \
		-out "$M/$name.csr" -subj "/CN=$name"
	# the Anthropic mock also answers as platform.claude.com (the login
	# host Claude Code's TUI checks at start)
	san="DNS:$name"
	[ "$name" = api.anthropic.com ] && san="$san,DNS:platform.claude.com"
	printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
		"$san" >"$M/$name.ext"
	ossl x509 -req -in "$M/$name.csr" -CA "$M/ca.pem" -CAkey "$M/ca.key" -CAcreateserial \
		-days 1 -out "$M/$name.pem" -extfile "$M/$name.ext"
done
cp "$M/ca.pem" "$WS/upstream-ca.pem"

rand() { head -c 96 /dev/urandom | base64 -w0 | tr '+/' '-_' | tr -d '=' | head -c "$1"; }
KEY_A=sk-ant-api03-$(rand 86)-$(rand 6)AA
KEY_O=sk-proj-$(rand 120)
BAD_A=sk-ant-api03-$(rand 86)-$(rand 6)AA
BAD_O=sk-proj-$(rand 120)
KEY_G=AIza$(rand 35)
printf '%s' "$KEY_G" >"$M/gemini.key"
REPLY_G="Fenced pong from the mock Gemini API $$"
printf '%s' "$KEY_A" >"$M/anthropic.key"
printf '%s' "$KEY_O" >"$M/openai.key"
REPLY_A="Fenced pong from the mock Messages API $$"
REPLY_O="Fenced pong from the mock Responses API $$"


# start_mock NAME SCRIPT ADDR ARGS... — a mock on ADDR:443 in the test host
start_mock() {
	local name=$1 script=$2 addr=$3
	shift 3
	ip netns exec "$HNS" python3 "$RF_SRC/tests/helpers/$script" --listen "$addr:443" \
		--log "$M/$name.log" --ready "$M/$name.ready" "$@" 2>"$M/$name.err" &
	register_pid $!
	for _ in $(seq 1 100); do [ -s "$M/$name.ready" ] && return 0; sleep 0.05; done
	bail_out "mock $name did not start: $(cat "$M/$name.err")"
}
mocklog() { cat "$M/$1.log" 2>/dev/null; }
set_secret() {
	printf '%s' "$2" | "$RF_BIN" secret set --state-dir "$RF_STATE" "$1" >/dev/null 2>&1 ||
		bail_out "secret set $1 failed"
}
# secret.inject records name the injected variable
injects() { records | grep '"secret.inject"' | grep -c "\"name\":\"$1\""; }
# via HOST — the "via" of the last egress.allow toward HOST (proxy, capture)
via() { records | grep '"egress.allow"' | grep "\"host\":\"$1\"" | tail -1 | sed -n 's/.*"via":"\([^"]*\)".*/\1/p'; }
# every proxy variable removed: the captured path
NP=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
	-u NO_PROXY -u no_proxy)
# has_line TEXT LINE NAME — ok if LINE is a whole line of TEXT
has_line() {
	if grep -qxF -- "$2" <<<"$1"; then ok "$3"; else not_ok "$3" "no line '$2' in:" "$1" "$(_rf_last_run_diag)"; fi
}
# envof FILE VAR — VAR's value in a NUL-separated environment dump
envof() { tr '\0' '\n' <"$1" 2>/dev/null | sed -n "s/^$2=//p"; }
