/*
 * capture-gen.c — build-time generator of the run's nftables ruleset
 * (transparent capture, issue 14).
 *
 * Runs libnftnl/libmnl once, at build time, and prints the netlink
 * messages of the ruleset as C byte arrays, capture-batch.h, which
 * capture.c copies into each run's plan (capture_batch_build). Neither
 * library is linked into ringfence: at run time init only sends bytes on
 * a plain NETLINK_NETFILTER socket.
 *
 * The ruleset (table inet ringfence):
 *
 *   chain nat    { type nat hook output priority -100; policy accept;
 *                  ip daddr 127.0.0.0/8 return
 *                  ip6 daddr ::1 return
 *                  meta l4proto tcp ip daddr 198.18.0.0/15 redirect to :3129
 *                  meta l4proto tcp ip6 daddr fd52:6667:6e63::/64 redirect to :3129
 *                  (per run: meta l4proto tcp ip[6] daddr CIDR redirect to :3129) }
 *   set dests4   { type ipv4_addr . inet_proto . inet_service; size 256;
 *                  flags dynamic,timeout; timeout 60s; }
 *   set dests6   { type ipv6_addr . inet_proto . inet_service; size 256;
 *                  flags dynamic,timeout; timeout 60s; }
 *   chain filter { type filter hook output priority 0; policy accept;
 *                  ct state new fib saddr type != local drop
 *                  ct state established,related ct direction reply accept
 *                  fib daddr type local accept
 *                  jump refused
 *                  meta l4proto tcp reject with tcp reset
 *                  reject with icmpx port-unreachable }
 *   chain refused {
 *                  meta nfproto ipv4 meta l4proto != icmp add @dests4
 *                      { ip daddr . meta l4proto . th dport limit rate 1/minute burst 1 packets }
 *                      log group RF_CAPTURE_NFLOG_GROUP return
 *                  meta nfproto ipv4 meta l4proto icmp add @dests4
 *                      { ip daddr . meta l4proto . @th,0,16 limit rate 1/minute burst 1 packets }
 *                      log group RF_CAPTURE_NFLOG_GROUP return
 *                  (the same two for ipv6: @dests6, ip6 daddr, ipv6-icmp)
 *                  limit rate 20/second burst 20 packets log group RF_CAPTURE_NFLOG_GROUP }
 *
 * `ct state new fib saddr type != local drop` comes first: a flow whose
 * source is not the namespace's own (IPV6_FREEBIND needs no capability)
 * could otherwise be made over lo, its *reply* direction leading out
 * (review of 2026-12-03). (Not every such packet: the resets and ICMP
 * errors the kernel makes for the reject rules below come from the
 * refused destination, and are related replies.) Then `ct state established,related ct direction
 * reply accept` answers connections opened *to* the namespace, in their
 * reply direction only: every connection whose original direction came
 * from a non-local source came from outside. In a run's own namespace (lo
 * only) nothing non-local is ever established; in an engine's namespace
 * that ringfence-oci captures (a Kubernetes pod's, Podman's bridge) it
 * keeps the engine's ingress working (probes, services, published
 * ports), whose policy is the engine's.
 * `fib daddr type local accept` lets every local destination through: the
 * run's loopback servers, its stub at 127.0.0.1:53, and the redirected
 * connections (their destination is 127.0.0.1/::1 after the nat chain;
 * the listener's SYN-ACK goes back to 198.18.0.1). Everything else is
 * refused at once: TCP with a reset (ECONNREFUSED), the rest with ICMP
 * port unreachable (EPERM at send, ECONNREFUSED on a connected socket).
 *
 * What is logged (chain `refused`, before the rejects): a run must not
 * be able to hide which destinations it tried by flooding others (audit
 * of 2026-12-04: 200 UDP datagrams to distinct addresses used up one
 * global 20/s budget, and a TCP connect that followed was never
 * recorded). So each destination (address, protocol, port) has a budget
 * of its own, an element of a dynamic set with a limit of its own: its
 * first refused packet is always logged. ICMP is keyed on its type and
 * code (where a port would be, its checksum varies with every packet: one
 * destination's pings would fill the set). A packet over its
 * destination's budget, a new destination while the set is full, and a
 * packet without a transport header to key on (a later fragment) fall to
 * the last rule: one shared budget of RF_CAPTURE_LOG_RATE a second, as
 * before. The sets are bounded (RF_CAPTURE_LOG_DESTS elements a family)
 * and empty themselves: an element lives RF_CAPTURE_LOG_DEST_TTL seconds
 * from its destination's first packet (`add`, never refreshed), and its
 * limit (RF_CAPTURE_LOG_DEST_RATE a minute, burst 1) refills only as it
 * expires. So the supervisor is sent at most 2 * RF_CAPTURE_LOG_DESTS
 * first packets in any RF_CAPTURE_LOG_DEST_TTL seconds (every element
 * made in such a window is alive at its end) plus RF_CAPTURE_LOG_RATE a
 * second; and hiding a destination takes RF_CAPTURE_LOG_DESTS other
 * destinations of its family refused within RF_CAPTURE_LOG_DEST_TTL
 * seconds, each of them logged, and the shared budget kept spent.
 *
 * The per-run rules (allowed IP/CIDR rules) are printed as one template
 * rule per family whose address and mask are unique markers; the offsets
 * of the markers are printed too, and capture.c patches them.
 */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/synth.h"
#include "sandbox/capture.h"
#include "sandbox/plan.h"

#define TABLE "ringfence"

static char buf[65536];
static size_t len;
static unsigned seq = 1;
static unsigned n_msgs;

static _Noreturn void die(const char *what)
{
        fprintf(stderr, "capture-gen: %s\n", what);
        exit(1);
}

static struct nlmsghdr *hdr(uint16_t type, uint16_t flags)
{
        if (len + 4096 > sizeof buf)
                die("buffer full");
        n_msgs++;
        return nftnl_nlmsg_build_hdr(buf + len, type, NFPROTO_INET, flags | NLM_F_ACK, seq++);
}

static void done(struct nlmsghdr *nlh)
{
        len += MNL_ALIGN(nlh->nlmsg_len);
}

static void add(struct nftnl_rule *r, struct nftnl_expr *e)
{
        if (!e)
                die("out of memory");
        nftnl_rule_add_expr(r, e);
}

static struct nftnl_expr *meta(uint32_t key)
{
        struct nftnl_expr *e = nftnl_expr_alloc("meta");
        nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
        nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
        return e;
}

static struct nftnl_expr *cmp(const void *data, uint32_t n)
{
        struct nftnl_expr *e = nftnl_expr_alloc("cmp");
        nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
        nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, n);
        return e;
}

static struct nftnl_expr *cmp_neq(const void *data, uint32_t n)
{
        struct nftnl_expr *e = cmp(data, n);
        nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_NEQ);
        return e;
}

static struct nftnl_expr *cmp_u8(uint8_t v)
{
        return cmp(&v, 1);
}

static struct nftnl_expr *payload(uint32_t off, uint32_t n)
{
        struct nftnl_expr *e = nftnl_expr_alloc("payload");
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, n);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
        return e;
}

/* n bytes at offset off of the transport header into register dreg */
static struct nftnl_expr *payload_th(uint32_t off, uint32_t n, uint32_t dreg)
{
        struct nftnl_expr *e = nftnl_expr_alloc("payload");
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_TRANSPORT_HEADER);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, n);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
        return e;
}

static struct nftnl_expr *bitwise(const void *mask, uint32_t n)
{
        static const uint8_t zero[16];
        struct nftnl_expr *e = nftnl_expr_alloc("bitwise");
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, n);
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, n);
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, n);
        return e;
}

static struct nftnl_expr *verdict(int v)
{
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)v);
        return e;
}

static struct nftnl_expr *jump(const char *chain)
{
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)NFT_JUMP);
        nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
        return e;
}

/* a packet limit: rate per unit seconds, burst packets */
static struct nftnl_expr *limit(uint64_t rate, uint64_t unit, uint32_t burst)
{
        struct nftnl_expr *e = nftnl_expr_alloc("limit");
        nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, rate);
        nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, unit);
        nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, burst);
        nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
        nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_FLAGS, 0);
        return e;
}

static struct nftnl_expr *nflog(void)
{
        struct nftnl_expr *e = nftnl_expr_alloc("log");
        nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, RF_CAPTURE_NFLOG_GROUP);
        return e;
}

/* a conntrack key (NFT_CT_*) into register 1 */
static struct nftnl_expr *ct(uint32_t key)
{
        struct nftnl_expr *e = nftnl_expr_alloc("ct");
        nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
        nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
        return e;
}

/* the rule goes on when the packet's ct state is one of `bits` */
static void ct_state_any(struct nftnl_rule *r, uint32_t bits)
{
        static const uint32_t none;
        add(r, ct(NFT_CT_STATE));
        add(r, bitwise(&bits, 4));
        add(r, cmp_neq(&none, 4));
}

/* the address type (RTN_*) of the packet's source or destination
 * (NFTA_FIB_F_SADDR, NFTA_FIB_F_DADDR) into register 1 */
static struct nftnl_expr *fib_type(uint32_t which)
{
        struct nftnl_expr *e = nftnl_expr_alloc("fib");
        nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, which);
        nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
        nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
        return e;
}

/* redirect to :RF_EGRESS_CAPTURE_PORT */
static void redirect(struct nftnl_rule *r)
{
        uint16_t port = htons(RF_EGRESS_CAPTURE_PORT);
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
        nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &port, sizeof port);
        add(r, e);
        e = nftnl_expr_alloc("redir");
        nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MAX, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
        add(r, e);
}

static struct nftnl_rule *rule(const char *chain)
{
        struct nftnl_rule *r = nftnl_rule_alloc();
        if (!r)
                die("out of memory");
        nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
        nftnl_rule_set_str(r, NFTNL_RULE_TABLE, TABLE);
        nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
        return r;
}

static void emit_rule(struct nftnl_rule *r)
{
        struct nlmsghdr *nlh = hdr(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
        nftnl_rule_nlmsg_build_payload(nlh, r);
        done(nlh);
        nftnl_rule_free(r);
}

/* tcp to (family, net/mask of n bytes) redirected: the per-run template
 * and the pool rules */
static struct nftnl_rule *tcp_to(uint8_t family, const void *net, const void *mask, uint32_t n)
{
        struct nftnl_rule *r = rule("nat");
        add(r, meta(NFT_META_L4PROTO));
        add(r, cmp_u8(IPPROTO_TCP));
        add(r, meta(NFT_META_NFPROTO));
        add(r, cmp_u8(family));
        add(r, payload(family == NFPROTO_IPV4 ? 16 : 24, n));
        add(r, bitwise(mask, n));
        add(r, cmp(net, n));
        redirect(r);
        return r;
}

/* nft's type codes (its datatype.h), for `nft list` only: the kernel
 * takes the key's length, not its type */
#define NFT_TYPE_IPADDR        7
#define NFT_TYPE_IP6ADDR       8
#define NFT_TYPE_INET_PROTOCOL 12
#define NFT_TYPE_INET_SERVICE  13
#define NFT_TYPE_BITS          6

/* the set of one family's refused destinations: address . protocol . port */
static void dests_set(const char *name, uint32_t addr_type, uint32_t addr_len, uint32_t id)
{
        struct nftnl_set *st = nftnl_set_alloc();
        if (!st)
                die("out of memory");
        nftnl_set_set_u32(st, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(st, NFTNL_SET_TABLE, TABLE);
        nftnl_set_set_str(st, NFTNL_SET_NAME, name);
        nftnl_set_set_u32(st, NFTNL_SET_ID, id); /* the kernel wants one, unique in the batch */
        nftnl_set_set_u32(st, NFTNL_SET_FLAGS, NFT_SET_EVAL | NFT_SET_TIMEOUT);
        nftnl_set_set_u32(st, NFTNL_SET_KEY_TYPE,
                          (addr_type << NFT_TYPE_BITS | NFT_TYPE_INET_PROTOCOL) << NFT_TYPE_BITS |
                                  NFT_TYPE_INET_SERVICE);
        nftnl_set_set_u32(st, NFTNL_SET_KEY_LEN, addr_len + 4 + 4); /* each part a register */
        nftnl_set_set_u32(st, NFTNL_SET_DESC_SIZE, RF_CAPTURE_LOG_DESTS);
        nftnl_set_set_u64(st, NFTNL_SET_TIMEOUT, RF_CAPTURE_LOG_DEST_TTL * 1000ull);
        struct nlmsghdr *nlh = hdr(NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_EXCL);
        nftnl_set_nlmsg_build_payload(nlh, st);
        done(nlh);
        nftnl_set_free(st);
}

/*
 * A rule of chain refused: the packets of `family` whose protocol is
 * icmp_proto (icmp true) or any other (false) are keyed address .
 * protocol . port (ICMP: type and code) into the family's set, each key
 * with a limit of its own; under it the packet is logged and goes back to
 * the rejects (return); over it, the next rule.
 */
static void log_first(uint8_t family, uint8_t icmp_proto, bool icmp)
{
        bool v4 = family == NFPROTO_IPV4;
        uint32_t alen = v4 ? 4 : 16;
        struct nftnl_rule *r = rule("refused");
        add(r, meta(NFT_META_NFPROTO));
        add(r, cmp_u8(family));
        add(r, meta(NFT_META_L4PROTO));
        add(r, icmp ? cmp_u8(icmp_proto) : cmp_neq(&icmp_proto, 1));
        /* the key, one 32-bit register a part: address, protocol, port */
        struct nftnl_expr *e = payload(v4 ? 16 : 24, alen);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG32_00);
        add(r, e);
        uint32_t preg = NFT_REG32_00 + alen / 4;
        e = meta(NFT_META_L4PROTO);
        nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, preg);
        add(r, e);
        add(r, payload_th(icmp ? 0 : 2, 2, preg + 1));
        e = nftnl_expr_alloc("dynset");
        nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG32_00);
        nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
        nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, v4 ? "dests4" : "dests6");
        struct nftnl_expr *l = limit(RF_CAPTURE_LOG_DEST_RATE, 60, 1);
        if (!l)
                die("out of memory");
        nftnl_expr_set(e, NFTNL_EXPR_DYNSET_EXPR, l, 0); /* owned by e */
        add(r, e);
        add(r, nflog());
        add(r, verdict(NFT_RETURN));
        emit_rule(r);
}

static void print_array(const char *name, const char *p, size_t n)
{
        printf("static const unsigned char %s[%zu] = {", name, n);
        for (size_t i = 0; i < n; i++)
                printf("%s0x%02x,", i % 12 ? " " : "\n\t", (unsigned char)p[i]);
        printf("\n};\n");
}

static size_t find_once(const char *p, size_t n, const void *marker, size_t m)
{
        const char *hit = memmem(p, n, marker, m);
        if (!hit || memmem(hit + 1, n - (size_t)(hit + 1 - p), marker, m))
                die("marker not found exactly once");
        return (size_t)(hit - p);
}

int main(void)
{
        /* the fixed part: table, chains, rules */
        struct nftnl_table *t = nftnl_table_alloc();
        nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
        nftnl_table_set_str(t, NFTNL_TABLE_NAME, TABLE);
        struct nlmsghdr *nlh = hdr(NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL);
        nftnl_table_nlmsg_build_payload(nlh, t);
        done(nlh);
        nftnl_table_free(t);

        static const struct {
                const char *name;
                int prio;
        } chains[] = {{"nat", -100}, {"filter", 0}};
        /* the sets of refused destinations, which chain refused fills */
        dests_set("dests4", NFT_TYPE_IPADDR, 4, 1);
        dests_set("dests6", NFT_TYPE_IP6ADDR, 16, 2);
        for (size_t i = 0; i < 2; i++) {
                struct nftnl_chain *c = nftnl_chain_alloc();
                nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
                nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, TABLE);
                nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, chains[i].name);
                nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, chains[i].name);
                nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
                nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, chains[i].prio);
                nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
                nlh = hdr(NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL);
                nftnl_chain_nlmsg_build_payload(nlh, c);
                done(nlh);
                nftnl_chain_free(c);
        }
        struct nftnl_chain *c = nftnl_chain_alloc(); /* a regular chain: no hook */
        nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
        nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, TABLE);
        nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "refused");
        nlh = hdr(NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL);
        nftnl_chain_nlmsg_build_payload(nlh, c);
        done(nlh);
        nftnl_chain_free(c);

        /* nat: loopback stays loopback */
        struct nftnl_rule *r = rule("nat");
        add(r, meta(NFT_META_NFPROTO));
        add(r, cmp_u8(NFPROTO_IPV4));
        add(r, payload(16, 1));
        add(r, cmp_u8(127));
        add(r, verdict(NFT_RETURN));
        emit_rule(r);
        static const uint8_t lo6[16] = {[15] = 1};
        r = rule("nat");
        add(r, meta(NFT_META_NFPROTO));
        add(r, cmp_u8(NFPROTO_IPV6));
        add(r, payload(24, 16));
        add(r, cmp(lo6, 16));
        add(r, verdict(NFT_RETURN));
        emit_rule(r);
        /* nat: tcp to the pools */
        uint32_t net4 = htonl(SYNTH_V4_NET), mask4 = htonl(~0u << (32 - SYNTH_V4_PREFIX));
        emit_rule(tcp_to(NFPROTO_IPV4, &net4, &mask4, 4));
        static const uint8_t net6[16] = SYNTH_V6_NET;
        static const uint8_t mask6[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        emit_rule(tcp_to(NFPROTO_IPV6, net6, mask6, 8));

        /* filter: a new flow from a source that is not the namespace's own:
         * dropped */
        static const uint32_t local = RTN_LOCAL;
        r = rule("filter");
        ct_state_any(r, NF_CT_STATE_BIT(IP_CT_NEW));
        add(r, fib_type(NFTA_FIB_F_SADDR));
        add(r, cmp_neq(&local, 4));
        add(r, verdict(NF_DROP));
        emit_rule(r);
        /* filter: replies on connections opened to the namespace */
        r = rule("filter");
        ct_state_any(r, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED));
        add(r, ct(NFT_CT_DIRECTION));
        add(r, cmp_u8(IP_CT_DIR_REPLY));
        add(r, verdict(NF_ACCEPT));
        emit_rule(r);
        /* filter: local destinations */
        r = rule("filter");
        add(r, fib_type(NFTA_FIB_F_DADDR));
        add(r, cmp(&local, 4));
        add(r, verdict(NF_ACCEPT));
        emit_rule(r);
        /* filter: what is refused is logged first (chain refused) */
        r = rule("filter");
        add(r, jump("refused"));
        emit_rule(r);
        r = rule("filter");
        add(r, meta(NFT_META_L4PROTO));
        add(r, cmp_u8(IPPROTO_TCP));
        struct nftnl_expr *e = nftnl_expr_alloc("reject");
        nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
        nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, 0);
        add(r, e);
        emit_rule(r);
        r = rule("filter");
        e = nftnl_expr_alloc("reject");
        nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
        nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, NFT_REJECT_ICMPX_PORT_UNREACH);
        add(r, e);
        emit_rule(r);

        /* refused: each destination's first packet, then the rest under one limit */
        log_first(NFPROTO_IPV4, IPPROTO_ICMP, false);
        log_first(NFPROTO_IPV4, IPPROTO_ICMP, true);
        log_first(NFPROTO_IPV6, IPPROTO_ICMPV6, false);
        log_first(NFPROTO_IPV6, IPPROTO_ICMPV6, true);
        r = rule("refused");
        add(r, limit(RF_CAPTURE_LOG_RATE, 1, RF_CAPTURE_LOG_RATE));
        add(r, nflog());
        emit_rule(r);
        size_t base_len = len;
        unsigned base_msgs = n_msgs;

        printf("/* Generated by capture-gen (libnftnl) from capture-gen.c. Do not edit. */\n"
               "#pragma once\n");
        print_array("rf_capture_base", buf, base_len);
        printf("#define RF_CAPTURE_BASE_MSGS %u\n", base_msgs);

        /* the per-run templates */
        static const uint8_t m4net[4] = {0xa1, 0xa2, 0xa3, 0xa4},
                             m4mask[4] = {0xb1, 0xb2, 0xb3, 0xb4};
        static const uint8_t m6net[16] = {0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8,
                                          0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0};
        static const uint8_t m6mask[16] = {0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8,
                                           0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef, 0xf0};
        len = 0;
        emit_rule(tcp_to(NFPROTO_IPV4, m4net, m4mask, 4));
        print_array("rf_capture_rule4", buf, len);
        printf("#define RF_CAPTURE_RULE4_NET  %zu\n", find_once(buf, len, m4net, 4));
        printf("#define RF_CAPTURE_RULE4_MASK %zu\n", find_once(buf, len, m4mask, 4));
        printf("#define RF_CAPTURE_RULE4_CHAIN %zu\n", find_once(buf, len, "nat", 4));
        len = 0;
        emit_rule(tcp_to(NFPROTO_IPV6, m6net, m6mask, 16));
        print_array("rf_capture_rule6", buf, len);
        printf("#define RF_CAPTURE_RULE6_NET  %zu\n", find_once(buf, len, m6net, 16));
        printf("#define RF_CAPTURE_RULE6_MASK %zu\n", find_once(buf, len, m6mask, 16));

        /* batch begin and end (nftables subsystem) */
        len = 0;
        nlh = nftnl_batch_begin(buf, 0);
        print_array("rf_capture_begin", (const char *)nlh, nlh->nlmsg_len);
        nlh = nftnl_batch_end(buf, 0);
        print_array("rf_capture_end", (const char *)nlh, nlh->nlmsg_len);
        return 0;
}
