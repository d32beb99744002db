/*
 * cmd_policy.c — `ringfence policy check FILE`: validate a policy file.
 *
 * Exit 0 and print "FILE: ok" when valid; exit 1 and print the error
 * (file:line:col: keypath: message) otherwise; 2 on usage errors.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "policy/policy.h"

static void policy_usage(FILE *f)
{
        fputs("Usage: ringfence policy check [--state-dir DIR] FILE\n"
              "\n"
              "Validate a policy file; print FILE: ok, or the first error as\n"
              "file:line:col: key.path: message.\n",
              f);
}

int cmd_policy(int argc, char **argv)
{
        static const struct option opts[] = {
                {"state-dir", required_argument, NULL, 'S'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        struct rf_error err = {0};
        int c;

        if (argc < 2 || strcmp(argv[1], "check") != 0) {
                if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
                        policy_usage(stdout);
                        return 0;
                }
                policy_usage(stderr);
                return CLI_EXIT_USAGE;
        }
        argc--, argv++;
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                if (c == 'h') {
                        policy_usage(stdout);
                        return 0;
                }
                if (c != 'S') {
                        cli_error("policy check: unknown option %s", argv[optind - 1]);
                        return CLI_EXIT_USAGE;
                }
        }
        if (optind != argc - 1) {
                policy_usage(stderr);
                return CLI_EXIT_USAGE;
        }
        _cleanup_policy_ struct rf_policy *p = NULL;
        if (policy_load_file(argv[optind], &p, &err) < 0) {
                cli_print_error(&err);
                return 1;
        }
        printf("%s: ok\n", argv[optind]);
        return 0;
}
