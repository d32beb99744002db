/*
 * test_nflog.c — the parser of the run's ruleset refusals
 * (supervisor/nflog-parse.c) and the per-run capture rules
 * (sandbox/capture.c, capture_rules_build / capture_wanted).
 *
 * nflog_parse: a logged TCP SYN (v4) and UDP datagram (v6, behind a
 * hop-by-hop header) give proto, address and port; a non-first fragment
 * gives no port; messages that are not logged packets are skipped (0);
 * every truncation of a valid message and lengths that lie are refused
 * (-EBADMSG), never read past.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sandbox/capture.h"
#include "supervisor/nflog.h"
#include "tap.h"

/* an NFULNL_MSG_PACKET carrying a prefix attribute, then `pkt` as payload */
static size_t build(uint8_t *buf, const uint8_t *pkt, size_t n)
{
        memset(buf, 0, 512);
        struct nlmsghdr *h = (struct nlmsghdr *)buf;
        h->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;
        size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
        struct nlattr *a = (struct nlattr *)(buf + off);
        a->nla_type = NFULA_PREFIX;
        a->nla_len = NLA_HDRLEN + 3;
        memcpy(buf + off + NLA_HDRLEN, "rf", 3);
        off += NLA_ALIGN(a->nla_len);
        a = (struct nlattr *)(buf + off);
        a->nla_type = NFULA_PAYLOAD;
        a->nla_len = (uint16_t)(NLA_HDRLEN + n);
        memcpy(buf + off + NLA_HDRLEN, pkt, n);
        off += NLA_ALIGN(a->nla_len);
        h->nlmsg_len = (uint32_t)off;
        return off;
}

static void test_parse(void)
{
        uint8_t buf[512];
        struct nflog_refusal r;
        char proto[8], host[46];

        /* IPv4 TCP SYN to 192.0.2.1:443 */
        uint8_t v4[40] = {0x45, 0,  0, 40, 0,   0, 0x40, 0, 64,   IPPROTO_TCP, 0,    0,
                          198,  18, 0, 1,  192, 0, 2,    1, 0x9c, 0x40,        0x01, 0xbb};
        size_t n = build(buf, v4, sizeof v4);
        is_int(nflog_parse(buf, n, &r), 1, "v4 TCP: a logged packet");
        nflog_format(&r, proto, host);
        ok(r.family == AF_INET && r.port == 443 && !strcmp(proto, "tcp") &&
                   !strcmp(host, "192.0.2.1"),
           "... tcp 192.0.2.1:443 (%s %s:%u)", proto, host, r.port);
        for (size_t k = 0; k < n; k++) {
                uint8_t *copy = malloc(k ? k : 1); /* exactly k bytes: ASan sees overreads */
                memcpy(copy, buf, k);
                struct nlmsghdr *h = (struct nlmsghdr *)buf;
                int got = nflog_parse(copy, k, &r);
                free(copy);
                if (got != -EBADMSG) {
                        ok(false, "truncated at %zu of %zu (nlmsg_len %u): %d", k, n, h->nlmsg_len,
                           got);
                        return;
                }
        }
        ok(true, "every truncation of the message is refused");

        /* a non-first fragment: no port */
        v4[6] = 0x00;
        v4[7] = 0x10;
        n = build(buf, v4, sizeof v4);
        ok(nflog_parse(buf, n, &r) == 1 && r.port == 0, "v4 non-first fragment: no port");
        /* an IHL beyond the payload */
        v4[0] = 0x4f;
        n = build(buf, v4, 24);
        is_int(nflog_parse(buf, n, &r), -EBADMSG, "v4 IHL beyond the payload: refused");

        /* IPv6 UDP behind a hop-by-hop header, to 2001:db8::5:53 */
        uint8_t v6[40 + 8 + 8] = {0x60, 0, 0, 0, 0, 16, IPPROTO_HOPOPTS, 64};
        memcpy(v6 + 8, (uint8_t[16]){0xfd, 0x52, 0x66, 0x67, 0x6e, 0x63, [15] = 1}, 16);
        memcpy(v6 + 24, (uint8_t[16]){0x20, 0x01, 0x0d, 0xb8, [15] = 5}, 16);
        v6[40] = IPPROTO_UDP; /* hop-by-hop: next header, length 0 (8 bytes) */
        v6[48 + 2] = 0;
        v6[48 + 3] = 53;
        n = build(buf, v6, sizeof v6);
        is_int(nflog_parse(buf, n, &r), 1, "v6 UDP behind a hop-by-hop header");
        nflog_format(&r, proto, host);
        ok(r.family == AF_INET6 && r.port == 53 && !strcmp(proto, "udp") &&
                   !strcmp(host, "2001:db8::5"),
           "... udp [2001:db8::5]:53 (%s %s:%u)", proto, host, r.port);
        /* an extension header longer than the packet */
        v6[41] = 200;
        n = build(buf, v6, sizeof v6);
        ok(nflog_parse(buf, n, &r) == 1 && r.port == 0, "v6 extension beyond the packet: no port");

        /* not a logged packet */
        struct nlmsghdr done = {.nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = NLMSG_DONE};
        is_int(nflog_parse((uint8_t *)&done, sizeof done, &r), 0, "NLMSG_DONE: skipped");
        /* a length that lies */
        n = build(buf, v4, sizeof v4);
        ((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)n + 4;
        is_int(nflog_parse(buf, n, &r), -EBADMSG, "nlmsg_len beyond the datagram: refused");
        /* a packet with no payload attribute */
        n = build(buf, v4, 0);
        ((struct nlattr *)(buf + NLMSG_HDRLEN + 4 + 8))->nla_type = NFULA_UID;
        is_int(nflog_parse(buf, n, &r), -EBADMSG, "a logged packet without payload: refused");
}

static void test_rules(void)
{
        struct rf_policy p = {0};
        char *allow[] = {"example.com:443", "10.1.2.0/24:5432", "192.0.2.7", "2001:db8::/32"};
        p.net_allow = allow;
        p.n_net_allow = 4;
        ok(capture_wanted(&p), "allow rules and capture unset: transparent");
        p.net_capture = POLICY_CAPTURE_PROXY_ONLY;
        ok(!capture_wanted(&p), "proxy-only: no capture");
        p.net_capture = POLICY_CAPTURE_TRANSPARENT;
        p.n_net_allow = 0;
        ok(!capture_wanted(&p), "no allow rule: no capture (no ruleset at all)");
        p.n_net_allow = 4;

        unsigned char *out = NULL;
        size_t len = 0;
        unsigned nr = 0;
        is_int(capture_rules_build(&p, &out, &len, &nr), -EINVAL,
               "rules not compiled (policy_compile): refused, nothing parsed here");
        is_int(policy_compile(&p, NULL), 0, "policy_compile");
        is_int(capture_rules_build(&p, &out, &len, &nr), 0, "capture_rules_build");
        is_int(nr, 3, "one rule per IP/CIDR rule, none for a name");
        /* each message carries its prefix, masked, right after its mask */
        static const uint8_t net1[4] = {10, 1, 2, 0}, mask1[4] = {255, 255, 255, 0};
        static const uint8_t net3[16] = {0x20, 0x01, 0x0d, 0xb8};
        static const uint8_t mask3[16] = {0xff, 0xff, 0xff, 0xff};
        ok(out && memmem(out, len, net1, 4) && memmem(out, len, mask1, 4),
           "10.1.2.0/24: address and mask in the batch");
        ok(out && memmem(out, len, (uint8_t[4]){192, 0, 2, 7}, 4), "192.0.2.7: in the batch");
        ok(out && memmem(out, len, net3, 16) && memmem(out, len, mask3, 16),
           "2001:db8::/32: address and mask in the batch");
        size_t off = 0, msgs = 0;
        while (out && off + NLMSG_HDRLEN <= len) {
                const struct nlmsghdr *h = (const struct nlmsghdr *)(out + off);
                if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > len - off)
                        break;
                msgs++;
                off += NLMSG_ALIGN(h->nlmsg_len);
        }
        ok(msgs == 3 && off == len, "... three well-formed netlink messages (%zu)", msgs);
        free(out);
        free(p.allow_rules);
}

int main(void)
{
        test_parse();
        test_rules();
        return done();
}
