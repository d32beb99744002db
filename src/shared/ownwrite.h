/*
 * ownwrite.h — "writable only by its owner", for a file or directory a
 * user hands ringfence as its own: the agent configuration a profile
 * copies or carries into a run, a user's profile (a policy file).
 *
 * Not writable by others (S_IWOTH), and either not group-writable or its
 * group is the owner's user private group (UPG): the convention of
 * Debian's and Ubuntu's useradd (USERGROUPS_ENAB) with pam_umask's
 * `usergroups`, which give such users umask 002, so that their files are
 * 0664 and their directories 0775 as a matter of course. Group write is
 * harmless there only because nobody else is in the group; the idea is
 * Debian OpenSSH's ("Allow harmless group-writability", user-group-modes),
 * the rule ours:
 *
 *   - the owner has a passwd entry, and the file's gid is its primary gid;
 *   - that gid has a group entry named as the owner (the convention
 *     useradd -U, USERGROUPS_ENAB and pam_umask's usergroups all follow:
 *     a shared primary group such as `users` is never private, even when
 *     the accounts sharing it are not listed anywhere we can read);
 *   - its member list names no one but the owner;
 *   - no other passwd entry has that gid as its primary gid (another uid
 *     whose primary group it is may write the file as a member). This
 *     one enumerates the passwd database (getpwent_r): cheap for
 *     /etc/passwd, and done only for a group-writable file of a non-root
 *     owner whose other conditions hold, at most once per (owner, group)
 *     for a caller that passes a memo (a carried directory's walk); at
 *     most OWNWRITE_SCAN_MAX entries (more: "cannot tell", refused). A
 *     directory service that does not enumerate (sssd's default) hides
 *     its accounts from the scan: the group's name, which must be the
 *     owner's, is what still rules out a shared primary group there.
 *
 * Root's files are never exempt: gid 0 is held by processes that are not
 * root (services run with Group=root, set-gid-root programs), and
 * pam_umask never gives root umask 002. A group password (gshadow) that
 * would let someone `newgrp` into a private group is not read (only root
 * may); group passwords are `!` unless an administrator sets one.
 *
 * A POSIX ACL is looked at too: with one, the mode's group bits are its
 * mask, and a named user or group entry (setfacl -m u:bob:rw) may write a
 * file whose mode says only its private group may; such an entry refuses
 * it (OWNWRITE_ACL), whatever the group.
 * ownwrite_decide is pure (unit-tested: tests/unit/test_ownwrite.c);
 * ownwrite_check gathers the facts through NSS with bounded buffers. Not
 * thread-safe (the passwd enumeration is process-wide state): the CLI
 * calls it, single-threaded, while it expands profiles.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define OWNWRITE_NSS_BUF_MAX (1024 * 1024) /* one passwd or group entry's strings */
#define OWNWRITE_SCAN_MAX    100000        /* passwd entries enumerated, at most */

enum ownwrite {
        OWNWRITE_OWNER, /* no one but its owner may write it */
        OWNWRITE_WORLD, /* others may write it (S_IWOTH) */
        OWNWRITE_GROUP, /* its group may, and is not the owner's private group */
        OWNWRITE_ACL,   /* an ACL entry lets another user or group write it */
        _OWNWRITE_MAX,
        _OWNWRITE_INVALID = -EINVAL,
};

/*
 * What the user and group databases say of a file's owner and group. Each
 * lookup is 1 (found), 0 (no such entry) or -errno (it failed: cannot
 * tell); anything but 1 (0 for other_primary and other_entry) makes the
 * group not private.
 * The strings and the member list are borrowed (NSS's buffers).
 */
struct ownwrite_facts {
        int owner;              /* getpwuid(uid) */
        const char *owner_name; /* its pw_name */
        gid_t owner_gid;        /* its pw_gid */
        int group;              /* getgrgid(gid) */
        const char *group_name; /* its gr_name */
        char *const *members;   /* its gr_mem, NULL-terminated (NULL: none) */
        int other_primary;      /* 1: another uid's pw_gid is gid; 0: none; -errno (-E2BIG:
                                   more entries than OWNWRITE_SCAN_MAX) */
        int other_entry;        /* 1: a second group entry has gid (`groupadd -o`, a
                                   hand edit, files and a directory overlapping: its
                                   members hold gid too, and getgrgid shows only the
                                   first); 0: none; -errno as other_primary */
};

/*
 * ownwrite_decide — who may write a file of owner uid, group gid, mode
 * (its st_mode): OWNWRITE_OWNER, _WORLD or _GROUP. f is read only for a
 * group-writable, not world-writable file of a non-root owner (NULL then:
 * not private). Pure.
 */
enum ownwrite ownwrite_decide(uid_t uid, gid_t gid, mode_t mode, const struct ownwrite_facts *f);

/* A memo of ownwrite_check's last group answer (a tree of files shares
 * one owner and group); zero it before first use; owned by the caller. */
struct ownwrite_memo {
        bool set;
        uid_t uid;
        gid_t gid;
        enum ownwrite verdict;
};

/*
 * ownwrite_acl_writers — a system.posix_acl_access value (the kernel's
 * xattr form: a little-endian version 2 header, then entries of tag,
 * permissions and id): 1 if a named user or group entry (ACL_USER,
 * ACL_GROUP) has write, 0 if none has, -EINVAL if it is not such a value
 * (the caller counts that against the file). Pure; fuzzed
 * (tests/fuzz/fuzz_ownwrite.c).
 */
int ownwrite_acl_writers(const void *xattr, size_t len);

/*
 * ownwrite_check — ownwrite_decide for st (of the open file fd), the
 * facts looked up (NSS) only when the mode leaves it open, and, for a
 * group-writable file, its access ACL read through fd. memo may be NULL
 * (it keeps the group's answer, never the ACL's: that is each file's).
 * Never fails: a lookup that fails counts against the file.
 */
enum ownwrite ownwrite_check(int fd, const struct stat *st, struct ownwrite_memo *memo);

/*
 * ownwrite_why — the refusal in words, for a message "PATH: <why>; ...":
 * "a directory others may write (mode 0777)", "a group-writable file whose
 * group (gid 1001) is not <whose> private group ...". whose is "your",
 * "uid 1001's", ...; buf of size bytes. Returns buf. Pure.
 */
const char *ownwrite_why(enum ownwrite v, const struct stat *st, const char *whose, char *buf,
                         size_t size);
