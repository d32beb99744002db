/*
 * cmd_identity.c — `ringfence identity verify TOKEN`: is this a valid
 * identity token of a live run of this instance?
 *
 * Checks the signature against the instance's key, the expiry, and that the
 * audit log has no run.exit for the token's run (a token dies with its
 * run). Exit 0 and print the claims, or exit 1 with one line saying why.
 * A platform API can call this (or verify against STATE_DIR/audit/jwks.json
 * itself) and refuse any write that lacks a valid run token.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/token.h"
#include "cli.h"
#include "shared/json.h"
#include "shared/macro.h"

struct end_scan {
        char needle[200]; /* "run":"<id>" */
        int ended;        /* 1: run.exit seen; 0: run.start reached first */
};

/* Newest first: a run.exit of the run means it ended; reaching its
 * run.start first means it has not (no need to read further back). */
static int end_of_run(const char *line, size_t len, void *ctx)
{
        struct end_scan *e = ctx;
        if (!memmem(line, len, e->needle, strlen(e->needle)))
                return 0;
        if (strstr(line, "\"event\":\"run.exit\""))
                return e->ended = 1, 1;
        if (strstr(line, "\"event\":\"run.start\""))
                return e->ended = 0, 1;
        return 0;
}

/* True if the log holds the run's run.exit (or cannot be read: fail closed). */
static bool run_ended(const char *state_dir, const char *run)
{
        struct end_scan e = {.ended = 1};

        snprintf(e.needle, sizeof e.needle, "\"run\":\"%s\"", run);
        return audit_foreach_line_reverse(state_dir, end_of_run, &e) < 0 || e.ended;
}

int cmd_identity(int argc, char **argv)
{
        static const struct option opts[] = {
                {"state-dir", required_argument, NULL, 'S'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        const char *sd = NULL;
        _cleanup_free_ char *state_dir = NULL;
        struct rf_error err = {0};
        unsigned char pk[32];
        struct token_claims c;
        int ch;

        if (argc < 2 || strcmp(argv[1], "verify") != 0) {
                fputs("Usage: ringfence identity verify [--state-dir DIR] TOKEN\n", stderr);
                return CLI_EXIT_USAGE;
        }
        argc--, argv++;
        optind = 1;
        opterr = 0;
        while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                if (ch == 'S')
                        sd = optarg;
                else {
                        fputs("Usage: ringfence identity verify [--state-dir DIR] TOKEN\n",
                              ch == 'h' ? stdout : stderr);
                        return ch == 'h' ? 0 : CLI_EXIT_USAGE;
                }
        }
        if (optind != argc - 1) {
                fputs("Usage: ringfence identity verify [--state-dir DIR] TOKEN\n", stderr);
                return CLI_EXIT_USAGE;
        }
        if (cli_state_dir(sd, 0, &state_dir, &err) < 0 ||
            token_public_key(state_dir, pk, &err) < 0 ||
            token_verify(argv[optind], pk, (int64_t)time(NULL), &c, &err) < 0) {
                cli_error("identity: invalid token: %s", err.msg);
                return 1;
        }
        if (run_ended(state_dir, c.run)) {
                cli_error("identity: invalid token: run %s has ended", c.run);
                return 1;
        }
        /* the claims are the run's caller's words (task, principal): escaped */
        const char *k[] = {"run", "agent", "on_behalf_of", "task", "project", "aud"};
        const char *v[] = {c.run, c.sub, c.on_behalf_of, c.task, c.project, c.aud};
        fputs("valid:", stdout);
        for (size_t i = 0; i < ARRAY_SIZE(k); i++) {
                printf(" %s=", k[i]);
                (void)json_escape_fwrite(stdout, v[i], strlen(v[i]), false);
        }
        printf(" exp=%lld\n", (long long)c.exp);
        return 0;
}
