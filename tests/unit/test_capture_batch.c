/*
 * test_capture_batch.c — the capture ruleset as generated at build time
 * (capture-gen.c → capture-batch.h), read back from its netlink bytes:
 * what the run's refusals are logged under.
 *
 * The audit of 2026-12-04 found that one global log limit (20/s) let a
 * run hide a destination: 200 UDP datagrams to other addresses used it
 * up. These checks hold the fix in place without a kernel (the kernel's
 * behaviour is tests/integration/capture.sh's):
 *   - the batch is RF_CAPTURE_BASE_MSGS messages, each asking for an ACK;
 *   - sets dests4 and dests6 (address . protocol . port, one 32-bit
 *     register a part) are dynamic, bounded (RF_CAPTURE_LOG_DESTS) and
 *     time out (RF_CAPTURE_LOG_DEST_TTL), so they cannot grow without bound;
 *   - chain filter logs nothing itself and limits nothing: after the local
 *     accept it jumps to chain refused, then rejects;
 *   - chain refused keys each family's packets into its set with a limit
 *     of its own per element (RF_CAPTURE_LOG_DEST_RATE a minute, burst 1),
 *     logs under it and returns; ICMP is keyed on type and code, the rest
 *     on the destination port; only its last rule, for everything else,
 *     has the shared limit (RF_CAPTURE_LOG_RATE a second, burst as much).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "sandbox/capture-batch.h"
#include "sandbox/capture.h"
#include "tap.h"

#define EXPRS_MAX 16

/* One attribute table: the attributes of [p, p + n), by type (the last wins). */
struct attrs {
        const uint8_t *v[32];
        uint16_t len[32];
};

static void attrs_read(const uint8_t *p, size_t n, struct attrs *a)
{
        memset(a, 0, sizeof *a);
        while (n >= NLA_HDRLEN) {
                struct nlattr h;
                memcpy(&h, p, sizeof h);
                if (h.nla_len < NLA_HDRLEN || h.nla_len > n)
                        return;
                uint16_t t = h.nla_type & NLA_TYPE_MASK;
                if (t < 32) {
                        a->v[t] = p + NLA_HDRLEN;
                        a->len[t] = (uint16_t)(h.nla_len - NLA_HDRLEN);
                }
                size_t step = NLA_ALIGN(h.nla_len);
                if (step >= n)
                        return;
                p += step;
                n -= step;
        }
}

static uint32_t be32_at(const struct attrs *a, int t)
{
        uint32_t v = 0;
        if (a->v[t] && a->len[t] == 4)
                memcpy(&v, a->v[t], 4);
        return ntohl(v);
}

static uint64_t be64_at(const struct attrs *a, int t)
{
        uint64_t v = 0;
        if (a->v[t] && a->len[t] == 8)
                memcpy(&v, a->v[t], 8);
        return be64toh(v);
}

static uint16_t be16_at(const struct attrs *a, int t)
{
        uint16_t v = 0;
        if (a->v[t] && a->len[t] == 2)
                memcpy(&v, a->v[t], 2);
        return ntohs(v);
}

static const char *str_at(const struct attrs *a, int t)
{
        return a->v[t] && a->len[t] && !a->v[t][a->len[t] - 1] ? (const char *)a->v[t] : "";
}

/* One expression of a rule: its name and its data's attributes. */
struct expr {
        char name[16];
        struct attrs data;
};

struct rule {
        char chain[16];
        struct expr e[EXPRS_MAX];
        size_t n;
};

struct set {
        char name[16];
        uint32_t flags, klen, size;
        uint64_t timeout;
};

static struct rule rules[64];
static size_t n_rules;
static struct set sets[4];
static size_t n_sets;
static unsigned n_msgs, n_acked, n_chains_regular;

static void read_rule(const struct attrs *a)
{
        struct rule *r = &rules[n_rules++];
        snprintf(r->chain, sizeof r->chain, "%s", str_at(a, NFTA_RULE_CHAIN));
        const uint8_t *p = a->v[NFTA_RULE_EXPRESSIONS];
        size_t n = a->len[NFTA_RULE_EXPRESSIONS];
        while (p && n >= NLA_HDRLEN && r->n < EXPRS_MAX) {
                struct nlattr h;
                memcpy(&h, p, sizeof h);
                if (h.nla_len < NLA_HDRLEN || h.nla_len > n)
                        break;
                struct attrs ea;
                attrs_read(p + NLA_HDRLEN, h.nla_len - NLA_HDRLEN, &ea);
                struct expr *e = &r->e[r->n++];
                snprintf(e->name, sizeof e->name, "%s", str_at(&ea, NFTA_EXPR_NAME));
                attrs_read(ea.v[NFTA_EXPR_DATA], ea.len[NFTA_EXPR_DATA], &e->data);
                size_t step = NLA_ALIGN(h.nla_len);
                if (step >= n)
                        break;
                p += step;
                n -= step;
        }
}

static void read_batch(void)
{
        const uint8_t *p = rf_capture_base;
        size_t n = sizeof rf_capture_base;
        while (n >= NLMSG_HDRLEN) {
                struct nlmsghdr h;
                memcpy(&h, p, sizeof h);
                if (h.nlmsg_len < NLMSG_HDRLEN + sizeof(struct nfgenmsg) || h.nlmsg_len > n)
                        break;
                n_msgs++;
                if (h.nlmsg_flags & NLM_F_ACK)
                        n_acked++;
                size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
                struct attrs a;
                attrs_read(p + off, h.nlmsg_len - off, &a);
                switch (h.nlmsg_type & 0xff) {
                case NFT_MSG_NEWRULE:
                        if (n_rules < ARRAY_SIZE(rules))
                                read_rule(&a);
                        break;
                case NFT_MSG_NEWSET:
                        if (n_sets < ARRAY_SIZE(sets)) {
                                struct set *s = &sets[n_sets++];
                                struct attrs d;
                                snprintf(s->name, sizeof s->name, "%s", str_at(&a, NFTA_SET_NAME));
                                s->flags = be32_at(&a, NFTA_SET_FLAGS);
                                s->klen = be32_at(&a, NFTA_SET_KEY_LEN);
                                s->timeout = be64_at(&a, NFTA_SET_TIMEOUT);
                                attrs_read(a.v[NFTA_SET_DESC], a.len[NFTA_SET_DESC], &d);
                                s->size = be32_at(&d, NFTA_SET_DESC_SIZE);
                        }
                        break;
                case NFT_MSG_NEWCHAIN:
                        if (!a.v[NFTA_CHAIN_HOOK])
                                n_chains_regular++;
                        break;
                default:
                        break;
                }
                size_t step = NLMSG_ALIGN(h.nlmsg_len);
                if (step >= n)
                        break;
                p += step;
                n -= step;
        }
}

/* "meta,cmp,..." — the names of a rule's expressions */
static const char *shape(const struct rule *r)
{
        static char s[EXPRS_MAX * 16];
        s[0] = '\0';
        for (size_t i = 0; i < r->n; i++) {
                if (i)
                        strcat(s, ",");
                strcat(s, r->e[i].name);
        }
        return s;
}

static bool has_expr(const struct rule *r, const char *name)
{
        for (size_t i = 0; i < r->n; i++)
                if (!strcmp(r->e[i].name, name))
                        return true;
        return false;
}

/* the first byte a cmp compares with (its data, NFTA_DATA_VALUE), or -1 */
static int cmp_byte(const struct expr *e)
{
        struct attrs d;
        attrs_read(e->data.v[NFTA_CMP_DATA], e->data.len[NFTA_CMP_DATA], &d);
        return d.v[NFTA_DATA_VALUE] && d.len[NFTA_DATA_VALUE] ? d.v[NFTA_DATA_VALUE][0] : -1;
}

/* the verdict of an immediate: its code, and the chain of a jump */
static int32_t verdict_of(const struct expr *e, char chain[16])
{
        struct attrs d, v;
        attrs_read(e->data.v[NFTA_IMMEDIATE_DATA], e->data.len[NFTA_IMMEDIATE_DATA], &d);
        attrs_read(d.v[NFTA_DATA_VERDICT], d.len[NFTA_DATA_VERDICT], &v);
        snprintf(chain, 16, "%s", str_at(&v, NFTA_VERDICT_CHAIN));
        return (int32_t)be32_at(&v, NFTA_VERDICT_CODE);
}

static void test_sets(void)
{
        is_int(n_msgs, RF_CAPTURE_BASE_MSGS, "the batch is RF_CAPTURE_BASE_MSGS messages");
        is_int(n_acked, n_msgs, "... each asking for an ACK");
        is_int(n_sets, 2, "two sets");
        for (size_t i = 0; i < n_sets && i < 2; i++) {
                const struct set *s = &sets[i];
                is_str(s->name, i ? "dests6" : "dests4", "set %zu is %s", i,
                       i ? "dests6" : "dests4");
                is_int(s->klen, i ? 16 + 4 + 4 : 4 + 4 + 4,
                       "%s: address . protocol . port, a register a part", s->name);
                ok((s->flags & (NFT_SET_EVAL | NFT_SET_TIMEOUT)) ==
                           (NFT_SET_EVAL | NFT_SET_TIMEOUT),
                   "%s: dynamic, with a timeout", s->name);
                ok(!(s->flags & NFT_SET_CONSTANT), "%s: not constant", s->name);
                is_int(s->size, RF_CAPTURE_LOG_DESTS, "%s: at most RF_CAPTURE_LOG_DESTS elements",
                       s->name);
                is_int(s->timeout, RF_CAPTURE_LOG_DEST_TTL * 1000ull,
                       "%s: an element lives RF_CAPTURE_LOG_DEST_TTL seconds", s->name);
        }
        is_int(n_chains_regular, 1, "one regular chain (refused)");
}

static void test_filter(void)
{
        size_t jump_at = 0, first_reject = 0, k = 0;
        bool logs = false;
        for (size_t i = 0; i < n_rules; i++) {
                const struct rule *r = &rules[i];
                if (strcmp(r->chain, "filter") != 0)
                        continue;
                k++;
                logs |= has_expr(r, "log") || has_expr(r, "limit");
                char chain[16];
                if (r->n == 1 && !strcmp(r->e[0].name, "immediate") &&
                    verdict_of(&r->e[0], chain) == NFT_JUMP && !strcmp(chain, "refused"))
                        jump_at = k;
                if (has_expr(r, "reject") && !first_reject)
                        first_reject = k;
        }
        ok(!logs, "chain filter neither logs nor limits itself");
        ok(jump_at == 4,
           "chain filter jumps to refused after its three accept/drop rules (rule %zu)", jump_at);
        ok(first_reject == jump_at + 1, "... and rejects right after");
}

/* A first-refusal rule of chain refused: family, ICMP or not, and its parts. */
static void check_first(const struct rule *r, uint8_t family, bool icmp)
{
        bool v4 = family == NFPROTO_IPV4;
        const char *what = v4 ? (icmp ? "v4 ICMP" : "v4") : (icmp ? "v6 ICMPv6" : "v6");
        is_str(shape(r), "meta,cmp,meta,cmp,payload,meta,payload,dynset,log,immediate",
               "refused, %s: match, key, dynset, log, return", what);
        if (r->n != 10)
                return;
        is_int(cmp_byte(&r->e[1]), family, "%s: its family", what);
        uint8_t icmp_proto = v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6;
        is_int(be32_at(&r->e[3].data, NFTA_CMP_OP), icmp ? NFT_CMP_EQ : NFT_CMP_NEQ,
               "%s: protocol %s ICMP", what, icmp ? "is" : "is not");
        is_int(cmp_byte(&r->e[3]), icmp_proto, "%s: ... of its family", what);
        const struct attrs *addr = &r->e[4].data, *proto = &r->e[5].data, *port = &r->e[6].data;
        ok(be32_at(addr, NFTA_PAYLOAD_BASE) == NFT_PAYLOAD_NETWORK_HEADER &&
                   be32_at(addr, NFTA_PAYLOAD_OFFSET) == (v4 ? 16u : 24u) &&
                   be32_at(addr, NFTA_PAYLOAD_LEN) == (v4 ? 4u : 16u) &&
                   be32_at(addr, NFTA_PAYLOAD_DREG) == NFT_REG32_00,
           "%s: the destination address, into the key's first register", what);
        is_int(be32_at(proto, NFTA_META_KEY), NFT_META_L4PROTO, "%s: then the protocol", what);
        is_int(be32_at(proto, NFTA_META_DREG), NFT_REG32_00 + (v4 ? 1 : 4),
               "%s: ... into the next register", what);
        ok(be32_at(port, NFTA_PAYLOAD_BASE) == NFT_PAYLOAD_TRANSPORT_HEADER &&
                   be32_at(port, NFTA_PAYLOAD_OFFSET) == (icmp ? 0u : 2u) &&
                   be32_at(port, NFTA_PAYLOAD_LEN) == 2 &&
                   be32_at(port, NFTA_PAYLOAD_DREG) == NFT_REG32_00 + (v4 ? 2 : 5),
           "%s: then %s, into the last", what, icmp ? "ICMP's type and code" : "the port");
        const struct attrs *ds = &r->e[7].data;
        is_str(str_at(ds, NFTA_DYNSET_SET_NAME), v4 ? "dests4" : "dests6", "%s: its set", what);
        is_int(be32_at(ds, NFTA_DYNSET_OP), NFT_DYNSET_OP_ADD,
               "%s: added, not updated (an element's life is not refreshed)", what);
        is_int(be32_at(ds, NFTA_DYNSET_SREG_KEY), NFT_REG32_00, "%s: keyed on that key", what);
        struct attrs le, l;
        attrs_read(ds->v[NFTA_DYNSET_EXPR], ds->len[NFTA_DYNSET_EXPR], &le);
        attrs_read(le.v[NFTA_EXPR_DATA], le.len[NFTA_EXPR_DATA], &l);
        is_str(str_at(&le, NFTA_EXPR_NAME), "limit", "%s: each element has a limit of its own",
               what);
        ok(be64_at(&l, NFTA_LIMIT_RATE) == RF_CAPTURE_LOG_DEST_RATE &&
                   be64_at(&l, NFTA_LIMIT_UNIT) == 60 && be32_at(&l, NFTA_LIMIT_BURST) == 1 &&
                   be32_at(&l, NFTA_LIMIT_TYPE) == NFT_LIMIT_PKTS,
           "%s: ... RF_CAPTURE_LOG_DEST_RATE packets a minute, burst 1", what);
        is_int(be16_at(&r->e[8].data, NFTA_LOG_GROUP), RF_CAPTURE_NFLOG_GROUP,
               "%s: logged to the run's group", what);
        char chain[16];
        is_int(verdict_of(&r->e[9], chain), NFT_RETURN, "%s: then back to the rejects", what);
}

static void test_refused(void)
{
        const struct rule *v[8];
        size_t n = 0;
        for (size_t i = 0; i < n_rules && n < ARRAY_SIZE(v); i++)
                if (!strcmp(rules[i].chain, "refused"))
                        v[n++] = &rules[i];
        is_int(n, 5, "chain refused: five rules");
        if (n != 5)
                return;
        check_first(v[0], NFPROTO_IPV4, false);
        check_first(v[1], NFPROTO_IPV4, true);
        check_first(v[2], NFPROTO_IPV6, false);
        check_first(v[3], NFPROTO_IPV6, true);
        is_str(shape(v[4]), "limit,log", "the last rule: the rest, under one limit");
        const struct attrs *l = &v[4]->e[0].data;
        ok(be64_at(l, NFTA_LIMIT_RATE) == RF_CAPTURE_LOG_RATE && be64_at(l, NFTA_LIMIT_UNIT) == 1 &&
                   be32_at(l, NFTA_LIMIT_BURST) == RF_CAPTURE_LOG_RATE,
           "... RF_CAPTURE_LOG_RATE a second, burst as much");
}

int main(void)
{
        read_batch();
        test_sets();
        test_filter();
        test_refused();
        return done();
}
