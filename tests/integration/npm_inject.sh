#!/usr/bin/env bash
# npm_inject.sh — `--profile npm` with the caller's ~/.npmrc (issue 16):
# its registry token reaches the registry (a mock over HTTPS that answers
# only the real token) while the run holds a placeholder: the run's copy
# of the file reads the token from RF_NPM_TOKEN_1, the egress process puts
# the value into the Authorization header toward that registry only. The
# control: a run with a wrong token of its own is answered 401 by the same
# registry. A credential in another form (_auth) never reaches the run's
# copy, and the caller's file is untouched.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own)"
command -v ip >/dev/null && command -v nsenter >/dev/null && command -v python3 >/dev/null &&
	command -v openssl >/dev/null && command -v npm >/dev/null ||
	skip_all "needs ip, nsenter, python3, openssl and npm"
case "$(command -v npm)" in /usr/*) ;; *) skip_all "npm is not under /usr (the test runs it by the profile's node only from there)" ;; esac
new_workspace
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

M=$TH/npm
mkdir -p "$M"
R=registry.npm.test
ossl() { openssl "$@" >/dev/null 2>&1 || bail_out "openssl $1 failed"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$M/ca.key" \
	-out "$M/ca.pem" -days 1 -subj "/CN=ringfence npm test CA $$" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
ossl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$M/r.key" \
	-out "$M/r.csr" -subj "/CN=$R"
printf 'subjectAltName=DNS:%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$R" >"$M/r.ext"
ossl x509 -req -in "$M/r.csr" -CA "$M/ca.pem" -CAkey "$M/ca.key" -CAcreateserial -days 1 \
	-out "$M/r.pem" -extfile "$M/r.ext"
cp "$M/ca.pem" "$WS/upstream-ca.pem"
TOKEN=npm_$(head -c 48 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9' | head -c 36)
printf '%s' "$TOKEN" >"$M/token"
N_ADDR=$net.21
ip -n "$HNS" addr add "$N_ADDR/24" dev "$VB"
ip netns exec "$HNS" python3 "$RF_SRC/tests/helpers/mock-npm.py" --listen "$N_ADDR:443" \
	--token-file "$M/token" --log "$M/log" --cert "$M/r.pem" --certkey "$M/r.key" \
	--ready "$M/ready" 2>"$M/err" &
register_pid $!
for _ in $(seq 1 100); do [ -s "$M/ready" ] && break; sleep 0.05; done
[ -s "$M/ready" ] || bail_out "the registry mock did not start: $(cat "$M/err")"

# the caller's home: an .npmrc with the registry, its token, and a
# credential in another form for another registry
fh=$WS.home
register_dir "$fh"
mkdir -p "$fh"
# (and, after a lone CR, which ends a line for npm too, a quoted
# _password key: npm reads it as one)
printf 'registry=https://%s/\n//%s/:_authToken=%s\n//other.test/:_auth=dXNlcjpzZWNyZXQ=\nfund=false\r"//other.test/:_password" = "cXVvdGVkLXB3"\n' \
	"$R" "$R" "$TOKEN" >"$fh/.npmrc"
chmod 0600 "$fh/.npmrc"
npmrun() { # er with the caller's HOME
	HOME=$fh er "$@"
}

rm -f "$M/log"
npmrun --profile npm --add-host "$R:$N_ADDR" --upstream-ca "$WS/upstream-ca.pem" --timeout 60s -- \
	sh -c 'cat ~/.npmrc >npmrc.seen; printf "%s" "$RF_NPM_TOKEN_1" >ph.seen; npm view rf-test-pkg version'
is "$RF_RC" 0 "--profile npm with the caller's ~/.npmrc: npm view against the token-only registry: exit 0"
is "$RF_OUT" "1.2.3" "... it printed the package's version"
like "$(grep '"status": 200' "$M/log" | head -n 1)" "\"authorization\": \"Bearer $TOKEN\"" \
	"... the registry got the real token"
PH=$(cat "$WS/ph.seen" 2>/dev/null)
like "$PH" '^.{20,}$' "the run's RF_NPM_TOKEN_1 is a placeholder (${#PH} characters)"
isnt "$PH" "$TOKEN" "... not the token"
if [ -n "$PH" ] && grep -qF -- "$PH" "$M/log"; then not_ok "... and it never reached the registry"; else ok "... and it never reached the registry"; fi
has() { grep -qxF -- "$2" "$1"; }
check "the run's ~/.npmrc reads the token from RF_NPM_TOKEN_1" has "$WS/npmrc.seen" "//$R/:_authToken=\${RF_NPM_TOKEN_1}"
unlike "$(cat "$WS/npmrc.seen")" "$TOKEN" "... and holds no token"
unlike "$(cat "$WS/npmrc.seen")" '_auth=' "... nor the other registry's _auth credential"
unlike "$(cat "$WS/npmrc.seen")" 'cXVvdGVkLXB3' "... nor a quoted _password key after a lone CR"
like "$(records | grep '"secret.inject"' | grep '"name":"RF_NPM_TOKEN_1"' | tail -n 1)" '"path":"/rf-test-pkg' \
	"secret.inject recorded for the request"
unlike "$(records)" "$TOKEN" "the audit log holds no token"
is "$(cat "$fh/.npmrc" | sed -n 2p)" "//$R/:_authToken=$TOKEN" "the caller's ~/.npmrc is untouched"

# control: the same registry, a wrong token in the run's own .npmrc (the
# host terminated by an HTTP rule, verified with the test CA): 401
rm -f "$M/log"
printf 'registry=https://%s/\n//%s/:_authToken=npm_wrong0123456789abcdef\n' "$R" "$R" >"$WS/wrong.npmrc"
npmrun --allow-host "$R" --allow-http "$R GET /**" --add-host "$R:$N_ADDR" \
	--upstream-ca "$WS/upstream-ca.pem" --timeout 60s -e NPM_CONFIG_USERCONFIG="$WS/wrong.npmrc" -- \
	sh -c 'npm view rf-test-pkg version 2>&1 | grep -o "E401" | head -n 1'
like "$RF_OUT" 'E401' "control: a run with a wrong token of its own: the registry answers 401"
like "$(grep rf-test-pkg "$M/log" | head -n 1)" '"authorization": "Bearer npm_wrong0123456789abcdef".*"status": 401' \
	"... the registry got that token and refused it"
done_testing
