/*
 * test_synth.c — the run's synthetic address pool (src/egress/synth.c):
 * pool membership at its edges, assignment and lookup in both families,
 * the run's own address, exhaustion, the map datagram and every refusal
 * of its decoder, and the channel's order (synth_flush → synth_drain).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress/synth.h"
#include "tap.h"

static void v4(const char *s, uint8_t out[4])
{
        if (inet_pton(AF_INET, s, out) != 1)
                abort();
}

static void v6(const char *s, uint8_t out[16])
{
        if (inet_pton(AF_INET6, s, out) != 1)
                abort();
}

static bool in4(const char *s)
{
        uint8_t a[4];
        v4(s, a);
        return synth_in_pool(AF_INET, a);
}

static bool in6(const char *s)
{
        uint8_t a[16];
        v6(s, a);
        return synth_in_pool(AF_INET6, a);
}

static void test_pool(void)
{
        ok(in4("198.18.0.0") && in4("198.18.0.1") && in4("198.19.255.255"),
           "198.18.0.0/15: first, own and last address are in the pool");
        ok(!in4("198.17.255.255") && !in4("198.20.0.0") && !in4("10.0.0.1"),
           "the addresses either side of the /15 are not");
        ok(in6("fd52:6667:6e63::") && in6("fd52:6667:6e63::1") &&
                   in6("fd52:6667:6e63:0:ffff:ffff:ffff:ffff"),
           "fd52:6667:6e63::/64: first, own and last are in the pool");
        ok(!in6("fd52:6667:6e63:1::2") && !in6("fd52:6667:6e62:ffff:ffff:ffff:ffff:ffff") &&
                   !in6("::ffff:198.18.0.2"),
           "the next /64, the one before and a v4-mapped pool address are not");
        uint8_t a[16] = {0};
        ok(!synth_in_pool(AF_UNIX, a) && !synth_in_pool(AF_INET, NULL),
           "another family or no address: not in the pool");
}

static void test_assign(void)
{
        struct synth_map m = {0};
        bool fresh = false;
        int err = 0;
        uint8_t a[4], b[16];

        const struct synth_entry *e = synth_assign(&m, "api.example.com", &fresh, &err);
        ok(e && fresh && err == 0, "a first name gets an entry (fresh)");
        char t4[INET_ADDRSTRLEN], t6[INET6_ADDRSTRLEN];
        uint32_t n4 = htonl(e->v4);
        inet_ntop(AF_INET, &n4, t4, sizeof t4);
        inet_ntop(AF_INET6, e->v6, t6, sizeof t6);
        is_str(t4, "198.18.0.2", "... v4 is SYNTH_FIRST_HOST of the pool, not the run's own");
        is_str(t6, "fd52:6667:6e63::2", "... and so is v6");
        const struct synth_entry *f = synth_assign(&m, "api.example.com", &fresh, &err);
        ok(f == e && !fresh, "the same name again: the same entry, not fresh");
        e = synth_assign(&m, "b.example.com", &fresh, &err);
        ok(e && fresh && e->v4 == 0xc6120003u, "a second name: the next address (.3)");

        v4("198.18.0.2", a);
        is_str(synth_lookup(&m, AF_INET, a), "api.example.com", "lookup v4 .2 → the first name");
        v6("fd52:6667:6e63::3", b);
        is_str(synth_lookup(&m, AF_INET6, b), "b.example.com", "lookup v6 ::3 → the second name");
        v4("198.18.0.1", a);
        v6("fd52:6667:6e63::1", b);
        ok(!synth_lookup(&m, AF_INET, a) && !synth_lookup(&m, AF_INET6, b),
           "the run's own address is never looked up");
        v4("198.18.0.0", a);
        ok(!synth_lookup(&m, AF_INET, a), "the pool's network address: nothing");
        v4("198.18.0.4", a);
        v6("fd52:6667:6e63::4", b);
        ok(!synth_lookup(&m, AF_INET, a) && !synth_lookup(&m, AF_INET6, b),
           "a pool address never handed out: nothing");
        v6("fd52:6667:6e63:0:1:0:0:2", b);
        ok(!synth_lookup(&m, AF_INET6, b), "a v6 address with the high host bits set: nothing");
        v4("10.0.0.2", a);
        ok(!synth_lookup(&m, AF_INET, a), "an address outside the pool: nothing");

        ok(!synth_assign(&m, "API.example.com", &fresh, &err) && err == -EINVAL,
           "a name not canonical (upper case): -EINVAL");
        ok(!synth_assign(&m, "1.2.3.4", &fresh, &err) && err == -EINVAL, "an IP literal: -EINVAL");
        ok(!synth_assign(&m, "", &fresh, &err) && err == -EINVAL, "an empty name: -EINVAL");
        ok(!synth_assign(&m, "a.example.com.", &fresh, &err) && err == -EINVAL,
           "a trailing dot (not canonical): -EINVAL");
        is_int((int)m.n, 2, "refused names took no entry");
        synth_map_free(&m);
        ok(m.n == 0 && !m.v, "freed: empty");
}

static void test_exhaustion(void)
{
        struct synth_map m = {0};
        bool fresh = false;
        int err = 0;
        char name[32];
        bool all = true;

        for (int i = 0; i < SYNTH_NAMES_MAX; i++) {
                snprintf(name, sizeof name, "n%d.example", i);
                const struct synth_entry *e = synth_assign(&m, name, &fresh, &err);
                all = all && e && fresh && e->v4 == SYNTH_V4_NET + SYNTH_FIRST_HOST + (uint32_t)i;
        }
        ok(all, "SYNTH_NAMES_MAX names each get the next address");
        ok(!synth_assign(&m, "one-more.example", &fresh, &err) && err == -ENOSPC,
           "one more: -ENOSPC");
        ok(synth_assign(&m, "n7.example", &fresh, &err) && !fresh,
           "a name that has its address still gets it");
        uint8_t a[4];
        uint32_t last = htonl(SYNTH_V4_NET + SYNTH_FIRST_HOST + SYNTH_NAMES_MAX - 1);
        memcpy(a, &last, 4);
        snprintf(name, sizeof name, "n%d.example", SYNTH_NAMES_MAX - 1);
        is_str(synth_lookup(&m, AF_INET, a), name, "the last address looks up to the last name");
        synth_map_free(&m);
}

static void test_datagram(void)
{
        struct synth_map m = {0};
        bool fresh = false;
        int err = 0;
        uint8_t buf[SYNTH_ENTRY_MAX + 8], bad[SYNTH_ENTRY_MAX + 8];
        struct synth_entry d;

        synth_assign(&m, "a.example", &fresh, &err);
        const struct synth_entry *e = synth_assign(&m, "api.example.com", &fresh, &err);
        int k = synth_entry_encode(e, buf, sizeof buf);
        is_int(k, 2 + 4 + 16 + 15, "encode: header and name");
        ok(k > 0 && synth_entry_decode(buf, (size_t)k, &d) == 0 && !strcmp(d.name, e->name) &&
                   d.v4 == e->v4 && !memcmp(d.v6, e->v6, 16),
           "decode(encode(e)) == e");
        is_int(synth_entry_encode(e, buf, 20), -EINVAL, "encode into too little room: -EINVAL");
        {
                /* the longest canonical name (NET_HOST_MAX bytes) fits a datagram:
                 * one that did not stalled the channel for every later name */
                char longest[NET_HOST_MAX + 1];
                for (size_t i = 0; i < NET_HOST_MAX; i++)
                        longest[i] = (i % 64 == 63) ? '.' : 'a';
                longest[NET_HOST_MAX] = '\0';
                const struct synth_entry *le = synth_assign(&m, longest, &fresh, &err);
                int lk = le ? synth_entry_encode(le, buf, sizeof buf) : -1;
                is_int(lk, SYNTH_HDR + NET_HOST_MAX, "a name of NET_HOST_MAX bytes encodes whole");
                ok(lk > 0 && synth_entry_decode(buf, (size_t)lk, &d) == 0 &&
                           !strcmp(d.name, longest),
                   "... and decodes to itself");
                synth_forget_last(&m);
        }
        struct synth_entry x = *e;
        x.v4 = SYNTH_V4_SELF;
        is_int(synth_entry_encode(&x, buf, sizeof buf), -EINVAL,
               "encode an entry with the run's own address: -EINVAL");

        size_t n = (size_t)k;
#define REFUSED(what, ...)                                                                         \
        do {                                                                                       \
                memcpy(bad, buf, n);                                                               \
                size_t bl = n;                                                                     \
                __VA_ARGS__;                                                                       \
                is_int(synth_entry_decode(bad, bl, &d), -EINVAL, "decode refuses %s", what);       \
        } while (0)
        REFUSED("an empty datagram", bl = 0);
        REFUSED("a header without a name", bl = 22);
        REFUSED("a wrong version", bad[0] = 2);
        REFUSED("a name length longer than the datagram", bad[1]++);
        REFUSED("a name length shorter than the datagram", bad[1]--);
        REFUSED("trailing bytes", bad[bl++] = 'x');
        REFUSED("upper case in the name", bad[22] = 'A');
        REFUSED("a NUL in the name", bad[23] = '\0');
        REFUSED("a name with a trailing dot", bad[bl - 1] = '.');
        REFUSED("an IP literal for a name", memcpy(bad + 22, "1.2.3.4", 7); bad[1] = 7; bl = 29);
        REFUSED("a v4 outside the pool", bad[2] = 10);
        REFUSED("the run's own v4 (and v6)", bad[5] = 1; bad[21] = 1);
        REFUSED("the pool's network address", bad[5] = 0; bad[21] = 0);
        REFUSED("a v6 outside the pool", bad[6] = 0xfe);
        REFUSED("v6 host bits above the low 32", bad[14] = 1);
        REFUSED("v4 and v6 of different host parts", bad[21]++);
        REFUSED("a host part beyond SYNTH_NAMES_MAX",
                uint32_t h = SYNTH_FIRST_HOST + SYNTH_NAMES_MAX;
                bad[2] = 198; bad[3] = 18; bad[4] = (uint8_t)(h >> 8); bad[5] = (uint8_t)h;
                bad[20] = (uint8_t)(h >> 8); bad[21] = (uint8_t)h);
        uint8_t big[SYNTH_ENTRY_MAX + 1];
        memset(big, 'a', sizeof big);
        is_int(synth_entry_decode(big, sizeof big, &d), -EINVAL,
               "decode refuses a datagram longer than SYNTH_ENTRY_MAX");
        synth_map_free(&m);
}

static void test_add(void)
{
        struct synth_map sup = {0}, eg = {0};
        bool fresh = false;
        int err = 0;

        const struct synth_entry *a = synth_assign(&sup, "a.example", &fresh, &err);
        struct synth_entry ea = *a;
        const struct synth_entry *b = synth_assign(&sup, "b.example", &fresh, &err);
        struct synth_entry eb = *b;
        is_int(synth_add(&eg, &eb), -EPROTO, "an entry out of sequence (index 1 first): -EPROTO");
        is_int(synth_add(&eg, &ea), 1, "the next index: added");
        is_int(synth_add(&eg, &ea), 0, "an identical entry already held: known (0)");
        struct synth_entry other = ea;
        snprintf(other.name, sizeof other.name, "evil.example");
        is_int(synth_add(&eg, &other), -EPROTO,
               "another name for an address already handed out: -EPROTO");
        struct synth_entry dup = eb;
        snprintf(dup.name, sizeof dup.name, "a.example");
        is_int(synth_add(&eg, &dup), -EPROTO, "a known name under a new index: -EPROTO");
        is_int(synth_add(&eg, &eb), 1, "then the next one: added");
        is_int((int)eg.n, 2, "the egress map holds two");
        synth_map_free(&sup);
        synth_map_free(&eg);
}

static void test_channel(void)
{
        struct synth_map sup = {0}, eg = {0};
        bool fresh = false;
        int err = 0, tx = -1, rx = -1;

        is_int(synth_channel(&tx, &rx), 0, "the channel opens");
        ok((fcntl(tx, F_GETFL) & O_NONBLOCK) && (fcntl(tx, F_GETFD) & FD_CLOEXEC) &&
                   (fcntl(rx, F_GETFD) & FD_CLOEXEC),
           "tx is non-blocking, both ends close on exec");
        int type = 0;
        socklen_t tl = sizeof type;
        ok(getsockopt(rx, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_SEQPACKET,
           "a SOCK_SEQPACKET pair");
        synth_assign(&sup, "a.example", &fresh, &err);
        synth_assign(&sup, "b.example", &fresh, &err);
        is_int(synth_drain(rx, &eg), 0, "nothing sent yet: nothing drained");
        is_int(synth_flush(tx, &sup), 0, "flush sends both");
        is_int((int)sup.sent, 2, "... sent = 2");
        /* an egress process forked now inherits a copy of the map */
        struct synth_map inh = {0};
        synth_add(&inh, &sup.v[0]);
        synth_assign(&sup, "c.example", &fresh, &err);
        synth_flush(tx, &sup);
        is_int(synth_drain(rx, &eg), 3, "drained in order: 3 new entries");
        uint8_t a[4] = {198, 18, 0, 4};
        is_str(synth_lookup(&eg, AF_INET, a), "c.example", "the third looks up on the egress side");

        /* the inherited copy reads the same datagrams again: known ones are no change */
        synth_flush(tx, &(struct synth_map){0});
        for (size_t i = 0; i < sup.n; i++) {
                uint8_t buf[SYNTH_ENTRY_MAX];
                int k = synth_entry_encode(&sup.v[i], buf, sizeof buf);
                (void)!send(tx, buf, (size_t)k, 0);
        }
        is_int(synth_drain(rx, &inh), 2, "an inherited map: re-read entries are known, 2 new");

        /* an entry out of sequence breaks the channel */
        struct synth_map far = {0};
        for (int i = 0; i < 5; i++) {
                char n[16];
                snprintf(n, sizeof n, "x%d.example", i);
                synth_assign(&far, n, &fresh, &err);
        }
        uint8_t buf[SYNTH_ENTRY_MAX];
        int k = synth_entry_encode(&far.v[4], buf, sizeof buf);
        (void)!send(tx, buf, (size_t)k, 0);
        is_int(synth_drain(rx, &eg), -EPROTO, "an entry skipping indices: -EPROTO");
        (void)!send(tx, "\x01junk", 5, 0);
        is_int(synth_drain(rx, &eg), -EPROTO, "a datagram that does not decode: -EPROTO");

        /* forget_last: only what is not yet sent */
        is_int(synth_forget_last(&sup), -EBUSY, "forget a sent entry: -EBUSY");
        synth_assign(&sup, "d.example", &fresh, &err);
        is_int(synth_forget_last(&sup), 0, "forget an unsent one: 0");
        const struct synth_entry *e = synth_assign(&sup, "e.example", &fresh, &err);
        ok(e && e->v4 == 0xc6120005u, "... its address goes to the next name");

        close(tx);
        is_int(synth_drain(rx, &eg), -EPIPE, "the supervisor's end closed: -EPIPE");
        close(rx);
        synth_map_free(&sup);
        synth_map_free(&eg);
        synth_map_free(&inh);
        synth_map_free(&far);
}

int main(void)
{
        test_pool();
        test_assign();
        test_exhaustion();
        test_datagram();
        test_add();
        test_channel();
        return done();
}
