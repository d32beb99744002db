/*
 * hmac.c — HMAC-SHA256 over ranges of files (hmac.h).
 */
#include <errno.h>
#include <nettle/hmac.h>
#include <string.h>
#include <unistd.h>

#include "shared/hmac.h"
#include "shared/macro.h"

int hmac_sha256_ranges(const unsigned char *key, size_t key_len, const struct fd_range *r, size_t n,
                       unsigned char mac[HMAC_SHA256_LEN])
{
        unsigned char buf[16384];
        struct hmac_sha256_ctx hm;
        int ret = 0;

        hmac_sha256_set_key(&hm, key_len, key);
        for (size_t i = 0; i < n && ret == 0; i++) {
                if (r[i].mem) {
                        hmac_sha256_update(&hm, r[i].len, r[i].mem);
                        continue;
                }
                long long off = r[i].off;
                size_t left = r[i].len;
                /* one buffer: its pages are faulted in once, whatever the sizes */
                while (left) {
                        ssize_t k = pread(r[i].fd, buf, left < sizeof buf ? left : sizeof buf,
                                          (off_t)off);
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k <= 0) {
                                ret = k < 0 ? negative_errno() : -EIO;
                                break;
                        }
                        hmac_sha256_update(&hm, (size_t)k, buf);
                        off += k;
                        left -= (size_t)k;
                }
        }
        if (ret == 0)
                hmac_sha256_digest(&hm, HMAC_SHA256_LEN, mac);
        explicit_bzero(&hm, sizeof hm);
        explicit_bzero(buf, sizeof buf);
        return ret;
}
