/*
 * fuzz_synth.c — libFuzzer target for the synthetic map's datagrams
 * (src/egress/synth.c): synth_entry_decode, and the sequencing the egress
 * process applies to what it reads (synth_add, as synth_drain does).
 *
 * Input: a sequence of datagrams, each a 2-byte big-endian length then
 * that many bytes (a short tail is one last datagram). Each is copied into a heap
 * buffer of exactly its length (a read past it is an ASan report) and
 * decoded; an accepted one must encode back to exactly its bytes, name a
 * canonical name and two pool addresses of one host part, and is then
 * added to a map. What synth.h promises is checked after each step: an
 * add that returns 1 grew the map by one at the next index and the
 * entry's addresses look up to its name; 0 or an error changed nothing;
 * no address of the map ever looks up to another name than the one it
 * was first given for; the run's own addresses look up to nothing. A
 * disagreement aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/synth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_map(const struct synth_map *m)
{
        static const uint8_t self4[4] = {198, 18, 0, 1};
        static const uint8_t self6[16] = {0xfd, 0x52, 0x66, 0x67, 0x6e, 0x63, 0, 0,
                                          0,    0,    0,    0,    0,    0,    0, 1};
        if (synth_lookup(m, AF_INET, self4) || synth_lookup(m, AF_INET6, self6))
                abort();
        for (size_t i = 0; i < m->n; i++) {
                const struct synth_entry *e = &m->v[i];
                uint8_t a[4] = {(uint8_t)(e->v4 >> 24), (uint8_t)(e->v4 >> 16),
                                (uint8_t)(e->v4 >> 8), (uint8_t)e->v4};
                const char *n4 = synth_lookup(m, AF_INET, a),
                           *n6 = synth_lookup(m, AF_INET6, e->v6);
                if (!n4 || !n6 || strcmp(n4, e->name) || strcmp(n6, e->name))
                        abort();
                if (e->v4 != SYNTH_V4_NET + SYNTH_FIRST_HOST + i)
                        abort();
                for (size_t j = 0; j < i; j++)
                        if (!strcmp(m->v[j].name, e->name))
                                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct synth_map m = {0};
        size_t p = 0;

        while (p < size) {
                size_t len = data[p++];
                if (p < size)
                        len = len << 8 | data[p++];
                if (len > size - p)
                        len = size - p;
                uint8_t *buf = malloc(len ? len : 1);
                if (!buf)
                        break;
                memcpy(buf, data + p, len);
                p += len;
                struct synth_entry e;
                int r = synth_entry_decode(buf, len, &e);
                if (r == 0) {
                        uint8_t back[SYNTH_ENTRY_MAX];
                        int k = synth_entry_encode(&e, back, sizeof back);
                        if (k < 0 || (size_t)k != len || memcmp(back, buf, len))
                                abort();
                        if (!synth_in_pool(AF_INET, back + 2) || !synth_in_pool(AF_INET6, back + 6))
                                abort();
                        size_t before = m.n;
                        struct synth_map old = m;
                        r = synth_add(&m, &e);
                        if (r == 1) {
                                if (m.n != before + 1 || strcmp(m.v[before].name, e.name))
                                        abort();
                        } else if (m.n != before || (r != 0 && r != -EPROTO && r != -ENOMEM) ||
                                   (r == 0 && (before == 0 || old.v != m.v))) {
                                abort();
                        }
                } else if (r != -EINVAL) {
                        abort();
                }
                free(buf);
                check_map(&m);
        }
        synth_map_free(&m);
        return 0;
}
