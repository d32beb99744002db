/*
 * wsframe.c — WebSocket frame headers in a server's byte stream, marked for
 * the response scrubber. See wsframe.h.
 *
 * Threat notes: the server (and through a reflecting endpoint, the run)
 * controls every byte; lengths are 64-bit and only ever compared and
 * subtracted; a header never exceeds 14 bytes.
 */
#include <errno.h>
#include <string.h>

#include "egress/wsframe.h"

void ws_frames_init(struct ws_frames *w)
{
        memset(w, 0, sizeof *w);
}

/* Header bytes needed once its first two are known. */
static size_t header_len(const uint8_t h[2])
{
        uint8_t l7 = h[1] & 0x7f;
        return 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0) + ((h[1] & 0x80) ? 4 : 0);
}

ssize_t ws_frames_feed(struct ws_frames *w, const uint8_t *buf, size_t len, uint8_t *framing,
                       size_t b, const char **why)
{
        size_t i = 0;
        while (i < len) {
                if (w->left) {
                        size_t n = len - i;
                        if ((uint64_t)n > w->left)
                                n = (size_t)w->left;
                        w->left -= n;
                        i += n;
                        continue;
                }
                framing[(b + i) / 8] |= (uint8_t)(1u << ((b + i) % 8));
                w->hdr[w->have++] = buf[i++];
                if (w->have < 2)
                        continue;
                if (w->have == 2) {
                        if (w->hdr[0] & 0x70) {
                                *why = "a WebSocket frame with RSV bits (an extension such as "
                                       "compression)";
                                return -EBADMSG;
                        }
                        if (w->hdr[1] & 0x80) {
                                *why = "a masked WebSocket frame from the server";
                                return -EBADMSG;
                        }
                }
                size_t need = header_len(w->hdr);
                if (w->have < need)
                        continue;
                uint8_t l7 = w->hdr[1] & 0x7f;
                uint64_t n = l7;
                if (l7 == 126)
                        n = (uint64_t)w->hdr[2] << 8 | w->hdr[3];
                else if (l7 == 127) {
                        n = 0;
                        for (size_t k = 2; k < 10; k++)
                                n = n << 8 | w->hdr[k];
                        if (n >> 63) {
                                *why = "a WebSocket frame length with its top bit set";
                                return -EBADMSG;
                        }
                }
                w->left = n;
                w->have = 0;
        }
        return (ssize_t)len;
}
