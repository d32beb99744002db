/*
 * main.c — `ringfence` entry point: dispatch to a subcommand.
 *
 * Global options (--state-dir) are accepted before the subcommand (they
 * set RINGFENCE_STATE_DIR for it) and by every subcommand, in its own
 * option list (which wins).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "sandbox/launch.h"
#include "cli.h"
#include "profile.h"
#include "config.h"
#include "supervisor/start.h"

static void usage(FILE *f)
{
        fputs("Usage: ringfence [--state-dir DIR] COMMAND [OPTIONS]\n"
              "\n"
              "Per-run isolation for AI-agent runs.\n"
              "\n"
              "Commands:\n"
              "  run [OPTIONS] -- CMD [ARG...]   run CMD isolated (see ringfence run --help)\n"
              "  policy check FILE               validate a policy file\n"
              "  audit [verify|head] [OPTIONS]   read, verify or anchor the audit log\n"
              "  identity verify TOKEN           check a run's identity token\n"
              "  secret set|ls|rm [NAME]         the local encrypted secret store\n"
              "  ps [--json] / inspect RUN       the runs of this instance\n"
              "  kill RUN|--agent A|--all        stop runs, whole process trees (--block: no new "
              "ones)\n"
              "  pause RUN / resume RUN          freeze / thaw a run\n"
              "  grant RUN --allow-host H|--revoke-host H|--revoke-secret NAME   change a live "
              "run\n"
              "  block / unblock --agent A       refuse / allow new runs of an agent\n"
              "  wait RUN / logs RUN [--follow]  a detached run's status / output\n"
              "  daemon [--config FILE]          supervise many runs; the control API "
              "(docs/API.md)\n"
              "  console [--listen ADDR:PORT]    the runs in a browser, on loopback "
              "(docs/CONSOLE.md)\n"
              "  profile list|show NAME          the profiles of run --profile NAME\n"
              "  doctor [--json]                 will runs work here? what to fix if not\n"
              "  version [--layers]              print the version [and what this host offers]\n"
              "\n"
              "Every command accepts --state-dir DIR, before or after its name (or\n"
              "RINGFENCE_STATE_DIR).\n"
              "See ringfence(1).\n",
              f);
}

int main(int argc, char **argv)
{
        sandbox_note_cmdline(argv); /* what each run's init wipes */
        /* fds 0-2 closed by the caller would be taken by the first fds we
         * open (a signalfd as the run's stdin...): hold them with /dev/null. */
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
                        int n = open("/dev/null", O_RDWR);
                        if (n < 0)
                                return 125;
                        if (n != fd) {
                                dup2(n, fd);
                                close(n);
                        }
                }

        /* Nothing of ringfence's own memory may end up in a core file. */
        struct rlimit core = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &core);
        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

        if (argc < 2) {
                usage(stderr);
                return CLI_EXIT_USAGE;
        }
        /* Global options before the command: --state-dir DIR (or
         * --state-dir=DIR), the same as RINGFENCE_STATE_DIR for every
         * command; a command's own --state-dir still wins. */
        int g = 1;
        while (g < argc && !strncmp(argv[g], "--state-dir", 11) &&
               (argv[g][11] == '\0' || argv[g][11] == '=')) {
                const char *v = argv[g][11] == '=' ? argv[g] + 12 : g + 1 < argc ? argv[++g] : NULL;
                if (!v || !*v) {
                        cli_error("--state-dir: a directory (usage: ringfence [--state-dir DIR] "
                                  "COMMAND [OPTIONS])");
                        return CLI_EXIT_USAGE;
                }
                if (setenv("RINGFENCE_STATE_DIR", v, 1) < 0) {
                        cli_error("out of memory");
                        return CLI_EXIT_USAGE;
                }
                g++;
        }
        argc -= g - 1;
        argv += g - 1;
        if (argc < 2) {
                usage(stderr);
                return CLI_EXIT_USAGE;
        }
        const char *cmd = argv[1];
        if (!strcmp(cmd, "run") && argc == 4 && !strcmp(argv[2], "--request-fd"))
                return cmd_run_request(argv[3]);
        if (!strcmp(cmd, "run"))
                return cmd_run(argc - 1, argv + 1);
        if (!strcmp(cmd, "policy"))
                return cmd_policy(argc - 1, argv + 1);
        if (!strcmp(cmd, "audit"))
                return cmd_audit(argc - 1, argv + 1);
        static const char *const ctl[] = {"ps",      "inspect", "kill",  "pause",
                                          "resume",  "revoke",  "grant", "block",
                                          "unblock", "wait",    "logs"};
        for (size_t i = 0; i < sizeof ctl / sizeof ctl[0]; i++)
                if (!strcmp(cmd, ctl[i]))
                        return cmd_ctl(argc - 1, argv + 1);
        if (!strcmp(cmd, "secret"))
                return cmd_secret(argc - 1, argv + 1);
        if (!strcmp(cmd, "daemon"))
                return cmd_daemon(argc - 1, argv + 1);
        if (!strcmp(cmd, "console"))
                return cmd_console(argc - 1, argv + 1);
        if (!strcmp(cmd, "profile"))
                return cmd_profile(argc - 1, argv + 1);
        if (!strcmp(cmd, "doctor"))
                return cmd_doctor(argc - 1, argv + 1);
        if (!strcmp(cmd, "identity"))
                return cmd_identity(argc - 1, argv + 1);
        if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
                printf("ringfence %s%s\n", RF_VERSION,
                       RF_CONFIG_TEST_BUILD ? " (test build: fault injection compiled in)" : "");
                if (argc > 2 && !strcmp(argv[2], "--layers"))
                        return cmd_layers();
                return 0;
        }
        if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
                usage(stdout);
                return 0;
        }
        cli_error("unknown command '%s' (see ringfence --help)", cmd);
        return CLI_EXIT_USAGE;
}
