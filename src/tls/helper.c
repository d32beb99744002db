/*
 * helper.c — ringfence-tls-helper: a run's CA and TLS trust files, made while
 * the run starts (the contract with its spawner: helper.h; docs/TLS.md,
 * "Made off the start path").
 *
 * Design: one job, then _exit. It snapshots what the egress processes will
 * load and read later (the TLS module, the host's CA bundle, the upstream CA
 * file) into sealed memfds, checks both bundles as the egress process's
 * trust_load will read them (trustfmt.c), makes the CA with nettle
 * (runca.c: no OpenSSL anywhere on a run's start path), writes the three
 * trust files into one sealed memfd (sandbox/trustfiles.h; the host's bundle
 * text appended by the kernel from its snapshot), and sends the memfds and
 * the CA's export. Nothing is freed: the process ends.
 *
 * Threats: its input is argv from the supervisor (bounded, checked) and the
 * files named there (bounded by RF_TLS_BUNDLE_MAX, opened O_NONBLOCK: a FIFO
 * is refused, not waited on). The CA's keys live in its memory until it
 * exits: it is non-dumpable, dies with its parent (PDEATHSIG, and it checks
 * that parent is the pid it was given), keeps no fd but its socket and
 * wipes its argv (no host or path of the run in /proc/PID/cmdline).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/plan.h"
#include "sandbox/trustfiles.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "tls/helper.h"
#include "tls/runca.h"
#include "tls/tls-load.h"
#include "tls/trustfmt.h"

struct helper_job {
        const char *const *hosts;
        size_t n_hosts;
        const char *upstream_ca;
        uint64_t lifetime_s;
        bool java;
        size_t bound;
};

static int fail(struct tls_result *res, int r, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int fail(struct tls_result *res, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(res->why, sizeof res->why, fmt, ap);
        va_end(ap);
        res->err = r < 0 ? r : -EIO;
        return res->err;
}

/* The trust files into a new memfd, sealed against writes and resizing.
 * The bundle's first host_len bytes are the host's text, copied by the
 * kernel from the snapshot `host` (fd_copy_all: no page of ours is touched
 * for them), then data[TRUST_BUNDLE]; the other files are data[] alone. */
static int files_memfd(int host, size_t host_len, const void *const data[TRUST_FILES],
                       const size_t len[TRUST_FILES])
{
        unsigned char hdr[TRUSTFILES_HDR];
        size_t lens[TRUST_FILES];
        memcpy(lens, len, sizeof lens);
        lens[TRUST_BUNDLE] += host_len;
        int fd = memfd_new("ringfence-trust");
        if (fd < 0)
                return fd;
        trustfiles_header(lens, hdr);
        int r = fd_write_all(fd, hdr, sizeof hdr);
        if (r >= 0)
                r = fd_copy_all(host, 0, fd, host_len);
        for (size_t i = 0; r >= 0 && i < TRUST_FILES; i++)
                r = fd_write_all(fd, data[i], len[i]);
        if (r >= 0)
                r = memfd_seal(fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* A file the egress processes will read, snapshotted now (before the run's
 * command exists: nothing of the run can have changed it). */
static int snapshot_path(const char *path, const char *name)
{
        _cleanup_close_ int src = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (src < 0)
                return negative_errno();
        return rf_tls_snapshot(src, RF_TLS_BUNDLE_MAX, name);
}

/* A sealed snapshot's bytes, mapped read-only (the helper exits without
 * unmapping): *p NULL for an empty one. 0 or -errno. */
static int snapshot_map(int fd, const char **p, size_t *n)
{
        size_t size = 0;
        int r = memfd_sealed_size(fd, RF_TLS_BUNDLE_MAX, &size);
        if (r < 0)
                return r;
        *p = NULL;
        *n = size;
        if (size == 0)
                return 0;
        /* populated in one call: the reader goes through every page */
        void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m == MAP_FAILED)
                return negative_errno();
        *p = m;
        return 0;
}

/* Everything the helper does; fills *res and fds[HELPER_FDS] (-1 where
 * none) and export[0..res->ca_len). No OpenSSL: the CA is nettle's
 * (tls/runca.c), the trust files trustfmt's; the module is only copied
 * (its first user is the run's first egress process). */
static int helper_work(const struct helper_job *j, struct tls_result *res, int fds[HELPER_FDS],
                       unsigned char *export, size_t export_max)
{
        struct trust_certs host = {0}, extra = {0};
        const char *btext = NULL, *utext = NULL;
        size_t blen = 0, ulen = 0;
        int r;

        /* the module and the trust files as they are now: the egress
         * processes load these snapshots, never the paths again */
        if ((r = rf_tls_module_snapshot(&fds[HF_MODULE])) < 0 ||
            (r = rf_tls_module_version(fds[HF_MODULE])) < 0) {
                char path[256] = "ringfence-tls.so";
                (void)rf_tls_module_path(path, sizeof path);
                return fail(res, r, "the TLS module %s could not be loaded: %s", path,
                            r == -EPROTO ? "it is of another version" : strerror(-r));
        }
        if ((r = fds[HF_BUNDLE] = snapshot_path(RF_TLS_HOST_BUNDLE, "ca-bundle")) >= 0 &&
            j->upstream_ca)
                r = fds[HF_UPSTREAM] = snapshot_path(j->upstream_ca, "upstream-ca");
        /* checked as the egress process's trust_load will read them */
        if (r >= 0 && (r = snapshot_map(fds[HF_BUNDLE], &btext, &blen)) >= 0)
                r = trust_certs_load(btext, blen, &host);
        if (r >= 0 && j->upstream_ca && (r = snapshot_map(fds[HF_UPSTREAM], &utext, &ulen)) >= 0)
                r = trust_certs_load(utext, ulen, &extra);
        if (r < 0)
                return fail(res, r,
                            "cannot read the host's CA bundle " RF_TLS_HOST_BUNDLE "%s%s: %s",
                            j->upstream_ca ? " or the upstream CA file " : "",
                            j->upstream_ca ? j->upstream_ca : "",
                            r == -EBADMSG  ? "no certificate in it"
                            : r == -EFBIG  ? "too large"
                            : r == -EINVAL ? "not a regular file"
                                           : strerror(-r));
        char *bundle = NULL, *pem = NULL;
        unsigned char *der = NULL, *java = NULL, salt[TRUST_P12_SALT_LEN];
        size_t der_len = 0, bundle_len = 0, pem_len = 0, java_len = 0, ca_len = 0;
        if ((r = runca_new(j->hosts, j->n_hosts, j->lifetime_s, time(NULL), &der, &der_len, export,
                           export_max, &ca_len)) < 0 ||
            (r = trust_pem_cert(der, der_len, &pem, &pem_len)) < 0 ||
            (r = trust_bundle_tail(blen > 0 && btext[blen - 1] != '\n', pem, pem_len, &bundle,
                                   &bundle_len)) < 0 ||
            (j->java &&
             (r = getrandom(salt, sizeof salt, 0) == (ssize_t)sizeof salt ? 0 : -EIO) < 0) ||
            (j->java && (r = trust_p12(der, der_len, &host, "changeit", salt, runca_p12_mac, NULL,
                                       &java, &java_len)) < 0))
                return fail(res, r, "cannot make the run's TLS authority: %s", strerror(-r));
        if (blen + bundle_len > j->bound || pem_len > j->bound || java_len > j->bound)
                return fail(res, -EFBIG, "the run's TLS trust files exceed %zu bytes", j->bound);
        const void *data[TRUST_FILES] = {bundle, pem, java};
        size_t len[TRUST_FILES] = {bundle_len, pem_len, java_len};
        if ((fds[HF_FILES] = files_memfd(fds[HF_BUNDLE], blen, data, len)) < 0)
                return fail(res, fds[HF_FILES], "cannot pass the run's TLS trust files: %s",
                            strerror(-fds[HF_FILES]));
        res->ca_len = (uint32_t)ca_len;
        return 0; /* nothing freed: the process ends now */
}

static int parse_u64(const char *s, uint64_t max, uint64_t *v)
{
        char *end = NULL;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 10);
        if (errno || !end || *end || end == s || s[0] == '-' || x > max)
                return -EINVAL;
        *v = x;
        return 0;
}

int main(int argc, char **argv)
{
        /* argv: ringfence RUN_TLS_HELPER_ARG PPID LIFETIME_S JAVA BOUND UPSTREAM HOST...
         * (UPSTREAM "-": none); the result goes to HELPER_FD, which must be a
         * SOCK_SEQPACKET socket: anything else (a person typing this) is
         * refused without a word */
        int type = 0;
        socklen_t tl = sizeof type;
        if (argc < 2 || strcmp(argv[1], RUN_TLS_HELPER_ARG) != 0)
                return 125;
        if (getsockopt(HELPER_FD, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET)
                return 125;
        /* nothing else of the caller's stays open here */
        (void)close_range(HELPER_FD + 1, ~0U, 0);
        /* the CA's keys: this process only (no core dump, no ptrace by the
         * same uid), and it dies with the supervisor */
        (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        uint64_t ppid = 0, life = 0, java = 0, bound = 0;
        if (argc < 8 || parse_u64(argv[2], INT32_MAX, &ppid) < 0 ||
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != (pid_t)ppid ||
            parse_u64(argv[3], UINT64_MAX, &life) < 0 || parse_u64(argv[4], 1, &java) < 0 ||
            parse_u64(argv[5], PLAN_TLS_FILE_MAX, &bound) < 0 ||
            (size_t)(argc - 7) > RF_TLS_MAX_HOSTS)
                return 125;
        /* the job, copied; then the arguments are wiped, so that
         * /proc/PID/cmdline shows no host or path of the run */
        static char hostbuf[RF_TLS_MAX_HOSTS][RF_TLS_HOST_MAX + 1];
        static const char *hosts[RF_TLS_MAX_HOSTS];
        static char upstream[PATH_MAX];
        size_t nh = (size_t)(argc - 7);
        for (size_t i = 0; i < nh; i++) {
                snprintf(hostbuf[i], sizeof hostbuf[i], "%s", argv[7 + i]);
                hosts[i] = hostbuf[i];
        }
        snprintf(upstream, sizeof upstream, "%s", argv[6]);
        for (int i = 1; i < argc; i++)
                explicit_bzero(argv[i], strlen(argv[i]));
        struct helper_job j = {
                .hosts = hosts,
                .n_hosts = nh,
                .upstream_ca = strcmp(upstream, "-") ? upstream : NULL,
                .lifetime_s = life,
                .java = java,
                .bound = (size_t)bound,
        };
        static unsigned char export[RF_TLS_CA_EXPORT_MAX] __attribute__((aligned(4096)));
        (void)madvise(export, sizeof export, MADV_DONTDUMP);
        (void)mlock(export, sizeof export);
        struct tls_result res = {0};
        int fds[HELPER_FDS] = {-1, -1, -1, -1};
        helper_work(&j, &res, fds, export, sizeof export);
        struct iovec iov[2] = {{.iov_base = &res, .iov_len = sizeof res},
                               {.iov_base = export, .iov_len = res.err ? 0 : res.ca_len}};
        char cbuf[CMSG_SPACE(sizeof fds)] = {0};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
        if (!res.err) {
                /* the fds in a fixed order; an absent one (no upstream CA
                 * file) is sent as the trust files again, never read */
                int out[HELPER_FDS];
                for (size_t i = 0; i < HELPER_FDS; i++)
                        out[i] = fds[i] >= 0 ? fds[i] : fds[HF_FILES];
                res.upstream = fds[HF_UPSTREAM] >= 0;
                mh.msg_control = cbuf;
                mh.msg_controllen = sizeof cbuf;
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof out);
                memcpy(CMSG_DATA(cm), out, sizeof out);
        }
        ssize_t n = RETRY_EINTR(sendmsg(HELPER_FD, &mh, MSG_NOSIGNAL));
        explicit_bzero(export, sizeof export);
        _exit(n < 0); /* no exit handlers: nothing of OpenSSL's is torn down */
}
