/*
 * hostuid.c — allocate a run's host uid (see hostuid.h).
 *
 * One lock file per uid, flock()ed exclusively and non-blocking: the lock
 * is the allocation, so a supervisor that dies frees its uid at once and
 * nothing needs cleaning. The search starts at a random offset so that
 * concurrent supervisors rarely contend for the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "config.h"
#include "hostuid.h"
#include "shared/macro.h"
#include "shared/procstat.h"

static int open_lock_dir(void)
{
        /* /run/ringfence/uids, root-owned 0700; created on first use. */
        if (mkdir("/run/ringfence", 0700) < 0 && errno != EEXIST)
                return negative_errno();
        if (mkdir(RF_RUN_UID_LOCK_DIR, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        int fd = open(RF_RUN_UID_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 0022)) {
                close(fd);
                return -EPERM;
        }
        return fd;
}

bool hostuid_root(void)
{
        char buf[256];
        if (getuid() != 0)
                return false;
        /* the initial user namespace maps every id to itself */
        _cleanup_close_ int fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
        return n > 0 && procstat_uid_map_initial(buf, (size_t)n);
}

int hostuid_allocate(uid_t *uid, int *lock_fd, struct rf_error *err)
{
        _Static_assert(RF_RUN_UID_BASE >= 65536, "run uids must be above the system range");
        _Static_assert(RF_RUN_UID_COUNT > 0, "empty run uid range");
        uint32_t start;
        char name[16];

        _cleanup_close_ int dfd = open_lock_dir();
        if (dfd < 0)
                return rf_error_set(err, dfd, "cannot open %s: %s", RF_RUN_UID_LOCK_DIR,
                                    strerror(-dfd));
        if (getrandom(&start, sizeof start, 0) != (ssize_t)sizeof start)
                start = (uint32_t)getpid();
#ifdef RF_TEST_BUILD
        /* Test builds only: where the search starts, so a test can put an
         * account on the uid the run gets (hostuid_vet must refuse it). */
        const char *t = getenv("RINGFENCE_TEST_RUN_UID");
        if (t)
                start = (uint32_t)(strtoul(t, NULL, 10) - RF_RUN_UID_BASE);
#endif
        for (uint32_t i = 0; i < RF_RUN_UID_COUNT; i++) {
                uid_t u = (uid_t)(RF_RUN_UID_BASE + (start + i) % RF_RUN_UID_COUNT);
                snprintf(name, sizeof name, "%u", (unsigned)u);
                int fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        return rf_error_set(err, negative_errno(), "cannot lock run uid %u: %m",
                                            (unsigned)u);
                if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
                        *uid = u;
                        *lock_fd = fd;
                        return 0;
                }
                int e = errno;
                close(fd);
                if (e != EWOULDBLOCK)
                        return rf_error_set(err, -e, "cannot lock run uid %u: %s", (unsigned)u,
                                            strerror(e));
        }
        return rf_error_set(err, -EBUSY, "no free run uid in [%u, %u)", RF_RUN_UID_BASE,
                            RF_RUN_UID_BASE + RF_RUN_UID_COUNT);
}

/* errno after a lookup that returned NULL: "no such entry" (getpwuid(3)
 * lists these), or an error of the lookup itself? */
static bool not_found(int e)
{
        return e == 0 || e == ENOENT || e == ESRCH || e == EBADF || e == EPERM;
}

int hostuid_vet(uid_t uid, gid_t gid, struct rf_error *err)
{
        /* a group of the run's host gid would give the run that group's
         * files (an allocated run's gid is its uid's number) */
        errno = 0;
        struct passwd *pw = getpwuid(uid);
        if (pw)
                return rf_error_set(err, -EEXIST,
                                    "run uid %u belongs to the account '%s': no account or group "
                                    "may use [%u, %u) (build options run_uid_base, run_uid_count)",
                                    (unsigned)uid, pw->pw_name, RF_RUN_UID_BASE,
                                    RF_RUN_UID_BASE + RF_RUN_UID_COUNT);
        /* an NSS source that failed (sssd down, no fds) proves nothing: refuse */
        if (!not_found(errno))
                return rf_error_set(err, -errno, "cannot check run uid %u against the accounts: %s",
                                    (unsigned)uid, strerror(errno));
        errno = 0;
        struct group *gr = getgrgid(gid);
        if (gr)
                return rf_error_set(err, -EEXIST,
                                    "run gid %u belongs to the group '%s': no account or group "
                                    "may use [%u, %u) (build options run_uid_base, run_uid_count)",
                                    (unsigned)gid, gr->gr_name, RF_RUN_UID_BASE,
                                    RF_RUN_UID_BASE + RF_RUN_UID_COUNT);
        if (!not_found(errno))
                return rf_error_set(err, -errno, "cannot check run gid %u against the groups: %s",
                                    (unsigned)gid, strerror(errno));
        return 0;
}
