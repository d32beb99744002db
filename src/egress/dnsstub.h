/*
 * dnsstub.h — the run's stub resolver, served by its supervisor.
 *
 * The socket is bound to 127.0.0.1:53 inside the run's network namespace
 * by the run's init and handed out (MSG_DNS); the supervisor reads it.
 * A malformed message gets FORMERR when its header is readable (else
 * nothing) and is recorded as `dns.malformed`, coalesced.
 *
 * Without capture (proxy-only runs, runs without egress), every query is
 * answered REFUSED at once (no waiting for a timeout) and recorded as
 * `dns.refused` {name, qtype, reason}, coalesced per name through the
 * run's audit budget.
 *
 * With capture (transparent egress, synth.h) the stub answers from the
 * policy, never from the network (docs/EGRESS.md, "The run's resolver
 * under capture"):
 *
 *   - tunnelling-shaped queries are REFUSED: types TXT, NULL, ANY (and
 *     zone transfers), classes other than IN, opcodes other than QUERY,
 *     and names with a label longer than DNSSTUB_LABEL_MAX bytes, more
 *     than DNSSTUB_LABELS_MAX labels or more than DNSSTUB_NAME_LEN_MAX
 *     bytes — unless an allow rule names that exact host;
 *   - a name the policy does not allow (no allow rule matches it on any
 *     port, or deny rules cover every port an allow rule gives it), and
 *     anything that is not a host name (IP literals in any spelling,
 *     bytes outside [a-z0-9-_]) is NXDOMAIN;
 *   - an allowed name gets A → its address in the v4 pool, AAAA → its
 *     address in the v6 pool (NOERROR with no data where the run has no
 *     v6, or no v4 for A), any other type NOERROR with no data; TTL
 *     SYNTH_TTL. `--add-host` plays no part: an added host resolves like
 *     any other name, to its pool address, only if an allow rule allows it;
 *   - the first time a name gets an address, `dns.synth` {name, v4, v6}
 *     is recorded (must succeed: otherwise SERVFAIL and the address is not
 *     given) and the entry is sent on the map channel before the answer;
 *     when the channel is full the answer is SERVFAIL (a retry may
 *     succeed) — never an address the egress process may not know;
 *   - when SYNTH_NAMES_MAX names have addresses, a new name is REFUSED
 *     (the run's budget of names is spent: a definite refusal, not the
 *     transient failure SERVFAIL means) and `dns.exhausted` is recorded once.
 *
 * Every refusal (REFUSED or NXDOMAIN) is recorded as `dns.refused`
 * {name, qtype, rcode, reason}, coalesced per name, and counted for the
 * end-of-run summary (egress_refusal_name_note) with what would let the run
 * resolve the name (dnsstub_name_fix; none for tunnelling-shaped queries,
 * IP literals, exhaustion and a map channel that failed).
 *
 * Credential injection (issue 15): a name that carries an injection's
 * placeholder or value (compared without case), in any run, is REFUSED and
 * recorded as `secret.exfil` {name, destination "dns", where, form}; the
 * supervisor ends the run when the binding says on_exfil "kill".
 */
#pragma once

#include <stdbool.h>

#include "audit/emit.h"
#include "egress/dns.h"
#include "egress/synth.h"

#define DNSSTUB_BATCH        64  /* datagrams served per call, so a flood cannot starve the loop */
#define DNSSTUB_LABEL_MAX    40  /* bytes of one label of a name the stub answers */
#define DNSSTUB_LABELS_MAX   10  /* labels of a name the stub answers */
#define DNSSTUB_NAME_LEN_MAX 128 /* bytes of a name the stub answers */

struct egress_config;

/* What the stub's answer to one query is (dnsstub_decide). */
enum dnsstub_verdict {
        DNSSTUB_REFUSE,   /* REFUSED, recorded: tunnelling-shaped, or no capture */
        DNSSTUB_NXDOMAIN, /* NXDOMAIN, recorded: not a name the policy allows */
        DNSSTUB_NODATA,   /* NOERROR, no records: an allowed name, a type we do not answer */
        DNSSTUB_A,        /* the name's v4 pool address */
        DNSSTUB_AAAA,     /* the name's v6 pool address */
        _DNSSTUB_VERDICT_MAX,
        _DNSSTUB_VERDICT_INVALID = -22,
};

/*
 * What dnsstub_serve needs, all borrowed from the supervisor and built for
 * each call (so `ringfence grant` takes effect with the next query).
 */
struct dnsstub_ctx {
        struct audit_emitter *ev;        /* the run's events; NULL: not recorded (tests) */
        unsigned capture;                /* CAPTURE_V4 | CAPTURE_V6 (msg.h); 0: refuse all */
        const struct egress_config *cfg; /* the live allow/deny rules; NULL: none allowed */
        struct synth_map *map;           /* the run's name ↔ address map (written here) */
        int synth_tx;                    /* the map channel, the stub's end (non-blocking) */
        int synth_rx_idle; /* the egress process's end while no egress process holds it,
                              else -1: emptied when the channel is full (a later egress
                              process inherits the map itself) */
        bool *exfil_kill;  /* set when a name carried an injection's placeholder under
                              on_exfil "kill" (NULL: not reported) */
};

/*
 * dnsstub_name_allowed — whether canonical name `name` is one the rules
 * of cfg let the run reach: some allow rule (host or suffix) matches it
 * on some port that no deny rule denies it. Pure.
 */
bool dnsstub_name_allowed(const struct egress_config *cfg, const char *name);

/*
 * dnsstub_name_fix — what would let the run resolve canonical name `name`,
 * one cfg's rules do not allow (dnsstub_name_allowed false), into fix[n]:
 * "--allow-host NAME" when the deny rules leave the name some port; else
 * the deny rule that takes every port, to remove (deny rules win over allow
 * rules; no flag overrides them); else "". Pure.
 */
void dnsstub_name_fix(const struct egress_config *cfg, const char *name, char *fix, size_t n);

/*
 * dnsstub_decide — the answer to query q (already parsed) in a run with
 * capture bits `capture` (0: DNSSTUB_REFUSE for everything) under cfg's
 * rules. The canonical name is written to canon (for the answers and the
 * map); *reason is set to a static phrase for REFUSE and NXDOMAIN. Pure.
 */
enum dnsstub_verdict dnsstub_decide(const struct egress_config *cfg, unsigned capture,
                                    const struct dns_query *q, char canon[NET_HOST_MAX + 1],
                                    const char **reason);

/*
 * dnsstub_serve — serve what is waiting on `fd` (non-blocking UDP), at most
 * DNSSTUB_BATCH datagrams, as described above. Returns the number of
 * datagrams read (0: none waiting) or -errno when the socket fails. A
 * query whose refusal cannot be recorded is still refused. Called by the
 * supervisor only.
 */
int dnsstub_serve(int fd, const struct dnsstub_ctx *ctx);
