/*
 * publish-parse.c — the NETLINK_SOCK_DIAG request and answer of a
 * published port's peer lookup (publish.h). Pure: no I/O, fuzzed
 * (tests/fuzz/fuzz_publish.c).
 *
 * The answer is read as hostile-shaped input even though the kernel sends
 * it: every length is checked against the bytes received before anything
 * is read, and the socket it describes must be exactly the one asked for.
 */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

#include "supervisor/publish.h"

size_t publish_diag_request(const struct publish_peer *p, uint32_t seq, uint8_t *buf, size_t size)
{
        struct nlmsghdr h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct inet_diag_req_v2)),
                             .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                             .nlmsg_flags = NLM_F_REQUEST,
                             .nlmsg_seq = seq};
        struct inet_diag_req_v2 r = {
                .sdiag_family = (uint8_t)p->family,
                .sdiag_protocol = IPPROTO_TCP,
                .idiag_states = ~0U,
                /* the peer's own socket: its local end is the peer's */
                .id = {.idiag_sport = htons(p->peer_port),
                       .idiag_dport = htons(p->local_port),
                       .idiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}},
        };
        size_t alen = p->family == AF_INET ? 4 : 16;

        if ((p->family != AF_INET && p->family != AF_INET6) || size < h.nlmsg_len ||
            h.nlmsg_len > PUBLISH_DIAG_REQ_SIZE)
                return 0;
        memcpy(r.id.idiag_src, p->peer_addr, alen);
        memcpy(r.id.idiag_dst, p->local_addr, alen);
        memset(buf, 0, h.nlmsg_len);
        memcpy(buf, &h, sizeof h);
        memcpy(buf + NLMSG_HDRLEN, &r, sizeof r);
        return h.nlmsg_len;
}

int publish_diag_parse(const uint8_t *buf, size_t len, uint32_t seq,
                       const struct publish_peer *want, uint32_t *uid)
{
        size_t alen = want->family == AF_INET ? 4 : 16;

        while (len >= NLMSG_HDRLEN) {
                struct nlmsghdr h;
                memcpy(&h, buf, sizeof h);
                if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
                        return -EBADMSG;
                size_t step = NLMSG_ALIGN(h.nlmsg_len);
                if (h.nlmsg_seq != seq)
                        return -EBADMSG;
                if (h.nlmsg_type == NLMSG_ERROR) {
                        struct nlmsgerr e;
                        if (h.nlmsg_len < NLMSG_LENGTH(sizeof e))
                                return -EBADMSG;
                        memcpy(&e, buf + NLMSG_HDRLEN, sizeof e);
                        return e.error < 0 && e.error > -4096 ? -ENOENT : -EBADMSG;
                }
                if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
                        struct inet_diag_msg m;
                        if (h.nlmsg_len < NLMSG_LENGTH(sizeof m))
                                return -EBADMSG;
                        memcpy(&m, buf + NLMSG_HDRLEN, sizeof m);
                        if (m.idiag_family != want->family ||
                            m.id.idiag_sport != htons(want->peer_port) ||
                            m.id.idiag_dport != htons(want->local_port) ||
                            memcmp(m.id.idiag_src, want->peer_addr, alen) != 0 ||
                            memcmp(m.id.idiag_dst, want->local_addr, alen) != 0)
                                return -EBADMSG;
                        /* full sockets its owner still holds only:
                         * TIME_WAIT and request sockets are reported
                         * with uid 0 — a TIME_WAIT socket whose owner
                         * closed it in FIN_WAIT2 with state FIN_WAIT2
                         * (its substate) —, and none of them has an
                         * inode: a peer that no longer holds its socket
                         * has no owner to judge */
                        if (m.idiag_inode == 0)
                                return -EACCES;
                        switch (m.idiag_state) {
                        case TCP_ESTABLISHED:
                        case TCP_FIN_WAIT1:
                        case TCP_FIN_WAIT2:
                        case TCP_CLOSE_WAIT:
                        case TCP_LAST_ACK:
                        case TCP_CLOSING:
                                *uid = m.idiag_uid;
                                return 0;
                        default:
                                return -EACCES;
                        }
                }
                if (step >= len)
                        break;
                buf += step;
                len -= step;
        }
        return -EBADMSG;
}
