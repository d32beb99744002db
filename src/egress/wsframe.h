/*
 * wsframe.h — where the frame headers are in a WebSocket server's byte
 * stream (RFC 6455 section 5.2), for the response scrubber.
 *
 * A WebSocket opened toward an injection host is relayed as a tunnel whose
 * bytes from the server are scrubbed of the injected value. Frame headers
 * between frames split a value just as chunk framing does, so the scrubber
 * reads the payloads as one stream past the headers this parser marks.
 * Frames it cannot see into are refused: any RSV bit set (an extension,
 * e.g. permessage-deflate compression) and masked frames (a server never
 * masks). Pure, incremental, fuzzed (fuzz_http).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ws_frames {
        uint8_t hdr[14]; /* the header being read: 2 + up to 8 length + (4 mask) */
        size_t have;     /* its bytes so far */
        uint64_t left;   /* payload bytes still to come of the current frame */
};

/* ws_frames_init — before the first byte after the 101. */
void ws_frames_init(struct ws_frames *w);

/*
 * ws_frames_feed — read buf[len], marking in `framing` (bit b + i for
 * buf[i], LSB first) every byte of a frame header; payload bytes stay
 * unmarked. Returns len, or -EBADMSG with *why for a frame the scrubber
 * cannot read (RSV bits, a mask, a 64-bit length with its top bit set).
 */
ssize_t ws_frames_feed(struct ws_frames *w, const uint8_t *buf, size_t len, uint8_t *framing,
                       size_t b, const char **why);
