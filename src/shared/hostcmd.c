/*
 * hostcmd.c — host_command, host_path_visible (hostcmd.h).
 *
 * Reads the file system as the calling process (faccessat(2) with AT_EACCESS:
 * its file-system identity, which a caller's fsuid sets; realpath(3)):
 * it only ever names what the caller could run itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/hostcmd.h"

int host_command(const char *cmd, const char *path, char found[PATH_MAX], char root[PATH_MAX],
                 char extra[PATH_MAX])
{
        char real[PATH_MAX];

        found[0] = root[0] = extra[0] = '\0';
        if (!cmd || !cmd[0])
                return -ENOENT;
        if (strchr(cmd, '/')) {
                if (faccessat(AT_FDCWD, cmd, X_OK, AT_EACCESS) < 0 || !realpath(cmd, found))
                        return -ENOENT;
                /* found is the resolved path: its directory is the tree */
        } else {
                for (const char *p = path; p && *p && !found[0];) {
                        size_t n = strcspn(p, ":");
                        char cand[PATH_MAX];
                        if (n > 0 && p[0] == '/' &&
                            (size_t)snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, cmd) <
                                    sizeof cand &&
                            faccessat(AT_FDCWD, cand, X_OK, AT_EACCESS) == 0)
                                snprintf(found, PATH_MAX, "%s", cand);
                        p += n + (p[n] == ':');
                }
                if (!found[0])
                        return -ENOENT;
        }
        snprintf(root, PATH_MAX, "%s", found);
        char *slash = strrchr(root, '/');
        if (slash && slash != root)
                *slash = '\0';
        bool resolved = realpath(found, real) != NULL;
        if (resolved) {
                size_t k = 0;
                while (root[k] && root[k] == real[k])
                        k++;
                if (root[k] || (real[k] && real[k] != '/')) {
                        /* back to the last whole component they share */
                        while (k > 1 && root[k - 1] != '/')
                                k--;
                        if (k > 1)
                                k--;
                        root[k] = '\0';
                }
        }
        if (!root[0] || !strcmp(root, "/")) {
                /* nothing shared but /: the executable's own directory, and
                 * the one its symlinks lead to */
                snprintf(root, PATH_MAX, "%s", found);
                slash = strrchr(root, '/');
                if (slash && slash != root)
                        *slash = '\0';
                if (resolved) {
                        snprintf(extra, PATH_MAX, "%s", real);
                        slash = strrchr(extra, '/');
                        if (slash && slash != extra)
                                *slash = '\0';
                        if (!strcmp(extra, root))
                                extra[0] = '\0';
                }
        }
        return 0;
}

bool host_path_visible(const char *path)
{
        static const char *const sys[] = {"/usr", "/bin", "/sbin", "/lib", "/lib64"};
        for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++) {
                size_t n = strlen(sys[i]);
                if (!strncmp(path, sys[i], n) && (path[n] == '\0' || path[n] == '/'))
                        return true;
        }
        return false;
}
