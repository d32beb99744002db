/*
 * ownwrite.c — "writable only by its owner" (ownwrite.h): the decision,
 * pure, and the NSS lookups it needs, each into a bounded buffer grown on
 * ERANGE up to OWNWRITE_NSS_BUF_MAX.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "shared/macro.h"
#include "shared/ownwrite.h"

enum ownwrite ownwrite_decide(uid_t uid, gid_t gid, mode_t mode, const struct ownwrite_facts *f)
{
        if (mode & S_IWOTH)
                return OWNWRITE_WORLD;
        if (!(mode & S_IWGRP))
                return OWNWRITE_OWNER;
        /* group-writable: harmless only in the owner's private group */
        if (uid == 0 || !f)
                return OWNWRITE_GROUP;
        if (f->owner != 1 || !f->owner_name || f->owner_gid != gid)
                return OWNWRITE_GROUP;
        if (f->group != 1 || !f->group_name || strcmp(f->group_name, f->owner_name) != 0)
                return OWNWRITE_GROUP;
        for (char *const *m = f->members; m && *m; m++)
                if (strcmp(*m, f->owner_name) != 0)
                        return OWNWRITE_GROUP;
        if (f->other_primary != 0 || f->other_entry != 0)
                return OWNWRITE_GROUP;
        return OWNWRITE_OWNER;
}

/* A buffer for one NSS entry: 0, or -ENOMEM; -E2BIG past the bound. */
static int nss_grow(char **buf, size_t *size)
{
        size_t n = *size ? *size * 2 : 1024;
        if (n > OWNWRITE_NSS_BUF_MAX)
                return -E2BIG;
        char *p = realloc(*buf, n);
        if (!p)
                return -ENOMEM;
        *buf = p;
        *size = n;
        return 0;
}

/* getpwuid_r into *buf: 1 (pw filled), 0 (none) or -errno. */
static int pw_lookup(uid_t uid, struct passwd *pw, char **buf, size_t *size)
{
        for (;;) {
                struct passwd *res = NULL;
                int r = *size ? getpwuid_r(uid, pw, *buf, *size, &res) : ERANGE;
                if (r == ERANGE) {
                        if ((r = nss_grow(buf, size)) < 0)
                                return r;
                        continue;
                }
                if (r)
                        return -r;
                return res ? 1 : 0;
        }
}

/* getgrgid_r into *buf: 1 (gr filled), 0 (none) or -errno. */
static int gr_lookup(gid_t gid, struct group *gr, char **buf, size_t *size)
{
        for (;;) {
                struct group *res = NULL;
                int r = *size ? getgrgid_r(gid, gr, *buf, *size, &res) : ERANGE;
                if (r == ERANGE) {
                        if ((r = nss_grow(buf, size)) < 0)
                                return r;
                        continue;
                }
                if (r)
                        return -r;
                return res ? 1 : 0;
        }
}

/*
 * One bounded pass over the passwd database (groups false) or the group
 * database (groups true): does gid stand where it must not — the primary
 * gid of an entry whose uid is not uid, or the gid of more than one group
 * entry (a `groupadd -o` duplicate, files and a directory overlapping:
 * getgrgid shows the first only, initgroups gives every one's members the
 * gid)? 1, 0, or -errno (-E2BIG: more than OWNWRITE_SCAN_MAX entries).
 * glibc's get*ent_r leaves the entry unread on ERANGE: it is read again
 * into the larger buffer.
 */
static int nss_scan(bool groups, uid_t uid, gid_t gid)
{
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int hits = 0, want = groups ? 2 : 1, r = nss_grow(&buf, &size);
        if (r < 0)
                return r;
        if (groups)
                setgrent();
        else
                setpwent();
        for (size_t n = 0; hits < want;) {
                struct passwd pw, *pres = NULL;
                struct group gr, *gres = NULL;
                int e = groups ? getgrent_r(&gr, buf, size, &gres)
                               : getpwent_r(&pw, buf, size, &pres);
                if (e == ERANGE) {
                        if ((r = nss_grow(&buf, &size)) < 0)
                                break;
                        continue;
                }
                if (e == ENOENT || (!e && !gres && !pres))
                        break; /* the end */
                if (e) {
                        r = -e;
                        break;
                }
                if (++n > OWNWRITE_SCAN_MAX) {
                        r = -E2BIG;
                        break;
                }
                if (groups ? gr.gr_gid == gid : pw.pw_gid == gid && pw.pw_uid != uid)
                        hits++;
        }
        if (groups)
                endgrent();
        else
                endpwent();
        return r < 0 ? r : hits >= want;
}

/* The facts for uid's file of group gid (the expensive scan only when the
 * rest already says private), decided. */
static enum ownwrite group_verdict(uid_t uid, gid_t gid, mode_t mode)
{
        _cleanup_free_ char *pbuf = NULL, *gbuf = NULL;
        size_t psize = 0, gsize = 0;
        struct passwd pw;
        struct group gr;
        struct ownwrite_facts f = {.other_primary = -ENODATA};

        f.owner = pw_lookup(uid, &pw, &pbuf, &psize);
        if (f.owner == 1) {
                f.owner_name = pw.pw_name;
                f.owner_gid = pw.pw_gid;
        }
        if (f.owner != 1 || f.owner_gid != gid)
                return ownwrite_decide(uid, gid, mode, &f);
        f.group = gr_lookup(gid, &gr, &gbuf, &gsize);
        if (f.group == 1) {
                f.group_name = gr.gr_name;
                f.members = gr.gr_mem;
        }
        /* would it be private if no one else had it as primary group? */
        f.other_primary = 0;
        if (ownwrite_decide(uid, gid, mode, &f) != OWNWRITE_OWNER)
                return OWNWRITE_GROUP;
        f.other_primary = nss_scan(false, uid, gid);
        f.other_entry = nss_scan(true, uid, gid);
        return ownwrite_decide(uid, gid, mode, &f);
}

#define ACL_XATTR_VERSION 2u
#define ACL_TAG_USER      0x02u
#define ACL_TAG_GROUP     0x08u
#define ACL_PERM_WRITE    0x02u
#define ACL_ENTRY_SIZE    8u

int ownwrite_acl_writers(const void *xattr, size_t len)
{
        const unsigned char *b = xattr;
        if (len < 4 || (len - 4) % ACL_ENTRY_SIZE != 0 ||
            (uint32_t)(b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24) != ACL_XATTR_VERSION)
                return -EINVAL;
        for (size_t off = 4; off < len; off += ACL_ENTRY_SIZE) {
                unsigned tag = b[off] | b[off + 1] << 8, perm = b[off + 2] | b[off + 3] << 8;
                if ((tag == ACL_TAG_USER || tag == ACL_TAG_GROUP) && (perm & ACL_PERM_WRITE))
                        return 1;
        }
        return 0;
}

/* fd's access ACL lets a named user or group write it (or cannot be read:
 * counted as if it did) */
static bool acl_writers(int fd)
{
        unsigned char buf[4 + 64 * ACL_ENTRY_SIZE];
        ssize_t n = fgetxattr(fd, "system.posix_acl_access", buf, sizeof buf);
        if (n < 0)
                return errno != ENODATA && errno != ENOTSUP && errno != EOPNOTSUPP;
        return ownwrite_acl_writers(buf, (size_t)n) != 0;
}

enum ownwrite ownwrite_check(int fd, const struct stat *st, struct ownwrite_memo *memo)
{
        enum ownwrite v = ownwrite_decide(st->st_uid, st->st_gid, st->st_mode, NULL);
        if (v != OWNWRITE_GROUP || st->st_uid == 0)
                return v; /* decided by the mode (or root's) alone */
        if (memo && memo->set && memo->uid == st->st_uid && memo->gid == st->st_gid) {
                v = memo->verdict;
        } else {
                v = group_verdict(st->st_uid, st->st_gid, st->st_mode);
                if (memo)
                        *memo = (struct ownwrite_memo){
                                .set = true, .uid = st->st_uid, .gid = st->st_gid, .verdict = v};
        }
        /* the private group's: with an ACL the group bits are its mask, and
         * a named entry under it may write (more than 64 entries, ERANGE:
         * counted as one that may) */
        if (v == OWNWRITE_OWNER && acl_writers(fd))
                return OWNWRITE_ACL;
        return v;
}

const char *ownwrite_why(enum ownwrite v, const struct stat *st, const char *whose, char *buf,
                         size_t size)
{
        const char *kind = S_ISDIR(st->st_mode) ? "directory" : "file";
        switch (v) {
        case OWNWRITE_OWNER:
                snprintf(buf, size, "a %s only its owner may write", kind);
                break;
        case OWNWRITE_WORLD:
                snprintf(buf, size, "a %s others may write (mode %04o)", kind,
                         (unsigned)(st->st_mode & 07777));
                break;
        case OWNWRITE_GROUP:
                if (st->st_uid == 0)
                        snprintf(buf, size,
                                 "a group-writable %s of root's (mode %04o; root's files may "
                                 "not be)",
                                 kind, (unsigned)(st->st_mode & 07777));
                else
                        snprintf(buf, size,
                                 "a group-writable %s whose group (gid %u) is not %s private "
                                 "group (a group of the owner's name, no other member, no one "
                                 "else's primary group)",
                                 kind, (unsigned)st->st_gid, whose);
                break;
        case OWNWRITE_ACL:
                snprintf(buf, size,
                         "a %s that an access ACL lets another user or group write (mode %04o; "
                         "getfacl shows whom)",
                         kind, (unsigned)(st->st_mode & 07777));
                break;
        case _OWNWRITE_MAX:
        case _OWNWRITE_INVALID:
        default:
                snprintf(buf, size, "a %s others may write", kind);
                break;
        }
        return buf;
}
