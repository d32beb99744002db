/*
 * test_ownwrite.c — "writable only by its owner" (src/shared/ownwrite.c):
 * the decision from the mode and what the user and group databases say
 * (pure: a user private group with umask 002's modes accepted; a group with
 * another member, someone else's primary group, a group not named as the
 * owner, another gid, root's group-writable file, a failed lookup, a
 * world-writable file refused), the words of each refusal, and
 * ownwrite_check on this host's own entries (root's, and a gid no one has).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shared/ownwrite.h"
#include "tap.h"

#define ALICE   1001
#define ALICE_G 1001

/* alice, whose private group alice (gid 1001) lists members m */
static struct ownwrite_facts upg(char *const *m)
{
        return (struct ownwrite_facts){.owner = 1,
                                       .owner_name = "alice",
                                       .owner_gid = ALICE_G,
                                       .group = 1,
                                       .group_name = "alice",
                                       .members = m,
                                       .other_primary = 0};
}

static enum ownwrite dec(mode_t mode, const struct ownwrite_facts *f)
{
        return ownwrite_decide(ALICE, ALICE_G, mode, f);
}

int main(void)
{
        char *none[] = {NULL}, *self[] = {"alice", NULL}, *bob[] = {"bob", NULL},
             *both[] = {"alice", "bob", NULL};
        struct ownwrite_facts f = upg(none);

        /* the mode alone */
        is_int(dec(S_IFREG | 0644, NULL), OWNWRITE_OWNER, "0644: its owner's alone");
        is_int(dec(S_IFREG | 0600, NULL), OWNWRITE_OWNER, "0600: its owner's alone");
        is_int(dec(S_IFREG | 0646, &f), OWNWRITE_WORLD,
               "0646: others may write (private group or not)");
        is_int(dec(S_IFREG | 0666, &f), OWNWRITE_WORLD, "0666: others may write");
        is_int(dec(S_IFDIR | 0777, &f), OWNWRITE_WORLD, "a 0777 directory: others may write");
        is_int(dec(S_IFREG | 0664, NULL), OWNWRITE_GROUP,
               "0664 with nothing known of its group: refused");

        /* a user private group */
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_OWNER,
               "0664 in the owner's private group (no member listed): accepted");
        is_int(dec(S_IFDIR | 0775, &f), OWNWRITE_OWNER, "a 0775 directory in it: accepted");
        f = upg(self);
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_OWNER,
               "... the group listing the owner itself: accepted");

        /* the attacks: someone else may write through the group */
        f = upg(bob);
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP, "the group lists another user: refused");
        f = upg(both);
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP, "... the owner and another: refused");
        f = upg(none);
        f.other_primary = 1;
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP, "another uid's primary group: refused");
        f.other_primary = -E2BIG;
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP,
               "the passwd scan over its bound (cannot tell): refused");
        f = upg(none);
        f.other_entry = 1;
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP,
               "a second group entry with the same gid (its members hold it too): refused");
        f = upg(none);
        f.other_entry = -E2BIG;
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP,
               "the group scan over its bound (cannot tell): refused");
        f = upg(none);
        f.group_name = "users";
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP,
               "the owner's primary group not named as it (users): refused");
        f = upg(none);
        is_int(ownwrite_decide(ALICE, 100, S_IFREG | 0664, &f), OWNWRITE_GROUP,
               "a gid other than the owner's primary: refused");
        f = upg(none);
        f.owner = 0;
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP, "an owner with no passwd entry: refused");
        f = upg(none);
        f.owner = -EIO;
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP, "a passwd lookup that failed: refused");
        f = upg(none);
        f.group = 0;
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP, "a gid with no group entry: refused");
        f = upg(none);
        f.group = -ERANGE;
        is_int(dec(S_IFREG | 0664, &f), OWNWRITE_GROUP, "a group lookup that failed: refused");
        f = (struct ownwrite_facts){.owner = 1,
                                    .owner_name = "root",
                                    .owner_gid = 0,
                                    .group = 1,
                                    .group_name = "root",
                                    .members = none};
        is_int(ownwrite_decide(0, 0, S_IFREG | 0664, &f), OWNWRITE_GROUP,
               "root's group-writable file (root's group): refused");

        /* the words */
        char buf[256];
        struct stat st = {.st_mode = S_IFREG | 0666, .st_uid = ALICE, .st_gid = ALICE_G};
        is_str(ownwrite_why(OWNWRITE_WORLD, &st, "your", buf, sizeof buf),
               "a file others may write (mode 0666)", "why: a world-writable file");
        st.st_mode = S_IFDIR | 0775;
        st.st_gid = 100;
        ok(!strncmp(ownwrite_why(OWNWRITE_GROUP, &st, "your", buf, sizeof buf),
                    "a group-writable directory whose group (gid 100) is not your private group",
                    74),
           "why: a group-writable directory");
        st.st_uid = 0;
        ok(strstr(ownwrite_why(OWNWRITE_GROUP, &st, "your", buf, sizeof buf), "of root's") != NULL,
           "why: root's");

        /* this host's own entries: root's file is never exempt; a gid no one
         * has is no one's private group; the mode decides without NSS */
        struct stat r = {.st_mode = S_IFREG | 0664, .st_uid = 0, .st_gid = 0};
        is_int(ownwrite_check(-1, &r, NULL), OWNWRITE_GROUP, "check: root's 0664 file: refused");
        r.st_mode = S_IFREG | 0644;
        is_int(ownwrite_check(-1, &r, NULL), OWNWRITE_OWNER, "check: root's 0644 file: accepted");
        struct ownwrite_memo memo = {0};
        struct stat n = {.st_mode = S_IFREG | 0664, .st_uid = 65534, .st_gid = 4000000000u};
        is_int(ownwrite_check(-1, &n, &memo), OWNWRITE_GROUP,
               "check: a gid that is not the owner's primary: refused");
        ok(memo.set && memo.uid == 65534 && memo.verdict == OWNWRITE_GROUP, "... remembered");
        is_int(ownwrite_check(-1, &n, &memo), OWNWRITE_GROUP,
               "... and answered again from the memo");
        n.st_mode = S_IFREG | 0666;
        is_int(ownwrite_check(-1, &n, &memo), OWNWRITE_WORLD,
               "check: 0666: others may write (the memo not asked)");

        /* access ACLs in the kernel's xattr form */
        static const unsigned char base[] = {2,    0, 0, 0,                         /* version 2 */
                                             0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff, /* user:: rw */
                                             0x04, 0, 6, 0, 0xff, 0xff, 0xff, 0xff, /* group:: rw */
                                             0x20, 0, 4, 0, 0xff, 0xff, 0xff, 0xff}; /* other:: r */
        is_int(ownwrite_acl_writers(base, sizeof base), 0,
               "acl: owner, group, other: no named writer");
        unsigned char acl[4 + 5 * 8];
        memcpy(acl, base, sizeof base);
        static const unsigned char bob_rw[] = {0x02, 0, 6, 0, 0xe9, 0x03, 0, 0}; /* user:1001:rw */
        static const unsigned char mask_rw[] = {0x10, 0, 6, 0, 0xff, 0xff, 0xff, 0xff};
        memcpy(acl + sizeof base, bob_rw, 8);
        memcpy(acl + sizeof base + 8, mask_rw, 8);
        is_int(ownwrite_acl_writers(acl, sizeof acl), 1, "acl: a named user with write: a writer");
        acl[sizeof base] = 0x08;
        is_int(ownwrite_acl_writers(acl, sizeof acl), 1, "acl: a named group with write: a writer");
        acl[sizeof base + 2] = 4;
        is_int(ownwrite_acl_writers(acl, sizeof acl), 0,
               "acl: a named group that only reads: none");
        is_int(ownwrite_acl_writers(acl, sizeof acl - 1), -EINVAL, "acl: a cut entry: not an ACL");
        acl[0] = 1;
        is_int(ownwrite_acl_writers(acl, sizeof acl), -EINVAL, "acl: another version: not an ACL");
        is_int(ownwrite_acl_writers(acl, 3), -EINVAL, "acl: no header: not an ACL");
        st.st_mode = S_IFREG | 0664;
        st.st_uid = ALICE;
        ok(strstr(ownwrite_why(OWNWRITE_ACL, &st, "your", buf, sizeof buf),
                  "an access ACL lets another user or group write") != NULL,
           "why: an ACL");
        return done();
}
