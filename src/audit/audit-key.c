/*
 * audit-key.c — the one reader of the instance's signing key
 * (STATE_DIR/audit/key), for the audit log's checkpoints and heads
 * (audit.c) and the run identity tokens (token.c).
 *
 * The key is 64 bytes of Ed25519 secret key (libsodium's seed || public
 * key), mode 0600 or stricter, a regular file reached without following a
 * symlink. Every refusal says why; whatever was read of a key that is then
 * refused (a short read) is wiped before returning, so no caller holds a
 * partial key it did not ask for.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit-internal.h"
#include "shared/macro.h"

int audit_key_read(int audit_dirfd, unsigned char sk[crypto_sign_SECRETKEYBYTES],
                   struct rf_error *err)
{
        _cleanup_close_ int fd = openat(audit_dirfd, "key", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) /* none yet: the caller says what that means (create one, or refuse) */
                return errno == ENOENT ? -ENOENT
                                       : rf_error_set(err, negative_errno(), "open audit key: %m");
        struct stat st;
        if (fstat(fd, &st) < 0)
                return rf_error_set(err, negative_errno(), "stat audit key: %m");
        if (!S_ISREG(st.st_mode) || st.st_size != crypto_sign_SECRETKEYBYTES)
                return rf_error_set(err, -EBADMSG, "audit key is not a %d-byte file",
                                    crypto_sign_SECRETKEYBYTES);
        if (st.st_mode & 077)
                return rf_error_set(err, -EPERM, "audit key is accessible to others (mode %03o)",
                                    (unsigned)(st.st_mode & 0777));
        ssize_t n = RETRY_EINTR(read(fd, sk, crypto_sign_SECRETKEYBYTES));
        if (n != crypto_sign_SECRETKEYBYTES) {
                int r = n < 0 ? negative_errno() : -EIO;
                sodium_memzero(sk, crypto_sign_SECRETKEYBYTES);
                return n < 0 ? rf_error_set(err, r, "read audit key: %s", strerror(-r))
                             : rf_error_set(err, r, "short read of audit key");
        }
        return 0;
}
