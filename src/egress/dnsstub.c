/*
 * dnsstub.c — answering the run's DNS queries. See dnsstub.h.
 *
 * The query is parsed by the pure reader (dns.c); names are recorded in
 * presentation form with every unusual byte escaped, and the audit layer
 * limits and escapes them again. The answer goes back to exactly the
 * address the query came from, inside the run's own namespace.
 *
 * Under capture the decision is pure (dnsstub_decide: the query and the
 * live rules in, a verdict out); serving it may write the map. The order
 * for a name's first address is the point of this file: assign, record
 * `dns.synth` (must succeed, else the assignment is undone), send the
 * entry on the map channel (synth_flush), and only then answer. Nothing
 * here ever resolves a name: no real address reaches the run, and a query
 * reaches no resolver outside it.
 *
 * Threat notes: the run controls every byte of the query. The name is
 * canonicalised like the egress process does (net_host_canonical) before
 * any rule sees it; tunnelling-shaped queries are refused before the
 * policy is even asked, so the audit log, not an upstream resolver, is
 * the only place their bytes go (coalesced per name, within the run's
 * budget). The map is bounded by SYNTH_NAMES_MAX.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/dns.h"
#include "egress/dnsstub.h"
#include "egress/egress.h"
#include "egress/inject.h"
#include "egress/egress.h"
#include "policy/rules.h"
#include "sandbox/msg.h" /* CAPTURE_V4, CAPTURE_V6 */
#include "shared/macro.h"

#define DNS_TYPE_A     1
#define DNS_TYPE_NULL  10
#define DNS_TYPE_TXT   16
#define DNS_TYPE_AAAA  28
#define DNS_TYPE_IXFR  251
#define DNS_TYPE_AXFR  252
#define DNS_TYPE_MAILB 253
#define DNS_TYPE_MAILA 254
#define DNS_TYPE_ANY   255
#define DNS_CLASS_IN   1

static const char *qtype_name(uint16_t t)
{
        switch (t) {
        case 1:
                return "A";
        case 2:
                return "NS";
        case 5:
                return "CNAME";
        case 6:
                return "SOA";
        case 12:
                return "PTR";
        case 15:
                return "MX";
        case 16:
                return "TXT";
        case 28:
                return "AAAA";
        case 33:
                return "SRV";
        case 64:
                return "SVCB";
        case 65:
                return "HTTPS";
        case 255:
                return "ANY";
        default:
                return NULL;
        }
}

static void qtype_text(uint16_t t, char type[16])
{
        const char *tn = qtype_name(t);
        if (tn)
                snprintf(type, 16, "%s", tn);
        else
                snprintf(type, 16, "TYPE%u", t);
}

/* A refusal without capture, or a malformed message (`why`): today's records. */
static void record(struct audit_emitter *e, const struct dns_query *q, const char *why)
{
        struct rf_error err = {0};
        char type[16];

        if (!e)
                return;
        qtype_text(q->qtype, type);
        if (why) {
                struct audit_field f[] = {{.key = "error", .type = AUDIT_STR, .s = why}};
                (void)audit_emit(e, "dns.malformed", "-", "malformed DNS messages, last:", f,
                                 ARRAY_SIZE(f), 0, &err);
                return;
        }
        struct audit_field f[] = {
                {.key = "name", .type = AUDIT_STR, .s = q->name},
                {.key = "qtype", .type = AUDIT_STR, .s = type},
                {.key = "reason",
                 .type = AUDIT_STR,
                 .s = "a run resolves no names itself; its egress proxy does"},
        };
        (void)audit_emit(e, "dns.refused", q->name, "refused queries for", f, ARRAY_SIZE(f), 0,
                         &err);
}

/*
 * A refusal under capture: recorded, coalesced per name, with its answer
 * and reason; and counted for the end-of-run summary under `shown` (the
 * canonical name; NULL or "": the name as asked) with `fix` (NULL: none),
 * whether or not the audit log coalesced it.
 */
static void record_refused(struct audit_emitter *e, const struct dns_query *q, const char *shown,
                           const char *rcode, const char *reason, const char *fix)
{
        struct rf_error err = {0};
        char type[16];

        egress_refusal_name_note(shown && shown[0] ? shown : q->name, reason, fix);
        if (!e)
                return;
        qtype_text(q->qtype, type);
        struct audit_field f[] = {
                {.key = "name", .type = AUDIT_STR, .s = q->name},
                {.key = "qtype", .type = AUDIT_STR, .s = type},
                {.key = "rcode", .type = AUDIT_STR, .s = rcode},
                {.key = "reason", .type = AUDIT_STR, .s = reason},
        };
        (void)audit_emit(e, "dns.refused", q->name, "refused queries for", f, ARRAY_SIZE(f), 0,
                         &err);
}

/* ---- the decision (pure) ------------------------------------------------------ */

static bool is_name_rule(const struct net_rule *r)
{
        return r->kind == RULE_HOST || r->kind == RULE_SUFFIX;
}

/* Does a deny rule match `name` on `port`? */
static bool denied_on(const struct egress_config *cfg, const char *name, uint16_t port)
{
        for (size_t i = 0; i < cfg->n_deny; i++)
                if (is_name_rule(&cfg->deny[i]) && net_rule_match_host(&cfg->deny[i], name, port))
                        return true;
        return false;
}

/* Do the deny rules leave `name` some port at all? Every port a deny rule
 * lists is marked; a deny rule without ports takes them all. */
static bool some_port_open(const struct egress_config *cfg, const char *name)
{
        uint8_t bits[65536 / 8] = {0};
        for (size_t i = 0; i < cfg->n_deny; i++) {
                const struct net_rule *r = &cfg->deny[i];
                if (!is_name_rule(r))
                        continue;
                if (r->n_ports == 0) {
                        if (net_rule_match_host(r, name, 1))
                                return false;
                        continue;
                }
                for (size_t k = 0; k < r->n_ports && k < RULE_PORTS_MAX; k++)
                        if (net_rule_match_host(r, name, r->ports[k]))
                                bits[r->ports[k] / 8] |= (uint8_t)(1u << (r->ports[k] % 8));
        }
        for (uint32_t p = 1; p < 65536; p++)
                if (!(bits[p / 8] & (1u << (p % 8))))
                        return true;
        return false;
}

bool dnsstub_name_allowed(const struct egress_config *cfg, const char *name)
{
        if (!cfg || !name)
                return false;
        for (size_t i = 0; i < cfg->n_allow; i++) {
                const struct net_rule *r = &cfg->allow[i];
                if (!is_name_rule(r))
                        continue;
                if (r->n_ports == 0) {
                        if (net_rule_match_host(r, name, 1) && some_port_open(cfg, name))
                                return true;
                        continue;
                }
                for (size_t k = 0; k < r->n_ports && k < RULE_PORTS_MAX; k++)
                        if (net_rule_match_host(r, name, r->ports[k]) &&
                            !denied_on(cfg, name, r->ports[k]))
                                return true;
        }
        return false;
}

void dnsstub_name_fix(const struct egress_config *cfg, const char *name, char *fix, size_t n)
{
        if (!n)
                return;
        fix[0] = '\0';
        if (!name || !name[0])
                return;
        if (!cfg || some_port_open(cfg, name)) {
                snprintf(fix, n, "--allow-host %s", name);
                return;
        }
        for (size_t i = 0; i < cfg->n_deny; i++) {
                const struct net_rule *r = &cfg->deny[i];
                if (is_name_rule(r) && r->n_ports == 0 && net_rule_match_host(r, name, 1)) {
                        snprintf(fix, n,
                                 "remove %s from network.deny (deny rules win over allow rules)",
                                 r->text);
                        return;
                }
        }
}

/* Does some allow rule match `name` on some port of its own (deny rules aside)? */
static bool allow_matches(const struct egress_config *cfg, const char *name)
{
        for (size_t i = 0; cfg && i < cfg->n_allow; i++) {
                const struct net_rule *r = &cfg->allow[i];
                if (is_name_rule(r) && net_rule_match_host(r, name, r->n_ports ? r->ports[0] : 1))
                        return true;
        }
        return false;
}

/* Is `name` named exactly by an allow rule (so its shape is the policy's, not the run's)? */
static bool named_exactly(const struct egress_config *cfg, const char *name)
{
        for (size_t i = 0; cfg && i < cfg->n_allow; i++)
                if (cfg->allow[i].kind == RULE_HOST && !strcmp(cfg->allow[i].host, name))
                        return true;
        return false;
}

/* The reason a name (as parsed: escapes count as their 4 bytes) is shaped
 * like a tunnel, or NULL. */
static const char *tunnel_shape(const char *name)
{
        size_t len = strlen(name), labels = 0, label = 0;
        if (len > DNSSTUB_NAME_LEN_MAX)
                return "a name longer than 128 bytes (DNS tunnelling)";
        for (size_t i = 0; i <= len; i++) {
                if (i == len || name[i] == '.') {
                        labels++;
                        label = 0;
                        continue;
                }
                if (++label > DNSSTUB_LABEL_MAX)
                        return "a label longer than 40 bytes (DNS tunnelling)";
        }
        if (labels > DNSSTUB_LABELS_MAX)
                return "a name of more than 10 labels (DNS tunnelling)";
        return NULL;
}

enum dnsstub_verdict dnsstub_decide(const struct egress_config *cfg, unsigned capture,
                                    const struct dns_query *q, char canon[NET_HOST_MAX + 1],
                                    const char **reason)
{
        const char *why = NULL;
        canon[0] = '\0';
        *reason = NULL;
        if (!(capture & (CAPTURE_V4 | CAPTURE_V6))) {
                *reason = "a run resolves no names itself; its egress proxy does";
                return DNSSTUB_REFUSE;
        }
        if (q->qclass != DNS_CLASS_IN) {
                *reason = "a class other than IN";
                return DNSSTUB_REFUSE;
        }
        switch (q->qtype) {
        case DNS_TYPE_TXT:
        case DNS_TYPE_NULL:
        case DNS_TYPE_ANY:
        case DNS_TYPE_AXFR:
        case DNS_TYPE_IXFR:
        case DNS_TYPE_MAILA:
        case DNS_TYPE_MAILB:
                *reason = "a query type that only carries data (DNS tunnelling)";
                return DNSSTUB_REFUSE;
        default:
                break;
        }
        bool is_name = net_host_canonical(q->name, strlen(q->name), canon, &why) == 0 &&
                       !net_host_is_ip_spelling(canon);
        if (!is_name)
                canon[0] = '\0';
        if (!(is_name && named_exactly(cfg, canon))) {
                const char *shape = tunnel_shape(q->name);
                if (shape) {
                        *reason = shape;
                        return DNSSTUB_REFUSE;
                }
        }
        if (!is_name) {
                *reason = "not a host name (an IP literal, or bytes a host name cannot hold)";
                return DNSSTUB_NXDOMAIN;
        }
        if (!dnsstub_name_allowed(cfg, canon)) {
                *reason = allow_matches(cfg, canon)
                                  ? "deny rules take every port an allow rule gives this name"
                                  : "no allow rule lets the run reach this name (default: no "
                                    "egress)";
                return DNSSTUB_NXDOMAIN;
        }
        if (q->qtype == DNS_TYPE_A && (capture & CAPTURE_V4))
                return DNSSTUB_A;
        if (q->qtype == DNS_TYPE_AAAA && (capture & CAPTURE_V6))
                return DNSSTUB_AAAA;
        return DNSSTUB_NODATA;
}

/* ---- serving --------------------------------------------------------------------- */

/* Record a name's first address; must succeed (no record, no address). */
static int record_synth(struct audit_emitter *e, const struct synth_entry *en)
{
        struct rf_error err = {0};
        char v4[INET_ADDRSTRLEN], v6[INET6_ADDRSTRLEN];
        uint32_t a = htonl(en->v4);

        if (!e)
                return 0;
        if (!inet_ntop(AF_INET, &a, v4, sizeof v4) || !inet_ntop(AF_INET6, en->v6, v6, sizeof v6))
                return -EINVAL;
        struct audit_field f[] = {
                {.key = "name", .type = AUDIT_STR, .s = en->name},
                {.key = "v4", .type = AUDIT_STR, .s = v4},
                {.key = "v6", .type = AUDIT_STR, .s = v6},
        };
        int64_t r = audit_emit(e, "dns.synth", NULL, NULL, f, ARRAY_SIZE(f), 0, &err);
        return r < 0 ? (int)r : 0;
}

static void record_exhausted(const struct dnsstub_ctx *c, const struct dns_query *q)
{
        struct rf_error err = {0};
        char max[16];

        if (c->map->exhausted)
                return;
        c->map->exhausted = true;
        if (!c->ev)
                return;
        snprintf(max, sizeof max, "%d", SYNTH_NAMES_MAX);
        struct audit_field f[] = {
                {.key = "name", .type = AUDIT_STR, .s = q->name},
                {.key = "names", .type = AUDIT_STR, .s = max},
        };
        (void)audit_emit(c->ev, "dns.exhausted", NULL, NULL, f, ARRAY_SIZE(f), 0, &err);
}

/* Empty the egress process's end of the channel while no egress process
 * holds it: the next one inherits the map whole. */
static void discard_idle(int rx)
{
        uint8_t buf[SYNTH_ENTRY_MAX + 1];
        while (recv(rx, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC) > 0)
                ;
}

/*
 * An A or AAAA answer for an allowed name: the entry (assigned, recorded
 * and on the channel before anything is answered). Returns the answer's
 * length, or builds the refusal.
 */
static int answer_address(const struct dnsstub_ctx *c, const uint8_t *msg,
                          const struct dns_query *q, const char *canon, bool v6, uint8_t *out,
                          size_t cap)
{
        bool fresh = false;
        int err = 0;

        if (!c->map || c->synth_tx < 0)
                return dns_answer(msg, q, DNS_RCODE_SERVFAIL, 0, NULL, 0, 0, out, cap);
        const struct synth_entry *e = synth_assign(c->map, canon, &fresh, &err);
        if (!e) {
                if (err == -ENOSPC) {
                        record_exhausted(c, q);
                        record_refused(c->ev, q, canon, "REFUSED",
                                       "the run's synthetic address pool is exhausted", NULL);
                        return dns_answer(msg, q, DNS_RCODE_REFUSED, 0, NULL, 0, 0, out, cap);
                }
                return dns_answer(msg, q, DNS_RCODE_SERVFAIL, 0, NULL, 0, 0, out, cap);
        }
        size_t idx = synth_index(c->map, e);
        if (fresh && record_synth(c->ev, e) < 0) {
                (void)synth_forget_last(c->map);
                return dns_answer(msg, q, DNS_RCODE_SERVFAIL, 0, NULL, 0, 0, out, cap);
        }
        int r = synth_flush(c->synth_tx, c->map);
        if (r == -EAGAIN && c->synth_rx_idle >= 0) {
                discard_idle(c->synth_rx_idle);
                r = synth_flush(c->synth_tx, c->map);
        }
        if (idx >= c->map->sent) { /* the egress process could not know it yet */
                record_refused(c->ev, q, canon, "SERVFAIL",
                               r == -EAGAIN ? "the map channel to the egress process is full"
                                            : "the map channel to the egress process is broken",
                               NULL);
                return dns_answer(msg, q, DNS_RCODE_SERVFAIL, 0, NULL, 0, 0, out, cap);
        }
        e = &c->map->v[idx];
        if (v6)
                return dns_answer(msg, q, DNS_RCODE_NOERROR, DNS_TYPE_AAAA, e->v6, 16, SYNTH_TTL,
                                  out, cap);
        uint8_t a[4] = {(uint8_t)(e->v4 >> 24), (uint8_t)(e->v4 >> 16), (uint8_t)(e->v4 >> 8),
                        (uint8_t)e->v4};
        return dns_answer(msg, q, DNS_RCODE_NOERROR, DNS_TYPE_A, a, 4, SYNTH_TTL, out, cap);
}

static int answer_captured(const struct dnsstub_ctx *c, const uint8_t *msg,
                           const struct dns_query *q, uint8_t *out, size_t cap)
{
        char canon[NET_HOST_MAX + 1], fix[NET_HOST_MAX + RULE_TEXT_MAX + 64];
        const char *reason = NULL;

        if ((msg[2] >> 3 & 0x0f) != 0) { /* not a standard query (NOTIFY, UPDATE, ...) */
                record_refused(c->ev, q, NULL, "REFUSED", "an opcode other than QUERY", NULL);
                return dns_refused(msg, q, out, cap);
        }
        switch (dnsstub_decide(c->cfg, c->capture, q, canon, &reason)) {
        case DNSSTUB_A:
                return answer_address(c, msg, q, canon, false, out, cap);
        case DNSSTUB_AAAA:
                return answer_address(c, msg, q, canon, true, out, cap);
        case DNSSTUB_NODATA:
                return dns_answer(msg, q, DNS_RCODE_NOERROR, 0, NULL, 0, 0, out, cap);
        case DNSSTUB_NXDOMAIN:
                /* a host name the rules do not allow has a fix; anything
                 * that is not a host name (an IP literal...) has none */
                fix[0] = '\0';
                if (canon[0])
                        dnsstub_name_fix(c->cfg, canon, fix, sizeof fix);
                record_refused(c->ev, q, canon, "NXDOMAIN", reason, fix);
                return dns_answer(msg, q, DNS_RCODE_NXDOMAIN, 0, NULL, 0, 0, out, cap);
        case DNSSTUB_REFUSE:
        default:
                record_refused(c->ev, q, canon, "REFUSED", reason ? reason : "refused", NULL);
                return dns_refused(msg, q, out, cap);
        }
}

int dnsstub_serve(int fd, const struct dnsstub_ctx *ctx)
{
        int n;

        for (n = 0; n < DNSSTUB_BATCH; n++) {
                uint8_t msg[DNS_MSG_MAX + 1], out[DNS_MSG_MAX];
                struct sockaddr_storage from;
                socklen_t fl = sizeof from;
                ssize_t len =
                        recvfrom(fd, msg, sizeof msg, MSG_TRUNC, (struct sockaddr *)&from, &fl);
                if (len < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        if (errno == ECONNREFUSED) /* an earlier answer's ICMP error */
                                continue;
                        return negative_errno();
                }
                struct dns_query q;
                struct rf_error err = {0};
                const struct inject_secret *s;
                const char *form;
                int k;
                size_t got = (size_t)len > sizeof msg ? sizeof msg : (size_t)len;
                if (dns_query_parse(msg, got, &q, &err) < 0) {
                        record(ctx->ev, &q, err.msg);
                        k = dns_formerr(msg, got, out);
                } else if (ctx->cfg && ctx->cfg->n_inject &&
                           (s = inject_mentions_name(ctx->cfg->inject, ctx->cfg->n_inject, q.name,
                                                     strlen(q.name), &form))) {
                        /* the placeholder (or value) in a name the run looks up:
                         * a query to any resolver upstream would carry it out */
                        struct audit_field f[] = {
                                {.key = "name", .type = AUDIT_STR, .s = s->name},
                                {.key = "secret_version", .type = AUDIT_UINT, .u = s->version},
                                {.key = "destination", .type = AUDIT_STR, .s = "dns"},
                                {.key = "where", .type = AUDIT_STR, .s = "DNS name looked up"},
                                {.key = "form", .type = AUDIT_STR, .s = form},
                                {.key = "via", .type = AUDIT_STR, .s = "dns"},
                                {.key = "action",
                                 .type = AUDIT_STR,
                                 .s = s->exfil_kill ? "kill" : "refuse"},
                        };
                        if (ctx->ev)
                                (void)audit_emit(ctx->ev, "secret.exfil", NULL, NULL, f,
                                                 ARRAY_SIZE(f), 0, &err);
                        if (s->exfil_kill && ctx->exfil_kill)
                                *ctx->exfil_kill = true;
                        k = dns_refused(msg, &q, out, sizeof out);
                } else if (!ctx->capture) {
                        record(ctx->ev, &q, NULL);
                        k = dns_refused(msg, &q, out, sizeof out);
                } else {
                        k = answer_captured(ctx, msg, &q, out, sizeof out);
                }
                if (k > 0)
                        (void)sendto(fd, out, (size_t)k, MSG_DONTWAIT, (struct sockaddr *)&from,
                                     fl);
        }
        return n;
}
