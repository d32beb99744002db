#!/bin/bash
# tests/integration/apparmor4.sh — the AppArmor 4 profile the package
# installs where the parser has abi/4.0 (Ubuntu 24.04 and later:
# contrib/apparmor/ringfence.abi4, `abi <abi/4.0>,` and `userns,`) parsed
# by an AppArmor 4 parser. Debian 12's parser is 3.0 and rejects it, so
# scripts/apparmor4-parser.sh builds one from Debian's own source package of
# the next release (once per machine, cached; ~1 min).
#
# The shipped profile parses (-Q -K: everything but loading it), and so
# does the AppArmor 3 variant; broken copies do not (an unknown userns
# permission, a rule without its comma, an unclosed profile), each refused
# at its line. Compiled against a kernel feature set that mediates user
# namespaces (namespaces/mask/userns_create), the `userns,` rule is in the
# policy: the compiled profile differs from the same profile without the
# rule (and not from an identical copy). This host's own parser, where it is
# 3.x, rejects the 4.0 profile: why the package ships two.
#
# Skipped, with the script's reason, where no AppArmor 4 parser can be had
# (build tools missing, no Debian archive reachable).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# the profile does not depend on the build: once per suite run
case "$RF_BIN" in *asan*) skip_all "the profile is checked with the release build's pass" ;; esac
rf_mktemp /tmp
T=$REPLY
out=$("$RF_SRC/scripts/apparmor4-parser.sh" 2>"$T/err")
rc=$?
[ "$rc" = 2 ] && skip_all "no AppArmor 4 parser here: $(tail -n 1 "$T/err")"
[ "$rc" = 0 ] || bail_out "scripts/apparmor4-parser.sh failed (exit $rc): $(tail -n 5 "$T/err" | tr '\n' ' ')"
AA=$(tail -n 1 <<<"$out")

aa() { # aa ARGS... — the AppArmor 4 parser with its own base and config
	"$AA/apparmor_parser" --config-file="$AA/parser.conf" --base="$AA/apparmor.d" "$@"
}
parses() { # parses FILE: parse only, no cache, no kernel
	aa -Q -K "$1" >"$T/out" 2>&1
}

like "$(aa --version | head -n 1)" 'AppArmor parser version [4-9]\.' \
	"an AppArmor 4 parser (Debian source $(cat "$AA/VERSION"))"
check "... with abi/4.0 beside it" test -f "$AA/apparmor.d/abi/4.0"

prof=$RF_SRC/contrib/apparmor/ringfence.abi4
like "$(grep -v '^#' "$prof")" 'abi <abi/4\.0>,' "the shipped profile declares abi 4.0"
like "$(grep -v '^#' "$prof")" 'userns,' "... and allows user namespaces"
parses "$prof"
is "$?" 0 "the AppArmor 4 parser accepts the shipped AppArmor 4 profile"
parses "$RF_SRC/contrib/apparmor/ringfence.abi3"
is "$?" 0 "... and the AppArmor 3 variant"

# negative controls: each broken copy is refused, at the broken line
n=$(grep -n '^  userns,' "$prof" | head -n 1 | cut -d: -f1)
[ -n "$n" ] || bail_out "no 'userns,' line in $prof"
broken() { # broken NAME SED-EXPR WANT-LINE
	sed "$2" "$prof" >"$T/$1"
	if cmp -s "$prof" "$T/$1"; then
		not_ok "a copy with $1 is refused" "the edit changed nothing"
		return
	fi
	parses "$T/$1"
	local r=$?
	if [ "$r" != 0 ]; then ok "a copy with $1 is refused (exit $r)"; else not_ok "a copy with $1 is refused" "it parsed"; fi
	like "$(cat "$T/out")" "error .* at line $3" "... at its line ($3)"
}
broken "an unknown userns permission" "${n}s/userns,/userns fly,/" "$n"
broken "a rule without its comma" "${n}s/userns,/userns/" "$((n + 2))" # the lexer meets `include` two lines on
broken "an unclosed profile" '$d' "$(wc -l <"$prof")"

# the userns rule is compiled into the policy where the kernel mediates
# user namespaces (a feature set from the parser's own tests)
if [ -f "$AA/features.userns" ]; then
	cp "$prof" "$T/same"
	grep -v '^  userns,$' "$prof" >"$T/no-userns"
	for f in same no-userns; do
		aa -K -S -M "$AA/features.userns" "$T/$f" >"$T/$f.bin" 2>"$T/$f.err"
	done
	aa -K -S -M "$AA/features.userns" "$prof" >"$T/prof.bin" 2>"$T/prof.err"
	is "$?" 0 "compiled for a kernel that mediates user namespaces"
	check "... the same profile compiles to the same policy (control)" cmp -s "$T/prof.bin" "$T/same.bin"
	check "... and without 'userns,' to another: the rule is in the policy" sh -c "! cmp -s '$T/prof.bin' '$T/no-userns.bin'"
else
	skip "the userns rule compiled into the policy" "no feature set with userns_create in the parser's source"
fi

# this host's own parser: 3.x rejects the 4.0 profile (why two variants)
if command -v apparmor_parser >/dev/null; then
	hv=$(apparmor_parser --version 2>/dev/null | sed -n '1s/.*version \([0-9][0-9.]*\).*/\1/p')
	case "$hv" in
	3.*)
		apparmor_parser -Q -K "$prof" >"$T/out" 2>&1
		isnt "$?" 0 "this host's parser $hv rejects the AppArmor 4 profile (the package installs the 3.0 one here)"
		;;
	*) skip "this host's parser rejects the AppArmor 4 profile" "its parser is ${hv:-unknown}, not 3.x" ;;
	esac
fi

done_testing
