/*
 * caller.c — the host read with the rights of whom a run is for
 * (caller.h): the daemon's caller's file-system identity, pinned inodes.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/caller.h"
#include "shared/macro.h"

void caller_self(struct rf_caller *c)
{
        memset(c, 0, sizeof *c);
        c->uid = geteuid();
        c->gid = getegid();
        const char *h = getenv("HOME");
        struct passwd *pw = !h || h[0] != '/' ? getpwuid(getuid()) : NULL;
        if (pw)
                h = pw->pw_dir;
        if (h && h[0] == '/' && strlen(h) < sizeof c->home)
                snprintf(c->home, sizeof c->home, "%s", h);
}

int caller_other(struct rf_caller *c, uid_t uid, struct rf_error *err)
{
        if (uid == 0) {
                caller_self(c);
                return 0;
        }
        memset(c, 0, sizeof *c);
        errno = 0;
        struct passwd *pw = getpwuid(uid);
        if (!pw)
                return rf_error_set(err, errno ? -errno : -ENOENT,
                                    "caller uid %u: no such user (its files cannot be read as it)",
                                    (unsigned)uid);
        c->other = true;
        c->uid = uid;
        c->gid = pw->pw_gid;
        /* a home that is not absolute, or too long, is none */
        if (pw->pw_dir && pw->pw_dir[0] == '/' && strlen(pw->pw_dir) < sizeof c->home)
                snprintf(c->home, sizeof c->home, "%s", pw->pw_dir);
        int n = CALLER_GROUPS_MAX;
        if (getgrouplist(pw->pw_name, pw->pw_gid, c->groups, &n) < 0) {
                /* more than we keep: its primary group alone (fewer rights) */
                c->groups[0] = pw->pw_gid;
                n = 1;
        }
        c->n_groups = n;
        return 0;
}

int caller_sudo(struct rf_caller *c, struct rf_error *err)
{
        const char *v = getenv("SUDO_UID");
        if (getuid() != 0 || geteuid() != 0 || !v || !v[0])
                return 0;
        char *end = NULL;
        errno = 0;
        unsigned long u = strtoul(v, &end, 10);
        if (errno || !end || *end || end == v || v[0] == '-' || u >= 0xffffffffUL)
                return rf_error_set(err, -EINVAL,
                                    "SUDO_UID=%.40s: not a uid (sudo's caller, whose rights "
                                    "its paths are opened with); unset it to run as root",
                                    v);
        if (u == 0)
                return 0; /* root through sudo: root's own run */
        int r = caller_other(c, (uid_t)u, err);
        if (r < 0)
                return rf_error_set(err, r,
                                    "SUDO_UID=%lu: %s (sudo's caller, whose rights its paths "
                                    "are opened with); unset it to run as root",
                                    u, r == -ENOENT ? "no such user" : strerror(-r));
        c->sudo = true;
        return 0;
}

/* this process's own groups, while it reads as a caller */
static gid_t own_groups[CALLER_GROUPS_MAX];
static int n_own_groups = -1;

int caller_enter(const struct rf_caller *c)
{
        if (!c->other)
                return 0;
        if ((n_own_groups = getgroups(CALLER_GROUPS_MAX, own_groups)) < 0)
                return -EPERM;
        if (setgroups((size_t)c->n_groups, c->groups) < 0)
                return -EPERM;
        (void)setfsgid(c->gid);
        (void)setfsuid(c->uid);
        /* setfs*id answer the previous value: ask again to know it took */
        if ((uid_t)setfsuid((uid_t)-1) != c->uid || (gid_t)setfsgid((gid_t)-1) != c->gid) {
                caller_leave(c);
                return -EPERM;
        }
        return 0;
}

void caller_leave(const struct rf_caller *c)
{
        if (!c->other)
                return;
        (void)setfsuid(geteuid());
        (void)setfsgid(getegid());
        if (n_own_groups >= 0)
                (void)setgroups((size_t)n_own_groups, own_groups);
        n_own_groups = -1;
}

int caller_pin(const struct rf_caller *c, const char *path, bool write, struct plan_pin *pin,
               struct rf_error *err)
{
        struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        struct stat st;
        int r = caller_enter(c);
        if (r < 0)
                return rf_error_set(err, r, "%s: cannot take uid %u's identity to check it", path,
                                    (unsigned)c->uid);
        int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
        int e = fd < 0 ? errno : 0;
        if (fd >= 0 && fstat(fd, &st) < 0)
                e = errno;
        if (fd >= 0)
                close(fd);
        caller_leave(c);
        if (e == ELOOP)
                return rf_error_set(err, -ELOOP,
                                    "%s goes through a symbolic link; a path given for uid %u "
                                    "must name its file directly",
                                    path, (unsigned)c->uid);
        if (e)
                return rf_error_set(err, -e, "%s: uid %u cannot open it: %s", path,
                                    (unsigned)c->uid, strerror(e));
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return rf_error_set(err, -EINVAL, "%s: not a directory or regular file", path);
        if (write && st.st_uid != c->uid)
                return rf_error_set(err, -EPERM,
                                    "%s is not owned by uid %u: a run for it writes only its "
                                    "own paths",
                                    path, (unsigned)c->uid);
        pin->path = path;
        pin->dev = st.st_dev;
        pin->ino = st.st_ino;
        return 0;
}
