/*
 * test_publish.c — the published port's peer lookup (publish-parse.c):
 * the request asks for the peer's own socket; an answer is believed only
 * for exactly that socket, in a state that carries its owner (TIME_WAIT
 * and request sockets read as uid 0 and must not let anyone through as
 * root); errors, other sequence numbers and truncation are refused. Then
 * a real lookup of a loopback connection of this process's own.
 */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervisor/publish.h"
#include "tap.h"

static const struct publish_peer want = {.family = AF_INET,
                                         .peer_addr = {127, 0, 0, 1},
                                         .local_addr = {127, 0, 0, 1},
                                         .peer_port = 40001,
                                         .local_port = 8080};

/* an answer: one inet_diag_msg for `id`'s socket in `state`, owned by uid */
static size_t answer_ino(uint8_t *buf, uint32_t seq, const struct publish_peer *id, uint8_t state,
                         uint32_t uid, uint32_t inode)
{
        struct nlmsghdr h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct inet_diag_msg)),
                             .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                             .nlmsg_seq = seq};
        struct inet_diag_msg m = {
                .idiag_family = (uint8_t)id->family,
                .idiag_state = state,
                .idiag_uid = uid,
                .idiag_inode = inode,
                .id = {.idiag_sport = htons(id->peer_port), .idiag_dport = htons(id->local_port)}};
        memcpy(m.id.idiag_src, id->peer_addr, 4);
        memcpy(m.id.idiag_dst, id->local_addr, 4);
        memset(buf, 0, h.nlmsg_len);
        memcpy(buf, &h, sizeof h);
        memcpy(buf + NLMSG_HDRLEN, &m, sizeof m);
        return h.nlmsg_len;
}

/* the same, of a socket its owner holds (an inode) */
static size_t answer(uint8_t *buf, uint32_t seq, const struct publish_peer *id, uint8_t state,
                     uint32_t uid)
{
        return answer_ino(buf, seq, id, state, uid, 4242);
}

int main(void)
{
        _Alignas(struct nlmsghdr) uint8_t buf[512];
        uint32_t uid = 777;

        size_t n = publish_diag_request(&want, 5, buf, sizeof buf);
        struct nlmsghdr h;
        struct inet_diag_req_v2 r;
        memcpy(&h, buf, sizeof h);
        memcpy(&r, buf + NLMSG_HDRLEN, sizeof r);
        ok(n == NLMSG_LENGTH(sizeof r) && h.nlmsg_type == SOCK_DIAG_BY_FAMILY && h.nlmsg_seq == 5 &&
                   !(h.nlmsg_flags & NLM_F_DUMP),
           "the request is one exact lookup, not a dump");
        ok(r.id.idiag_sport == htons(40001) && r.id.idiag_dport == htons(8080) &&
                   r.sdiag_protocol == IPPROTO_TCP,
           "... of the socket whose own end is the peer's");
        is_int(publish_diag_request(&(struct publish_peer){.family = AF_UNIX}, 1, buf, sizeof buf),
               0, "a family other than IPv4/IPv6: no request");
        is_int(publish_diag_request(&want, 1, buf, 8), 0, "no room: no request");

        n = answer(buf, 5, &want, TCP_ESTABLISHED, 1000);
        is_int(publish_diag_parse(buf, n, 5, &want, &uid), 0, "an established peer socket");
        is_int(uid, 1000, "... its owner's uid");
        uid = 777;
        n = answer(buf, 5, &want, TCP_TIME_WAIT, 0);
        is_int(publish_diag_parse(buf, n, 5, &want, &uid), -EACCES,
               "TIME_WAIT (reported as uid 0): refused, never read as root");
        n = answer_ino(buf, 5, &want, TCP_FIN_WAIT2, 0, 0);
        is_int(publish_diag_parse(buf, n, 5, &want, &uid), -EACCES,
               "a TIME_WAIT socket reported in its substate FIN_WAIT2, uid 0, no inode: refused");
        n = answer_ino(buf, 5, &want, TCP_ESTABLISHED, 1000, 0);
        is_int(publish_diag_parse(buf, n, 5, &want, &uid), -EACCES,
               "any socket its owner no longer holds (no inode): refused");
        n = answer(buf, 5, &want, TCP_SYN_RECV, 0);
        is_int(publish_diag_parse(buf, n, 5, &want, &uid), -EACCES, "a request socket: refused");
        is_int(uid, 777, "... the uid is not written");
        n = answer(buf, 6, &want, TCP_ESTABLISHED, 1000);
        is_int(publish_diag_parse(buf, n, 5, &want, &uid), -EBADMSG,
               "another sequence number: refused");
        struct publish_peer other = want;
        other.peer_port = 40002;
        n = answer(buf, 5, &other, TCP_ESTABLISHED, 1000);
        is_int(publish_diag_parse(buf, n, 5, &want, &uid), -EBADMSG,
               "an answer about another socket: refused");
        n = answer(buf, 5, &want, TCP_ESTABLISHED, 1000);
        is_int(publish_diag_parse(buf, n - 1, 5, &want, &uid), -EBADMSG, "truncated: refused");
        struct nlmsghdr eh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct nlmsgerr)),
                              .nlmsg_type = NLMSG_ERROR,
                              .nlmsg_seq = 5};
        struct nlmsgerr e = {.error = -ENOENT};
        memcpy(buf, &eh, sizeof eh);
        memcpy(buf + NLMSG_HDRLEN, &e, sizeof e);
        is_int(publish_diag_parse(buf, eh.nlmsg_len, 5, &want, &uid), -ENOENT,
               "the kernel's error (the peer is gone): no such socket");
        is_int(publish_diag_parse(buf, 0, 5, &want, &uid), -EBADMSG, "nothing: refused");

        /* a real loopback connection of ours: the kernel names us */
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s = -1;
        if (l >= 0 && c >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 &&
            listen(l, 1) == 0 && getsockname(l, (struct sockaddr *)&a, &al) == 0 &&
            connect(c, (struct sockaddr *)&a, sizeof a) == 0)
                s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        struct sockaddr_in peer, local;
        socklen_t pl = sizeof peer, ll = sizeof local;
        int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (s >= 0 && nl >= 0 && getpeername(s, (struct sockaddr *)&peer, &pl) == 0 &&
            getsockname(s, (struct sockaddr *)&local, &ll) == 0) {
                struct publish_peer p = {.family = AF_INET,
                                         .peer_port = ntohs(peer.sin_port),
                                         .local_port = ntohs(local.sin_port)};
                memcpy(p.peer_addr, &peer.sin_addr, 4);
                memcpy(p.local_addr, &local.sin_addr, 4);
                uint8_t req[PUBLISH_DIAG_REQ_SIZE];
                size_t rl = publish_diag_request(&p, 9, req, sizeof req);
                struct sockaddr_nl k = {.nl_family = AF_NETLINK};
                ssize_t got = -1;
                if (sendto(nl, req, rl, 0, (struct sockaddr *)&k, sizeof k) == (ssize_t)rl)
                        got = recv(nl, buf, sizeof buf, 0);
                uid = 777;
                is_int(got > 0 ? publish_diag_parse(buf, (size_t)got, 9, &p, &uid) : -EIO, 0,
                       "a real loopback peer of ours: found");
                is_int(uid, getuid(), "... owned by our uid");
                /* the peer sends and closes before the server reads: its
                 * socket, orphaned in FIN_WAIT2, becomes a TIME_WAIT one
                 * that the kernel reports as FIN_WAIT2 of uid 0 */
                close(c);
                c = -1;
                int pr = -EIO, st = -1;
                for (int i = 0; i < 200; i++) {
                        got = sendto(nl, req, rl, 0, (struct sockaddr *)&k, sizeof k) == (ssize_t)rl
                                      ? recv(nl, buf, sizeof buf, 0)
                                      : -1;
                        struct inet_diag_msg m;
                        if (got >= (ssize_t)NLMSG_LENGTH(sizeof m)) {
                                memcpy(&m, buf + NLMSG_HDRLEN, sizeof m);
                                st = m.idiag_state;
                                if (!m.idiag_inode)
                                        pr = publish_diag_parse(buf, (size_t)got, 9, &p, &uid);
                                if (!m.idiag_inode && st == TCP_FIN_WAIT2)
                                        break; /* (FIN_WAIT1 before the FIN's ACK) */
                        }
                        usleep(5000);
                }
                is_int(pr, -EACCES,
                       "the real peer closed before being read (kernel state %d, no inode): "
                       "refused, never read as uid 0",
                       st);
        } else {
                ok(0, "a loopback connection and a sock_diag socket: %s", strerror(errno));
        }
        close(nl);
        close(s);
        if (c >= 0)
                close(c);
        close(l);
        return done();
}
