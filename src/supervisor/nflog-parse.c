/*
 * nflog-parse.c — the pure parser of one NFLOG message (see nflog.h).
 *
 * Peer-controlled: the logged packet is what the run's command sent, so
 * every length is checked against what is left before it is used; nothing
 * is allocated.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "supervisor/nflog.h"

#define V6_EXT_MAX 8 /* extension headers walked before giving up on the port */

/* the port of a transport that carries one at bytes 2..3 */
static bool has_ports(uint8_t proto)
{
        return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE ||
               proto == IPPROTO_SCTP || proto == IPPROTO_DCCP;
}

static uint16_t port_at(const uint8_t *p, size_t len, size_t off, uint8_t proto)
{
        if (!has_ports(proto) || off > len || len - off < 4)
                return 0;
        return (uint16_t)(p[off + 2] << 8 | p[off + 3]);
}

static int parse_ip(const uint8_t *p, size_t len, struct nflog_refusal *out)
{
        if (len < 1)
                return -EBADMSG;
        memset(out, 0, sizeof *out);
        if ((p[0] >> 4) == 4) {
                size_t ihl = (size_t)(p[0] & 0xf) * 4;
                if (len < 20 || ihl < 20 || ihl > len)
                        return -EBADMSG;
                out->family = AF_INET;
                out->proto = p[9];
                memcpy(out->addr, p + 16, 4);
                bool first_fragment = ((p[6] & 0x1f) | p[7]) == 0;
                out->port = first_fragment ? port_at(p, len, ihl, out->proto) : 0;
                return 1;
        }
        if ((p[0] >> 4) == 6) {
                if (len < 40)
                        return -EBADMSG;
                out->family = AF_INET6;
                memcpy(out->addr, p + 24, 16);
                uint8_t next = p[6];
                size_t off = 40;
                for (int i = 0; i < V6_EXT_MAX; i++) {
                        if (next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING ||
                            next == IPPROTO_DSTOPTS) {
                                if (len - off < 8)
                                        break;
                                size_t ext = ((size_t)p[off + 1] + 1) * 8;
                                next = p[off];
                                if (ext > len - off) {
                                        off = len;
                                        break;
                                }
                                off += ext;
                        } else if (next == IPPROTO_FRAGMENT) {
                                if (len - off < 8)
                                        break;
                                bool first = ((p[off + 2] << 8 | p[off + 3]) & 0xfff8) == 0;
                                next = p[off];
                                off += 8;
                                if (!first)
                                        off = len; /* no transport header here */
                        } else
                                break;
                }
                out->proto = next;
                out->port = port_at(p, len, off, next);
                return 1;
        }
        return -EBADMSG;
}

int nflog_parse(const uint8_t *msg, size_t len, struct nflog_refusal *out)
{
        struct nlmsghdr h;
        if (len < sizeof h)
                return -EBADMSG;
        memcpy(&h, msg, sizeof h);
        if (h.nlmsg_len < sizeof h || h.nlmsg_len > len)
                return -EBADMSG;
        len = h.nlmsg_len;
        if (h.nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET))
                return 0;
        size_t off = NLMSG_ALIGN(sizeof h);
        if (len < off + sizeof(struct nfgenmsg))
                return -EBADMSG;
        off += NLMSG_ALIGN(sizeof(struct nfgenmsg));
        while (off < len) {
                struct nlattr a;
                if (len - off < sizeof a)
                        return -EBADMSG;
                memcpy(&a, msg + off, sizeof a);
                if (a.nla_len < sizeof a || a.nla_len > len - off)
                        return -EBADMSG;
                if ((a.nla_type & NLA_TYPE_MASK) == NFULA_PAYLOAD)
                        return parse_ip(msg + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN, out);
                size_t step = NLA_ALIGN(a.nla_len);
                if (step > len - off)
                        break;
                off += step;
        }
        return -EBADMSG; /* a logged packet without its payload */
}

void nflog_format(const struct nflog_refusal *r, char proto[8], char host[46])
{
        switch (r->proto) {
        case IPPROTO_TCP:
                snprintf(proto, 8, "tcp");
                break;
        case IPPROTO_UDP:
                snprintf(proto, 8, "udp");
                break;
        case IPPROTO_ICMP:
                snprintf(proto, 8, "icmp");
                break;
        case IPPROTO_ICMPV6:
                snprintf(proto, 8, "icmpv6");
                break;
        default:
                snprintf(proto, 8, "%u", r->proto);
                break;
        }
        if (!inet_ntop(r->family == AF_INET6 ? AF_INET6 : AF_INET, r->addr, host, 46))
                snprintf(host, 46, "?");
}
