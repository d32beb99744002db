/*
 * dns.c — reading DNS queries and building REFUSED answers. See dns.h.
 *
 * Every offset is checked against the message length before it is read;
 * compression pointers are refused in the question (a query has nothing
 * before its question to point at), so the parser never jumps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "egress/dns.h"

#define DNS_HDR       12
#define DNS_LABEL_MAX 63
#define DNS_WIRE_MAX  255
#define RCODE_FORMERR 1
#define RCODE_REFUSED 5

static uint16_t get16(const uint8_t *p)
{
        return (uint16_t)(p[0] << 8 | p[1]);
}

static int put_label_byte(char *name, size_t *o, uint8_t c)
{
        if (c >= 'A' && c <= 'Z')
                c = (uint8_t)(c - 'A' + 'a');
        bool plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                     c == '*';
        size_t need = plain ? 1 : 4;
        if (*o + need >= DNS_NAME_MAX)
                return -EBADMSG;
        if (plain)
                name[(*o)++] = (char)c;
        else
                *o += (size_t)snprintf(name + *o, 5, "\\%03u", c);
        return 0;
}

int dns_query_parse(const uint8_t *msg, size_t len, struct dns_query *q, struct rf_error *err)
{
        memset(q, 0, sizeof *q);
        if (len < DNS_HDR)
                return rf_error_set(err, -EBADMSG, "dns: message shorter than its header");
        if (len > DNS_MSG_MAX)
                return rf_error_set(err, -EBADMSG, "dns: message longer than %d bytes",
                                    DNS_MSG_MAX);
        q->id = get16(msg);
        if (msg[2] & 0x80)
                return rf_error_set(err, -EBADMSG, "dns: not a query (QR set)");
        if (get16(msg + 4) != 1)
                return rf_error_set(err, -EBADMSG, "dns: %u questions (want 1)", get16(msg + 4));

        size_t p = DNS_HDR, o = 0, wire = 0;
        for (;;) {
                if (p >= len)
                        return rf_error_set(err, -EBADMSG, "dns: name runs past the message");
                uint8_t l = msg[p++];
                wire += 1u + l;
                if (wire > DNS_WIRE_MAX)
                        return rf_error_set(err, -EBADMSG, "dns: name longer than 255 bytes");
                if (l == 0)
                        break;
                if (l > DNS_LABEL_MAX)
                        return rf_error_set(err, -EBADMSG,
                                            "dns: compressed or oversized label in the question");
                if (l > len - p)
                        return rf_error_set(err, -EBADMSG, "dns: label runs past the message");
                if (o > 0)
                        q->name[o++] = '.';
                for (uint8_t i = 0; i < l; i++) {
                        uint8_t c = msg[p + i];
                        /* a dot inside a label is escaped too */
                        if (put_label_byte(q->name, &o, c) < 0)
                                return rf_error_set(err, -EBADMSG, "dns: name too long");
                }
                p += l;
        }
        if (o == 0)
                q->name[o++] = '.';
        q->name[o] = '\0';
        if (len - p < 4)
                return rf_error_set(err, -EBADMSG, "dns: question without type and class");
        q->qtype = get16(msg + p);
        q->qclass = get16(msg + p + 2);
        q->question_end = p + 4;
        return 0;
}

int dns_refused(const uint8_t *msg, const struct dns_query *q, uint8_t *out, size_t cap)
{
        if (q->question_end < DNS_HDR || cap < q->question_end)
                return -ENOBUFS;
        memcpy(out, msg, q->question_end);
        out[2] = (uint8_t)((msg[2] & 0x79) | 0x80); /* QR, keep opcode and RD; AA, TC off */
        out[3] = RCODE_REFUSED;                     /* RA, Z, AD, CD off */
        memset(out + 6, 0, 6);                      /* AN, NS, AR counts */
        return (int)q->question_end;
}

int dns_answer(const uint8_t *msg, const struct dns_query *q, unsigned rcode, uint16_t rtype,
               const uint8_t *rdata, size_t rdlen, uint32_t ttl, uint8_t *out, size_t cap)
{
        size_t rr = rdata ? 2 + 2 + 2 + 4 + 2 + rdlen : 0;
        if (q->question_end < DNS_HDR + 5 || rcode > 15 || rdlen > 0xffff)
                return -EINVAL;
        if (cap < q->question_end + rr || q->question_end + rr > DNS_MSG_MAX)
                return -ENOBUFS;
        memcpy(out, msg, q->question_end);
        out[2] = (uint8_t)((msg[2] & 0x79) | 0x80 | 0x04); /* QR, AA; opcode and RD kept */
        out[3] = (uint8_t)(0x80 | rcode);                  /* RA */
        memset(out + 6, 0, 6);
        if (!rdata)
                return (int)q->question_end;
        out[7] = 1; /* ANCOUNT */
        uint8_t *p = out + q->question_end;
        *p++ = 0xc0; /* a pointer to the question's name, at offset 12 */
        *p++ = DNS_HDR;
        *p++ = (uint8_t)(rtype >> 8);
        *p++ = (uint8_t)rtype;
        *p++ = 0;
        *p++ = 1; /* IN */
        *p++ = (uint8_t)(ttl >> 24);
        *p++ = (uint8_t)(ttl >> 16);
        *p++ = (uint8_t)(ttl >> 8);
        *p++ = (uint8_t)ttl;
        *p++ = (uint8_t)(rdlen >> 8);
        *p++ = (uint8_t)rdlen;
        memcpy(p, rdata, rdlen);
        return (int)(q->question_end + rr);
}

int dns_formerr(const uint8_t *msg, size_t len, uint8_t out[12])
{
        if (len < DNS_HDR || (msg[2] & 0x80))
                return -EBADMSG;
        memset(out, 0, DNS_HDR);
        out[0] = msg[0];
        out[1] = msg[1];
        out[2] = (uint8_t)((msg[2] & 0x79) | 0x80);
        out[3] = RCODE_FORMERR;
        return DNS_HDR;
}
