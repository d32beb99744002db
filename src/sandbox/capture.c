/*
 * capture.c — transparent capture: the run-time side (issue 14).
 *
 * See capture.h for what a run with capture gets and capture-gen.c for
 * the ruleset. Two halves:
 *
 *   - capture_rules_build (supervisor, before clone, may allocate): the
 *     per-run redirect rules, copies of the generated template with the
 *     allowed prefix patched in;
 *   - capture_install / capture_listener / capture_nflog_open (the run's
 *     init, between clone and exec: no malloc, no stdio): plain netlink
 *     sockets, fixed messages built on the stack, the generated batch sent
 *     as is. Every request carries NLM_F_ACK but the per-run rules (which
 *     report only an error: 256 ACKs would overflow the socket's receive
 *     buffer, seen as ENOBUFS), every reply is read and checked before the
 *     next step, and the table is read back after the commit (a batch is
 *     one transaction: the table exists only if all of it was committed).
 *     A run whose ruleset is not committed never starts its command.
 */
#include "sandbox/capture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_addr.h>
#include <net/if.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "policy/rules.h"
#include "egress/synth.h"
#include "sandbox/capture-batch.h"
#include "sandbox/msg.h"
#include "sandbox/plan.h"
#include "sandbox/steps.h"
#include "shared/macro.h"

_Static_assert(sizeof rf_capture_rule4 <= RF_CAPTURE_RULE_MAX, "rule template too large");
_Static_assert(sizeof rf_capture_rule6 <= RF_CAPTURE_RULE_MAX, "rule template too large");

#define NL_REPLY_MAX 8192 /* bytes read per recv of netlink replies */

bool capture_wanted(const struct rf_policy *pol)
{
        return pol->net_capture != POLICY_CAPTURE_PROXY_ONLY && pol->n_net_allow > 0;
}

static void prefix_mask(uint8_t *mask, size_t n, unsigned prefix)
{
        for (size_t i = 0; i < n; i++) {
                unsigned bits = prefix > 8 * i ? prefix - 8 * (unsigned)i : 0;
                mask[i] = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);
        }
}

int capture_rules_build(const struct rf_policy *pol, unsigned char **out, size_t *len,
                        unsigned *n_rules)
{
        *out = NULL;
        *len = 0;
        *n_rules = 0;
        size_t n = pol->n_net_allow;
        if (n > RF_CAPTURE_RULES_MAX)
                return -E2BIG;
        unsigned char *buf = malloc(n * RF_CAPTURE_RULE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        size_t off = 0;
        unsigned k = 0;
        for (size_t i = 0; i < pol->n_net_allow; i++) {
                if (!pol->allow_rules) { /* not compiled (policy_compile) */
                        free(buf);
                        return -EINVAL;
                }
                const struct net_rule r = pol->allow_rules[i];
                if (r.kind != RULE_IP && r.kind != RULE_CIDR)
                        continue;
                /* A rule with ports redirects every port of the prefix:
                 * the egress process decides the port, like the proxy. */
                uint8_t mask[16];
                bool v4 = r.family == AF_INET;
                const unsigned char *t = v4 ? rf_capture_rule4 : rf_capture_rule6;
                size_t tn = v4 ? sizeof rf_capture_rule4 : sizeof rf_capture_rule6;
                size_t alen = v4 ? 4 : 16;
                memcpy(buf + off, t, tn);
                prefix_mask(mask, alen, r.prefix);
                uint8_t net[16];
                for (size_t j = 0; j < alen; j++)
                        net[j] = r.addr[j] & mask[j];
                memcpy(buf + off + (v4 ? RF_CAPTURE_RULE4_NET : RF_CAPTURE_RULE6_NET), net, alen);
                memcpy(buf + off + (v4 ? RF_CAPTURE_RULE4_MASK : RF_CAPTURE_RULE6_MASK), mask,
                       alen);
                struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);
                h->nlmsg_seq = RF_CAPTURE_BASE_MSGS + 1 + k;
                h->nlmsg_flags &= (uint16_t)~NLM_F_ACK; /* errors only: see the header */
                off += NLMSG_ALIGN(tn);
                k++;
        }
        if (k == 0) {
                free(buf);
                return 0;
        }
        *out = buf;
        *len = off;
        *n_rules = k;
        return 0;
}

/* ---- init's side: no malloc from here on ----------------------------------- */

static int nl_socket(int proto, int flags)
{
        int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | flags, proto);
        if (s < 0)
                return -errno;
        /* an error carries only the failing message's header back */
        int one = 1;
        (void)setsockopt(s, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
        struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
        if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
                int e = -errno;
                close(s);
                return e;
        }
        return s;
}

/*
 * Read every reply already queued on `s` (the kernel handles a netlink
 * request inside sendmsg, so all replies to what was sent are there) and
 * check them: each NLMSG_ERROR with error 0 is one ACK; any other error
 * is returned. `table_seen` (may be NULL) is set when an NFT_MSG_NEWTABLE
 * reply arrives. Returns the number of ACKs or -errno.
 */
static int nl_acks(int s, bool *table_seen)
{
        _Alignas(struct nlmsghdr) unsigned char buf[NL_REPLY_MAX];
        int acks = 0;

        for (;;) {
                ssize_t n = recv(s, buf, sizeof buf, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                return acks;
                        if (errno == EINTR)
                                continue;
                        return -errno; /* ENOBUFS: replies lost — fail */
                }
                size_t left = (size_t)n;
                for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
                     h = NLMSG_NEXT(h, left)) {
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                                        return -EBADMSG;
                                const struct nlmsgerr *e = NLMSG_DATA(h);
                                if (e->error != 0)
                                        return e->error < 0 ? e->error : -EPROTO;
                                acks++;
                        } else if (table_seen && h->nlmsg_type == ((NFNL_SUBSYS_NFTABLES << 8) |
                                                                   NFT_MSG_NEWTABLE))
                                *table_seen = true;
                }
                if (left != 0)
                        return -EBADMSG;
        }
}

/* send one request and expect exactly one ACK */
static int nl_request(int s, const void *msg, size_t len)
{
        if (send(s, msg, len, 0) != (ssize_t)len)
                return errno ? -errno : -EIO;
        int r = nl_acks(s, NULL);
        return r < 0 ? r : r == 1 ? 0 : -EPROTO;
}

static void put_attr(unsigned char *msg, uint16_t type, const void *data, size_t len)
{
        struct nlmsghdr *h = (struct nlmsghdr *)msg;
        struct rtattr *a = (struct rtattr *)(msg + NLMSG_ALIGN(h->nlmsg_len));
        a->rta_type = type;
        a->rta_len = (unsigned short)RTA_LENGTH(len);
        memcpy(RTA_DATA(a), data, len);
        h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* One nfnetlink request with room for one small attribute (put_attr). */
struct nfnl_req {
        struct nlmsghdr h;
        struct nfgenmsg g;
        unsigned char attr[16];
};

static void nfnl_req_init(struct nfnl_req *m, uint16_t type, uint8_t family, uint16_t res_id,
                          uint32_t seq)
{
        memset(m, 0, sizeof *m);
        m->h.nlmsg_len = NLMSG_LENGTH(sizeof m->g);
        m->h.nlmsg_type = type;
        m->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        m->h.nlmsg_seq = seq;
        m->g.nfgen_family = family;
        m->g.version = NFNETLINK_V0;
        m->g.res_id = htons(res_id);
}

#define LO_IFINDEX 1 /* lo is always the first interface of a network namespace */

/* the run's own pool address on lo, and the default route from it; in an
 * engine's namespace (`adopt`) an address or default route already there
 * is kept */
static int add_addr_route(int s, bool v6, bool adopt)
{
        _Alignas(struct nlmsghdr) unsigned char msg[256];
        static const uint8_t self6[16] = {0xfd, 0x52, 0x66, 0x67, 0x6e, 0x63, 0, 0,
                                          0,    0,    0,    0,    0,    0,    0, 1};
        uint32_t self4 = htonl(SYNTH_V4_SELF);
        const void *self = v6 ? (const void *)self6 : (const void *)&self4;
        size_t alen = v6 ? 16 : 4;
        uint32_t ifindex = LO_IFINDEX;

        memset(msg, 0, sizeof msg);
        struct nlmsghdr *h = (struct nlmsghdr *)msg;
        h->nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
        h->nlmsg_type = RTM_NEWADDR;
        h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
        h->nlmsg_seq = 1;
        struct ifaddrmsg *ifa = NLMSG_DATA(h);
        ifa->ifa_family = v6 ? AF_INET6 : AF_INET;
        ifa->ifa_prefixlen = (unsigned char)(8 * alen);
        ifa->ifa_flags = v6 ? IFA_F_NODAD : 0;
        ifa->ifa_scope = RT_SCOPE_UNIVERSE;
        ifa->ifa_index = LO_IFINDEX;
        put_attr(msg, IFA_LOCAL, self, alen);
        put_attr(msg, IFA_ADDRESS, self, alen);
        uint32_t flags = v6 ? IFA_F_NODAD : 0;
        put_attr(msg, IFA_FLAGS, &flags, sizeof flags);
        int r = nl_request(s, msg, h->nlmsg_len);
        if (r < 0 && !(adopt && r == -EEXIST))
                return r;

        memset(msg, 0, sizeof msg);
        h->nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
        h->nlmsg_type = RTM_NEWROUTE;
        h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
        h->nlmsg_seq = 2;
        struct rtmsg *rt = NLMSG_DATA(h);
        rt->rtm_family = v6 ? AF_INET6 : AF_INET;
        rt->rtm_dst_len = 0;
        rt->rtm_table = RT_TABLE_MAIN;
        rt->rtm_protocol = RTPROT_STATIC;
        rt->rtm_scope = v6 ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
        rt->rtm_type = RTN_UNICAST;
        put_attr(msg, RTA_OIF, &ifindex, sizeof ifindex);
        put_attr(msg, RTA_PREFSRC, self, alen);
        r = nl_request(s, msg, h->nlmsg_len);
        return adopt && r == -EEXIST ? 0 : r;
}

/* errors that say the namespace has no IPv6 (disabled on the host) */
static bool no_ipv6(int r)
{
        return r == -EAFNOSUPPORT || r == -EACCES || r == -EOPNOTSUPP || r == -EPROTONOSUPPORT ||
               r == -EADDRNOTAVAIL;
}

static int commit_ruleset(const struct rf_plan *p, bool fail_commit)
{
        int s = nl_socket(NETLINK_NETFILTER, 0);
        if (s < 0)
                return s;
        struct iovec iov[] = {
                {(void *)rf_capture_begin, sizeof rf_capture_begin},
                {(void *)rf_capture_base, sizeof rf_capture_base},
                {p->capture_rules, p->capture_rules_len},
                {NULL, 0}, /* test builds: the rule the kernel refuses */
                {(void *)rf_capture_end, sizeof rf_capture_end},
        };
#ifdef RF_TEST_BUILD
        /* a copy of the v4 template naming a chain that does not exist:
         * the kernel refuses the batch (ENOENT) and nothing is committed */
        _Alignas(struct nlmsghdr) unsigned char bad[sizeof rf_capture_rule4];
        if (fail_commit) {
                memcpy(bad, rf_capture_rule4, sizeof bad);
                bad[RF_CAPTURE_RULE4_CHAIN] = 'x';
                iov[3] = (struct iovec){bad, sizeof bad};
        }
#else
        (void)fail_commit; /* release builds contain no fault injection */
#endif
        size_t total = 0;
        for (size_t i = 0; i < ARRAY_SIZE(iov); i++)
                total += iov[i].iov_len;
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        struct msghdr mh = {.msg_name = &kernel,
                            .msg_namelen = sizeof kernel,
                            .msg_iov = iov,
                            .msg_iovlen = ARRAY_SIZE(iov)};
        int r;
        ssize_t n = sendmsg(s, &mh, 0);
        if (n != (ssize_t)total) {
                r = n < 0 ? -errno : -EIO;
                goto out;
        }
        r = nl_acks(s, NULL);
        if (r >= 0 && (unsigned)r != RF_CAPTURE_BASE_MSGS)
                r = -EPROTO;
        if (r < 0)
                goto out;

        /* Read it back: the table exists only if the batch was committed. */
        struct nfnl_req get;
        nfnl_req_init(&get, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETTABLE, NFPROTO_INET, 0,
                      0x7fff0000);
        put_attr((unsigned char *)&get, NFTA_TABLE_NAME, "ringfence", sizeof "ringfence");
        if (send(s, &get, get.h.nlmsg_len, 0) != (ssize_t)get.h.nlmsg_len) {
                r = -errno;
                goto out;
        }
        bool seen = false;
        r = nl_acks(s, &seen);
        if (r >= 0)
                r = seen && r == 1 ? 0 : -EPROTO;
out:
        close(s);
        return r;
}

int capture_install(const struct rf_plan *p, bool fail_commit, bool adopt, bool *v6)
{
        *v6 = false;
        int s = nl_socket(NETLINK_ROUTE, 0);
        if (s < 0)
                return s;
        int r = add_addr_route(s, false, adopt);
        if (r == 0) {
                r = add_addr_route(s, true, adopt);
                if (r == 0)
                        *v6 = true;
                else if (no_ipv6(r))
                        r = 0; /* v4 only: the namespace has no IPv6 */
        }
        close(s);
        if (r < 0)
                return r;
        return commit_ruleset(p, fail_commit);
}

int capture_listener(bool v6)
{
        int s = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return -errno;
        int one = 1, r = 0;
        if (v6) {
                struct sockaddr_in6 a = {.sin6_family = AF_INET6,
                                         .sin6_port = htons(RF_EGRESS_CAPTURE_PORT),
                                         .sin6_addr = IN6ADDR_LOOPBACK_INIT};
                if (setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0 ||
                    bind(s, (struct sockaddr *)&a, sizeof a) < 0)
                        r = -errno;
        } else {
                struct sockaddr_in a = {.sin_family = AF_INET,
                                        .sin_port = htons(RF_EGRESS_CAPTURE_PORT),
                                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                if (bind(s, (struct sockaddr *)&a, sizeof a) < 0)
                        r = -errno;
        }
        if (r == 0 && listen(s, 128) < 0)
                r = -errno;
        if (r < 0) {
                close(s);
                return r;
        }
        return s;
}

/* one NFULNL_MSG_CONFIG request for the group, with one attribute */
static int nflog_config(int s, uint16_t attr, const void *data, size_t len, uint32_t seq)
{
        struct nfnl_req m;
        nfnl_req_init(&m, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG, AF_UNSPEC,
                      RF_CAPTURE_NFLOG_GROUP, seq);
        put_attr((unsigned char *)&m, attr, data, len);
        return nl_request(s, &m, m.h.nlmsg_len);
}

int capture_nflog_open(void)
{
        int s = nl_socket(NETLINK_NETFILTER, SOCK_NONBLOCK);
        if (s < 0)
                return s;
        struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
        struct nfulnl_msg_config_mode mode = {.copy_range = htonl(RF_CAPTURE_NFLOG_RANGE),
                                              .copy_mode = NFULNL_COPY_PACKET};
        int r = nflog_config(s, NFULA_CFG_CMD, &cmd, sizeof cmd, 1);
        /* one message per refusal, at once (the default queues up to 100
         * for a second: a run that ends first would never see them) */
        uint32_t qthresh = htonl(1);
        if (r == 0)
                r = nflog_config(s, NFULA_CFG_MODE, &mode, sizeof mode, 2);
        if (r == 0)
                r = nflog_config(s, NFULA_CFG_QTHRESH, &qthresh, sizeof qthresh, 3);
        if (r == 0) {
                int fl = 1;
                /* refusals after the first burst are dropped by the rate
                 * limit, not by a full socket: say so rather than fail */
                (void)setsockopt(s, SOL_NETLINK, NETLINK_NO_ENOBUFS, &fl, sizeof fl);
                /* room for a burst of first refusals (capture.h); FORCE
                 * needs CAP_NET_ADMIN over the host (a root run), else the
                 * host's net.core.rmem_max caps it: best effort either way */
                int sz = RF_CAPTURE_NFLOG_RCVBUF;
                if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) < 0)
                        (void)setsockopt(s, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
        }
        if (r < 0) {
                close(s);
                return r;
        }
        return s;
}

int capture_lo_up(void)
{
        struct ifreq ifr;
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        memset(&ifr, 0, sizeof ifr);
        memcpy(ifr.ifr_name, "lo", 3);
        int r = ioctl(s, SIOCGIFFLAGS, &ifr);
        if (r == 0) {
                ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
                r = ioctl(s, SIOCSIFFLAGS, &ifr);
        }
        r = r < 0 ? -errno : 0;
        close(s);
        return r;
}

int capture_local_socket(int type, uint16_t port)
{
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int s = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return -errno;
        if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 ||
            (type == SOCK_STREAM && listen(s, 128) < 0)) {
                int e = -errno;
                close(s);
                return e;
        }
        return s;
}

/* ---- the supervisor's side: an engine's network namespace ------------------ */

void capture_fds_init(struct capture_fds *f)
{
        *f = (struct capture_fds){
                .dns = -1, .http = -1, .socks = -1, .cap4 = -1, .cap6 = -1, .nflog = -1};
}

void capture_fds_close(struct capture_fds *f)
{
        int *fds[] = {&f->dns, &f->http, &f->socks, &f->cap4, &f->cap6, &f->nflog};
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                if (*fds[i] >= 0)
                        close(*fds[i]);
        capture_fds_init(f);
}

/* *slot = r when r is an fd; r (< 0) stays the result */
static int keep(int *slot, int r)
{
        if (r >= 0)
                *slot = r;
        return r < 0 ? r : 0;
}

/* The committed table removed again (an adoption that failed after its
 * commit: the namespace left as the engine made it, for the next try):
 * one batch of NFT_MSG_DELTABLE, ACKed. 0 or -errno. */
static int table_delete(void)
{
        int s = nl_socket(NETLINK_NETFILTER, 0);
        if (s < 0)
                return s;
        struct nfnl_req del;
        nfnl_req_init(&del, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE, NFPROTO_INET, 0, 1);
        put_attr((unsigned char *)&del, NFTA_TABLE_NAME, "ringfence", sizeof "ringfence");
        struct iovec iov[] = {
                {(void *)rf_capture_begin, sizeof rf_capture_begin},
                {&del, del.h.nlmsg_len},
                {(void *)rf_capture_end, sizeof rf_capture_end},
        };
        size_t total = 0;
        for (size_t i = 0; i < ARRAY_SIZE(iov); i++)
                total += iov[i].iov_len;
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        struct msghdr mh = {.msg_name = &kernel,
                            .msg_namelen = sizeof kernel,
                            .msg_iov = iov,
                            .msg_iovlen = ARRAY_SIZE(iov)};
        ssize_t n = sendmsg(s, &mh, 0);
        int r = n == (ssize_t)total ? nl_acks(s, NULL) : n < 0 ? -errno : -EIO;
        close(s);
        return r < 0 ? r : r == 1 ? 0 : -EPROTO;
}

/* -EPERM where the test build fails `step`, else 0 */
static int injected(int fail_step, int step)
{
        return fail_step == step ? -EPERM : 0;
}

/*
 * Both sides of the supervisor's setup (capture_adopt, capture_fresh): lo
 * up, the ruleset (an engine's namespace always gets it; a fresh one with
 * capture), then the DNS stub, the proxy listeners and, with capture, the
 * capture listeners and the NFLOG socket. In an engine's namespace a
 * failure after the commit removes the table again; one before it never
 * touches a table that was there (EEXIST: another container's).
 */
static int setup(const struct rf_plan *p, bool adopt, int fail_step, struct capture_fds *out,
                 int *step)
{
        bool v6 = false;
        int r;
        capture_fds_init(out);
        *step = STEP_LOOPBACK;
        if ((r = injected(fail_step, STEP_LOOPBACK)) < 0 || (r = capture_lo_up()) < 0)
                return r;
        *step = STEP_CAPTURE;
        if ((adopt || p->capture) &&
            (r = capture_install(p, fail_step == STEP_CAPTURE, adopt, &v6)) < 0)
                return r;
        *step = STEP_DNS;
        if ((r = injected(fail_step, STEP_DNS)) < 0 ||
            (r = keep(&out->dns, capture_local_socket(SOCK_DGRAM, 53))) < 0)
                goto fail;
        *step = STEP_EGRESS;
        if ((r = injected(fail_step, STEP_EGRESS)) < 0 ||
            (r = keep(&out->http, capture_local_socket(SOCK_STREAM, RF_EGRESS_HTTP_PORT))) < 0 ||
            (r = keep(&out->socks, capture_local_socket(SOCK_STREAM, RF_EGRESS_SOCKS_PORT))) < 0)
                goto fail;
        if (p->capture) {
                *step = STEP_CAPTURE;
                if ((r = keep(&out->cap4, capture_listener(false))) < 0 ||
                    (v6 && (r = keep(&out->cap6, capture_listener(true))) < 0) ||
                    (r = keep(&out->nflog, capture_nflog_open())) < 0)
                        goto fail;
                out->capture = CAPTURE_V4 | (v6 ? CAPTURE_V6 : 0);
        }
        return 0;
fail:
        capture_fds_close(out);
        if (adopt)
                (void)table_delete();
        return r;
}

int capture_adopt(const struct rf_plan *p, bool fail_commit, struct capture_fds *out)
{
        int step;
        return setup(p, true, fail_commit ? STEP_CAPTURE : -1, out, &step);
}

int capture_fresh(const struct rf_plan *p, int fail_step, struct capture_fds *out, int *step)
{
        /* a fresh namespace: whatever fails, it goes with init */
        return setup(p, false, fail_step, out, step);
}
