#!/bin/bash
# tests/integration/contain_fs.sh — filesystem containment: host secrets,
# the host home, ringfence's state dir and other directories are absent;
# system directories are read-only; /tmp, /dev/shm, HOME and /var/tmp do not
# persist on the host; the workspace is writable and its writes reach the
# host; nosuid/nodev everywhere; a minimal /dev.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
require_isolation

uniq=$(basename "$WS")  # rf-test.<pid>.<random>: unique per run

# ---- host secrets and other directories are absent -----------------------------

[ -e /etc/shadow ] || bail_out "the host has no /etc/shadow to protect"
rf_probe read /etc/shadow
is "$RF_OUT" "errno=ENOENT" "/etc/shadow is absent (ENOENT)"
rf_probe read /etc/gshadow
is "$RF_OUT" "errno=ENOENT" "/etc/gshadow is absent (ENOENT)"
rf_probe read /proc/self/root/etc/shadow
is "$RF_OUT" "errno=ENOENT" "/proc/self/root/etc/shadow is absent too"
rf_probe read /etc/passwd
like "$RF_OUT" '^ok root:' "control: the run's own /etc/passwd is readable and names root"
rf_run -- /bin/sh -c "'$PROBE' cat /etc/passwd | wc -l"
like "$RF_OUT" '^ *[1-4]$' "the run's /etc/passwd is minimal, not the host's ($(wc -l </etc/passwd) lines on the host)"

host_home=$HOST_HOME
if [ -d "$host_home" ] && [ -w "$host_home" ]; then
	rf_mktemp "$host_home"
	printf 'host-home-secret\n' >"$REPLY/id_rsa"
	rf_probe read "$REPLY/id_rsa"
	is "$RF_OUT" "errno=ENOENT" "a file in the host home is absent (ENOENT)"
else
	skip "a file in the host home is absent" "the caller's home $host_home is not a writable directory"
fi
if [ -d "$host_home/.ssh" ]; then
	rf_probe ls "$host_home/.ssh"
	is "$RF_OUT" "errno=ENOENT" "the host ~/.ssh is absent"
fi

printf 'state-secret\n' >"$RF_STATE/secret"
rf_probe read "$RF_STATE/secret"
is "$RF_OUT" "errno=ENOENT" "ringfence's state dir is absent (ENOENT)"
rf_probe ls "$(dirname "$RF_STATE")"
is "$RF_OUT" "errno=ENOENT" "the directory holding the state dir is absent"

rf_mktemp /tmp
other=$REPLY
printf 'other-run-secret\n' >"$other/secret"
rf_probe read "$other/secret"
is "$RF_OUT" "errno=ENOENT" "another directory under /tmp (another run's workspace) is absent"
rf_mktemp /var/tmp
other_var=$REPLY
printf 'other-run-secret\n' >"$other_var/secret"
rf_probe read "$other_var/secret"
is "$RF_OUT" "errno=ENOENT" "a directory under /var/tmp is absent"

# ---- the workspace: the legitimate control -----------------------------------------

printf 'from-host\n' >"$WS/host-file"
rf_probe read "$WS/host-file"
is "$RF_OUT" "ok from-host." "the workspace is readable inside"
rf_probe write "$WS/inside-file" "from-inside"
is "$RF_OUT" "ok 11" "the workspace is writable inside"
is "$(cat "$WS/inside-file" 2>/dev/null)" "from-inside" "a workspace write is visible on the host"
rf_probe mkdir "$WS/inside-dir"
check "mkdir in the workspace reaches the host" test -d "$WS/inside-dir"
# (The workspace above lives under /tmp: new_workspace makes it there.)

# A workspace outside /tmp works as well.
saved_ws=$WS
rf_mktemp /var/tmp
WS=$REPLY
install_probe
rf_run -w "$WS" -- "$PROBE" write "$WS/var-file" "var"
is "$RF_OUT" "ok 3" "a workspace under /var/tmp is writable"
is "$(cat "$WS/var-file" 2>/dev/null)" var "... and the write reaches the host"
WS=$saved_ws
PROBE=$WS/rf-probe

# ---- read-only system directories ---------------------------------------------------

for d in /usr /usr/bin /usr/lib /etc/ssl; do
	[ -d "$d" ] || continue
	target=$d/rf-ro.$uniq
	rf_probe create "$target"
	is "$RF_OUT" "errno=EROFS" "creating a file in $d fails with EROFS"
	if [ -e "$target" ]; then
		rm -f -- "$target"
		not_ok "... and nothing appeared in the host's $d" "$target was created on the host"
	fi
done
rf_probe create "/rf-ro.$uniq"
is "$RF_OUT" "errno=EROFS" "creating a file in / fails with EROFS"
[ -e "/rf-ro.$uniq" ] && rm -f -- "/rf-ro.$uniq"
# chmod to the mode it already has: the read-only check without a change.
rf_probe chmod /usr/bin "$(stat -c %a /usr/bin)"
is "$RF_OUT" "errno=EROFS" "chmod on /usr/bin fails with EROFS"
rf_probe rewrite /etc/hostname
is "$RF_OUT" "errno=EROFS" "opening the run's own /etc/hostname for writing fails with EROFS"
rf_probe rewrite /etc/ssl/openssl.cnf
like "$RF_OUT" '^errno=(EROFS|EACCES)$' "opening a host file under /etc/ssl for writing fails"

# ---- private /tmp, /dev/shm, HOME; no /var/tmp persistence ---------------------------

name=rf-persist.$uniq
rf_run -- /bin/sh -c "
	for d in /tmp /dev/shm \"\$HOME\"; do
		'$PROBE' write \"\$d/$name\" persist >/dev/null && '$PROBE' read \"\$d/$name\" | sed \"s|^|\$d |\"
	done
	'$PROBE' write /var/tmp/$name persist | sed 's|^|/var/tmp |'"
like "$RF_OUT" "(^|"$'\n'")/tmp ok persist" "/tmp is writable inside (control)"
like "$RF_OUT" "(^|"$'\n'")/dev/shm ok persist" "/dev/shm is writable inside (control)"
like "$RF_OUT" "(^|"$'\n'")$RF_HOME_IN ok persist" "HOME is writable inside (control)"
for d in /tmp /dev/shm "$RF_HOME_IN" /var/tmp; do
	if [ -e "$d/$name" ]; then
		rm -f -- "${d:?}/$name"
		not_ok "a write to $d inside does not persist on the host" "$d/$name exists on the host"
	else
		ok "a write to $d inside does not persist on the host"
	fi
done
rf_probe stat "/tmp/$name"
is "$RF_OUT" "errno=ENOENT" "the next run's /tmp starts empty"

# ---- mount flags ----------------------------------------------------------------------

rf_probe cat /proc/self/mountinfo
mountinfo=$(printf '%s\n' "$RF_OUT" | tail -n +2)
if [ "$(first_line "$RF_OUT")" != ok ] || [ -z "$mountinfo" ]; then
	not_ok "read /proc/self/mountinfo inside" "$RF_OUT"
else
	ok "read /proc/self/mountinfo inside"
fi
bad_suid="" bad_dev="" n_mounts=0
while read -r _ _ _ _ mp opts _; do
	n_mounts=$((n_mounts + 1))
	case ",$opts," in *,nosuid,*) ;; *) bad_suid+=" $mp($opts)" ;; esac
	case $mp in
	/dev/null | /dev/zero | /dev/full | /dev/random | /dev/urandom | /dev/tty | /dev/pts | /dev/ptmx) ;;
	*) case ",$opts," in *,nodev,*) ;; *) bad_dev+=" $mp($opts)" ;; esac ;;
	esac
done <<<"$mountinfo"
is "$bad_suid" "" "every mount is nosuid ($n_mounts mounts)"
is "$bad_dev" "" "every mount but the device nodes and /dev/pts is nodev"
# mount_at MP — "OPTIONS FSTYPE" of the topmost mount at MP, from $mountinfo.
mount_at() {
	awk -v mp="$1" '{ for (i = 7; i <= NF; i++) if ($i == "-") break
		if ($5 == mp) r = $6 " " $(i + 1) } END { print r }' <<<"$mountinfo"
}
like "$(mount_at /tmp)" ' tmpfs$' "/tmp is a tmpfs"
like "$(mount_at /dev/shm)" ' tmpfs$' "/dev/shm is a tmpfs"
like "$(mount_at "$RF_HOME_IN")" ' tmpfs$' "HOME is a tmpfs"
like "$(mount_at /dev/pts)" ' devpts$' "/dev/pts is a devpts"
like "$(mount_at /proc)" ' proc$' "/proc is a procfs"
like "$(mount_at /usr)" '^ro,' "/usr is mounted read-only"
like "$(mount_at /)" '^ro,' "the root is mounted read-only"
like "$(mount_at "$(cd "$WS" && pwd -P)")" '^rw,' "the workspace is mounted read-write"

# ---- a minimal /dev ---------------------------------------------------------------------

rf_probe ls /dev
devs=${RF_OUT#ok }
extra=""
for e in $devs; do
	in_list "$e" "null zero full random urandom tty ptmx pts shm fd stdin stdout stderr" ||
		extra+=" $e"
done
is "$extra" "" "/dev holds nothing beyond the minimal set"
missing=""
for e in null zero full random urandom tty ptmx pts shm; do
	in_list "$e" "$devs" || missing+=" $e"
done
is "$missing" "" "/dev has null zero full random urandom tty ptmx pts shm"
blk=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -n 1)
if [ -n "$blk" ]; then
	rf_probe stat "$blk"
	is "$RF_OUT" "errno=ENOENT" "the host block device $blk is absent"
else
	skip "a host block device is absent" "no block device on this host"
fi
rf_run -- /bin/sh -c "'$PROBE' read /dev/zero && '$PROBE' write /dev/null x && '$PROBE' read /dev/urandom >/dev/null && echo fine"
like "$RF_OUT" "fine$" "control: /dev/zero, /dev/null, /dev/urandom work"

done_testing
