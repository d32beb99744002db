/*
 * common.c — error printing and state dir resolution for the CLI.
 *
 * Every error line goes through the display escaping (shared/json.h): no
 * byte a run or a caller chose reaches the operator's terminal raw.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sandbox/hostuid.h"
#include "shared/json.h"
#include "shared/macro.h"

void cli_error(const char *fmt, ...)
{
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        /* one line, whatever the message holds, and nothing a terminal would
         * act on: input quoted in it (a host name, a command, a reply) may
         * carry control sequences or invalid UTF-8 (json.h's display escaping) */
        fputs("ringfence: ", stderr);
        (void)json_escape_fwrite(stderr, buf, strlen(buf), true);
        fputc('\n', stderr);
}

void cli_print_error(const struct rf_error *err)
{
        char buf[RF_ERROR_MSG_MAX + 2 * RF_ERROR_PATH_MAX + 32];

        rf_error_format(err, buf, sizeof buf);
        cli_error("%s", buf);
}

/* mkdir -p with mode 0700 for the components we create. */
static int mkdir_p(const char *path)
{
        char buf[PATH_MAX];

        if (strlen(path) >= sizeof buf)
                return -ENAMETOOLONG;
        strcpy(buf, path);
        for (char *s = buf + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

int cli_state_dir_path(const char *flag, char **ret, struct rf_error *err)
{
        _cleanup_free_ char *guess = NULL;
        const char *dir = flag;
        char buf[PATH_MAX];
        int r;

        if (!dir || !*dir)
                dir = getenv("RINGFENCE_STATE_DIR");
        if (!dir || !*dir) {
                if (hostuid_root()) /* root of a user namespace (rootless): its home's */
                        dir = "/var/lib/ringfence";
                else {
                        const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
                        if (xdg && xdg[0] == '/')
                                r = asprintf(&guess, "%s/ringfence", xdg);
                        else if (home && home[0] == '/')
                                r = asprintf(&guess, "%s/.local/state/ringfence", home);
                        else
                                return rf_error_set(err, -ENOENT,
                                                    "no state dir: set --state-dir, "
                                                    "RINGFENCE_STATE_DIR or HOME");
                        if (r < 0)
                                return -ENOMEM;
                        dir = guess;
                }
        }
        if (dir[0] != '/') {
                if (!realpath(".", buf) || strlen(buf) + strlen(dir) + 2 > sizeof buf)
                        return rf_error_set(err, -EINVAL, "state dir %s: not usable", dir);
                strcat(buf, "/");
                strcat(buf, dir);
                dir = buf;
        }
        if (!(*ret = strdup(dir)))
                return -ENOMEM;
        return 0;
}

int cli_state_dir(const char *flag, int create, char **ret, struct rf_error *err)
{
        _cleanup_free_ char *dir = NULL;
        char buf[PATH_MAX];
        int r;

        if ((r = cli_state_dir_path(flag, &dir, err)) < 0)
                return r;
        if (create && (r = mkdir_p(dir)) < 0)
                return rf_error_set(err, r, "state dir %s: %s", dir, strerror(-r));
        if (!realpath(dir, buf))
                return rf_error_set(err, negative_errno(), "state dir %s: %s", dir,
                                    strerror(errno));
        struct stat st;
        if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
                return rf_error_set(err, -ENOTDIR, "state dir %s: not a directory", buf);
        if (st.st_uid != geteuid())
                return rf_error_set(err, -EPERM, "state dir %s: owned by uid %u, not by you", buf,
                                    st.st_uid);
        if (st.st_mode & 0077)
                (void)chmod(buf, st.st_mode & 0700);
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}
