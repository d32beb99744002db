/*
 * cmd_console.c — `ringfence console`: the operator's web view of the
 * state dir's runs on host loopback (src/console/, docs/CONSOLE.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "console/console.h"
#include "shared/macro.h"

static void console_usage(FILE *f)
{
        fprintf(f,
                "usage: ringfence console [--state-dir DIR] [--listen ADDRESS:PORT] "
                "[--token-ttl SECONDS] [--allow-uid UID] [--daemon [--socket PATH]]\n"
                "\n"
                "Serve the operator's console for the state dir's runs on host loopback, as\n"
                "this uid and with its rights. Prints one login URL (a token valid for several\n"
                "logins until it expires); `kill -HUP` the console for a fresh one. Each login\n"
                "gets its own session cookie. Only this uid's and root's connections are\n"
                "served (and, under sudo, its caller's); another local user's are closed.\n"
                "\n"
                "  --state-dir DIR        the runs' state dir (default: as for `ringfence ps`)\n"
                "  --listen ADDR:PORT     127.0.0.1, ::1 ([::1]:PORT) or localhost only; PORT 0\n"
                "                         picks a free one (default 127.0.0.1:%d)\n"
                "  --token-ttl SECONDS    how long the login URL logs in (default 3600)\n"
                "  --allow-uid UID        serve this uid's browser too (repeatable, up to %d)\n"
                "  --daemon               the daemon's fleet, through its API as this uid: only\n"
                "                         what its grants let this uid see and do\n"
                "  --socket PATH          the daemon's API socket (default "
                "STATE_DIR/control.sock)\n",
                CONSOLE_PORT_DEFAULT, CONSOLE_ALLOW_UIDS_MAX);
}

/* UID appended to o->allow_uids (a decimal uid, not root's: root is always
 * served): 0, or -EINVAL / -E2BIG. */
static int allow_uid(struct console_opts *o, const char *uid)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(uid, &end, 10);
        if (errno || end == uid || *end || uid[0] == '-' || v == 0 || v >= 0xffffffffUL)
                return -EINVAL;
        for (size_t i = 0; i < o->n_allow_uids; i++)
                if (o->allow_uids[i] == (uint32_t)v)
                        return 0;
        if (o->n_allow_uids == CONSOLE_ALLOW_UIDS_MAX)
                return -E2BIG;
        o->allow_uids[o->n_allow_uids++] = (uint32_t)v;
        return 0;
}

int cmd_console(int argc, char **argv)
{
        static const struct option opts[] = {
                {"state-dir", required_argument, NULL, 's'},
                {"listen", required_argument, NULL, 'l'},
                {"token-ttl", required_argument, NULL, 't'},
                {"daemon", no_argument, NULL, 'd'},
                {"socket", required_argument, NULL, 'S'},
                {"allow-uid", required_argument, NULL, 'u'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        const char *state = NULL, *sock = NULL;
        bool daemon = false;
        char listen_default[32];
        snprintf(listen_default, sizeof listen_default, "127.0.0.1:%d", CONSOLE_PORT_DEFAULT);
        struct console_opts o = {.listen = listen_default, .token_ttl_s = 3600};
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 's':
                        state = optarg;
                        break;
                case 'l':
                        o.listen = optarg;
                        break;
                case 't': {
                        char *end;
                        long v = strtol(optarg, &end, 10);
                        if (*end || v < 1 || v > 7 * 24 * 3600) {
                                cli_error("--token-ttl: seconds, 1 to 604800");
                                return CLI_EXIT_USAGE;
                        }
                        o.token_ttl_s = v;
                        break;
                }
                case 'd':
                        daemon = true;
                        break;
                case 'S':
                        sock = optarg;
                        break;
                case 'u':
                        if (allow_uid(&o, optarg) < 0) {
                                cli_error("--allow-uid %s: a uid other than 0, at most %d of them",
                                          optarg, CONSOLE_ALLOW_UIDS_MAX);
                                return CLI_EXIT_USAGE;
                        }
                        break;
                case 'h':
                        console_usage(stdout);
                        return 0;
                default:
                        console_usage(stderr);
                        return CLI_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                cli_error("console: unexpected argument '%s'", argv[optind]);
                return CLI_EXIT_USAGE;
        }
        /* `sudo ringfence console`: the browser is the caller's */
        const char *sudo_uid = getenv("SUDO_UID");
        if (geteuid() == 0 && sudo_uid && allow_uid(&o, sudo_uid) == -E2BIG) {
                cli_error("--allow-uid: at most %d uids with sudo's caller",
                          CONSOLE_ALLOW_UIDS_MAX);
                return CLI_EXIT_USAGE;
        }
        if (sock && !daemon) {
                cli_error("--socket: with --daemon");
                return CLI_EXIT_USAGE;
        }
        struct rf_error err = {0};
        _cleanup_free_ char *dir = NULL, *dsock = NULL;
        /* the daemon's socket named: the state dir is the daemon's, maybe
         * not this uid's to open; the console needs none of its own */
        if (daemon && sock && !state)
                o.state_dir = sock;
        else if (cli_state_dir(state, daemon ? 0 : 1, &dir, &err) < 0) {
                cli_print_error(&err);
                return 1;
        } else
                o.state_dir = dir;
        if (daemon && !sock && asprintf(&dsock, "%s/control.sock", o.state_dir) < 0) {
                cli_error("out of memory");
                return 1;
        }
        o.api_socket = daemon ? (sock ? sock : dsock) : NULL;
        bool v6;
        uint16_t port;
        int lr = console_listen_parse(o.listen, &v6, &port);
        if (lr < 0) {
                cli_error("--listen %s: %s", o.listen, console_listen_why(lr));
                return CLI_EXIT_USAGE;
        }
        if (console_serve(&o, &err) < 0) {
                cli_print_error(&err);
                return 1;
        }
        return 0;
}
