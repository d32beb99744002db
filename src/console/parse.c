/*
 * parse.c — the console's pure readers (parse.h): the --listen address, a
 * run's path, audit record lines and a refusal's rule.
 *
 * Threat notes: the path comes from a logged-in browser, the record lines
 * from the state dir's log or the daemon's answer (the daemon's word, but
 * they carry what runs chose: hosts, agent names); none is trusted to be
 * NUL-terminated, bounded or well-formed. Lines are scanned for flat
 * members only; anything with an escape is left out rather than decoded.
 */
#include "console/parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int console_listen_parse(const char *listen, bool *v6, uint16_t *port)
{
        const char *colon = listen ? strrchr(listen, ':') : NULL;
        if (!colon || !colon[1] || strlen(colon + 1) > 5)
                return -EINVAL;
        unsigned long p = 0;
        for (const char *d = colon + 1; *d; d++) {
                if (*d < '0' || *d > '9')
                        return -EINVAL;
                p = p * 10 + (unsigned long)(*d - '0');
        }
        if (p > 65535)
                return -EINVAL;
        size_t hl = (size_t)(colon - listen);
        if (hl == 0)
                return -EINVAL; /* ":PORT": no address */
        if ((hl == 9 && !memcmp(listen, "127.0.0.1", 9)) ||
            (hl == 9 && !memcmp(listen, "localhost", 9)))
                *v6 = false;
        else if (hl == 5 && !memcmp(listen, "[::1]", 5))
                *v6 = true;
        else
                return -EPERM;
        *port = (uint16_t)p;
        return 0;
}

const char *console_listen_why(int r)
{
        return r == -EPERM ? "not a loopback address: refused (127.0.0.1, [::1] or localhost only)"
                           : "not ADDRESS:PORT (e.g. 127.0.0.1:8650; PORT 0..65535)";
}

bool console_run_id_ok(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > CONSOLE_RUN_ID_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || s[i] == '-'))
                        return false;
        return true;
}

int console_run_path(const char *path, struct console_run_path *rp)
{
        memset(rp, 0, sizeof *rp);
        const char *p;
        if (!strncmp(path, "/run/", 5))
                p = path + 5;
        else if (!strncmp(path, "/api/run/", 9)) {
                p = path + 9;
                rp->api = true;
        } else
                return 0;
        const char *sl = strchr(p, '/');
        size_t rl = sl ? (size_t)(sl - p) : strlen(p);
        if (rl > CONSOLE_RUN_ID_MAX)
                return -ENOENT;
        memcpy(rp->run, p, rl);
        rp->run[rl] = '\0';
        if (!console_run_id_ok(rp->run))
                return -ENOENT;
        if (sl) {
                size_t al = strlen(sl + 1);
                if (al > CONSOLE_ACTION_MAX)
                        return -ENOENT;
                memcpy(rp->action, sl + 1, al + 1);
                rp->has_action = true;
        }
        return 1;
}

const char *console_line_str(const char *line, size_t len, const char *key, size_t *vl)
{
        char pat[32];
        size_t kl = strlen(key);
        if (kl > 24)
                return NULL;
        int k = snprintf(pat, sizeof pat, "\"%s\":\"", key);
        const char *p = k > 0 ? memmem(line, len, pat, (size_t)k) : NULL;
        if (!p)
                return NULL;
        p += k;
        const char *e = memchr(p, '"', len - (size_t)(p - line));
        if (!e || memchr(p, '\\', (size_t)(e - p)))
                return NULL;
        *vl = (size_t)(e - p);
        return p;
}

int64_t console_line_ts(const char *line, size_t len)
{
        const char *ts = memmem(line, len, "\"ts\":", 5);
        if (!ts)
                return 0;
        size_t i = (size_t)(ts - line) + 5;
        int64_t t = 0;
        size_t digits = 0;
        for (; i < len && line[i] >= '0' && line[i] <= '9'; i++) {
                if (++digits > 18)
                        return 0;
                t = t * 10 + (line[i] - '0');
        }
        return digits ? t : 0;
}

int console_egress_line(const char *line, size_t len, const char **run, size_t *rl)
{
        size_t el;
        const char *ev = console_line_str(line, len, "event", &el);
        int kind = !ev                                           ? CONSOLE_EGRESS_NONE
                   : el == 12 && !memcmp(ev, "egress.allow", 12) ? CONSOLE_EGRESS_ALLOW
                   : el == 11 && !memcmp(ev, "egress.deny", 11)  ? CONSOLE_EGRESS_DENY
                                                                 : CONSOLE_EGRESS_NONE;
        *run = NULL;
        *rl = 0;
        if (kind != CONSOLE_EGRESS_NONE)
                *run = console_line_str(line, len, "run", rl);
        return kind;
}

const char *const console_series_event[CONSOLE_SERIES_N] = {"run.start", "run.refused", "run.kill",
                                                            "egress.deny"};

int console_health_line(struct console_health *h, const char *line, size_t len)
{
        size_t el = 0, rl = 0;
        const char *ev = console_line_str(line, len, "event", &el);
        h->records++;
        if (!ev)
                return 0;
        int64_t t = console_line_ts(line, len);
        for (int k = 0; k < CONSOLE_SERIES_N; k++) {
                if (el != strlen(console_series_event[k]) ||
                    memcmp(ev, console_series_event[k], el))
                        continue;
                h->total[k]++;
                int64_t b = t > 0 ? t / CONSOLE_HEALTH_BUCKET_MS : -1;
                size_t at = b >= 0 ? (size_t)(b % CONSOLE_HEALTH_BUCKETS) : 0;
                if (b >= 0 && h->bucket[at] < b + 1) { /* a newer half hour: the slot's */
                        for (int j = 0; j < CONSOLE_SERIES_N; j++)
                                h->n[j][at] = 0;
                        h->bucket[at] = b + 1;
                }
                if (b >= 0 && h->bucket[at] == b + 1)
                        h->n[k][at]++;
                const char *reason = k == CONSOLE_SERIES_REFUSED
                                             ? console_line_str(line, len, "reason", &rl)
                                             : NULL;
                if (reason && rl == 4 && !memcmp(reason, "loop", 4)) {
                        size_t slot = h->n_loops++ % CONSOLE_HEALTH_LOOPS_MAX;
                        free(h->loops[slot]);
                        h->loops[slot] = strndup(line, len);
                        if (!h->loops[slot])
                                return -ENOMEM;
                }
        }
        return 0;
}

uint64_t console_health_at(const struct console_health *h, int k, int64_t from_ms)
{
        if (k < 0 || k >= CONSOLE_SERIES_N || from_ms < 0)
                return 0;
        int64_t b = from_ms / CONSOLE_HEALTH_BUCKET_MS;
        size_t slot = (size_t)(b % CONSOLE_HEALTH_BUCKETS);
        return h->bucket[slot] == b + 1 ? h->n[k][slot] : 0;
}

void console_health_clear(struct console_health *h)
{
        for (size_t i = 0; i < CONSOLE_HEALTH_LOOPS_MAX; i++)
                free(h->loops[i]);
        memset(h, 0, sizeof *h);
}

/* HOST:PORT ([V6]:PORT) for host h[0..hl) and port into out: false when
 * the host is not 1..253 of [a-z0-9.:_-], the port not 1..65535 or the
 * rule does not fit. The one form a proposal ever takes. */
static bool rule_text(const char *h, size_t hl, uint64_t port, char *out, size_t size)
{
        if (!hl || hl > 253 || port == 0 || port > 65535)
                return false;
        for (size_t i = 0; i < hl; i++) {
                char c = h[i];
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                      c == ':' || c == '_'))
                        return false; /* shown, never proposed */
        }
        bool v6 = memchr(h, ':', hl) != NULL;
        int n = snprintf(out, size, "%s%.*s%s:%u", v6 ? "[" : "", (int)hl, h, v6 ? "]" : "",
                         (unsigned)port);
        return n > 0 && (size_t)n < size;
}

bool console_deny_rule(const struct json_node *doc, char *out, size_t size)
{
        const struct json_node *h = json_object_get(doc, "host");
        const struct json_node *p = json_object_get(doc, "port");
        uint64_t port = 0;
        if (!h || h->type != JSON_STRING || !p || json_number_uint64(p, &port) < 0)
                return false;
        return rule_text(h->str, h->len, port, out, size);
}

bool console_proposal_rule(const char *s, size_t n, char *out, size_t size)
{
        const char *colon = n ? memrchr(s, ':', n) : NULL;
        if (!colon || colon == s)
                return false;
        size_t hl = (size_t)(colon - s), pl = n - hl - 1;
        uint64_t port = 0;
        if (pl == 0 || pl > 5)
                return false;
        for (size_t i = 0; i < pl; i++) {
                if (colon[1 + i] < '0' || colon[1 + i] > '9')
                        return false;
                port = port * 10 + (uint64_t)(colon[1 + i] - '0');
        }
        const char *h = s;
        if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
                h++;
                hl -= 2;
        }
        /* the canonical text, and only it: no leading zero, no brackets
         * around a name, none missing around an IPv6 address */
        return rule_text(h, hl, port, out, size) && strlen(out) == n && !memcmp(out, s, n);
}
