/*
 * synth.c — the run's synthetic address pool and its map. See synth.h.
 *
 * Design: entry i of the map holds host part SYNTH_FIRST_HOST + i in both
 * pools, so an address turns back into its name by arithmetic (no search)
 * and a datagram's two addresses check each other. A name is looked up by
 * a linear scan (at most SYNTH_NAMES_MAX names, only when the stub answers
 * A or AAAA for an allowed name).
 *
 * Threat notes: the map datagrams come from the supervisor, but the
 * egress process decodes them as if they did not (synth_entry_decode is
 * fuzzed): a name that is not canonical, an address outside the pool, the
 * run's own, or a pair of addresses that disagree is refused, and
 * synth_add refuses anything out of sequence, so an entry can never
 * redirect an address already handed out to another name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/synth.h"
#include "shared/macro.h"

#define SYNTH_VERSION 1
_Static_assert(NET_HOST_MAX <= 255, "a name's length is one byte of the datagram");

static const uint8_t v6_net[16] = SYNTH_V6_NET;

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)(v >> 24);
        p[1] = (uint8_t)(v >> 16);
        p[2] = (uint8_t)(v >> 8);
        p[3] = (uint8_t)v;
}

bool synth_in_pool(int family, const uint8_t *addr)
{
        if (!addr)
                return false;
        if (family == AF_INET)
                return (get32(addr) >> (32 - SYNTH_V4_PREFIX)) ==
                       (SYNTH_V4_NET >> (32 - SYNTH_V4_PREFIX));
        if (family == AF_INET6)
                return memcmp(addr, v6_net, SYNTH_V6_PREFIX / 8) == 0;
        return false;
}

/* The host part of a pool address, or 0 if it is not one a name can have
 * (outside the pool, the network or the run's own address, beyond the
 * names a run may have). */
static uint32_t host_part(int family, const uint8_t *addr)
{
        uint32_t h;
        if (!synth_in_pool(family, addr))
                return 0;
        if (family == AF_INET) {
                h = get32(addr) - SYNTH_V4_NET;
        } else {
                static const uint8_t zero[4];
                if (memcmp(addr + 8, zero, 4) != 0) /* host parts fit in 32 bits */
                        return 0;
                h = get32(addr + 12);
        }
        if (h < SYNTH_FIRST_HOST || h - SYNTH_FIRST_HOST >= SYNTH_NAMES_MAX)
                return 0;
        return h;
}

/* A canonical name (net_host_canonical leaves it as it is) that is not an IP literal. */
static bool name_ok(const char *name, size_t len)
{
        char canon[NET_HOST_MAX + 1];
        const char *why = NULL;
        if (len == 0 || len > NET_HOST_MAX || memchr(name, '\0', len))
                return false;
        if (net_host_canonical(name, len, canon, &why) < 0)
                return false;
        return strlen(canon) == len && memcmp(canon, name, len) == 0 &&
               !net_host_is_ip_spelling(canon);
}

static void fill(struct synth_entry *e, size_t index)
{
        uint32_t h = SYNTH_FIRST_HOST + (uint32_t)index;
        e->v4 = SYNTH_V4_NET + h;
        memcpy(e->v6, v6_net, 16);
        put32(e->v6 + 12, h);
}

static int grow(struct synth_map *m)
{
        if (m->n < m->cap)
                return 0;
        size_t cap = m->cap ? m->cap * 2 : 16;
        if (cap > SYNTH_NAMES_MAX)
                cap = SYNTH_NAMES_MAX;
        struct synth_entry *v = realloc(m->v, cap * sizeof *v);
        if (!v)
                return -ENOMEM;
        m->v = v;
        m->cap = cap;
        return 0;
}

static struct synth_entry *find_name(const struct synth_map *m, const char *name)
{
        for (size_t i = 0; i < m->n; i++)
                if (!strcmp(m->v[i].name, name))
                        return &m->v[i];
        return NULL;
}

const struct synth_entry *synth_assign(struct synth_map *m, const char *name, bool *fresh, int *err)
{
        *fresh = false;
        *err = 0;
        if (!name || !name_ok(name, strnlen(name, NET_HOST_MAX + 1))) {
                *err = -EINVAL;
                return NULL;
        }
        struct synth_entry *e = find_name(m, name);
        if (e)
                return e;
        if (m->n >= SYNTH_NAMES_MAX) {
                *err = -ENOSPC;
                return NULL;
        }
        int r = grow(m);
        if (r < 0) {
                *err = r;
                return NULL;
        }
        e = &m->v[m->n];
        memset(e, 0, sizeof *e);
        snprintf(e->name, sizeof e->name, "%s", name);
        fill(e, m->n);
        m->n++;
        *fresh = true;
        return e;
}

const char *synth_lookup(const struct synth_map *m, int family, const uint8_t *addr)
{
        uint32_t h = host_part(family, addr);
        if (h == 0 || h - SYNTH_FIRST_HOST >= m->n)
                return NULL;
        return m->v[h - SYNTH_FIRST_HOST].name;
}

size_t synth_index(const struct synth_map *m, const struct synth_entry *e)
{
        return (size_t)(e - m->v);
}

/* An entry's addresses: both in the pool, names' host parts, and equal ones. */
static bool addrs_ok(const struct synth_entry *e)
{
        uint8_t v4[4];
        put32(v4, e->v4);
        uint32_t h4 = host_part(AF_INET, v4), h6 = host_part(AF_INET6, e->v6);
        return h4 != 0 && h4 == h6;
}

int synth_entry_encode(const struct synth_entry *e, uint8_t *buf, size_t cap)
{
        size_t len = strnlen(e->name, sizeof e->name);
        if (!name_ok(e->name, len) || !addrs_ok(e) || cap < SYNTH_HDR + len)
                return -EINVAL;
        buf[0] = SYNTH_VERSION;
        buf[1] = (uint8_t)len;
        put32(buf + 2, e->v4);
        memcpy(buf + 6, e->v6, 16);
        memcpy(buf + SYNTH_HDR, e->name, len);
        return (int)(SYNTH_HDR + len);
}

int synth_entry_decode(const uint8_t *buf, size_t len, struct synth_entry *e)
{
        memset(e, 0, sizeof *e);
        if (len < SYNTH_HDR + 1 || len > SYNTH_ENTRY_MAX || buf[0] != SYNTH_VERSION ||
            (size_t)buf[1] != len - SYNTH_HDR)
                return -EINVAL;
        size_t nl = buf[1];
        if (!name_ok((const char *)buf + SYNTH_HDR, nl))
                return -EINVAL;
        memcpy(e->name, buf + SYNTH_HDR, nl);
        e->name[nl] = '\0';
        e->v4 = get32(buf + 2);
        memcpy(e->v6, buf + 6, 16);
        if (!addrs_ok(e)) {
                memset(e, 0, sizeof *e);
                return -EINVAL;
        }
        return 0;
}

int synth_add(struct synth_map *m, const struct synth_entry *e)
{
        uint8_t v4[4];
        put32(v4, e->v4);
        uint32_t h = host_part(AF_INET, v4);
        if (h == 0 || !addrs_ok(e))
                return -EPROTO;
        size_t i = h - SYNTH_FIRST_HOST;
        if (i < m->n) /* known (inherited at the fork): must be the same */
                return strcmp(m->v[i].name, e->name) || m->v[i].v4 != e->v4 ||
                                       memcmp(m->v[i].v6, e->v6, 16)
                               ? -EPROTO
                               : 0;
        if (i != m->n || find_name(m, e->name))
                return -EPROTO;
        int r = grow(m);
        if (r < 0)
                return r;
        m->v[m->n++] = *e;
        return 1;
}

int synth_drain(int fd, struct synth_map *m)
{
        int added = 0;
        for (;;) {
                uint8_t buf[SYNTH_ENTRY_MAX + 1];
                ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return added;
                        return negative_errno();
                }
                if (k == 0)
                        return -EPIPE; /* SOCK_SEQPACKET: the supervisor's end is gone */
                struct synth_entry e;
                if ((size_t)k > SYNTH_ENTRY_MAX || synth_entry_decode(buf, (size_t)k, &e) < 0)
                        return -EPROTO;
                int r = synth_add(m, &e);
                if (r < 0)
                        return r;
                added += r;
        }
}

int synth_channel(int *tx, int *rx)
{
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return negative_errno();
        int size = SYNTH_CHANNEL_BUF;
        if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0)
                (void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        int fl = fcntl(sv[0], F_GETFL);
        if (fl < 0 || fcntl(sv[0], F_SETFL, fl | O_NONBLOCK) < 0) {
                int r = negative_errno();
                safe_close(sv[0]);
                safe_close(sv[1]);
                return r;
        }
        *tx = sv[0];
        *rx = sv[1];
        return 0;
}

int synth_flush(int fd, struct synth_map *m)
{
        while (m->sent < m->n) {
                uint8_t buf[SYNTH_ENTRY_MAX];
                int k = synth_entry_encode(&m->v[m->sent], buf, sizeof buf);
                if (k < 0)
                        return k;
                if (send(fd, buf, (size_t)k, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
                }
                m->sent++;
        }
        return 0;
}

int synth_forget_last(struct synth_map *m)
{
        if (m->n == 0 || m->n <= m->sent)
                return -EBUSY;
        m->n--;
        memset(&m->v[m->n], 0, sizeof m->v[m->n]);
        return 0;
}

void synth_map_free(struct synth_map *m)
{
        if (!m)
                return;
        free(m->v);
        *m = (struct synth_map){0};
}
