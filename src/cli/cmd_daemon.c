/*
 * cmd_daemon.c — `ringfence daemon [--state-dir DIR] [--config FILE]`.
 *
 * Reads the operator's configuration (daemon/config.h; refused unless it
 * is a regular file owned by root or the caller and not writable by
 * others), then serves the control API until SIGTERM (daemon/daemon.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "shared/macro.h"

#define CONFIG_MAX (1024 * 1024)

static void daemon_usage(FILE *f)
{
        fputs("Usage: ringfence daemon [--state-dir DIR] [--config FILE]\n"
              "\n"
              "Supervise many runs and serve the control API (HTTP/1.1 + JSON) on a Unix\n"
              "socket: STATE_DIR/control.sock, or the configuration's \"socket\". Callers\n"
              "are identified by SO_PEERCRED and authorised by the configuration (root may\n"
              "do everything). See docs/API.md.\n",
              f);
}

int cmd_daemon(int argc, char **argv)
{
        static const struct option opts[] = {
                {"state-dir", required_argument, NULL, 'S'},
                {"config", required_argument, NULL, 'c'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        const char *sd = NULL, *cf = NULL;
        _cleanup_free_ char *state_dir = NULL, *buf = NULL;
        struct rf_error err = {0};
        struct dconf conf;
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if (c == 'S')
                        sd = optarg;
                else if (c == 'c')
                        cf = optarg;
                else if (c == 'h') {
                        daemon_usage(stdout);
                        return 0;
                } else {
                        cli_error("daemon: unknown option %s", argv[optind - 1]);
                        return CLI_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                cli_error("daemon: unexpected argument '%s'", argv[optind]);
                return CLI_EXIT_USAGE;
        }
        if (cli_state_dir(sd, 1, &state_dir, &err) < 0) {
                cli_print_error(&err);
                return 1;
        }
        const char *text = "{\"version\": 1}";
        size_t len = strlen(text);
        if (cf) {
                _cleanup_close_ int fd = open(cf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;
                if (fd < 0 || fstat(fd, &st) < 0) {
                        cli_error("daemon: %s: %m", cf);
                        return 1;
                }
                if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
                    (st.st_mode & 022) || st.st_size > CONFIG_MAX) {
                        cli_error("daemon: %s: must be a regular file owned by root or you, not "
                                  "writable by others, at most 1 MiB",
                                  cf);
                        return 1;
                }
                buf = malloc((size_t)st.st_size + 1);
                ssize_t n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
                if (n != st.st_size) {
                        cli_error("daemon: cannot read %s", cf);
                        return 1;
                }
                text = buf;
                len = (size_t)n;
        }
        char why[512];
        if (dconf_parse(text, len, &conf, why, sizeof why) < 0) {
                cli_error("daemon: %s: %s", cf ? cf : "configuration", why);
                return 1;
        }
        int r = daemon_main(state_dir, &conf);
        dconf_clear(&conf);
        return r;
}
