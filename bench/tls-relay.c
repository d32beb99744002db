/* bench/tls-relay.c — the bare TLS-terminating relay of bench/inject.
 *
 * Not part of ringfence, and not hardened: a benchmark's yardstick, the
 * floor for credential injection the way splice-relay.c is the floor for
 * egress. It does the crypto work any injecting relay must do and nothing
 * else: accept on 127.0.0.1:PORT and complete a TLS handshake with the
 * client under a leaf certificate given on the command line (signed by a CA
 * the bench's client trusts); dial one fixed upstream and complete a
 * verified TLS handshake with it (SNI and host name check against a CA
 * file); then decrypt and re-encrypt bytes both ways. No parsing, no header
 * rewriting, no policy, no records, no limits.
 *
 * Like ringfence's egress process it is one process with one epoll loop
 * (level-triggered) over non-blocking sockets (OpenSSL reads ahead into a
 * 64 KiB buffer; a direction reads until OpenSSL wants the socket, so nothing
 * decrypted waits unseen in it), and it keeps no TLS session
 * state: no session cache, no tickets, so every connection is a full
 * handshake on both sides. The upstream is dialled as soon as the client is
 * accepted, and both handshakes advance together — the least latency a
 * relay can add.
 *
 * Usage: tls-relay PORT CERT_PEM KEY_PEM UPSTREAM_IPV4 UPSTREAM_PORT
 *                  UPSTREAM_NAME UPSTREAM_CA_PEM
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define BUF_BYTES (64 * 1024)

/* One direction: plaintext read from `from`, written to `to`. */
struct dir {
        SSL *from, *to;
        unsigned char buf[BUF_BYTES];
        size_t off, len; /* bytes buf[off..len) still to write */
        int eof, shut;
};

struct conn {
        SSL *ssl[2]; /* client side (we are the server), upstream side; owned */
        int fd[2];
        int hs[2];       /* handshake done */
        int want[2];     /* EPOLLIN/EPOLLOUT the blocked operations on ssl[i] need */
        struct dir d[2]; /* d[0]: client → upstream, d[1]: upstream → client */
};

static const char *up_name;

/* What an SSL call's failure means: 0 for "try again when want[] is
 * ready" (recorded), 1 for the peer's end of stream, -1 for a hard error. */
static int blocked(struct conn *c, SSL *s, int ret)
{
        int i = s == c->ssl[1];
        switch (SSL_get_error(s, ret)) {
        case SSL_ERROR_WANT_READ:
                c->want[i] |= EPOLLIN;
                return 0;
        case SSL_ERROR_WANT_WRITE:
                c->want[i] |= EPOLLOUT;
                return 0;
        case SSL_ERROR_ZERO_RETURN:
                return 1;
        case SSL_ERROR_SYSCALL:
        case SSL_ERROR_SSL:
                /* a TCP end without close_notify is an end too (OpenSSL 3
                 * reports it as SSL_R_UNEXPECTED_EOF_WHILE_READING) */
                if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING ||
                    (ret == 0 && ERR_peek_last_error() == 0)) {
                        ERR_clear_error();
                        return 1;
                }
                ERR_clear_error();
                return -1;
        default:
                ERR_clear_error();
                return -1;
        }
}

/* One pass of a direction: write what is buffered, read more, repeat until
 * a side blocks. Returns -1 on a hard error. */
static int step(struct conn *c, struct dir *d)
{
        for (;;) {
                while (d->off < d->len) {
                        int n = SSL_write(d->to, d->buf + d->off, (int)(d->len - d->off));
                        if (n <= 0)
                                return blocked(c, d->to, n) == 0 ? 0 : -1;
                        d->off += (size_t)n;
                }
                if (d->eof)
                        break;
                int n = SSL_read(d->from, d->buf, BUF_BYTES);
                if (n <= 0) {
                        int r = blocked(c, d->from, n);
                        if (r < 0)
                                return -1;
                        if (r == 0)
                                return 0;
                        d->eof = 1;
                        break;
                }
                d->off = 0;
                d->len = (size_t)n;
        }
        if (!d->shut) {
                /* pass the end on: close_notify, then the TCP half-close */
                SSL_shutdown(d->to);
                ERR_clear_error();
                shutdown(SSL_get_fd(d->to), SHUT_WR);
                d->shut = 1;
        }
        return 0;
}

static int advance(struct conn *c)
{
        c->want[0] = c->want[1] = 0;
        for (int i = 0; i < 2; i++) {
                if (c->hs[i])
                        continue;
                int r = SSL_do_handshake(c->ssl[i]);
                if (r == 1)
                        c->hs[i] = 1;
                else if (blocked(c, c->ssl[i], r) != 0)
                        return -1;
        }
        if (!c->hs[0] || !c->hs[1])
                return 0;
        if (step(c, &c->d[0]) < 0 || step(c, &c->d[1]) < 0)
                return -1;
        return c->d[0].shut && c->d[1].shut ? 1 : 0;
}

static void arm(int ep, struct conn *c, int op)
{
        for (int i = 0; i < 2; i++) {
                /* both fds point at the connection: a wake steps both ways */
                struct epoll_event ev = {.events = (uint32_t)c->want[i], .data.ptr = c};
                epoll_ctl(ep, op, c->fd[i], &ev);
        }
}

static void drop(struct conn *c)
{
        for (int i = 0; i < 2; i++) {
                SSL_free(c->ssl[i]);
                if (c->fd[i] >= 0)
                        close(c->fd[i]);
        }
        free(c);
}

static struct conn *open_conn(int cfd, const struct sockaddr_in *up, SSL_CTX *sctx, SSL_CTX *cctx)
{
        int one = 1, u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct conn *c = calloc(1, sizeof *c);
        if (!c) {
                close(cfd);
                if (u >= 0)
                        close(u);
                return NULL;
        }
        c->fd[0] = cfd;
        c->fd[1] = u;
        if (u < 0 ||
            (connect(u, (const struct sockaddr *)up, sizeof(*up)) < 0 && errno != EINPROGRESS)) {
                drop(c);
                return NULL;
        }
        setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        fcntl(cfd, F_SETFL, O_NONBLOCK);
        c->ssl[0] = SSL_new(sctx);
        c->ssl[1] = SSL_new(cctx);
        if (!c->ssl[0] || !c->ssl[1] || !SSL_set_fd(c->ssl[0], cfd) || !SSL_set_fd(c->ssl[1], u) ||
            !SSL_set_tlsext_host_name(c->ssl[1], up_name) || !SSL_set1_host(c->ssl[1], up_name)) {
                drop(c);
                return NULL;
        }
        SSL_set_accept_state(c->ssl[0]);
        SSL_set_connect_state(c->ssl[1]);
        c->d[0].from = c->ssl[0];
        c->d[0].to = c->ssl[1];
        c->d[1].from = c->ssl[1];
        c->d[1].to = c->ssl[0];
        return c;
}

static SSL_CTX *ctx_new(int server, const char *a, const char *b)
{
        SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
        if (!ctx)
                return NULL;
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        /* whole socket reads into a 64 KiB buffer: one read(2) for several
         * records instead of two (header, body) for each */
        SSL_CTX_set_read_ahead(ctx, 1);
        SSL_CTX_set_default_read_buffer_len(ctx, 64 * 1024);
        if (server) {
                SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
                SSL_CTX_set_num_tickets(ctx, 0);
                if (SSL_CTX_use_certificate_chain_file(ctx, a) != 1 ||
                    SSL_CTX_use_PrivateKey_file(ctx, b, SSL_FILETYPE_PEM) != 1)
                        goto fail;
        } else {
                SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
                if (SSL_CTX_load_verify_locations(ctx, a, NULL) != 1)
                        goto fail;
        }
        return ctx;
fail:
        ERR_print_errors_fp(stderr);
        SSL_CTX_free(ctx);
        return NULL;
}

int main(int argc, char **argv)
{
        static struct conn gone; /* marks a dropped connection's later events */
        if (argc != 8) {
                fprintf(stderr, "usage: tls-relay PORT CERT_PEM KEY_PEM UPSTREAM_IPV4 "
                                "UPSTREAM_PORT UPSTREAM_NAME UPSTREAM_CA_PEM\n");
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
        struct sockaddr_in up = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[5]))};
        inet_pton(AF_INET, "127.0.0.1", &me.sin_addr);
        if (inet_pton(AF_INET, argv[4], &up.sin_addr) != 1)
                return 2;
        up_name = argv[6];
        SSL_CTX *sctx = ctx_new(1, argv[2], argv[3]);
        SSL_CTX *cctx = ctx_new(0, argv[7], NULL);
        if (!sctx || !cctx)
                return 1;
        int one = 1, l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int ep = epoll_create1(EPOLL_CLOEXEC);
        if (l < 0 || ep < 0)
                return 1;
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(l, (struct sockaddr *)&me, sizeof(me)) < 0 || listen(l, 512) < 0) {
                perror("tls-relay");
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
                        int op = EPOLL_CTL_MOD;
                        if (!c) {
                                int cfd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
                                if (cfd < 0 || !(c = open_conn(cfd, &up, sctx, cctx)))
                                        continue;
                                op = EPOLL_CTL_ADD;
                        }
                        if (advance(c) != 0) {
                                /* the batch may hold c's other fd too */
                                if (op == EPOLL_CTL_MOD)
                                        for (int j = i + 1; j < n; j++)
                                                if (evs[j].data.ptr == c)
                                                        evs[j].data.ptr = &gone;
                                drop(c);
                                continue;
                        }
                        arm(ep, c, op);
                }
        }
}
