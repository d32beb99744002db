/*
 * fuzz_captured.c — libFuzzer target for the pure decisions of a captured
 * connection (src/egress/captured.c): captured_first_bytes, which reads
 * the first bytes the run sent, and captured_dest_decide, which reads the
 * original destination the run dialled.
 *
 * Input: byte 0 bit 0 picks the function.
 *   0 — the rest is the stream's first bytes, classified whole and then
 *       every prefix up to CAPTURED_METHOD_MAX + 3 bytes, each from a heap
 *       buffer of exactly its length (a read past it is an ASan report);
 *       and captured_first_whole asked of the whole and of every prefix
 *       up to WHOLE_PREFIXES bytes, with a buffer of (byte 0 >> 1) * 8
 *       bytes (0: a large one);
 *   1 — byte 1 bit 0 the family (AF_INET / AF_INET6; bit 1 set: a family
 *       that is neither), bit 2 map_ok, bit 3 no map at all, bits 4-6 how
 *       many names the map holds (0..7, assigned by synth_assign as the
 *       stub does); bytes 2-3 the port; the rest the address (zero-padded
 *       to 16 bytes).
 * Beyond "no crash, no UB", each answer is checked against captured.h:
 *   first bytes: one of the enum's values; nothing → NEED_MORE; TLS iff
 *   the first byte is a TLS content type (20..24); never NEED_MORE once
 *   CAPTURED_METHOD_MAX + 2 bytes are there; HTTP only for "METHOD SP"
 *   followed by '/', '*' or 'h'; and a prefix's answer is NEED_MORE or the
 *   answer for the whole (a decision does not depend on how the stream
 *   was cut into reads); whole: always once the buffer is full, else
 *   never while NEED_MORE, for TLS once the first record's length is
 *   there, for HTTP once a blank line is, for anything else at once; and
 *   once whole, whole for every longer prefix;
 *   destination: one of the enum's values and equal to out->kind; a
 *   refusal carries a reason and no name, a name no reason; loopback,
 *   unspecified, the run's own addresses and other families are refused;
 *   a pool address is a name only when the map is intact and the map's
 *   entry for that name has exactly this address, otherwise refused; a
 *   literal is never in the pool; the same question gets the same answer.
 * A disagreement aborts.
 */
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/captured.h"
#include "policy/addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

#define MAPS 8

/* maps[k] holds k names, assigned in order as the stub would (built once). */
static struct synth_map maps[MAPS];

static void maps_init(void)
{
        static bool done;
        if (done)
                return;
        done = true;
        for (size_t k = 0; k < MAPS; k++)
                for (size_t i = 0; i < k; i++) {
                        char name[32];
                        bool fresh = false;
                        int err = 0;
                        snprintf(name, sizeof name, "n%zu.example.com", i);
                        CHECK(synth_assign(&maps[k], name, &fresh, &err) != NULL && fresh);
                }
}

static enum captured_first first_copy(const uint8_t *data, size_t len)
{
        uint8_t *b = malloc(len ? len : 1);
        CHECK(b);
        memcpy(b, data, len);
        enum captured_first k = captured_first_bytes(b, len);
        free(b);
        return k;
}

/* Does buf open "METHOD SP x" with x one of '/', '*', 'h'? */
static bool http_line(const uint8_t *buf, size_t len)
{
        size_t i = 0;
        while (i < len && i < CAPTURED_METHOD_MAX && buf[i] >= 'A' && buf[i] <= 'Z')
                i++;
        return i > 0 && i + 1 < len && buf[i] == ' ' &&
               (buf[i + 1] == '/' || buf[i + 1] == '*' || buf[i + 1] == 'h');
}

#define WHOLE_PREFIXES 300

static bool whole_copy(const uint8_t *data, size_t len, size_t cap)
{
        uint8_t *b = malloc(len ? len : 1);
        CHECK(b);
        memcpy(b, data, len);
        bool w = captured_first_whole(b, len, cap);
        free(b);
        return w;
}

/* captured_first_whole's answer as captured.h states it */
static bool whole_expected(const uint8_t *buf, size_t len, size_t cap)
{
        if (len >= cap)
                return true;
        switch (captured_first_bytes(buf, len)) {
        case CAPF_NEED_MORE:
                return false;
        case CAPF_TLS:
                return len >= 5 && len - 5 >= (size_t)(buf[3] << 8 | buf[4]);
        case CAPF_HTTP: /* the head's end: CRLF CRLF, or LF LF (proxy.c reads both) */
                return memmem(buf, len, "\r\n\r\n", 4) || memmem(buf, len, "\n\n", 2);
        case CAPF_OTHER:
        default:
                return true;
        }
}

static void check_whole(const uint8_t *data, size_t len, size_t cap)
{
        CHECK(whole_copy(data, len, cap) == whole_expected(data, len, cap));
        bool was = false;
        for (size_t k = 0; k <= len && k <= WHOLE_PREFIXES; k++) {
                bool w = whole_copy(data, k, cap);
                CHECK(w == whole_expected(data, k, cap));
                CHECK(!was || w); /* once whole, whole */
                was = w;
        }
}

static void check_first(const uint8_t *data, size_t len)
{
        enum captured_first all = first_copy(data, len);
        CHECK(all >= CAPF_NEED_MORE && all < _CAPF_MAX);
        if (len == 0)
                CHECK(all == CAPF_NEED_MORE);
        else
                CHECK((all == CAPF_TLS) == (data[0] >= 20 && data[0] <= 24));
        if (len >= CAPTURED_METHOD_MAX + 2)
                CHECK(all != CAPF_NEED_MORE);
        if (all == CAPF_HTTP)
                CHECK(http_line(data, len));
        for (size_t k = 0; k < len && k <= CAPTURED_METHOD_MAX + 3; k++) {
                enum captured_first p = first_copy(data, k);
                CHECK(p == CAPF_NEED_MORE || p == all);
        }
}

static void check_dest(const uint8_t *data, size_t size)
{
        if (size < 4)
                return;
        uint8_t sel = data[1];
        int family = sel & 2 ? AF_UNIX : sel & 1 ? AF_INET6 : AF_INET;
        bool map_ok = sel & 4;
        const struct synth_map *m = sel & 8 ? NULL : &maps[(sel >> 4) & 7];
        uint16_t port = (uint16_t)(data[2] << 8 | data[3]);
        uint8_t addr[16] = {0};
        memcpy(addr, data + 4, size - 4 < 16 ? size - 4 : 16);

        struct captured_dest d, again;
        enum captured_kind k = captured_dest_decide(m, map_ok, family, addr, port, &d);
        CHECK(k >= CAPD_NAME && k < _CAPD_MAX && k == d.kind);
        CHECK(captured_dest_decide(m, map_ok, family, addr, port, &again) == k);
        CHECK(again.name == d.name && again.reason == d.reason);
        if (k == CAPD_REFUSE)
                CHECK(d.reason && d.reason[0] && !d.name);
        else
                CHECK(!d.reason);
        if (family != AF_INET && family != AF_INET6) {
                CHECK(k == CAPD_REFUSE);
                return;
        }

        enum addr_class c = addr_classify(addr, family);
        if (c == ADDR_LOOPBACK || c == ADDR_UNSPECIFIED)
                CHECK(k == CAPD_REFUSE);
        static const uint8_t self4[4] = {198, 18, 0, 1};
        static const uint8_t self6[16] = SYNTH_V6_NET;
        if (family == AF_INET ? !memcmp(addr, self4, 4) : !memcmp(addr, self6, 15) && addr[15] == 1)
                CHECK(k == CAPD_REFUSE);

        bool pool = synth_in_pool(family, addr);
        if (k == CAPD_LITERAL)
                CHECK(!pool);
        if (pool && (!map_ok || !m))
                CHECK(k == CAPD_REFUSE);
        if (k == CAPD_NAME) {
                CHECK(pool && map_ok && m && d.name);
                /* the name's own entry holds exactly this address */
                size_t i = 0;
                while (i < m->n && m->v[i].name != d.name)
                        i++;
                CHECK(i < m->n);
                const struct synth_entry *e = &m->v[i];
                if (family == AF_INET) {
                        uint8_t v4[4] = {(uint8_t)(e->v4 >> 24), (uint8_t)(e->v4 >> 16),
                                         (uint8_t)(e->v4 >> 8), (uint8_t)e->v4};
                        CHECK(!memcmp(addr, v4, 4));
                } else {
                        CHECK(!memcmp(addr, e->v6, 16));
                }
        }
        /* every name the map holds is reachable by its own addresses, and by nothing else */
        if (pool && map_ok && m && k == CAPD_REFUSE && c != ADDR_LOOPBACK) {
                for (size_t i = 0; i < m->n; i++) {
                        const struct synth_entry *e = &m->v[i];
                        uint8_t v4[4] = {(uint8_t)(e->v4 >> 24), (uint8_t)(e->v4 >> 16),
                                         (uint8_t)(e->v4 >> 8), (uint8_t)e->v4};
                        CHECK(family == AF_INET ? memcmp(addr, v4, 4) != 0
                                                : memcmp(addr, e->v6, 16) != 0);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        maps_init();
        if (size < 1)
                return 0;
        if (data[0] & 1)
                check_dest(data, size);
        else {
                check_first(data + 1, size - 1);
                check_whole(data + 1, size - 1, data[0] >> 1 ? (size_t)(data[0] >> 1) * 8 : 65536);
        }
        return 0;
}
