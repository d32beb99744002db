/*
 * seccomp-export.c — a libseccomp filter as the BPF program a plan carries
 * (seccomp-export.h). Linked only where libseccomp is: the build-time
 * generator of ringfence's own filter (seccomp-gen) and ringfence-oci,
 * which compiles a container's own profile (oci/seccomp.c).
 */
#include <errno.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sandbox/seccomp-export.h"
#include "shared/macro.h"

/* Export the filter as BPF into a buffer of our own (libseccomp 2.5 writes
 * only to an fd: a memfd, read back). */
int seccomp_export(scmp_filter_ctx ctx, struct rf_seccomp_plan *out, struct rf_error *err)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ struct sock_filter *buf = NULL;
        off_t size;
        size_t got = 0;
        int r;

        fd = memfd_create("ringfence-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return rf_error_set(err, negative_errno(), "seccomp filter: memfd_create: %s",
                                    strerror(errno));
        if ((r = seccomp_export_bpf(ctx, fd)) < 0)
                return rf_error_set(err, r, "seccomp filter: cannot export: %s", strerror(-r));
        size = lseek(fd, 0, SEEK_END);
        if (size < 0)
                return rf_error_set(err, negative_errno(), "seccomp filter: %s", strerror(errno));
        if (size == 0 || size % (off_t)sizeof *buf != 0 || size / (off_t)sizeof *buf > BPF_MAXINSNS)
                return rf_error_set(err, -E2BIG, "seccomp filter: bad program size %lld bytes",
                                    (long long)size);
        buf = malloc((size_t)size);
        if (!buf)
                return -ENOMEM;
        while (got < (size_t)size) {
                ssize_t n = pread(fd, (char *)buf + got, (size_t)size - got, (off_t)got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return rf_error_set(err, n < 0 ? negative_errno() : -EIO,
                                            "seccomp filter: cannot read back the program");
                got += (size_t)n;
        }
        free(out->filter);
        out->filter = TAKE_PTR(buf);
        out->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
        return 0;
}
