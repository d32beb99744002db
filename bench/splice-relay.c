/* bench/splice-relay.c — the bare reference relay of bench/egress.
 *
 * Not part of ringfence, and not hardened: a benchmark's yardstick. It is
 * the least a relay can do on this machine: accept on 127.0.0.1:PORT, dial
 * one fixed upstream, and move bytes both ways with splice(2) through a
 * pipe per direction — no parsing, no policy, no records, no limits. One
 * process, one epoll loop (level-triggered), like ringfence's egress
 * process. bench/egress runs it side by side with ringfence so the ratio of
 * a real proxy can be read against what any relay costs here.
 *
 * Usage: splice-relay PORT UPSTREAM_IPV4 UPSTREAM_PORT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define PIPE_BYTES (256 * 1024)

struct dir {
        int from, to, p[2];
        size_t len;
        int eof, shut;
};

struct conn {
        struct dir d[2]; /* d[0]: client → upstream, d[1]: upstream → client */
        int fd[2];       /* client, upstream */
};

/* One pass of a direction: fill the pipe from `from`, drain it to `to`.
 * Returns -1 on a hard error. */
static int step(struct dir *d)
{
        if (!d->eof && d->len < PIPE_BYTES) {
                ssize_t n = splice(d->from, NULL, d->p[1], NULL, PIPE_BYTES - d->len,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                if (n == 0)
                        d->eof = 1;
                else if (n > 0)
                        d->len += (size_t)n;
                else if (errno != EAGAIN)
                        return -1;
        }
        while (d->len) {
                ssize_t n = splice(d->p[0], NULL, d->to, NULL, d->len,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                if (n < 0 && errno != EAGAIN)
                        return -1;
                if (n <= 0)
                        break;
                d->len -= (size_t)n;
        }
        if (d->eof && d->len == 0 && !d->shut) {
                shutdown(d->to, SHUT_WR);
                d->shut = 1;
        }
        return 0;
}

static void arm(int ep, struct conn *c, int op)
{
        for (int i = 0; i < 2; i++) {
                struct epoll_event ev = {.data.ptr = c};
                if (!c->d[i].eof && c->d[i].len < PIPE_BYTES)
                        ev.events |= EPOLLIN;
                if (c->d[i ^ 1].len)
                        ev.events |= EPOLLOUT;
                /* both fds point at the connection: a wake steps both ways */
                epoll_ctl(ep, op, c->fd[i], &ev);
        }
}

static void drop(struct conn *c)
{
        for (int i = 0; i < 2; i++) {
                close(c->fd[i]);
                close(c->d[i].p[0]);
                close(c->d[i].p[1]);
        }
        free(c);
}

static struct conn *open_conn(int cfd, const struct sockaddr_in *up)
{
        int one = 1, u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct conn *c = calloc(1, sizeof *c);
        if (u < 0 || !c || connect(u, (const struct sockaddr *)up, sizeof(*up)) < 0) {
                if (u >= 0)
                        close(u);
                close(cfd);
                free(c);
                return NULL;
        }
        setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        fcntl(cfd, F_SETFL, O_NONBLOCK);
        fcntl(u, F_SETFL, O_NONBLOCK);
        c->fd[0] = cfd;
        c->fd[1] = u;
        c->d[0] = (struct dir){.from = cfd, .to = u, .p = {-1, -1}};
        c->d[1] = (struct dir){.from = u, .to = cfd, .p = {-1, -1}};
        for (int i = 0; i < 2; i++) {
                if (pipe2(c->d[i].p, O_NONBLOCK | O_CLOEXEC) < 0) {
                        drop(c);
                        return NULL;
                }
                fcntl(c->d[i].p[1], F_SETPIPE_SZ, PIPE_BYTES);
        }
        return c;
}

int main(int argc, char **argv)
{
        static struct conn gone; /* marks a dropped connection's later events */
        if (argc != 4) {
                fprintf(stderr, "usage: splice-relay PORT UPSTREAM_IPV4 UPSTREAM_PORT\n");
                return 2;
        }
        struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
        struct sockaddr_in up = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3]))};
        inet_pton(AF_INET, "127.0.0.1", &me.sin_addr);
        if (inet_pton(AF_INET, argv[2], &up.sin_addr) != 1)
                return 2;
        int one = 1, l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int ep = epoll_create1(EPOLL_CLOEXEC);
        if (l < 0 || ep < 0)
                return 1;
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(l, (struct sockaddr *)&me, sizeof(me)) < 0 || listen(l, 512) < 0) {
                perror("splice-relay");
                return 1;
        }
        struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
        epoll_ctl(ep, EPOLL_CTL_ADD, l, &lev);
        for (;;) {
                struct epoll_event evs[64];
                int n = epoll_wait(ep, evs, 64, -1);
                for (int i = 0; i < n; i++) {
                        struct conn *c = evs[i].data.ptr;
                        if (c == &gone)
                                continue;
                        if (!c) {
                                int cfd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
                                if (cfd >= 0 && (c = open_conn(cfd, &up)))
                                        arm(ep, c, EPOLL_CTL_ADD);
                                continue;
                        }
                        if (step(&c->d[0]) < 0 || step(&c->d[1]) < 0 ||
                            (c->d[0].shut && c->d[1].shut)) {
                                /* the batch may hold c's other fd too */
                                drop(c);
                                for (int j = i + 1; j < n; j++)
                                        if (evs[j].data.ptr == c)
                                                evs[j].data.ptr = &gone;
                                continue;
                        }
                        arm(ep, c, EPOLL_CTL_MOD);
                }
        }
}
