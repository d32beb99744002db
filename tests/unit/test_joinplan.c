/*
 * test_joinplan.c — a run's join plan (src/sandbox/joinplan.c), what
 * `ringfence-oci exec` reads to give a joining process every layer the
 * run's init got: written and read back whole (ids, limits, cwd, PATH,
 * environment, Landlock rules, both seccomp programs), a value holding a
 * newline staying one value (never an item of its own), and every
 * refusal of the parser: order, repetition, bounds, escapes.
 */
#include <errno.h>
#include <linux/filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/joinplan.h"
#include "tap.h"

static int parse(const char *s, struct rf_error *err)
{
        struct rf_plan *p = plan_empty();
        if (!p)
                abort();
        *err = (struct rf_error){0};
        int r = joinplan_parse(s, strlen(s), p, err);
        plan_free(p);
        return r;
}

#define HEAD "rfjoin 1\nids 1000 1000 1\nlimits 1024 0 0\ncwd /w\n"
#define TAIL "landlock 4 1fff 0\nbpf 0600000000000000\nend\n"

int main(void)
{
        struct rf_error err;
        struct sock_filter prog[3] = {
                {0x20, 0, 0, 4}, {0x15, 0, 1, 0xc000003e}, {0x06, 0, 0, 0x7fff0000}};
        struct sock_filter extra[1] = {{0x06, 0, 0, 0x7fff0000}};
        char *env[] = {"A=1", "B=x\nrule 1fff 0 /", "P=50%", "E=", NULL};
        struct rf_plan *in = plan_empty();
        if (!in)
                abort();
        in->uid = 1000;
        in->gid = 1001;
        in->map_as_root = true;
        in->nofile = 1024;
        in->fsize = 1 << 30;
        in->nproc_fallback = 512;
        in->cwd = "/home/agent/work dir";
        in->path_env = "/usr/bin:/bin";
        in->envp = env;
        in->landlock.abi = 4;
        in->landlock.handled_fs = 0x1fff;
        in->landlock.scoped = 0;
        in->landlock.rules[0] = (struct rf_landlock_rule){"/usr", 0x5, false};
        in->landlock.rules[1] = (struct rf_landlock_rule){"/home/agent/work dir", 0x1fff, true};
        in->landlock.n_rules = 2;
        in->seccomp.filter = prog;
        in->seccomp.len = 3;
        in->seccomp_extra.filter = extra;
        in->seccomp_extra.len = 1;

        char *text = NULL;
        size_t len = 0;
        is_int(joinplan_format(in, &text, &len), 0, "a plan: written");
        ok(text && strlen(text) == len, "... its length is the text's");
        ok(text && !strstr(text, "\nrule 1fff 0 /\n"),
           "... a value's newline never starts an item");

        struct rf_plan *out = plan_empty();
        if (!out)
                abort();
        err = (struct rf_error){0};
        is_int(joinplan_parse(text, len, out, &err), 0, "... and read back (%s)", err.msg);
        is_int(out->uid, 1000, "... uid");
        is_int(out->gid, 1001, "... gid");
        ok(out->map_as_root, "... mapped as root");
        ok(out->nofile == 1024 && out->fsize == 1 << 30 && out->nproc_fallback == 512,
           "... limits");
        is_str(out->cwd, "/home/agent/work dir", "... cwd (a space in it)");
        is_str(out->path_env, "/usr/bin:/bin", "... PATH");
        ok(out->envp && out->envp[0] && out->envp[1] && out->envp[2] && out->envp[3] &&
                   !out->envp[4],
           "... four environment entries, no more");
        if (out->envp && out->envp[3]) {
                is_str(out->envp[0], "A=1", "... env A");
                is_str(out->envp[1], "B=x\nrule 1fff 0 /", "... a value with a newline: one value");
                is_str(out->envp[2], "P=50%", "... a %% kept");
                is_str(out->envp[3], "E=", "... an empty value");
        }
        is_int(out->landlock.abi, 4, "... Landlock ABI");
        ok(out->landlock.handled_fs == 0x1fff && out->landlock.scoped == 0, "... handled, scoped");
        is_int(out->landlock.n_rules, 2, "... two rules (none from the environment)");
        if (out->landlock.n_rules == 2) {
                is_str(out->landlock.rules[0].path, "/usr", "... rule 1's path");
                ok(out->landlock.rules[0].access == 0x5 && !out->landlock.rules[0].optional,
                   "... rule 1's access");
                is_str(out->landlock.rules[1].path, "/home/agent/work dir", "... rule 2's path");
                ok(out->landlock.rules[1].access == 0x1fff && out->landlock.rules[1].optional,
                   "... rule 2's access, optional");
        }
        ok(out->seccomp.len == 3 && out->seccomp.filter &&
                   !memcmp(out->seccomp.filter, prog, sizeof prog),
           "... ringfence's seccomp program, byte for byte");
        ok(out->seccomp_extra.len == 1 && out->seccomp_extra.filter &&
                   !memcmp(out->seccomp_extra.filter, extra, sizeof extra),
           "... the container's own program");
        plan_free(out);
        free(text);
        free(in);

        is_int(parse(HEAD TAIL, &err), 0, "the smallest plan: read");
        is_int(parse("rfjoin 2\n" TAIL, &err), -EBADMSG, "another version: refused");
        ok(strstr(err.msg, "line 1"), "... naming the line (%s)", err.msg);
        is_int(parse("ids 1 1 0\n" TAIL, &err), -EBADMSG, "no header: refused");
        is_int(parse(HEAD "ids 0 0 0\n" TAIL, &err), -EBADMSG, "ids twice: refused");
        is_int(parse(HEAD "limits 1 1 1\n" TAIL, &err), -EBADMSG, "limits twice: refused");
        is_int(parse(HEAD "cwd /x\n" TAIL, &err), -EBADMSG, "cwd twice: refused");
        is_int(parse("rfjoin 1\nids 1000 1000 1\nlimits 1024 0 0\ncwd w\n" TAIL, &err), -EBADMSG,
               "a relative cwd: refused");
        is_int(parse("rfjoin 1\nids 4294967296 0 0\nlimits 0 0 0\ncwd /\n" TAIL, &err), -EBADMSG,
               "a uid past 32 bits: refused");
        is_int(parse("rfjoin 1\nids 0 0 2\nlimits 0 0 0\ncwd /\n" TAIL, &err), -EBADMSG,
               "map_as_root not 0|1: refused");
        is_int(parse("rfjoin 1\nids 0 0 0\nlimits 99999999999999999999 0 0\ncwd /\n" TAIL, &err),
               -EBADMSG, "a limit past 64 bits: refused");
        is_int(parse(HEAD "rule 1 0 /\n" TAIL, &err), -EBADMSG, "a rule before landlock: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nrule 2000 0 /\nbpf 0600000000000000\nend\n", &err),
               -EBADMSG, "a rule granting what the ruleset does not handle: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nrule 1 2 /\nbpf 0600000000000000\nend\n", &err),
               -EBADMSG, "a rule's optional flag not 0|1: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nrule 1 0 usr\nbpf 0600000000000000\nend\n", &err),
               -EBADMSG, "a relative rule path: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nlandlock 4 1fff 0\nbpf 0600000000000000\nend\n",
                     &err),
               -EBADMSG, "landlock twice: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nbpf 06000000000000\nend\n", &err), -EBADMSG,
               "a partial instruction: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nbpf 0600000000000000\nbpf 0600000000000000\nend\n",
                     &err),
               -EBADMSG, "bpf twice: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nbpf 06000000000000XY\nend\n", &err), -EBADMSG,
               "bpf not hex: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nend\n", &err), -EBADMSG,
               "no seccomp program: refused (incomplete)");
        is_int(parse(HEAD "env NOEQUALS\n" TAIL, &err), -EBADMSG, "env without '=': refused");
        is_int(parse(HEAD "env =v\n" TAIL, &err), -EBADMSG, "env without a name: refused");
        is_int(parse(HEAD "env A=1\nenv A=2\n" TAIL, &err), -EBADMSG, "env: a name twice: refused");
        is_int(parse(HEAD "env A=%00\n" TAIL, &err), -EBADMSG, "an escaped NUL: refused");
        is_int(parse(HEAD "env A=%zz\n" TAIL, &err), -EBADMSG, "a bad escape: refused");
        is_int(parse(HEAD "env A=%4\n" TAIL, &err), -EBADMSG, "a short escape: refused");
        is_int(parse(HEAD "env A%41=1\n" TAIL, &err), -EBADMSG, "an escape in a name: refused");
        is_int(parse(HEAD "env A=\x01\n" TAIL, &err), -EBADMSG, "a raw control byte: refused");
        is_int(parse(HEAD "frobnicate 1\n" TAIL, &err), -EBADMSG, "an unknown item: refused");
        is_int(parse(HEAD TAIL "env A=1\n", &err), -EBADMSG, "anything after end: refused");
        is_int(parse(HEAD "landlock 4 1fff 0\nbpf 0600000000000000\n", &err), -EBADMSG,
               "no end: refused (a truncated plan)");
        is_int(parse(HEAD "landlock 4 1fff 0\nbpf 0600000000000000\nend", &err), -EBADMSG,
               "no newline at the end: refused");

        /* bounds: the environment's count, a value's length, the whole */
        size_t cap = JOINPLAN_MAX + 2;
        char *big = malloc(cap);
        if (!big)
                abort();
        int n = snprintf(big, cap, "%s", HEAD);
        for (int i = 0; i <= JOINPLAN_ENV_MAX; i++)
                n += snprintf(big + n, cap - (size_t)n, "env V%d=1\n", i);
        snprintf(big + n, cap - (size_t)n, "%s", TAIL);
        is_int(parse(big, &err), -EBADMSG, "one environment entry past the bound: refused");
        n = snprintf(big, cap, "%senv A=", HEAD);
        memset(big + n, 'x', JOINPLAN_VALUE_MAX);
        snprintf(big + n + JOINPLAN_VALUE_MAX, cap - (size_t)n - JOINPLAN_VALUE_MAX, "\n%s", TAIL);
        is_int(parse(big, &err), -EBADMSG, "a value past its bound: refused");
        memset(big, 'x', JOINPLAN_MAX + 1);
        big[JOINPLAN_MAX + 1] = '\0';
        is_int(parse(big, &err), -E2BIG, "a plan past JOINPLAN_MAX: refused");
        free(big);

        return done();
}
