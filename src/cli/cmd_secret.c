/*
 * cmd_secret.c — `ringfence secret set|ls|rm`: the local encrypted store.
 *
 *   ringfence secret set NAME     the value from stdin (echo off on a
 *                                 terminal; one trailing newline dropped);
 *                                 adds a version
 *   ringfence secret ls [--json]  names, versions, times — never values
 *   ringfence secret rm NAME      every version
 *
 * Values never come from argv (visible in /proc to every user). Each
 * change is recorded in the audit log (secret.set / secret.rm: name,
 * version, keyed fingerprint, the caller's uid).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "cli.h"
#include "secrets/broker.h"
#include "secrets/secmem.h"
#include "secrets/store.h"
#include "shared/macro.h"

static void secret_usage(FILE *f)
{
        fputs("Usage: ringfence secret set NAME [--key-file FILE]   (value on stdin)\n"
              "       ringfence secret ls [--json]\n"
              "       ringfence secret rm NAME\n"
              "\n"
              "The local encrypted store (STATE_DIR/secrets): each value sealed with\n"
              "XChaCha20-Poly1305 under the master key (default STATE_DIR/secrets.key,\n"
              "0600, created on first use), bound to its name and version. Runs get\n"
              "values with --secret ENV=store:NAME (see ringfence run --help).\n"
              "\n"
              "  --state-dir DIR   ringfence instance (also RINGFENCE_STATE_DIR)\n"
              "  --key-file FILE   the master key file\n"
              "  --json            ls: JSON lines\n",
              f);
}

/* Read the value from stdin into secret memory; echo off on a terminal. */
static int read_value(unsigned char *buf, size_t cap, size_t *len, struct rf_error *err)
{
        struct termios saved, t;
        bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
        if (tty) {
                t = saved;
                t.c_lflag &= ~(tcflag_t)ECHO;
                (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &t);
                fputs("value (not echoed): ", stderr);
        }
        size_t n = 0;
        int r = 0;
        for (;;) {
                ssize_t k = read(STDIN_FILENO, buf + n, cap - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = rf_error_set(err, negative_errno(), "cannot read stdin: %m");
                        break;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
                if (tty && buf[n - 1] == '\n')
                        break;
                if (n == cap) {
                        r = rf_error_set(err, -E2BIG, "the value is larger than %d bytes",
                                         SECRET_VALUE_MAX);
                        break;
                }
        }
        if (tty) {
                (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
                fputc('\n', stderr);
        }
        if (r < 0)
                return r;
        if (n > 0 && buf[n - 1] == '\n')
                n--;
        if (n == 0)
                return rf_error_set(err, -ENODATA, "empty value (nothing on stdin)");
        *len = n;
        return 0;
}

static void record(const char *state_dir, const char *event, const char *name, uint64_t version,
                   const char *fp)
{
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        if (audit_open(state_dir, &log, &err) < 0) {
                cli_error("cannot record %s: %s", event, err.msg);
                return;
        }
        struct audit_field f[] = {
                {.key = "name", .type = AUDIT_STR, .s = name},
                {.key = "secret_version", .type = AUDIT_UINT, .u = version},
                {.key = "fingerprint", .type = AUDIT_STR, .s = fp},
                {.key = "uid", .type = AUDIT_UINT, .u = getuid()},
        };
        if (audit_append(log, NULL, event, f, fp ? ARRAY_SIZE(f) : 2, true, &err) < 0)
                cli_error("cannot record %s: %s", event, err.msg);
        audit_close(log);
}

int cmd_secret(int argc, char **argv)
{
        static const struct option opts[] = {
                {"state-dir", required_argument, NULL, 'S'},
                {"key-file", required_argument, NULL, 'k'},
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        const char *sd = NULL, *kf = NULL;
        bool json = false;
        _cleanup_free_ char *state_dir = NULL;
        struct rf_error err = {0};
        char kp[4096];
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'S':
                        sd = optarg;
                        break;
                case 'k':
                        kf = optarg;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'h':
                        secret_usage(stdout);
                        return 0;
                default:
                        cli_error("secret: unknown option %s (see ringfence secret --help)",
                                  argv[optind - 1]);
                        return CLI_EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                secret_usage(stderr);
                return CLI_EXIT_USAGE;
        }
        const char *verb = argv[optind++];
        const char *name = optind < argc ? argv[optind++] : NULL;
        if (optind < argc) {
                /* never echoed: it may be the very value that must not be in argv */
                cli_error("secret %s: too many arguments (a value is read from stdin, never "
                          "from the command line)",
                          verb);
                return CLI_EXIT_USAGE;
        }
        bool set = !strcmp(verb, "set"), rm = !strcmp(verb, "rm"), ls = !strcmp(verb, "ls");
        if (!set && !rm && !ls) {
                cli_error("secret: unknown command '%s' (set, ls, rm)", verb);
                return CLI_EXIT_USAGE;
        }
        if ((set || rm) && !name) {
                cli_error("secret %s: NAME missing", verb);
                return CLI_EXIT_USAGE;
        }
        if (name && !secret_name_valid(name, strlen(name))) {
                cli_error("secret %s: invalid name '%.64s' (1-64 of A-Z a-z 0-9 _ . -, not "
                          "starting with . or -)",
                          verb, name);
                return CLI_EXIT_USAGE;
        }
        if ((r = cli_state_dir(sd, set, &state_dir, &err)) < 0) {
                cli_print_error(&err);
                return 1;
        }
        if (ls) {
                struct store_entry *e = NULL;
                size_t n = 0;
                if ((r = store_list(state_dir, &e, &n, &err)) < 0) {
                        cli_print_error(&err);
                        return 1;
                }
                if (!json)
                        printf("%-32s %8s %8s  %s\n", "NAME", "VERSION", "VERSIONS", "SET");
                for (size_t i = 0; i < n; i++) {
                        char when[32] = "-";
                        time_t t = (time_t)e[i].created;
                        struct tm tm;
                        if (gmtime_r(&t, &tm))
                                strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
                        if (json)
                                printf("{\"name\":\"%s\",\"set\":\"%s\",\"version\":%u,"
                                       "\"versions\":%u}\n",
                                       e[i].name, when, e[i].latest, e[i].n_versions);
                        else
                                printf("%-32s %8u %8u  %s\n", e[i].name, e[i].latest,
                                       e[i].n_versions, when);
                }
                free(e);
                return 0;
        }
        if (rm) {
                uint32_t versions;
                if ((r = store_rm(state_dir, name, &versions, &err)) < 0) {
                        cli_print_error(&err);
                        return 1;
                }
                record(state_dir, "secret.rm", name, versions, NULL);
                fprintf(stderr, "removed %s (%u version%s)\n", name, versions,
                        versions == 1 ? "" : "s");
                return 0;
        }
        if (!kf) {
                snprintf(kp, sizeof kp, "%s/%s", state_dir, STORE_KEY_FILE);
                kf = kp;
        }
        unsigned char *key = secmem_alloc(STORE_KEY_LEN);
        unsigned char *val = secmem_alloc(SECRET_VALUE_MAX + 1);
        size_t len = 0;
        uint32_t version = 0;
        char fp[STORE_FP_HEX + 1];
        if (!key || !val) {
                cli_error("cannot lock memory for the value: %m");
                r = -ENOMEM;
        } else if ((r = store_key_load(kf, true, key, &err)) < 0 ||
                   (r = read_value(val, SECRET_VALUE_MAX + 1, &len, &err)) < 0 ||
                   (r = store_set(state_dir, key, name, val, len, &version, &err)) < 0)
                cli_print_error(&err);
        else
                store_fingerprint(key, val, len, fp);
        secmem_free(key);
        secmem_free(val);
        if (r < 0)
                return 1;
        record(state_dir, "secret.set", name, version, fp);
        fprintf(stderr, "%s version %u\n", name, version);
        return 0;
}
