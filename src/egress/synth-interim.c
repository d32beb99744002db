/*
 * synth-interim.c — TEMPORARY: the part of synth.h the egress process
 * uses (pool test, lookup, drain), only so the `tproxy` branch builds and
 * tests before dnssynth's synth.c is merged. meson.build compiles this
 * file only when src/egress/synth.c does not exist; delete it once
 * synth.c is on main (the lead). Written from synth.h alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/synth.h"
#include "shared/macro.h"

bool synth_in_pool(int family, const uint8_t *addr)
{
        static const uint8_t net6[16] = SYNTH_V6_NET;
        if (family == AF_INET) {
                uint32_t a = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
                             (uint32_t)addr[2] << 8 | addr[3];
                return (a >> (32 - SYNTH_V4_PREFIX)) == (SYNTH_V4_NET >> (32 - SYNTH_V4_PREFIX));
        }
        return family == AF_INET6 && !memcmp(addr, net6, SYNTH_V6_PREFIX / 8);
}

/* The host part of a pool address (v4: the low 17 bits; v6: the low 64). */
static uint64_t host_part(int family, const uint8_t *addr)
{
        uint64_t h = 0;
        if (family == AF_INET)
                return ((uint32_t)addr[1] & 1) << 16 | (uint32_t)addr[2] << 8 | addr[3];
        for (int i = 8; i < 16; i++)
                h = h << 8 | addr[i];
        return h;
}

const char *synth_lookup(const struct synth_map *m, int family, const uint8_t *addr)
{
        if (!synth_in_pool(family, addr))
                return NULL;
        uint64_t h = host_part(family, addr);
        if (h < SYNTH_FIRST_HOST || h - SYNTH_FIRST_HOST >= m->n)
                return NULL;
        const struct synth_entry *e = &m->v[h - SYNTH_FIRST_HOST];
        if (family == AF_INET) {
                uint32_t a = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
                             (uint32_t)addr[2] << 8 | addr[3];
                return a == e->v4 ? e->name : NULL;
        }
        return !memcmp(addr, e->v6, 16) ? e->name : NULL;
}

int synth_entry_decode(const uint8_t *buf, size_t len, struct synth_entry *e)
{
        if (len < 22 || buf[0] != 1 || buf[1] == 0 || len != 22u + buf[1] || buf[1] > NET_HOST_MAX)
                return -EINVAL;
        memset(e, 0, sizeof *e);
        e->v4 = (uint32_t)buf[2] << 24 | (uint32_t)buf[3] << 16 | (uint32_t)buf[4] << 8 | buf[5];
        memcpy(e->v6, buf + 6, 16);
        memcpy(e->name, buf + 22, buf[1]);
        uint8_t a4[4] = {buf[2], buf[3], buf[4], buf[5]};
        if (memchr(e->name, '\0', buf[1]) || !synth_in_pool(AF_INET, a4) ||
            !synth_in_pool(AF_INET6, e->v6) || host_part(AF_INET, a4) < SYNTH_FIRST_HOST ||
            host_part(AF_INET, a4) != host_part(AF_INET6, e->v6))
                return -EINVAL;
        return 0;
}

int synth_drain(int fd, struct synth_map *m)
{
        int got = 0;
        for (;;) {
                uint8_t buf[SYNTH_ENTRY_MAX + 1];
                ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n < 0)
                        return errno == EAGAIN ? got : negative_errno();
                struct synth_entry e;
                if (n == 0 || synth_entry_decode(buf, (size_t)n, &e) < 0)
                        return -EBADMSG;
                uint8_t a4[4] = {(uint8_t)(e.v4 >> 24), (uint8_t)(e.v4 >> 16), (uint8_t)(e.v4 >> 8),
                                 (uint8_t)e.v4};
                if (host_part(AF_INET, a4) - SYNTH_FIRST_HOST != m->n)
                        return -EBADMSG;
                if (m->n == m->cap) {
                        size_t cap = m->cap ? 2 * m->cap : 16;
                        struct synth_entry *v = realloc(m->v, cap * sizeof *v);
                        if (!v)
                                return -ENOMEM;
                        m->v = v;
                        m->cap = cap;
                }
                m->v[m->n++] = e;
                got++;
        }
}

void synth_map_free(struct synth_map *m)
{
        free(m->v);
        m->v = NULL;
        m->n = m->cap = 0;
}
