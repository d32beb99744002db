/*
 * dnsresp.c — DNS queries out of the egress process, and the addresses in
 * their answers. See dnsresp.h.
 *
 * Design: the query is built from a canonical name (the caller
 * canonicalised it with net_host_canonical); anything else is a caller
 * bug and -EINVAL. The response is read in passes over its answer
 * section: each pass walks every record (so every record is checked for
 * structure), the first passes follow the CNAME chain from the queried
 * name one step at a time — so the chain is found whatever order the
 * server put the records in — and the last one collects the A or AAAA
 * records owned by a name on the chain. Names are compared in wire form
 * (label by label, ASCII case folded), so a label holding a '.' never
 * equals two labels.
 *
 * Threat notes: the response comes from the network (an off-path
 * spoofer, a hostile or broken resolver). Every offset is checked
 * against the message length before it is read. A compression pointer
 * must point before the first byte of the name segment being read (so
 * each jump lands strictly earlier than the last and no loop is
 * possible) and never into the header; at most DNSR_PTR_HOPS_MAX are
 * followed per name. A name is at most 255 wire bytes, so reading one
 * costs at most 255 label bytes and 64 jumps however the pointers are
 * laid out, and a response costs at most DNSR_CNAME_MAX + 2 passes. The
 * chain is at most DNSR_CNAME_MAX CNAMEs (a longer one, or a loop, is
 * refused), and two CNAMEs for one owner that disagree are refused.
 * Records for any name not on the chain, and the authority and
 * additional sections, are ignored: a resolver cannot plant an address
 * for another name here. A response with RCODE other than NOERROR yields
 * no address, whatever it carries; a truncated one (TC) without an
 * address is refused rather than taken for NODATA. The id is the only
 * defence against spoofing this file has: the caller must use a random
 * id and a random source port. Whether an address may be dialled
 * (private, metadata, ...) is addr_classify()'s decision, not this
 * file's.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/dnsresp.h"

#define DNS_HDR           12
#define DNS_WIRE_MAX      255 /* bytes of a name in wire form, root label included */
#define DNS_LABEL_MAX     63
#define DNS_TEXT_MAX      253   /* bytes of a name in text form, no trailing dot */
#define DNSR_MSG_MAX      65535 /* bytes of a DNS message */
#define DNSR_PTR_HOPS_MAX 64
#define DNSR_CNAME_MAX    8
#define DNS_TYPE_A        1
#define DNS_TYPE_CNAME    5
#define DNS_TYPE_AAAA     28
#define DNS_CLASS_IN      1
#define DNS_FLAG_QR       0x80        /* in byte 2 */
#define DNS_FLAG_TC       0x02        /* in byte 2 */
#define DNS_FLAG_RD       0x01        /* in byte 2 */
#define DNS_TTL_MAX       0x7fffffffu /* RFC 2181 8: larger values mean 0 */

struct wire_name {
        uint8_t b[DNS_WIRE_MAX];
        size_t len;
};

static uint16_t get16(const uint8_t *p)
{
        return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)(v >> 8);
        p[1] = (uint8_t)v;
}

static uint8_t fold(uint8_t c)
{
        return c >= 'A' && c <= 'Z' ? (uint8_t)(c - 'A' + 'a') : c;
}

/* A canonical text name (see dnsresp.h) in wire form, or -EINVAL. */
static int name_to_wire(const char *name, struct wire_name *w)
{
        size_t n = strnlen(name, DNS_TEXT_MAX + 1), label = 0;

        if (n == 0 || n > DNS_TEXT_MAX)
                return -EINVAL;
        w->len = 0;
        for (size_t i = 0; i <= n; i++) {
                char c = name[i];
                if (c == '.' || c == '\0') {
                        if (label == 0)
                                return -EINVAL; /* empty label, trailing dot */
                        w->b[w->len - label - 1] = (uint8_t)label;
                        label = 0;
                        continue;
                }
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
                        return -EINVAL;
                if (label == 0)
                        w->len++; /* room for the length byte, written at the label's end */
                if (++label > DNS_LABEL_MAX)
                        return -EINVAL;
                w->b[w->len++] = (uint8_t)c;
        }
        w->b[w->len++] = 0; /* n <= 253 text bytes: at most 255 wire bytes */
        return 0;
}

int dns_query_build(const char *name, uint16_t qtype, uint16_t id, uint8_t *out, size_t cap)
{
        struct wire_name w;

        if (qtype != DNS_TYPE_A && qtype != DNS_TYPE_AAAA)
                return -EINVAL;
        if (name_to_wire(name, &w) < 0)
                return -EINVAL;
        size_t n = DNS_HDR + w.len + 4;
        if (n > cap || n > DNSR_QUERY_MAX)
                return -EINVAL;
        memset(out, 0, DNS_HDR);
        put16(out, id);
        out[2] = DNS_FLAG_RD; /* QR 0, opcode QUERY */
        put16(out + 4, 1);    /* QDCOUNT; AN, NS, AR counts 0 */
        memcpy(out + DNS_HDR, w.b, w.len);
        put16(out + DNS_HDR + w.len, qtype);
        put16(out + DNS_HDR + w.len + 2, DNS_CLASS_IN);
        return (int)n;
}

/*
 * Read the (possibly compressed) name at msg[off] into w, lower-cased;
 * *next is the offset just past it where it starts. Each pointer must
 * point before the segment it ends (the bytes read since the last jump)
 * and past the header.
 */
static int name_read(const uint8_t *msg, size_t len, size_t off, struct wire_name *w, size_t *next)
{
        size_t p = off, seg = off;
        unsigned hops = 0;
        bool jumped = false;

        w->len = 0;
        for (;;) {
                if (p >= len)
                        return -EBADMSG;
                uint8_t l = msg[p];
                if ((l & 0xc0) == 0xc0) {
                        if (len - p < 2)
                                return -EBADMSG;
                        size_t t = (size_t)(l & 0x3f) << 8 | msg[p + 1];
                        if (t >= seg || t < DNS_HDR || ++hops > DNSR_PTR_HOPS_MAX)
                                return -EBADMSG;
                        if (!jumped)
                                *next = p + 2;
                        jumped = true;
                        p = seg = t;
                        continue;
                }
                if (l > DNS_LABEL_MAX) /* 0x40 and 0x80: label types never deployed */
                        return -EBADMSG;
                if (w->len + 1 + l > DNS_WIRE_MAX || l > len - p - 1)
                        return -EBADMSG;
                w->b[w->len++] = l;
                if (l == 0)
                        break;
                for (size_t i = 0; i < l; i++)
                        w->b[w->len++] = fold(msg[p + 1 + i]);
                p += 1 + (size_t)l;
        }
        if (!jumped)
                *next = p + 1;
        return 0;
}

static bool name_eq(const struct wire_name *a, const struct wire_name *b)
{
        return a->len == b->len && memcmp(a->b, b->b, a->len) == 0;
}

struct rr {
        struct wire_name owner;
        uint16_t type, class;
        uint32_t ttl;
        size_t rdata, rdlen; /* offset and length of RDATA */
};

/* Read the resource record at msg[*p] and move *p past it. */
static int rr_read(const uint8_t *msg, size_t len, size_t *p, struct rr *rr)
{
        size_t q;

        if (name_read(msg, len, *p, &rr->owner, &q) < 0)
                return -EBADMSG;
        if (len - q < 10)
                return -EBADMSG;
        rr->type = get16(msg + q);
        rr->class = get16(msg + q + 2);
        rr->ttl = get32(msg + q + 4);
        if (rr->ttl > DNS_TTL_MAX)
                rr->ttl = 0;
        rr->rdlen = get16(msg + q + 8);
        rr->rdata = q + 10;
        if (rr->rdlen > len - rr->rdata)
                return -EBADMSG;
        *p = rr->rdata + rr->rdlen;
        return 0;
}

/*
 * One pass over the answer section: find the CNAME owned by `owner`. Returns 1
 * with *target and *ttl set, 0 if there is none, -EBADMSG.
 */
static int cname_of(const uint8_t *msg, size_t len, size_t an, unsigned ancount,
                    const struct wire_name *owner, struct wire_name *target, uint32_t *ttl)
{
        struct rr rr;
        struct wire_name t;
        size_t p = an, end;
        int found = 0;

        for (unsigned i = 0; i < ancount; i++) {
                if (rr_read(msg, len, &p, &rr) < 0)
                        return -EBADMSG;
                if (rr.type != DNS_TYPE_CNAME || rr.class != DNS_CLASS_IN ||
                    !name_eq(&rr.owner, owner))
                        continue;
                if (name_read(msg, len, rr.rdata, &t, &end) < 0 || end != rr.rdata + rr.rdlen)
                        return -EBADMSG;
                if (found && !name_eq(&t, target))
                        return -EBADMSG; /* two CNAMEs for one name */
                if (!found || rr.ttl < *ttl)
                        *ttl = rr.ttl;
                *target = t;
                found = 1;
        }
        return found;
}

static int response_read(const uint8_t *msg, size_t len, uint16_t id, const char *name,
                         uint16_t qtype, struct dns_answer *a)
{
        struct wire_name chain[DNSR_CNAME_MAX + 1], qname;
        size_t p;

        if ((qtype != DNS_TYPE_A && qtype != DNS_TYPE_AAAA) || name_to_wire(name, &chain[0]) < 0)
                return -EINVAL;
        if (len < DNS_HDR || len > DNSR_MSG_MAX)
                return -EBADMSG;
        /* our id, a response, opcode QUERY, one question */
        if (get16(msg) != id || !(msg[2] & DNS_FLAG_QR) || (msg[2] & 0x78) != 0 ||
            get16(msg + 4) != 1)
                return -EBADMSG;
        a->rcode = msg[3] & 0x0f;
        unsigned ancount = get16(msg + 6);

        if (name_read(msg, len, DNS_HDR, &qname, &p) < 0 || !name_eq(&qname, &chain[0]))
                return -EBADMSG;
        if (len - p < 4 || get16(msg + p) != qtype || get16(msg + p + 2) != DNS_CLASS_IN)
                return -EBADMSG;
        size_t an = p + 4;
        if (a->rcode != 0)
                return 0; /* NXDOMAIN, SERVFAIL, REFUSED...: no address, whatever follows */

        /* the chain: chain[0] the name, chain[k] the last target */
        uint32_t ttl = DNS_TTL_MAX, t = DNS_TTL_MAX;
        size_t k = 0;
        for (;;) {
                struct wire_name next;
                int r = cname_of(msg, len, an, ancount, &chain[k], &next, &t);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (k == DNSR_CNAME_MAX)
                        return -EBADMSG; /* a ninth CNAME (or a loop) */
                if (t < ttl)
                        ttl = t;
                chain[++k] = next;
        }

        struct rr rr;
        p = an;
        for (unsigned i = 0; i < ancount; i++) {
                if (rr_read(msg, len, &p, &rr) < 0)
                        return -EBADMSG;
                if (rr.type != qtype || rr.class != DNS_CLASS_IN)
                        continue;
                bool on_chain = false;
                for (size_t j = 0; j <= k && !on_chain; j++)
                        on_chain = name_eq(&rr.owner, &chain[j]);
                if (!on_chain)
                        continue;
                size_t alen = qtype == DNS_TYPE_A ? 4 : 16;
                if (rr.rdlen != alen)
                        return -EBADMSG;
                if (a->n == DNSR_ADDRS_MAX)
                        continue; /* capped; the rest are still checked */
                a->family[a->n] = qtype == DNS_TYPE_A ? AF_INET : AF_INET6;
                memcpy(a->addr[a->n], msg + rr.rdata, alen);
                a->n++;
                if (rr.ttl < ttl)
                        ttl = rr.ttl;
        }
        /*
         * A truncated answer (TC) without an address cannot be told from
         * NODATA; it is refused rather than reported as "no address".
         */
        if (a->n == 0 && (msg[2] & DNS_FLAG_TC))
                return -EBADMSG;
        a->min_ttl = a->n > 0 ? ttl : 0;
        return 0;
}

int dns_response_parse(const uint8_t *msg, size_t len, uint16_t id, const char *name,
                       uint16_t qtype, struct dns_answer *a)
{
        memset(a, 0, sizeof *a);
        int r = response_read(msg, len, id, name, qtype, a);
        if (r < 0)
                memset(a, 0, sizeof *a); /* nothing half-read reaches the caller */
        return r;
}
