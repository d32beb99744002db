/*
 * fuzz_nflog.c — libFuzzer target for the NFLOG message parser
 * (src/supervisor/nflog-parse.c), which reads what the run's command sent
 * (the refused packet) as the kernel logged it.
 *
 * The input is fed as one message in a heap buffer of exactly its length
 * (a read past it is an ASan report), then, when long enough, wrapped in
 * a valid NFULNL_MSG_PACKET header with the input as the payload attribute
 * so the IP/transport parsing is reached on every run. Beyond "no crash,
 * no out-of-bounds read, no UB", a result must be consistent: an accepted
 * packet has family AF_INET or AF_INET6 and nflog_format gives a NUL-
 * terminated protocol and address; a port is only given for TCP, UDP,
 * UDP-Lite, SCTP and DCCP.
 */
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "supervisor/nflog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *buf, size_t len)
{
        struct nflog_refusal r;
        int k = nflog_parse(buf, len, &r);
        if (k != 1)
                return;
        if (r.family != AF_INET && r.family != AF_INET6)
                abort();
        bool ports = r.proto == IPPROTO_TCP || r.proto == IPPROTO_UDP ||
                     r.proto == IPPROTO_UDPLITE || r.proto == IPPROTO_SCTP ||
                     r.proto == IPPROTO_DCCP;
        if (!ports && r.port != 0)
                abort();
        char proto[8], host[46];
        nflog_format(&r, proto, host);
        if (!memchr(proto, 0, sizeof proto) || !memchr(host, 0, sizeof host))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t *copy = malloc(size ? size : 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        check(copy, size);
        free(copy);

        if (size > 0xffff - 64)
                return 0;
        size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
        size_t len = hdr + NLA_HDRLEN + size;
        uint8_t *msg = calloc(1, len);
        if (!msg)
                return 0;
        struct nlmsghdr h = {.nlmsg_len = (uint32_t)len,
                             .nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET};
        memcpy(msg, &h, sizeof h);
        struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + size), .nla_type = NFULA_PAYLOAD};
        memcpy(msg + hdr, &a, sizeof a);
        memcpy(msg + hdr + NLA_HDRLEN, data, size);
        check(msg, len);
        free(msg);
        return 0;
}
