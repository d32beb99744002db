/*
 * egress.h — the run's egress process: the only way out of a run.
 *
 * The run's init binds two listening sockets inside the run's network
 * namespace, 127.0.0.1:3128 (HTTP proxy, CONNECT included) and
 * 127.0.0.1:1080 (SOCKS5), and hands them to the supervisor (MSG_LISTEN),
 * with the capture listeners when capture is on (below). The supervisor
 * forks one egress process for the run with those sockets
 * and this run's policy only (struct egress_config, built before the run
 * starts). The egress process lives in the host's network namespace,
 * outside the sandbox, and:
 *
 *  - resolves names itself (UDP to the host's nameservers, read once before
 *    it locks down), classifies every address (addr.h), refuses loopback,
 *    private, link-local, CGNAT, multicast, metadata, embedded-IPv4 forms
 *    and the host's own addresses unless an IP/CIDR allow rule covers
 *    them, and dials exactly the address it checked (no second lookup);
 *  - decides with deny-wins rules (rules.h); a refusal is an HTTP 403 (or
 *    a SOCKS reply 0x02) naming the host, the rule and what would allow it
 *    (never a rule already in force); a name that does not resolve is a
 *    502 naming the resolver's answer, an allowed upstream that refuses a
 *    502 and one that does not answer a 504;
 *  - for a tunnel (CONNECT, SOCKS5) to a port not listed in
 *    network.plain_ports and not named by the allowing rule (or to 443),
 *    reads the TLS ClientHello before anything of it goes up and refuses
 *    a missing SNI or one that differs from the host (domain fronting)
 *    — a host whose TLS is terminated is dialled meanwhile, its upstream
 *    closed unused on a refusal; any other is dialled after; on a port the
 *    rule names, dials first and holds the client's first bytes: a stream
 *    that opens like TLS gets the same SNI check before any byte goes up,
 *    any other is the plain protocol the port was allowed for;
 *  - checks every request of a keep-alive connection, adds `traceparent`
 *    and `baggage` to plain-HTTP requests;
 *  - records every decision through the supervisor (egress.allow /
 *    egress.deny / egress.request / egress.response / egress.close) and
 *    waits for the answer: no record, no connection.
 *
 * Captured connections (issue 14; synth.h, captured.h): with capture on,
 * init also binds 127.0.0.1:3129 and [::1]:3129, where the run's ruleset
 * redirects TCP to the run's synthetic pool and to allowed CIDRs. The
 * egress process reads the original destination (SO_ORIGINAL_DST /
 * IP6T_SO_ORIGINAL_DST) and refuses loopback, the run's own pool address
 * and the listener itself; turns a pool address back into the name the
 * run's resolver handed it out for (the map, drained from the resolver's
 * channel first), refusing one never handed out; and decides any other
 * address as an IP literal (IP/CIDR rules only). Then the connection goes
 * through the same decision as a CONNECT to name:port (route() in
 * proxy.c: one function for every front-end; credential injection
 * checks its names there, inject.h). Its first bytes say what it carries: a ClientHello whose
 * SNI must equal the name, an origin-form HTTP request whose Host must
 * name the destination (then served like a proxied one), or plain TCP
 * where a rule names the port or network.plain_ports lists it. A
 * refusal is a reset (SO_LINGER 0: ECONNRESET), a 403 for an HTTP
 * request, a TLS alert after a ClientHello; each an egress.deny with
 * "via":"capture".
 *
 * Locked down before it reads a byte from the run: no capabilities,
 * no_new_privs, uid nobody when started by root, every fd closed but its
 * own, a seccomp allowlist without open/exec (so no file system at all),
 * and it dies with its supervisor (PR_SET_PDEATHSIG).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "policy/rules.h"
#include "shared/error.h"

#define EGRESS_NS_MAX            3  /* nameservers used */
#define EGRESS_OWN_MAX           64 /* host addresses remembered */
#define EGRESS_CONNS_DEFAULT     64 /* connections at once */
#define EGRESS_CONNECT_MS        10000
#define EGRESS_IDLE_MS           300000
#define EGRESS_HEAD_MS           30000
#define EGRESS_RESOLVE_MS        5000
#define EGRESS_EVENT_MAX         8192        /* bytes of one event record to the supervisor */
#define EGRESS_EVENT_BATCH_MAX   (32 * 1024) /* bytes of one datagram of records */
#define EGRESS_EVENT_RECORDS_MAX 16          /* records in one datagram */

struct egress_host {
        char name[NET_HOST_MAX + 1];
        int family;
        uint8_t addr[16];
};

struct egress_config {
        char run_id[64];
        char agent[256];
        struct net_rule *allow, *deny;
        size_t n_allow, n_deny;
        struct egress_host *hosts;
        size_t n_hosts;
        uint16_t plain_ports[16];
        size_t n_plain_ports;
        struct sockaddr_storage ns[EGRESS_NS_MAX];
        socklen_t ns_len[EGRESS_NS_MAX];
        size_t n_ns;
        int own_family[EGRESS_OWN_MAX];
        uint8_t own[EGRESS_OWN_MAX][16];
        size_t n_own;
        char resolv_conf[256]; /* read by the egress process itself, before it locks down */
        uint64_t bytes_quota;  /* 0 = none */
        unsigned max_conns;
        /* HTTP rules (httprule.h): owned array, from network.http; a host
         * and port they name is terminated (with `tls` below) and every
         * request to it must match one of its rules */
        struct http_rule *http;
        size_t n_http;
        /* credential injection (inject.h): owned array; each value points
         * into the supervisor's secret memory (wiped in a fork): egress_spawn
         * copies the values across its fork, the child's copy is its own */
        struct inject_secret *inject;
        size_t n_inject;
        /* TLS termination toward injection hosts and HTTP rules' hosts
         * (src/tls). tls_on: the run has such hosts; the egress process then
         * loads the TLS module itself, before its lockdown (the supervisor
         * never maps OpenSSL), from tls_module_fd, reads the host's roots
         * from tls_bundle_fd and network.upstream_ca from tls_upstream_fd
         * (-1: none) into tls_trust — taken before the run's command existed
         * (tls/trustmake.h: sealed memfds, or the trust cache's files, which
         * the process snapshots first), never the paths again — and
         * gets the run CA from the run CA's keeper over tls_keeper_fd
         * (supervisor/run_tls.c: a socket on which no export comes to the supervisor;
         * the process sends a request and imports the one export it
         * receives, before its lockdown). All borrowed from the caller
         * (cmd_run; set before the first egress process starts). tls and
         * tls_trust are that process's own (NULL in the supervisor);
         * egress_config_free leaves all of them alone. */
        bool tls_on;
        int tls_module_fd, tls_bundle_fd, tls_upstream_fd;
        const struct rf_tls_vtable *tls;
        int tls_keeper_fd;
        struct rf_tls_trust *tls_trust;
        /* The egress process's own run CA, imported from the keeper's export by
         * egress_spawn's child before its lockdown (owned by that process,
         * which ends with it); NULL in the supervisor. */
        struct rf_tls_ca *tls_ca_own;
};

struct rf_policy;
struct http_rule;
struct inject_secret;
struct rf_tls_vtable;
struct rf_tls_ca;
struct rf_tls_trust;

/*
 * egress_config_build — this run's egress configuration from its policy:
 * the rules parsed again (they were validated; HTTP rules too), static hosts, limits, and
 * the path of the resolver configuration (`resolv_conf`, NULL:
 * /etc/resolv.conf; test builds may point elsewhere). The nameservers and
 * the host's own addresses are read by the egress process when it starts
 * (nothing of it is on the run's start path). 0 or -errno with err. Free
 * with egress_config_free.
 */
int egress_config_build(const struct rf_policy *pol, const char *run_id, const char *resolv_conf,
                        struct egress_config *c, struct rf_error *err);
void egress_config_free(struct egress_config *c);

/*
 * egress_config_inject — the run's injections (grants_inject) into c (the
 * array copied, values still borrowed). 0 or -ENOMEM.
 */
int egress_config_inject(struct egress_config *c, const struct inject_secret *s, size_t n);

/*
 * egress_config_inject_drop — remove the injections `live` says are no
 * longer granted (revoked, expired). Returns how many were removed: the
 * caller then replaces the running egress process, which holds the value.
 */
size_t egress_config_inject_drop(struct egress_config *c, bool (*live)(const void *, const char *),
                                 const void *ctx);

/*
 * egress_config_allow — add (`add`) or remove an allow rule of a live run
 * (`ringfence grant`); it takes effect with the run's next egress process.
 * Deny rules still win. -EINVAL (not a rule), -ENOENT (removing one that is
 * not there), -E2BIG; 0 when done (adding one already there: 0).
 */
int egress_config_allow(struct egress_config *c, const char *rule, bool add, struct rf_error *err);

struct synth_map;

/*
 * What the egress process serves, all borrowed from the supervisor (the
 * child gets copies; -1: none): the proxy listeners, the capture
 * listeners (127.0.0.1:3129, [::1]:3129) and the egress process's end of
 * the synthetic-address map channel, with the map as it is at the fork
 * (NULL: empty; the child keeps its inherited copy and adds what it
 * drains from synth_rx).
 */
struct egress_fds {
        int http, socks;
        int cap4, cap6;
        int synth_rx;
        const struct synth_map *synth;
};

/*
 * egress_spawn — fork the egress process serving the listeners of `fds`
 * with configuration c; its events come over *events_fd (a SOCK_SEQPACKET
 * socket, owned by the caller). Returns the child's pid (> 0) with *pidfd
 * set, or -errno. The caller's fds are not inherited.
 */
pid_t egress_spawn(const struct egress_config *c, const struct egress_fds *fds, int *events_fd,
                   int *pidfd);

/*
 * resolv_conf_parse — the first EGRESS_NS_MAX `nameserver ADDR` lines of a
 * resolv.conf text (IPv4 or IPv6 literals; anything else skipped), port 53.
 * Pure; fuzzed. Returns the number found.
 */
size_t resolv_conf_parse(const char *text, size_t len, struct sockaddr_storage ns[EGRESS_NS_MAX],
                         socklen_t ns_len[EGRESS_NS_MAX]);

/*
 * The supervisor's side of the event channel: a datagram (at most
 * EGRESS_EVENT_BATCH_MAX bytes and EGRESS_EVENT_RECORDS_MAX records;
 * beyond either, nothing of it is written and it is answered -EBADMSG)
 * carries one or more records separated by
 * '\n', each a JSON object of at most EGRESS_EVENT_MAX bytes
 * {"event":"egress.allow","key":"host:port"|absent,
 * "fields":{"k":"string"|integer|true|false,...}}; only egress.* events
 * are accepted (the egress process cannot write run.* or audit.*
 * records). They are written in order.
 *
 * A record with "async":true gets no answer (a record of what already
 * happened, or one sent ahead of a synchronous one); if it cannot be
 * recorded, the failure is kept in *async_fail and given as the answer to
 * the next synchronous record, so "A async, then B sync" is one round
 * trip that fails if either record failed. Only a datagram's last record
 * may be synchronous (a synchronous record before it fails as malformed,
 * unwritten; a datagram ending in '\n' has no last record to answer);
 * the records are parsed by evwire.h;
 * the answer is an int64: > 0 the seq, 0 coalesced, < 0 -errno (the
 * action is refused).
 *
 * egress_event_serve — read one datagram from `fd`, record its records
 * through `emit` (see audit/emit.h) and answer the synchronous one.
 * Returns 1 when a datagram was served (2: one of its records was a
 * secret.exfil whose binding says on_exfil "kill": the supervisor ends
 * the run), 0 when none was waiting (it never blocks), or -errno when the
 * channel is gone or broken (then the supervisor closes it, and the
 * egress process, whose every event now fails, refuses everything).
 */
struct audit_emitter;
int egress_event_serve(int fd, struct audit_emitter *emit, int64_t *async_fail);

/*
 * The end-of-run summary of refusals (issue 13): agents often swallow a
 * 403 and retry; the operator still sees, once, what was refused, why, how
 * often and what would allow it.
 *
 * Counted per (destination, reason) from the egress.deny records the
 * supervisor serves, whatever the audit log coalesced; at most
 * EGRESS_REFUSALS_MAX pairs (the egress process is run-controlled: later
 * new pairs are only counted in `overflow`).
 *
 * The names the run's resolver refused under capture (dnsstub.h) are
 * counted apart, per (name, reason), bounded the same way: a client that
 * resolves names itself only says "Could not resolve host", and a refused
 * name never becomes a connection the proxy could refuse.
 */
#define EGRESS_REFUSALS_MAX  256
#define EGRESS_SUMMARY_SHOWN 16 /* lines printed; the rest are "and N more" */
#define EGRESS_DEST_MAX      300
#define EGRESS_REASON_MAX    200
#define EGRESS_FIX_MAX       400

struct egress_refusal {
        char dest[EGRESS_DEST_MAX];     /* "host:port", or "(malformed request)" */
        char reason[EGRESS_REASON_MAX]; /* as the egress process said it */
        char fix[EGRESS_FIX_MAX];       /* what would allow it, or "" */
        uint64_t count;
        /* the storm window: refusals since window_ms (CLOCK_MONOTONIC) */
        int64_t window_ms;
        uint32_t in_window;
        bool stormed; /* a storm of this refusal was reported (once per run) */
};

/* A refusal storm: one refusal repeated this many times within this window
 * (a client retrying what will never be allowed; network.on_refusal_storm). */
#define EGRESS_STORM_COUNT     20
#define EGRESS_STORM_WINDOW_MS 10000

struct egress_refusals {
        struct egress_refusal *v; /* owned, EGRESS_REFUSALS_MAX slots once one came */
        size_t n;
        uint64_t total;    /* every refusal counted */
        uint64_t overflow; /* refusals of pairs beyond EGRESS_REFUSALS_MAX */
        long storm;        /* index in v of a storm not yet taken (egress_refusals_storm), or -1 */
        /* the names the run's resolver refused: dest is the name, no port
         * (no storm is counted for them) */
        struct egress_refusal *names; /* owned, EGRESS_REFUSALS_MAX slots once one came */
        size_t n_names;
        uint64_t names_total;    /* every refused query counted */
        uint64_t names_overflow; /* refused queries of pairs beyond EGRESS_REFUSALS_MAX */
};

/*
 * egress_refusals_storm — a refusal storm counted since the last call: 1
 * with *r the refusal (borrowed until the next egress event), else 0.
 * Each refusal storms at most once per run.
 */
int egress_refusals_storm(const struct egress_refusal **r);

/*
 * egress_refusals_track — from now on, egress_event_serve() (in this
 * process: the supervisor serves one run) counts each egress.deny into *t,
 * its strings passed through `redact` first (the run's bound secrets:
 * audit_redact_fn; NULL none). t NULL: stop. t is borrowed.
 */
void egress_refusals_track(struct egress_refusals *t, int (*redact)(void *, const char *, char **),
                           void *ctx);

/*
 * egress_refusal_note — count one refusal that did not come through
 * egress_event_serve (the run's ruleset refusals, supervisor/nflog.c):
 * fields as an egress.deny's (host, port, reason, fix). Supervisor only.
 */
struct audit_field;
void egress_refusal_note(const struct audit_field *f, size_t nf);

/*
 * egress_refusal_name_note — count one query the run's resolver refused
 * under capture (dnsstub.c, as it records dns.refused): `name` as the
 * summary shows it (canonical when it is a host name), the stub's reason,
 * and what would let the run resolve it ("" or NULL: nothing). Redacted
 * like an egress.deny's fields. Supervisor only; nothing while no tally is
 * tracked.
 */
void egress_refusal_name_note(const char *name, const char *reason, const char *fix);

/*
 * egress_refusals_print — nothing if no refusal was counted; else one
 * summary to f: a header, the EGRESS_SUMMARY_SHOWN most frequent
 * (destination, reason) pairs with their count and fix, then "and N more";
 * then, if the run's resolver refused names, the same for them under a
 * header of their own. Run-controlled bytes (host names from SOCKS5 and
 * DNS queries, reasons) are escaped: controls, DEL, C1 and invalid UTF-8
 * become \xNN. Called by the CLI once the run has ended (not with --quiet).
 */
void egress_refusals_print(const struct egress_refusals *t, FILE *f);

/* egress_refusals_free — free what t holds; t may be reused. */
void egress_refusals_free(struct egress_refusals *t);
