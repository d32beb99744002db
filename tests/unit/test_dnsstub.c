/*
 * test_dnsstub.c — the run's stub resolver (src/egress/dnsstub.c), over
 * real UDP on loopback: without capture every query is REFUSED as before;
 * under capture an allowed name gets its pool address (A and AAAA, TTL
 * SYNTH_TTL) with the map entry on the channel before the answer is
 * read, other types NOERROR with no data, names the policy does not allow
 * NXDOMAIN, tunnelling-shaped queries REFUSED, `--add-host` alone
 * nothing, exhaustion REFUSED once recorded, a full channel SERVFAIL, an
 * assignment that cannot be recorded SERVFAIL and undone. Every refusal
 * under capture is also counted for the end-of-run summary, under the
 * canonical name with what would let the run resolve it (dnsstub_name_fix);
 * answered names and refusals without capture are not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "audit/emit.h"
#include "egress/dnsstub.h"
#include "egress/egress.h"
#include "sandbox/msg.h"
#include "tap.h"

static int stub = -1, client = -1;

static void sockets(void)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        stub = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        client = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (stub < 0 || client < 0 || bind(stub, (struct sockaddr *)&a, sizeof a) < 0 ||
            getsockname(stub, (struct sockaddr *)&a, &al) < 0 ||
            connect(client, (struct sockaddr *)&a, sizeof a) < 0) {
                perror("loopback UDP");
                exit(1);
        }
}

/* A query for `name` (dotted, no escapes). */
static size_t query(uint8_t *b, uint16_t id, const char *name, uint16_t qtype, uint16_t qclass,
                    unsigned opcode)
{
        memset(b, 0, 12);
        b[0] = (uint8_t)(id >> 8);
        b[1] = (uint8_t)id;
        b[2] = (uint8_t)(opcode << 3 | 0x01); /* RD */
        b[5] = 1;
        size_t p = 12;
        const char *s = name;
        while (*s) {
                const char *dot = strchr(s, '.');
                size_t l = dot ? (size_t)(dot - s) : strlen(s);
                b[p++] = (uint8_t)l;
                memcpy(b + p, s, l);
                p += l;
                s += l + (dot ? 1 : 0);
        }
        b[p++] = 0;
        b[p++] = (uint8_t)(qtype >> 8);
        b[p++] = (uint8_t)qtype;
        b[p++] = (uint8_t)(qclass >> 8);
        b[p++] = (uint8_t)qclass;
        return p;
}

struct ans {
        int rcode; /* -1: no answer */
        unsigned id, ancount, flags;
        uint16_t type;
        uint32_t ttl;
        uint8_t rdata[16];
        size_t rdlen;
        char qname_echo[300];
};

/* Ask the stub (served here, synchronously) and read its answer. */
static struct ans ask_full(const struct dnsstub_ctx *c, const char *name, uint16_t qtype,
                           uint16_t qclass, unsigned opcode)
{
        static uint16_t id = 0x1000;
        uint8_t q[600], r[1500];
        struct ans a = {.rcode = -1};
        size_t n = query(q, ++id, name, qtype, qclass, opcode);
        if (send(client, q, n, 0) != (ssize_t)n)
                return a;
        if (dnsstub_serve(stub, c) != 1)
                return a;
        ssize_t k = recv(client, r, sizeof r, MSG_DONTWAIT);
        if (k < 12)
                return a;
        a.id = (unsigned)(r[0] << 8 | r[1]);
        a.flags = (unsigned)(r[2] << 8 | r[3]);
        a.rcode = r[3] & 0x0f;
        a.ancount = (unsigned)(r[6] << 8 | r[7]);
        if (a.id != id || (size_t)k < n || memcmp(r + 12, q + 12, n - 12) != 0)
                return (struct ans){.rcode = -2}; /* not the answer to this question */
        if (a.ancount == 1 && (size_t)k >= n + 12) {
                const uint8_t *p = r + n;
                if (p[0] != 0xc0 || p[1] != 12)
                        return (struct ans){.rcode = -3};
                a.type = (uint16_t)(p[2] << 8 | p[3]);
                a.ttl = (uint32_t)p[6] << 24 | (uint32_t)p[7] << 16 | (uint32_t)p[8] << 8 | p[9];
                a.rdlen = (size_t)(p[10] << 8 | p[11]);
                if (a.rdlen > 16 || (size_t)k != n + 12 + a.rdlen)
                        return (struct ans){.rcode = -4};
                memcpy(a.rdata, p + 12, a.rdlen);
        }
        return a;
}

static struct ans ask(const struct dnsstub_ctx *c, const char *name, uint16_t qtype)
{
        return ask_full(c, name, qtype, 1, 0);
}

static char *addr_text(const struct ans *a)
{
        static char t[INET6_ADDRSTRLEN];
        if (!inet_ntop(a->rdlen == 4 ? AF_INET : AF_INET6, a->rdata, t, sizeof t))
                snprintf(t, sizeof t, "?");
        return t;
}

/* The map datagram waiting on rx, decoded; false if none. */
static bool entry_waiting(int rx, struct synth_entry *e)
{
        uint8_t b[SYNTH_ENTRY_MAX + 1];
        ssize_t k = recv(rx, b, sizeof b, MSG_DONTWAIT);
        return k > 0 && synth_entry_decode(b, (size_t)k, e) == 0;
}

static struct net_rule rules[16];
static size_t n_rules;

static struct net_rule *rule(const char *s)
{
        const char *why = NULL;
        struct net_rule *r = &rules[n_rules++];
        if (net_rule_parse(s, strlen(s), r, &why) < 0) {
                diag("rule %s: %s", s, why);
                exit(1);
        }
        return r;
}

#define LONG40 "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd"

static struct egress_config cfg;

static void config(void)
{
        static struct egress_host hosts[2];
        cfg.allow = rule("api.example.com");
        rule("*.svc.example:443");
        rule("half.example:80,443");
        rule("all.example:80");
        rule("blocked.example");
        rule("added2.example:443");
        rule("203.0.113.0/24");
        rule(LONG40 "xyzxyz.example"); /* a label of 46 bytes, named exactly */
        cfg.n_allow = n_rules;
        cfg.deny = rule("blocked.example");
        rule("half.example:80");
        rule("all.example");
        rule("*.svc.example:443");
        cfg.n_deny = n_rules - cfg.n_allow;
        /* the last deny rule would take the whole suffix: keep it out of the
         * first checks, then bring it in */
        cfg.n_deny--;
        snprintf(hosts[0].name, sizeof hosts[0].name, "added.example");
        snprintf(hosts[1].name, sizeof hosts[1].name, "added2.example");
        for (int i = 0; i < 2; i++) {
                hosts[i].family = AF_INET;
                inet_pton(AF_INET, "203.0.113.9", hosts[i].addr);
        }
        cfg.hosts = hosts;
        cfg.n_hosts = 2;
}

static void test_no_capture(void)
{
        struct synth_map m = {0};
        struct dnsstub_ctx c = {.cfg = &cfg, .map = &m, .synth_tx = -1, .synth_rx_idle = -1};
        struct ans a = ask(&c, "api.example.com", 1);
        ok(a.rcode == 5 && a.ancount == 0, "no capture: an allowed name's A is REFUSED as before");
        ok(!(a.flags & 0x80), "... with RA off, as before");
        is_int(ask(&c, "evil.example", 28).rcode, 5, "no capture: anything else REFUSED too");
        is_int((int)m.n, 0, "no capture: the map stays empty");
}

static void test_capture(void)
{
        struct synth_map m = {0};
        int tx = -1, rx = -1;
        struct synth_entry e;
        if (synth_channel(&tx, &rx) < 0)
                exit(1);
        struct dnsstub_ctx c = {.capture = CAPTURE_V4 | CAPTURE_V6,
                                .cfg = &cfg,
                                .map = &m,
                                .synth_tx = tx,
                                .synth_rx_idle = -1};

        struct ans a = ask(&c, "api.example.com", 1);
        ok(a.rcode == 0 && a.ancount == 1 && a.type == 1 && a.rdlen == 4,
           "allowed name, A: NOERROR with one A record");
        is_str(addr_text(&a), "198.18.0.2", "... the name's v4 pool address");
        is_int(a.ttl, SYNTH_TTL, "... TTL SYNTH_TTL");
        ok((a.flags & 0x8000) && (a.flags & 0x0080), "... QR and RA set");
        ok(entry_waiting(rx, &e) && !strcmp(e.name, "api.example.com") && e.v4 == 0xc6120002u,
           "the map entry was on the channel when the answer was read");

        a = ask(&c, "api.example.com", 28);
        ok(a.rcode == 0 && a.ancount == 1 && a.type == 28, "allowed name, AAAA: one AAAA record");
        is_str(addr_text(&a), "fd52:6667:6e63::2", "... the same name's v6 pool address");
        ok(!entry_waiting(rx, &e), "... no second entry for a name already sent");

        a = ask(&c, "API.Example.COM", 1);
        ok(a.rcode == 0 && a.ancount == 1 && !strcmp(addr_text(&a), "198.18.0.2"),
           "the name in other case: the same address (canonicalised), question echoed as asked");

        a = ask(&c, "x.svc.example", 1);
        ok(a.rcode == 0 && !strcmp(addr_text(&a), "198.18.0.3"),
           "a name under an allowed suffix: the next address");
        ok(entry_waiting(rx, &e) && !strcmp(e.name, "x.svc.example"), "... its entry sent");
        a = ask(&c, "half.example", 1);
        ok(a.rcode == 0 && a.ancount == 1,
           "allowed on 80,443 and denied on 80 only: still a name (443 open)");
        (void)entry_waiting(rx, &e);

        uint16_t other[] = {65, 64, 33, 15, 5, 12, 6};
        bool nodata = true;
        for (size_t i = 0; i < ARRAY_SIZE(other); i++) {
                a = ask(&c, "api.example.com", other[i]);
                nodata = nodata && a.rcode == 0 && a.ancount == 0;
        }
        ok(nodata, "allowed name, HTTPS/SVCB/SRV/MX/CNAME/PTR/SOA: NOERROR, no data");
        a = ask(&c, "fresh.svc.example", 65);
        ok(a.rcode == 0 && a.ancount == 0 && !entry_waiting(rx, &e),
           "HTTPS for an allowed name with no address yet: no data, nothing assigned");

        /* not allowed → NXDOMAIN */
        is_int(ask(&c, "evil.example", 1).rcode, 3, "a name no rule allows: NXDOMAIN");
        is_int(ask(&c, "evil.example", 28).rcode, 3, "... AAAA too");
        is_int(ask(&c, "blocked.example", 1).rcode, 3,
               "allowed and denied on every port: NXDOMAIN");
        is_int(ask(&c, "all.example", 1).rcode, 3, "allowed on 80, denied on every port: NXDOMAIN");
        is_int(ask(&c, "svc.example", 1).rcode, 3, "the suffix itself (*. is strictly below)");
        is_int(ask(&c, "203.0.113.7", 1).rcode, 3,
               "an IP literal, even in an allowed CIDR: NXDOMAIN (no name)");
        is_int(ask(&c, "2130706433", 1).rcode, 3, "an IP in another spelling: NXDOMAIN");
        is_int(ask(&c, "added.example", 1).rcode, 3, "--add-host alone: NXDOMAIN");
        a = ask(&c, "added2.example", 1);
        ok(a.rcode == 0 && a.ancount == 1 && synth_in_pool(AF_INET, a.rdata) &&
                   strcmp(addr_text(&a), "203.0.113.9"),
           "--add-host with an allow rule: a pool address, never the real one");
        (void)entry_waiting(rx, &e);
        cfg.n_deny++; /* deny *.svc.example:443: every port the suffix rule gives */
        is_int(ask(&c, "y.svc.example", 1).rcode, 3,
               "a suffix allowed on 443 and denied on 443: NXDOMAIN");
        cfg.n_deny--;

        /* tunnelling-shaped → REFUSED */
        is_int(ask(&c, "api.example.com", 16).rcode, 5, "TXT for an allowed name: REFUSED");
        is_int(ask(&c, "api.example.com", 10).rcode, 5, "NULL: REFUSED");
        is_int(ask(&c, "api.example.com", 255).rcode, 5, "ANY: REFUSED");
        is_int(ask(&c, "api.example.com", 252).rcode, 5, "AXFR: REFUSED");
        is_int(ask(&c, "evil.example", 16).rcode, 5, "TXT for any name: REFUSED");
        is_int(ask_full(&c, "api.example.com", 1, 3, 0).rcode, 5, "class CH: REFUSED");
        is_int(ask_full(&c, "api.example.com", 1, 1, 4).rcode, 5, "opcode NOTIFY: REFUSED");
        a = ask(&c, LONG40 ".svc.example", 1);
        ok(a.rcode == 0 && a.ancount == 1, "a 40-byte label under an allowed suffix: answered");
        (void)entry_waiting(rx, &e);
        is_int(ask(&c, LONG40 "x.svc.example", 1).rcode, 5,
               "a 41-byte label under an allowed suffix: REFUSED");
        is_int(ask(&c, "a.b.c.d.e.f.g.h.i.svc.example", 1).rcode, 5, "11 labels: REFUSED");
        a = ask(&c, "a.b.c.d.e.f.g.h.svc.example", 1);
        ok(a.rcode == 0 && a.ancount == 1, "10 labels in all: answered");
        (void)entry_waiting(rx, &e);
        is_int(ask(&c, LONG40 "." LONG40 "." LONG40 ".svc.example", 1).rcode, 5,
               "a name longer than 128 bytes: REFUSED");
        a = ask(&c, LONG40 "xyzxyz.example", 1);
        ok(a.rcode == 0 && a.ancount == 1,
           "a 46-byte label an allow rule names exactly: answered (the policy's shape)");
        (void)entry_waiting(rx, &e);
        is_int(ask(&c, LONG40 "xyzxyz.evil", 1).rcode, 5,
               "the same label under a name no rule names: REFUSED");

        /* v4 only */
        c.capture = CAPTURE_V4;
        a = ask(&c, "api.example.com", 28);
        ok(a.rcode == 0 && a.ancount == 0, "a run without v6: AAAA is NOERROR, no data");
        ok(ask(&c, "api.example.com", 1).ancount == 1, "... A still answered");
        c.capture = CAPTURE_V6;
        a = ask(&c, "api.example.com", 1);
        ok(a.rcode == 0 && a.ancount == 0, "a run without v4: A is NOERROR, no data");
        c.capture = CAPTURE_V4 | CAPTURE_V6;

        /* no channel: never an address the egress process may not know */
        c.synth_tx = -1;
        is_int(ask(&c, "nochan.svc.example", 1).rcode, 2, "no map channel: SERVFAIL");
        c.synth_tx = tx;

        close(tx);
        close(rx);
        synth_map_free(&m);
}

/* The channel full: SERVFAIL, then the same name answered once it drains;
 * with no egress process holding rx, the stub empties it itself. */
static void test_full(void)
{
        struct synth_map m = {0};
        int sv[2];
        struct synth_entry e;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                exit(1);
        int small = 1;
        (void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        int junk = 0;
        uint8_t buf[SYNTH_ENTRY_MAX] = {0};
        while (send(sv[0], buf, sizeof buf, MSG_DONTWAIT) > 0)
                junk++;
        ok(junk > 0 && errno == EAGAIN, "the channel filled (%d datagrams)", junk);
        struct dnsstub_ctx c = {.capture = CAPTURE_V4 | CAPTURE_V6,
                                .cfg = &cfg,
                                .map = &m,
                                .synth_tx = sv[0],
                                .synth_rx_idle = -1};
        is_int(ask(&c, "api.example.com", 1).rcode, 2,
               "a fresh name while the channel is full: SERVFAIL (no address)");
        ok(m.n == 1 && m.sent == 0, "... assigned, not sent");
        is_int(ask(&c, "api.example.com", 1).rcode, 2, "asked again, still full: SERVFAIL");
        for (int i = 0; i < junk; i++)
                (void)!recv(sv[1], buf, sizeof buf, MSG_DONTWAIT);
        struct ans a = ask(&c, "api.example.com", 1);
        ok(a.rcode == 0 && !strcmp(addr_text(&a), "198.18.0.2"),
           "the egress process read the channel: the name is answered");
        ok(entry_waiting(sv[1], &e) && !strcmp(e.name, "api.example.com"),
           "... its entry went first");

        junk = 0;
        while (send(sv[0], buf, sizeof buf, MSG_DONTWAIT) > 0)
                junk++;
        c.synth_rx_idle = sv[1]; /* no egress process: the stub may empty rx */
        a = ask(&c, "x.svc.example", 1);
        ok(a.rcode == 0 && a.ancount == 1,
           "full with no egress process: the stub empties the channel and answers");
        ok(entry_waiting(sv[1], &e) && !strcmp(e.name, "x.svc.example") &&
                   !entry_waiting(sv[1], &e),
           "... only the new entry is left on it");
        close(sv[0]);
        close(sv[1]);
        synth_map_free(&m);
}

static char *mk_state(void)
{
        char *p = strdup("/tmp/rf-test-dnsstub.XXXXXX");
        if (!p || !mkdtemp(p)) {
                perror("mkdtemp");
                exit(1);
        }
        return p;
}

struct counter {
        const char *needle;
        size_t n;
};

static int count_lines(const char *line, size_t len, void *ctx)
{
        struct counter *c = ctx;
        if (memmem(line, len, c->needle, strlen(c->needle)))
                c->n++;
        return 0;
}

static size_t count(const char *state, const char *needle)
{
        struct counter c = {needle, 0};
        (void)audit_foreach_line(state, count_lines, &c);
        return c.n;
}

/* What is recorded: dns.synth once per name, dns.refused, dns.exhausted
 * once; and an assignment that cannot be recorded is not answered. */
static void test_records(void)
{
        char *state = mk_state();
        struct audit_log *log = NULL;
        struct audit_emitter *ev = NULL, *broke = NULL;
        struct rf_error err = {0};
        struct synth_map m = {0};
        int tx = -1, rx = -1;
        char name[32];

        struct audit_budget_cfg none = {.bytes = 1};
        if (audit_open(state, &log, &err) < 0 || audit_emitter_new(log, "run-d", NULL, &ev) < 0 ||
            audit_emitter_new(log, "run-x", &none, &broke) < 0 || synth_channel(&tx, &rx) < 0) {
                diag("setup: %s", err.msg);
                exit(1);
        }
        struct dnsstub_ctx c = {.ev = ev,
                                .capture = CAPTURE_V4 | CAPTURE_V6,
                                .cfg = &cfg,
                                .map = &m,
                                .synth_tx = tx,
                                .synth_rx_idle = rx};
        ask(&c, "api.example.com", 1);
        ask(&c, "api.example.com", 28);
        ask(&c, "api.example.com", 1);
        ask(&c, "evil.example", 1);
        ask(&c, "api.example.com", 16);
        /* fill the map, then one more name */
        for (size_t i = m.n; i < SYNTH_NAMES_MAX; i++) {
                bool fresh;
                int e;
                snprintf(name, sizeof name, "n%zu.example", i);
                synth_assign(&m, name, &fresh, &e);
        }
        m.sent = m.n; /* as if sent */
        struct ans a = ask(&c, "more.svc.example", 1);
        ok(a.rcode == 5 && m.exhausted, "the map full: a new name is REFUSED");
        is_int(ask(&c, "more2.svc.example", 1).rcode, 5, "... and the next");
        a = ask(&c, "api.example.com", 1);
        ok(a.rcode == 0 && a.ancount == 1, "... a name that has its address is still answered");

        /* an emitter over its budget: the first address cannot be recorded */
        struct synth_map m2 = {0};
        struct dnsstub_ctx d = c;
        d.ev = broke;
        d.map = &m2;
        is_int(ask(&d, "api.example.com", 1).rcode, 2,
               "dns.synth cannot be recorded: SERVFAIL, no address");
        ok(m2.n == 0 && m2.sent == 0, "... the assignment is undone, nothing sent");
        struct synth_entry e;
        while (entry_waiting(rx, &e))
                ;

        ok(audit_emitter_finish(ev, &err) == 0, "the run's events finish");
        is_int(count(state, "\"event\":\"dns.synth\""), 1, "one dns.synth for the name");
        is_int(count(state, "\"v4\":\"198.18.0.2\""), 1, "... with its v4");
        is_int(count(state, "\"v6\":\"fd52:6667:6e63::2\""), 1, "... and its v6");
        is_int(count(state, "\"event\":\"dns.exhausted\""), 1, "one dns.exhausted");
        is_int(count(state, "\"reason\":\"the run's synthetic address pool is exhausted\""), 2,
               "dns.refused for each name refused by exhaustion");
        ok(count(state, "\"name\":\"evil.example\"") == 1 &&
                   count(state, "\"rcode\":\"NXDOMAIN\"") == 1,
           "dns.refused for the name not allowed, with rcode NXDOMAIN");
        is_int(count(state, "a query type that only carries data"), 1,
               "dns.refused for TXT, with its reason");
        audit_emitter_free(ev);
        audit_emitter_free(broke);
        audit_close(log);
        close(tx);
        close(rx);
        synth_map_free(&m);
        synth_map_free(&m2);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", state);
        if (system(cmd) != 0)
                diag("could not remove %s", state);
        free(state);
}

static char *summary(const struct egress_refusals *t)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
                exit(1);
        egress_refusals_print(t, f);
        fclose(f);
        return out;
}

/* What the stub counts for the end-of-run summary, and the fix it gives. */
static void test_summary(void)
{
        struct egress_refusals t = {0};
        struct synth_map m = {0};
        int tx = -1, rx = -1;
        char fix[512];
        char *s;

        /* the fix for a name the rules do not allow (pure) */
        dnsstub_name_fix(&cfg, "evil.example", fix, sizeof fix);
        is_str(fix, "--allow-host evil.example", "fix: a name no rule allows: --allow-host NAME");
        dnsstub_name_fix(&cfg, "blocked.example", fix, sizeof fix);
        is_str(fix, "remove blocked.example from network.deny (deny rules win over allow rules)",
               "fix: a deny rule takes every port: that rule, never a flag");
        dnsstub_name_fix(&cfg, "all.example", fix, sizeof fix);
        is_str(fix, "remove all.example from network.deny (deny rules win over allow rules)",
               "... also where the allow rule names a port");
        cfg.n_deny++; /* deny *.svc.example:443 */
        dnsstub_name_fix(&cfg, "y.svc.example", fix, sizeof fix);
        is_str(fix, "--allow-host y.svc.example",
               "fix: denied on 443 only: a rule for the name gives it other ports");
        cfg.n_deny--;
        dnsstub_name_fix(&cfg, "", fix, sizeof fix);
        is_str(fix, "", "fix: no name, no fix");

        if (synth_channel(&tx, &rx) < 0)
                exit(1);
        struct dnsstub_ctx c = {.capture = CAPTURE_V4 | CAPTURE_V6,
                                .cfg = &cfg,
                                .map = &m,
                                .synth_tx = tx,
                                .synth_rx_idle = rx};
        struct dnsstub_ctx none = {.cfg = &cfg, .map = &m, .synth_tx = -1, .synth_rx_idle = -1};
        egress_refusals_track(&t, NULL, NULL);
        ask(&c, "api.example.com", 1);
        ask(&c, "api.example.com", 28);
        ask(&c, "api.example.com", 65);
        is_int(t.names_total, 0, "control: an allowed name's answers are not counted");
        ask(&none, "evil.example", 1);
        is_int(t.names_total, 0, "control: refusals without capture are not counted");

        ask(&c, "other.test", 1);
        ask(&c, "other.test", 28);
        ask(&c, "Other.Test", 1);
        ask(&c, "blocked.example", 1);
        ask(&c, "203.0.113.7", 1);
        ask(&c, "api.example.com", 16);
        ask_full(&c, "api.example.com", 1, 1, 4); /* NOTIFY */
        is_int(t.names_total, 7, "every refusal under capture is counted (7)");
        s = summary(&t);
        ok(strstr(s, "ringfence: the run's resolver refused 7 queries during the run") == s,
           "the summary's names section, with the total");
        ok(strstr(s, "  other.test  3x  no allow rule lets the run reach this name (default: no "
                     "egress)  -> --allow-host other.test\n"),
           "a name no rule allows, in any case, A and AAAA: one line, 3x, --allow-host NAME");
        ok(strstr(s, "  blocked.example  1x  deny rules take every port an allow rule gives this "
                     "name  -> remove blocked.example from network.deny"),
           "an allowed name a deny rule takes: that reason, and the deny rule as the fix");
        ok(strstr(s, "  203.0.113.7  1x  not a host name (an IP literal, or bytes a host name "
                     "cannot hold)\n"),
           "an IP literal: no fix");
        ok(strstr(s, "  api.example.com  1x  a query type that only carries data (DNS "
                     "tunnelling)\n"),
           "TXT (tunnelling-shaped): its reason, no fix");
        ok(strstr(s, "  api.example.com  1x  an opcode other than QUERY\n"),
           "an opcode other than QUERY: its reason, no fix");
        ok(!strstr(s, "egress refused"), "no egress refusal: only the names section");
        free(s);

        egress_refusals_free(&t);
        for (int i = 0; i < 20; i++) {
                char n[32];
                snprintf(n, sizeof n, "flood%d.test", i);
                ask(&c, n, 1);
        }
        s = summary(&t);
        ok(strstr(s, "and 4 more refused queries of 4 other names"),
           "20 refused names: 16 lines, then \"and 4 more\"");
        free(s);

        egress_refusals_track(NULL, NULL, NULL);
        ask(&c, "late.test", 1);
        is_int(t.names_total, 20, "untracked: nothing counted");
        egress_refusals_free(&t);
        close(tx);
        close(rx);
        synth_map_free(&m);
}

int main(void)
{
        sockets();
        config();
        test_no_capture();
        test_capture();
        test_full();
        test_records();
        test_summary();
        close(stub);
        close(client);
        return done();
}
