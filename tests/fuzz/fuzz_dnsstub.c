/*
 * fuzz_dnsstub.c — libFuzzer target for the run's resolver's decision
 * (dnsstub_decide, src/egress/dnsstub.c) and the answer the stub builds
 * from it (dns_answer / dns_refused, src/egress/dns.c), under a fixed set
 * of allow and deny rules.
 *
 * Input: byte 0 bits 0-1 are the run's capture bits (CAPTURE_V4,
 * CAPTURE_V6), bit 2 picks how the rest is read; byte 1 sizes the answer
 * buffer (a heap buffer of exactly that size, so a write past it is an
 * ASan report).
 *   bit 2 clear — the rest is the query message, read by dns_query_parse;
 *   bit 2 set   — bytes 2-3 are QTYPE, bytes 4-5 QCLASS, the rest a dotted
 *                 name made into a query (labels of 1..63 bytes), so the
 *                 fuzzer works on names and the rules see them.
 * Beyond "no crash, no UB", each verdict is checked against dnsstub.h and
 * an oracle of the rules written out by hand:
 *   - one of the enum's values; a reason exactly for REFUSE and NXDOMAIN;
 *   - no capture, a class other than IN, a data-carrying type → REFUSE;
 *     REFUSE only for those or a tunnelling-shaped name;
 *   - a name that gets an answer (A, AAAA, NODATA) is canonical, no IP
 *     spelling, allowed by the oracle and by dnsstub_name_allowed; A only
 *     for type A with v4 capture, AAAA only for AAAA with v6; a name the
 *     oracle refuses never gets an address; a name NXDOMAIN'd as not
 *     allowed is one the oracle refuses;
 *   - a host name NXDOMAIN'd as not allowed has the reason and the fix
 *     (dnsstub_name_fix) the rules give: a name deny rules take on every
 *     port says so and names the deny rule to remove, any other says no
 *     allow rule matches and gets "--allow-host NAME";
 *   - the answer the stub would send (REFUSED for an opcode other than
 *     QUERY, as dnsstub_serve does before it decides) never exceeds its buffer nor
 *     DNS_MSG_MAX, echoes the id and question, carries the verdict's
 *     RCODE, and (when the question is the canonical name) reads back
 *     through the egress process's own reader (dns_response_parse) as the
 *     one pool address given, or none.
 * A disagreement aborts.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/dns.h"
#include "egress/dnsresp.h"
#include "egress/dnsstub.h"
#include "egress/egress.h"
#include "egress/synth.h"
#include "sandbox/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

#define LONG40 "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd"

static const char *const allow_text[] = {
        "api.example.com", "*.svc.example:443", "half.example:80,443", "all.example:80",
        "blocked.example", "203.0.113.0/24",    "*.wide.test",         LONG40 "xyzxyz.example",
};
static const char *const deny_text[] = {"blocked.example", "half.example:80", "all.example",
                                        "bad.wide.test"};

static struct net_rule allow[8], deny[4];
static struct egress_config cfg;

static void config(void)
{
        static bool done;
        const char *why = NULL;
        if (done)
                return;
        done = true;
        for (size_t i = 0; i < 8; i++)
                CHECK(net_rule_parse(allow_text[i], strlen(allow_text[i]), &allow[i], &why) == 0);
        for (size_t i = 0; i < 4; i++)
                CHECK(net_rule_parse(deny_text[i], strlen(deny_text[i]), &deny[i], &why) == 0);
        cfg.allow = allow;
        cfg.n_allow = 8;
        cfg.deny = deny;
        cfg.n_deny = 4;
}

/* Is canonical `name` strictly below `suffix`? */
static bool below(const char *name, const char *suffix)
{
        size_t n = strlen(name), s = strlen(suffix);
        return n > s + 1 && name[n - s - 1] == '.' && !strcmp(name + n - s, suffix);
}

/* The names an allow rule matches that the deny rules take on every port,
 * and the deny rule that does it. */
static const char *oracle_denied_by(const char *name)
{
        if (!strcmp(name, "blocked.example") || !strcmp(name, "all.example") ||
            !strcmp(name, "bad.wide.test"))
                return name;
        return NULL;
}

/* The rules above, written out: which names the run may reach on some port. */
static bool oracle_allowed(const char *name)
{
        return !strcmp(name, "api.example.com") || below(name, "svc.example") ||
               !strcmp(name, "half.example") || !strcmp(name, LONG40 "xyzxyz.example") ||
               (below(name, "wide.test") && strcmp(name, "bad.wide.test") != 0);
}

static bool data_type(uint16_t t)
{
        return t == 16 || t == 10 || t == 255 || t == 252 || t == 251 || t == 253 || t == 254;
}

/* Is the name (as parsed, escapes counted as their 4 bytes) shaped like a tunnel? */
static bool tunnel_shaped(const char *name)
{
        size_t len = strlen(name), labels = 1, label = 0, longest = 0;
        for (size_t i = 0; i < len; i++) {
                if (name[i] == '.') {
                        labels++;
                        label = 0;
                        continue;
                }
                if (++label > longest)
                        longest = label;
        }
        return len > DNSSTUB_NAME_LEN_MAX || longest > DNSSTUB_LABEL_MAX ||
               labels > DNSSTUB_LABELS_MAX;
}

/* A query for (dotted name, qtype, qclass) into b (DNS_MSG_MAX), or 0. */
static size_t build_query(const uint8_t *name, size_t len, uint16_t qtype, uint16_t qclass,
                          uint8_t *b)
{
        static const uint8_t hdr[12] = {0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
        size_t p = 12, start = 0;
        memcpy(b, hdr, 12);
        for (size_t i = 0; i <= len; i++) {
                if (i < len && name[i] != '.')
                        continue;
                size_t l = i - start;
                if (l == 0 && i == len && start == len)
                        break; /* a trailing dot, or the root */
                if (l == 0 || l > 63 || p + 1 + l + 5 > 12 + 255 + 4)
                        return 0;
                b[p++] = (uint8_t)l;
                memcpy(b + p, name + start, l);
                p += l;
                start = i + 1;
        }
        b[p++] = 0;
        b[p++] = (uint8_t)(qtype >> 8);
        b[p++] = (uint8_t)qtype;
        b[p++] = (uint8_t)(qclass >> 8);
        b[p++] = (uint8_t)qclass;
        return p;
}

/* The answer dnsstub_serve sends for verdict v (the pool's first name's
 * addresses for A and AAAA) into a heap buffer of exactly cap bytes. */
static void check_answer(const uint8_t *msg, const struct dns_query *q, enum dnsstub_verdict v,
                         const char *canon, size_t cap)
{
        static const uint8_t a4[4] = {198, 18, 0, SYNTH_FIRST_HOST};
        static const uint8_t net6[16] = SYNTH_V6_NET;
        uint8_t a6[16];
        memcpy(a6, net6, 16);
        a6[15] = SYNTH_FIRST_HOST;

        uint8_t *out = malloc(cap ? cap : 1);
        CHECK(out);
        int n, rcode;
        switch (v) {
        case DNSSTUB_A:
                rcode = DNS_RCODE_NOERROR;
                n = dns_answer(msg, q, rcode, 1, a4, 4, SYNTH_TTL, out, cap);
                break;
        case DNSSTUB_AAAA:
                rcode = DNS_RCODE_NOERROR;
                n = dns_answer(msg, q, rcode, 28, a6, 16, SYNTH_TTL, out, cap);
                break;
        case DNSSTUB_NODATA:
                rcode = DNS_RCODE_NOERROR;
                n = dns_answer(msg, q, rcode, 0, NULL, 0, 0, out, cap);
                break;
        case DNSSTUB_NXDOMAIN:
                rcode = DNS_RCODE_NXDOMAIN;
                n = dns_answer(msg, q, rcode, 0, NULL, 0, 0, out, cap);
                break;
        case DNSSTUB_REFUSE:
        default:
                rcode = DNS_RCODE_REFUSED;
                n = dns_refused(msg, q, out, cap);
                break;
        }
        size_t rr = v == DNSSTUB_A ? 16 : v == DNSSTUB_AAAA ? 28 : 0;
        if (n < 0) {
                CHECK(n == -ENOBUFS && cap < q->question_end + rr);
                free(out);
                return;
        }
        CHECK((size_t)n <= cap && (size_t)n <= DNS_MSG_MAX && (size_t)n == q->question_end + rr);
        CHECK(out[0] == msg[0] && out[1] == msg[1] && (out[2] & 0x80) && (out[3] & 0x0f) == rcode);
        CHECK(!memcmp(out + 12, msg + 12, q->question_end - 12));
        CHECK(out[4] == 0 && out[5] == 1 && out[6] == 0 && out[7] == (rr ? 1 : 0));
        if (v != DNSSTUB_REFUSE && canon[0] && !strcmp(canon, q->name) &&
            (q->qtype == 1 || q->qtype == 28)) {
                struct dns_answer a;
                CHECK(dns_response_parse(out, (size_t)n, q->id, canon, q->qtype, &a) == 0);
                CHECK(a.rcode == rcode && a.n == (rr ? 1u : 0u));
                if (v == DNSSTUB_A)
                        CHECK(a.family[0] == AF_INET && !memcmp(a.addr[0], a4, 4));
                if (v == DNSSTUB_AAAA)
                        CHECK(a.family[0] == AF_INET6 && !memcmp(a.addr[0], a6, 16));
        }
        free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        config();
        if (size < 2)
                return 0;
        unsigned capture = (data[0] & 1 ? CAPTURE_V4 : 0) | (data[0] & 2 ? CAPTURE_V6 : 0);
        size_t cap = (size_t)data[1] * 5; /* 0..1275: around DNS_MSG_MAX */
        uint8_t *msg;
        size_t len;
        if (data[0] & 4) {
                if (size < 6)
                        return 0;
                uint8_t b[DNS_MSG_MAX];
                len = build_query(data + 6, size - 6, (uint16_t)(data[2] << 8 | data[3]),
                                  (uint16_t)(data[4] << 8 | data[5]), b);
                if (!len)
                        return 0;
                msg = malloc(len);
                CHECK(msg);
                memcpy(msg, b, len);
        } else {
                len = size - 2;
                msg = malloc(len ? len : 1);
                CHECK(msg);
                memcpy(msg, data + 2, len);
        }

        struct dns_query q;
        struct rf_error err = {0};
        if (dns_query_parse(msg, len, &q, &err) < 0) {
                free(msg);
                return 0;
        }
        char canon[NET_HOST_MAX + 1];
        const char *reason = (const char *)1;
        enum dnsstub_verdict v = dnsstub_decide(&cfg, capture, &q, canon, &reason);
        CHECK(v >= DNSSTUB_REFUSE && v < _DNSSTUB_VERDICT_MAX);
        CHECK(memchr(canon, 0, sizeof canon) != NULL);
        if (v == DNSSTUB_REFUSE || v == DNSSTUB_NXDOMAIN)
                CHECK(reason && reason[0]);
        else
                CHECK(reason == NULL);

        bool must_refuse = !capture || q.qclass != 1 || data_type(q.qtype);
        if (must_refuse)
                CHECK(v == DNSSTUB_REFUSE);
        if (v == DNSSTUB_REFUSE)
                CHECK(must_refuse || tunnel_shaped(q.name));

        if (v == DNSSTUB_A || v == DNSSTUB_AAAA || v == DNSSTUB_NODATA) {
                char again[NET_HOST_MAX + 1];
                const char *why = NULL;
                CHECK(canon[0] && strlen(canon) <= NET_HOST_MAX);
                CHECK(net_host_canonical(canon, strlen(canon), again, &why) == 0 &&
                      !strcmp(again, canon) && !net_host_is_ip_spelling(canon));
                CHECK(oracle_allowed(canon) && dnsstub_name_allowed(&cfg, canon));
                CHECK(q.qclass == 1 && !data_type(q.qtype));
        }
        if (v == DNSSTUB_A)
                CHECK(q.qtype == 1 && (capture & CAPTURE_V4));
        if (v == DNSSTUB_AAAA)
                CHECK(q.qtype == 28 && (capture & CAPTURE_V6));
        if (v == DNSSTUB_NODATA)
                CHECK(!((q.qtype == 1 && (capture & CAPTURE_V4)) ||
                        (q.qtype == 28 && (capture & CAPTURE_V6))));
        if (v == DNSSTUB_NXDOMAIN && canon[0]) {
                CHECK(!oracle_allowed(canon));
                char fix[NET_HOST_MAX + RULE_TEXT_MAX + 64], want[sizeof fix];
                const char *by = oracle_denied_by(canon);
                dnsstub_name_fix(&cfg, canon, fix, sizeof fix);
                if (by) {
                        CHECK(!strcmp(reason, "deny rules take every port an allow rule gives "
                                              "this name"));
                        snprintf(want, sizeof want,
                                 "remove %s from network.deny (deny rules win over allow rules)",
                                 by);
                } else {
                        CHECK(!strncmp(reason, "no allow rule lets the run reach this name", 42));
                        snprintf(want, sizeof want, "--allow-host %s", canon);
                }
                CHECK(!strcmp(fix, want));
        }
        if (canon[0] && !oracle_allowed(canon))
                CHECK(v != DNSSTUB_A && v != DNSSTUB_AAAA && v != DNSSTUB_NODATA);

        /* dnsstub_serve refuses an opcode other than QUERY before it asks */
        check_answer(msg, &q, (msg[2] >> 3 & 0x0f) != 0 ? DNSSTUB_REFUSE : v, canon, cap);
        free(msg);
        return 0;
}
