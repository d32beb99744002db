#!/bin/bash
# tests/integration/oci_secrets.sh — a container's secrets under
# ringfence-oci (issue 17): the operator's named policy
# (/etc/ringfence/policies/NAME.json, picked with ringfence.io/policy)
# grants them, and ringfence.io/secrets keeps, by name, the ones a
# container of the pod needs; the pod author's annotation can only pick
# among the policy's grants, never add one.
#
# Asserted: with the named policy alone the container has both of its
# bindings' values (and its agent is the policy's); with
# ringfence.io/secrets naming one, that one and not the other; refused
# (125, saying why, nothing left): a name the policy does not grant, the
# secrets annotation without a named policy, allow-hosts beside a named
# policy; the audit log records the grant (secret.grant, its name, never
# its value), and the value is nowhere in the audit log.
#
# The named policy is a file of this test's own name in
# /etc/ringfence/policies (made if missing, and removed with the file).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox
is_root || skip_all "needs root (a named policy lives in /etc/ringfence/policies)"

require_oci
rf_mktemp /tmp
TOP=$REPLY
B=$TOP/bundle
ROOT=$TOP/oci-root
mkdir -p "$B" "$ROOT"
make_image "$B/rootfs"
ID=rf-sec-$$
PDIR=/etc/ringfence/policies
NAME=rft$(printf '%x' $$)-secrets
made_dirs=()
for d in /etc/ringfence "$PDIR"; do
	[ -d "$d" ] || { mkdir "$d" && made_dirs=("$d" "${made_dirs[@]}"); } || bail_out "cannot make $d"
done
cleanup() {
	RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$ID" \
		</dev/null >/dev/null 2>&1
	rm -f "$PDIR/$NAME.json"
	local d
	for d in "${made_dirs[@]}"; do rmdir "$d" 2>/dev/null; done
}
trap 'cleanup; _rf_cleanup' EXIT

VA=val-a-$$-$RANDOM VB=val-b-$$-$RANDOM
printf '%s' "$VA" | "$RF_BIN" secret set --state-dir "$RF_STATE" "tok-a-$$" >/dev/null 2>&1 &&
	printf '%s' "$VB" | "$RF_BIN" secret set --state-dir "$RF_STATE" "tok-b-$$" >/dev/null 2>&1 ||
	bail_out "ringfence secret set failed"
cat >"$PDIR/$NAME.json" <<EOF
{"version": 1, "identity": {"agent": "sec-$$"},
 "secrets": [{"name": "TOKEN_A", "deliver": "env", "from": "store:tok-a-$$"},
             {"name": "TOKEN_B", "deliver": "env", "from": "store:tok-b-$$"}]}
EOF

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"
cp "$B/config.json" "$TOP/base.json"
# config ANNOTATIONS-JSON — the base, terminal off, printing its two secrets
config() {
	python3 - "$TOP/base.json" "$B/config.json" "$1" <<'PY' || bail_out "cannot write config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c", 'echo "a=$TOKEN_A b=$TOKEN_B"']
c["annotations"] = json.loads(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}
run() { # ringfence-oci run of the bundle; RF_RC, RF_OUT
	RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" run --bundle "$B" "$ID" \
		2>&1 </dev/null)
	RF_RC=$?
}

config "{\"ringfence.io/policy\": \"$NAME\"}"
run
is "$RF_RC" 0 "a container under a named policy with two secrets: runs ($RF_OUT)"
is "$RF_OUT" "a=$VA b=$VB" "... with both of the policy's secrets"
grep -h '"run\.start"' "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null | grep -q "\"sec-$$\"" &&
	ok "... its agent the policy's" || not_ok "... its agent the policy's"

config "{\"ringfence.io/policy\": \"$NAME\", \"ringfence.io/secrets\": \"TOKEN_B\"}"
run
is "$RF_RC" 0 "ringfence.io/secrets naming one of them: runs"
is "$RF_OUT" "a= b=$VB" "... with that one only"

config "{\"ringfence.io/policy\": \"$NAME\", \"ringfence.io/secrets\": \"TOKEN_B,TOKEN_C\"}"
run
is "$RF_RC" 125 "a secret the policy does not grant: refused (125)"
like "$RF_OUT" "grants no secret TOKEN_C" "... naming it"
[ ! -e "$ROOT/$ID" ] && ok "... nothing left" || not_ok "... nothing left"

config '{"ringfence.io/secrets": "TOKEN_A"}'
run
is "$RF_RC" 125 "ringfence.io/secrets without a named policy: refused (125)"
like "$RF_OUT" "named policy" "... saying secrets are a named policy's grants"

config "{\"ringfence.io/policy\": \"$NAME\", \"ringfence.io/allow-hosts\": \"example.test:443\"}"
run
is "$RF_RC" 125 "allow-hosts beside a named policy: refused (125, the policy decides egress)"

grep -h '"secret\.grant"' "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null | grep -q 'TOKEN_B' &&
	ok "the audit log records the grants by name" || not_ok "the audit log records the grants by name"
cat "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null | grep -q -e "$VA" -e "$VB" &&
	not_ok "... and never a value" || ok "... and never a value"
done_testing
