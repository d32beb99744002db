/*
 * helper.c — ringfence-secret, the client of a run's secret broker.
 *
 *     ringfence-secret [--socket PATH] NAME
 *
 * Runs inside a run. Connects to the broker's Unix stream socket (--socket,
 * else $RINGFENCE_BROKER, else BROKER_SOCKET), sends one request line
 * "GET NAME\n" and reads the reply (see broker.h):
 *
 *     "OK <len>\n" followed by exactly len bytes: the value, written to
 *                  stdout as is (no newline added); exit 0
 *     "ERR <code> <text>\n": "ringfence-secret: NAME: <code>: <text>" on
 *                  stderr; exit 1
 *
 * The broker lives in the supervisor, outside the run; every access it
 * grants is recorded in the audit log before the value is sent.
 *
 * The whole value (at most BROKER_VALUE_MAX bytes) is read before any of it
 * is written, so a truncated or malformed reply writes nothing to stdout
 * and a script never consumes half a secret. The buffer is wiped before
 * exit and the process makes itself non-dumpable first, so a crash does
 * not leave the value in a core file. Exit status: 0 value written, 1
 * broker error or failure, 2 usage.
 *
 * Links only broker.c (the pure protocol code) and libc.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "secrets/broker.h"
#include "shared/macro.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RF_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define RF_ASAN 1
#endif
#ifdef RF_ASAN
/* Sanitizer builds: this runs inside a run, where ptrace is denied, so
 * LeakSanitizer cannot stop the world at exit (ringfence's own locked-down
 * processes turn it off the same way). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
        return "detect_leaks=0";
}
#endif

#define PROG "ringfence-secret"

/* Header and value together; the header may arrive in the same read as the value. */
#define REPLY_BUF_MAX (BROKER_REPLY_HEAD_MAX + BROKER_VALUE_MAX)

struct reply_buf {
        char b[REPLY_BUF_MAX];
        size_t len;
};

/* Wipe and free a reply buffer (NULL accepted). */
static void reply_buf_freep(struct reply_buf **p)
{
        if (*p) {
                explicit_bzero(*p, sizeof **p);
                free(*p);
                *p = NULL;
        }
}

static void usage(FILE *f)
{
        fprintf(f, "usage: " PROG " [--socket PATH] NAME\n");
}

static void help(void)
{
        usage(stdout);
        printf("\n"
               "Print the value of the secret NAME, granted to this run, from the run's\n"
               "secret broker. Every access is recorded in the run's audit log.\n"
               "\n"
               "  --socket PATH   the broker's socket (default: $RINGFENCE_BROKER, else\n"
               "                  " BROKER_SOCKET ")\n"
               "  -h, --help      show this help\n"
               "\n"
               "Exit status: 0 the value was written to stdout, 1 the broker refused or\n"
               "could not be reached, 2 usage error.\n");
}

/* Write all of p[0..n) to fd. 0 or -errno. */
static int write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

/* Send all of p[0..n) on a socket without SIGPIPE. 0 or -errno. */
static int send_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

/* Read more into r, at most `want` bytes in total. Returns bytes read, 0 at EOF, or -errno. */
static ssize_t read_more(int fd, struct reply_buf *r, size_t want)
{
        ssize_t k = RETRY_EINTR(read(fd, r->b + r->len, want - r->len));
        if (k < 0)
                return negative_errno();
        r->len += (size_t)k;
        return k;
}

static int connect_broker(const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        size_t n = strlen(path);

        if (n == 0 || n >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, n);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

/* The ERR line's text: what follows "ERR <code> " up to the '\n' of the header. */
static void err_text(const char *b, int hdr, enum broker_err code, const char **t, int *tl)
{
        const char *p = b + 4 + strlen(broker_err_name(code)), *end = b + hdr - 1;
        if (p < end && *p == ' ')
                p++;
        *t = p;
        *tl = (int)(end - p);
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                {"socket", required_argument, NULL, 's'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        const char *path = NULL;
        int c;

        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) >= 0) {
                switch (c) {
                case 's':
                        path = optarg;
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (argc - optind != 1) {
                usage(stderr);
                return 2;
        }
        const char *name = argv[optind];
        if (!secret_name_valid(name, strlen(name))) {
                fprintf(stderr,
                        PROG ": invalid secret name: 1-%d of [A-Za-z0-9_.-], not starting with "
                             "'.' or '-'\n",
                        BROKER_NAME_MAX);
                usage(stderr);
                return 2;
        }
        if (!path) {
                path = getenv("RINGFENCE_BROKER");
                if (!path || !*path)
                        path = BROKER_SOCKET;
        }

        /* no core file or ptrace peek by a same-uid process holds the value */
        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

        _cleanup_close_ int fd = connect_broker(path);
        if (fd < 0) {
                fprintf(stderr, PROG ": cannot reach the secret broker at %s: %s%s\n", path,
                        strerror(-fd), fd == -ENOENT ? " (no broker in this run?)" : "");
                return 1;
        }

        char req[BROKER_REQ_MAX];
        int rl = snprintf(req, sizeof req, "GET %s\n", name);
        int r = send_all(fd, req, (size_t)rl);
        if (r < 0) {
                fprintf(stderr, PROG ": %s: cannot send the request to %s: %s\n", name, path,
                        strerror(-r));
                return 1;
        }

        _cleanup_(reply_buf_freep) struct reply_buf *rb = calloc(1, sizeof *rb);
        if (!rb) {
                fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
                return 1;
        }

        /* the header: read until it parses (its limit bounds this loop) */
        bool ok = false;
        size_t vlen = 0;
        enum broker_err code = BROKER_E_BADREQ;
        int hdr = 0;
        while ((hdr = broker_reply_parse(rb->b, rb->len, &ok, &vlen, &code)) == 0) {
                ssize_t k = read_more(fd, rb, sizeof rb->b);
                if (k <= 0) {
                        fprintf(stderr, PROG ": %s: %s from the broker at %s\n", name,
                                k == 0 ? "no reply" : strerror((int)-k), path);
                        return 1;
                }
        }
        if (hdr < 0) {
                fprintf(stderr, PROG ": %s: malformed reply from the broker at %s\n", name, path);
                return 1;
        }
        if (!ok) {
                const char *t;
                int tl;
                err_text(rb->b, hdr, code, &t, &tl);
                fprintf(stderr, PROG ": %s: %s: %.*s\n", name, broker_err_name(code), tl, t);
                return 1;
        }

        /* the value: exactly vlen bytes, all of them before anything is written */
        size_t want = (size_t)hdr + vlen;
        if (rb->len > want) {
                fprintf(stderr, PROG ": %s: malformed reply (bytes after the value)\n", name);
                return 1;
        }
        while (rb->len < want) {
                ssize_t k = read_more(fd, rb, want);
                if (k <= 0) {
                        fprintf(stderr, PROG ": %s: truncated reply (%zu of %zu bytes): %s\n", name,
                                rb->len - (size_t)hdr, vlen,
                                k == 0 ? "the broker closed the connection" : strerror((int)-k));
                        return 1;
                }
        }
        r = write_all(STDOUT_FILENO, rb->b + hdr, vlen);
        if (r < 0) {
                fprintf(stderr, PROG ": %s: cannot write the value: %s\n", name, strerror(-r));
                return 1;
        }
        return 0;
}
