/*
 * fuzz_console_parse.c — libFuzzer target for the console's pure readers
 * (src/console/parse.c): the --listen address, a request path under /run/
 * and /api/run/, audit record lines as the daemon's /v1/audit answers them
 * (line_str, egress counts, the health page's counts and breaker ring),
 * and an egress.deny record turned into a proposed rule.
 *
 * The input is copied into a heap buffer of exactly its length (no NUL),
 * so a read past `len` is an ASan report; the NUL-terminated readers get
 * a copy up to the first NUL. Beyond "no crash, no UB": a listen accepted
 * names 127.0.0.1, localhost or [::1] exactly; a run path accepted has a
 * valid id and is a prefix-split of the input; a member found lies within
 * the line with no '"' or '\\' in it; a proposed rule is HOST:PORT of
 * [a-z0-9.:_-] and brackets only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console/parse.h"

static void check_member(const char *buf, size_t size, const char *key)
{
        size_t vl = 0;
        const char *v = console_line_str(buf, size, key, &vl);
        if (v && (v < buf || vl > size || (size_t)(v - buf) > size - vl || memchr(v, '"', vl) ||
                  memchr(v, '\\', vl)))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size ? size : 1);
        char *str = malloc(size + 1);
        if (!buf || !str)
                abort();
        memcpy(buf, data, size);
        memcpy(str, data, size);
        str[size] = '\0';

        bool v6 = false;
        uint16_t port = 0;
        int r = console_listen_parse(str, &v6, &port);
        if (r == 0 && strncmp(str, v6 ? "[::1]:" : "127.0.0.1:", v6 ? 6 : 10) &&
            strncmp(str, "localhost:", 10))
                abort();
        if (r != 0 && r != -EINVAL && r != -EPERM)
                abort();

        struct console_run_path rp;
        r = console_run_path(str, &rp);
        if (r > 0 && (!console_run_id_ok(rp.run) || !strstr(str, rp.run) ||
                      (rp.has_action && !strstr(str, rp.action))))
                abort();

        check_member(buf, size, "event");
        check_member(buf, size, "run");
        check_member(buf, size, "reason");
        (void)console_line_ts(buf, size);
        const char *run;
        size_t rl;
        r = console_egress_line(buf, size, &run, &rl);
        if (run && (r == CONSOLE_EGRESS_NONE || (size_t)(run - buf) + rl > size))
                abort();

        /* a multi-line answer, as /v1/audit gives it: each line counted */
        static struct console_health h;
        size_t at = 0;
        while (at < size) {
                const char *nl = memchr(buf + at, '\n', size - at);
                size_t ll = nl ? (size_t)(nl - (buf + at)) : size - at;
                (void)console_health_line(&h, buf + at, ll);
                at += ll + 1;
        }
        for (int k = 0; k < CONSOLE_SERIES_N; k++) {
                uint64_t sum = 0;
                for (int i = 0; i < CONSOLE_HEALTH_BUCKETS; i++)
                        sum += h.n[k][i];
                if (sum > h.total[k])
                        abort();
        }
        if (h.records > 100000)
                console_health_clear(&h);

        struct json_node *doc = NULL;
        if (json_parse(buf, size, &doc, NULL) == 0) {
                char rule[300];
                if (console_deny_rule(doc, rule, sizeof rule)) {
                        size_t n = strlen(rule);
                        char *c = strrchr(rule, ':');
                        if (!n || !c || c == rule || !c[1])
                                abort();
                        for (size_t i = 0; i < n; i++)
                                if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789.:_-[]", rule[i]))
                                        abort();
                }
                char tiny[8];
                if (console_deny_rule(doc, tiny, sizeof tiny) && strlen(tiny) >= sizeof tiny)
                        abort();
        }
        json_node_free(doc);
        free(str);
        free(buf);
        return 0;
}
