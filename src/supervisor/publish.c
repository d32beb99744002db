/*
 * publish.c — the relay of published ports (publish.h): host loopback
 * listeners, the peer's owner vetted through NETLINK_SOCK_DIAG, a socket
 * into the run from its init, and bytes copied both ways.
 *
 * Each connection is a small state machine: WAIT (vetted, init asked) →
 * RELAY (both ends) → freed when both directions have ended (EOF passed on
 * as a shutdown, once what was buffered is written) or either end fails.
 * Every buffer is bounded (PUBLISH_BUF per direction) and so is the number
 * of connections (PUBLISH_CONNS_MAX): a caller that opens more gets them
 * closed, never more memory.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "audit/emit.h"
#include "shared/macro.h"
#include "supervisor/publish.h"

enum conn_state { PC_FREE, PC_WAIT, PC_RELAY };

struct dir {
        uint8_t buf[PUBLISH_BUF];
        size_t off, len;
        bool eof; /* the source ended: passed on once the buffer is out */
        bool shut;
};

struct conn {
        enum conn_state state;
        int client, run; /* owned */
        size_t l;        /* its listener */
        struct dir up;   /* client → run */
        struct dir down; /* run → client */
};

struct publish {
        struct {
                int fd;
                struct policy_publish pp;
        } l[POLICY_PUBLISH_MAX];
        size_t n;
        uid_t caller;
        struct conn *c[PUBLISH_CONNS_MAX];
};

int publish_open(const struct policy_publish *pp, size_t n, uid_t caller, struct publish **ret,
                 struct rf_error *err)
{
        *ret = NULL;
        if (n == 0)
                return 0;
        if (n > POLICY_PUBLISH_MAX)
                return rf_error_set(err, -E2BIG, "more than %d published ports",
                                    POLICY_PUBLISH_MAX);
        struct publish *pub = calloc(1, sizeof *pub);
        if (!pub)
                return rf_error_set(err, -ENOMEM, "out of memory");
        pub->caller = caller;
        for (size_t i = 0; i < n; i++) {
                char t[POLICY_PUBLISH_TEXT_MAX];
                union {
                        struct sockaddr sa;
                        struct sockaddr_in in;
                        struct sockaddr_in6 in6;
                } a = {0};
                socklen_t alen;
                policy_publish_text(&pp[i], t);
                if (pp[i].v6) {
                        a.in6 = (struct sockaddr_in6){.sin6_family = AF_INET6,
                                                      .sin6_port = htons(pp[i].host_port),
                                                      .sin6_addr = IN6ADDR_LOOPBACK_INIT};
                        alen = sizeof a.in6;
                } else {
                        a.in = (struct sockaddr_in){.sin_family = AF_INET,
                                                    .sin_port = htons(pp[i].host_port),
                                                    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                        alen = sizeof a.in;
                }
                int one = 1;
                int fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
                    (pp[i].v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0) ||
                    bind(fd, &a.sa, alen) < 0 || listen(fd, 64) < 0) {
                        int e = -errno;
                        safe_close(fd);
                        pub->n = i;
                        publish_free(pub);
                        return rf_error_set(err, e, "--publish %s: cannot listen on %s:%u: %s", t,
                                            pp[i].v6 ? "[::1]" : "127.0.0.1", pp[i].host_port,
                                            strerror(-e));
                }
                pub->l[i].fd = fd;
                pub->l[i].pp = pp[i];
        }
        pub->n = n;
        *ret = pub;
        return 0;
}

static void conn_free(struct conn **cp)
{
        struct conn *c = *cp;
        if (!c)
                return;
        safe_close(c->client);
        safe_close(c->run);
        free(c);
        *cp = NULL;
}

struct publish *publish_free(struct publish *pub)
{
        if (!pub)
                return NULL;
        for (size_t i = 0; i < pub->n; i++)
                safe_close(pub->l[i].fd);
        for (size_t i = 0; i < PUBLISH_CONNS_MAX; i++)
                conn_free(&pub->c[i]);
        free(pub);
        return NULL;
}

int publish_peer_uid(int fd, uint32_t *uid)
{
        static uint32_t seq_counter;
        union {
                struct sockaddr sa;
                struct sockaddr_in in;
                struct sockaddr_in6 in6;
                struct sockaddr_storage ss;
        } peer, local;
        socklen_t pl = sizeof peer, ll = sizeof local;
        struct publish_peer p = {0};

        if (getpeername(fd, &peer.sa, &pl) < 0 || getsockname(fd, &local.sa, &ll) < 0)
                return -errno;
        p.family = peer.sa.sa_family;
        if (p.family == AF_INET) {
                memcpy(p.peer_addr, &peer.in.sin_addr, 4);
                memcpy(p.local_addr, &local.in.sin_addr, 4);
                p.peer_port = ntohs(peer.in.sin_port);
                p.local_port = ntohs(local.in.sin_port);
        } else if (p.family == AF_INET6) {
                memcpy(p.peer_addr, &peer.in6.sin6_addr, 16);
                memcpy(p.local_addr, &local.in6.sin6_addr, 16);
                p.peer_port = ntohs(peer.in6.sin6_port);
                p.local_port = ntohs(local.in6.sin6_port);
        } else
                return -EAFNOSUPPORT;
        uint8_t req[PUBLISH_DIAG_REQ_SIZE];
        _Alignas(struct nlmsghdr) uint8_t ans[1024];
        uint32_t seq = ++seq_counter;
        size_t n = publish_diag_request(&p, seq, req, sizeof req);
        _cleanup_close_ int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (n == 0)
                return -EINVAL;
        if (nl < 0)
                return -errno;
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        if (sendto(nl, req, n, 0, (struct sockaddr *)&kernel, sizeof kernel) != (ssize_t)n)
                return -errno;
        ssize_t k = recv(nl, ans, sizeof ans, MSG_DONTWAIT);
        if (k < 0)
                return -errno;
        return publish_diag_parse(ans, (size_t)k, seq, &p, uid);
}

static void record(struct audit_emitter *ev, const char *event, const struct policy_publish *pp,
                   long long uid, const char *reason)
{
        char key[64];
        struct audit_field f[] = {
                {.key = "host_port", .type = AUDIT_UINT, .u = pp->host_port},
                {.key = "run_port", .type = AUDIT_UINT, .u = pp->run_port},
                {.key = "peer_uid", .type = AUDIT_INT, .i = uid},
                {.key = "reason", .type = AUDIT_STR, .s = reason},
        };
        struct rf_error err = {0};

        if (!ev)
                return;
        snprintf(key, sizeof key, "%s:%u:%lld", event, pp->host_port, uid);
        (void)audit_emit(ev, event, key, "connections to a published port from", f,
                         reason ? ARRAY_SIZE(f) : ARRAY_SIZE(f) - 1, 0, &err);
}

/* Take one connection off listener li: false when there was none. */
static bool accept_one(struct publish *pub, size_t li, int chan, struct audit_emitter *ev)
{
        const struct policy_publish *pp = &pub->l[li].pp;
        _cleanup_close_ int fd = accept4(pub->l[li].fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        uint32_t uid = 0;

        if (fd < 0)
                return false;
        int r = publish_peer_uid(fd, &uid);
        if (r < 0) {
                record(ev, "publish.refused", pp, -1, "the peer's owner cannot be told");
                return true;
        }
        if (uid != pub->caller && uid != 0) {
                record(ev, "publish.refused", pp, uid, "not the run's caller");
                return true;
        }
        size_t slot = 0;
        while (slot < PUBLISH_CONNS_MAX && pub->c[slot])
                slot++;
        if (slot == PUBLISH_CONNS_MAX) {
                record(ev, "publish.refused", pp, uid, "too many connections");
                return true;
        }
        struct conn *c = calloc(1, sizeof *c);
        if (!c)
                return true;
        struct rf_msg m = {.type = MSG_CONNECT, .step = (int32_t)slot, .value = pp->run_port};
        if (rf_msg_send(chan, &m, -1) < 0) {
                free(c);
                return true;
        }
        c->state = PC_WAIT;
        c->client = fd;
        fd = -1;
        c->run = -1;
        c->l = li;
        pub->c[slot] = c;
        record(ev, "publish.connect", pp, uid, NULL);
        return true;
}

void publish_connected(struct publish *pub, const struct rf_msg *m, int fd)
{
        struct conn *c =
                pub && m->step >= 0 && m->step < PUBLISH_CONNS_MAX ? pub->c[m->step] : NULL;

        if (!c || c->state != PC_WAIT || (uint16_t)m->value != pub->l[c->l].pp.run_port) {
                safe_close(fd);
                return;
        }
        if (fd < 0) { /* nothing listens on the run's port */
                conn_free(&pub->c[m->step]);
                return;
        }
        c->run = fd;
        c->state = PC_RELAY;
}

static bool wants_read(const struct dir *d)
{
        return !d->eof && d->len == 0;
}

static bool wants_write(const struct dir *d)
{
        return d->off < d->len || (d->eof && !d->shut);
}

size_t publish_pollfds(const struct publish *pub, struct pollfd *pfd)
{
        size_t n = 0;
        if (!pub)
                return 0;
        for (size_t i = 0; i < pub->n; i++)
                pfd[n++] = (struct pollfd){.fd = pub->l[i].fd, .events = POLLIN};
        for (size_t i = 0; i < PUBLISH_CONNS_MAX; i++) {
                const struct conn *c = pub->c[i];
                if (!c || c->state != PC_RELAY) {
                        pfd[n++] = (struct pollfd){.fd = -1};
                        pfd[n++] = (struct pollfd){.fd = -1};
                        continue;
                }
                short ce = (short)((wants_read(&c->up) ? POLLIN : 0) |
                                   (wants_write(&c->down) ? POLLOUT : 0));
                short re = (short)((wants_read(&c->down) ? POLLIN : 0) |
                                   (wants_write(&c->up) ? POLLOUT : 0));
                /* a side with nothing to do is not polled: its hang-up
                 * (reported whatever the events) would wake us for nothing
                 * until the other side has taken what is buffered */
                pfd[n++] = (struct pollfd){.fd = ce ? c->client : -1, .events = ce};
                pfd[n++] = (struct pollfd){.fd = re ? c->run : -1, .events = re};
        }
        return n;
}

/* Move what src has into d, and d's buffer out to dst: -1 when the
 * connection must end (an error on either side). */
static int pump(struct dir *d, int src, short src_ev, int dst, short dst_ev)
{
        if ((src_ev & (POLLIN | POLLHUP | POLLERR)) && wants_read(d)) {
                ssize_t k = recv(src, d->buf, sizeof d->buf, MSG_DONTWAIT);
                if (k > 0) {
                        d->off = 0;
                        d->len = (size_t)k;
                } else if (k == 0)
                        d->eof = true;
                else if (errno != EAGAIN && errno != EINTR)
                        return -1;
        }
        if ((dst_ev & POLLERR) || ((dst_ev & POLLHUP) && d->off < d->len))
                return -1;
        if (d->off < d->len) {
                ssize_t k =
                        send(dst, d->buf + d->off, d->len - d->off, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (k > 0) {
                        d->off += (size_t)k;
                        if (d->off == d->len)
                                d->off = d->len = 0;
                } else if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return -1;
        }
        if (d->eof && !d->shut && d->len == 0) {
                (void)shutdown(dst, SHUT_WR);
                d->shut = true;
        }
        return 0;
}

void publish_serve(struct publish *pub, const struct pollfd *pfd, int chan,
                   struct audit_emitter *ev)
{
        if (!pub)
                return;
        for (size_t i = 0; i < pub->n; i++)
                for (int k = 0; k < 8 && (pfd[i].revents & POLLIN); k++)
                        if (!accept_one(pub, i, chan, ev))
                                break;
        const struct pollfd *cp = pfd + pub->n;
        for (size_t i = 0; i < PUBLISH_CONNS_MAX; i++) {
                struct conn *c = pub->c[i];
                short ce = cp[2 * i].revents, re = cp[2 * i + 1].revents;
                if (!c || c->state != PC_RELAY || (!ce && !re))
                        continue;
                if (pump(&c->up, c->client, ce, c->run, re) < 0 ||
                    pump(&c->down, c->run, re, c->client, ce) < 0 || (c->up.shut && c->down.shut))
                        conn_free(&pub->c[i]);
        }
}
