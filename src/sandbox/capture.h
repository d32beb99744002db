/*
 * capture.h — transparent capture in the run's network namespace (issue 14).
 *
 * A run with capture on (network.capture = "transparent" and at least one
 * allow rule) gets, while its init still holds the capabilities of its
 * network namespace (STEP_CAPTURE, launch.c):
 *
 *   - 198.18.0.1/32 and fd52:6667:6e63::1/128 on lo, and default routes
 *     `dev lo src` those addresses (v6 left out where the namespace has no
 *     IPv6);
 *   - the nftables ruleset of capture-gen.c (TCP to the synthetic pool and
 *     to the allowed IP/CIDR rules redirected to :RF_EGRESS_CAPTURE_PORT,
 *     everything else that is not local refused at once and logged to
 *     NFLOG group RF_CAPTURE_NFLOG_GROUP, rate-limited per destination and
 *     then overall);
 *   - the capture listeners 127.0.0.1:3129 and [::1]:3129;
 *   - an NFLOG socket bound to that group,
 *
 * all handed to the supervisor (MSG_LISTEN, MSG_NFLOG, MSG_CAPTURE) before
 * the command may start. The ruleset is a batch of netlink messages
 * generated at build time by capture-gen (libnftnl/libmnl, which ringfence
 * itself does not link); the per-run rules are copies of a generated
 * template with the address and mask patched in, built by the supervisor
 * into the plan (capture_rules_build), so init only sends bytes.
 *
 * Threat notes: every netlink request but the per-run rules asks for an
 * ACK (those report errors only), the table is read back after the
 * commit, and init fails the run (exit 125) on any error or missing ACK; the command is capability-
 * less in the namespace, so it cannot change the ruleset, the addresses or
 * the routes, nor read the NFLOG socket.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define RF_CAPTURE_NFLOG_GROUP 1   /* the ruleset's NFLOG group (per netns) */
#define RF_CAPTURE_NFLOG_RANGE 128 /* bytes of a refused packet copied: IP + TCP/UDP headers */
/*
 * What the ruleset logs (capture-gen.c, chain `refused`): each destination
 * (address, protocol, port) has a budget of its own, so that refusals to
 * other destinations, however many, never leave a destination unlogged:
 * its first refused packet is (a limit of RF_CAPTURE_LOG_DEST_RATE a
 * minute, burst 1, kept RF_CAPTURE_LOG_DEST_TTL seconds from that first
 * packet), for up to RF_CAPTURE_LOG_DESTS destinations a family at once.
 * The rest (a destination over its budget, a new one while those are
 * taken) shares RF_CAPTURE_LOG_RATE a second (and burst). The NFLOG socket asks for a
 * receive buffer of RF_CAPTURE_NFLOG_RCVBUF bytes (the kernel doubles it;
 * SO_RCVBUFFORCE where the caller may, else SO_RCVBUF, which
 * net.core.rmem_max caps): room for a whole burst of first packets, 2 *
 * RF_CAPTURE_LOG_DESTS + RF_CAPTURE_LOG_RATE messages of ~830 bytes each
 * as the kernel counts them (the default 212992 holds 256).
 */
#define RF_CAPTURE_LOG_RATE      20
#define RF_CAPTURE_LOG_DESTS     256
#define RF_CAPTURE_LOG_DEST_TTL  60
#define RF_CAPTURE_LOG_DEST_RATE 1
#define RF_CAPTURE_NFLOG_RCVBUF  (1 << 20)
#define RF_CAPTURE_RULE_MAX                                                                        \
        512 /* bytes of one per-run rule message (checked against the template) */
#define RF_CAPTURE_RULES_MAX POLICY_NET_RULES_MAX /* per-run rules: one per allowed IP/CIDR */

struct rf_plan;

/*
 * capture_rules_build — the supervisor's side, before clone: the per-run
 * redirect rules (one per IP/CIDR allow rule of `pol`; host-name rules need
 * none), as netlink messages into *out (malloc'd, owned by the caller),
 * their count in *n_rules. *out is NULL when there are none. Returns 0,
 * -ENOMEM, -E2BIG past RF_CAPTURE_RULES_MAX rules, or -EINVAL for an allow
 * rule that does not parse (the policy was validated: should not happen).
 */
int capture_rules_build(const struct rf_policy *pol, unsigned char **out, size_t *len,
                        unsigned *n_rules);

/*
 * capture_wanted — whether a run of policy `pol` gets the capture: the
 * policy says transparent (the default) and it has at least one allow
 * rule. Pure.
 */
bool capture_wanted(const struct rf_policy *pol);

/*
 * capture_install — init's side, in the run's network namespace with its
 * capabilities there, after lo is up: addresses, routes, the ruleset
 * (p's per-run rules appended), committed and verified. `fail_commit`
 * (honoured in test builds only; ignored in release builds) appends a
 * rule the kernel refuses, so the real failure path of a commit is
 * exercised. `adopt`: the namespace is an engine's (capture_adopt): an
 * address already there is kept, and so is a default route the engine
 * set (the ruleset, not the routes, decides what leaves). Sets *v6 when
 * IPv6 is configured too. No allocation; async-signal-safe. Returns 0 or
 * -errno (the run must then fail); -EEXIST from the commit: the namespace
 * already has ringfence's table.
 */
int capture_install(const struct rf_plan *p, bool fail_commit, bool adopt, bool *v6);

/*
 * capture_lo_up — bring lo up in the calling thread's network namespace
 * (CAP_NET_ADMIN there). Async-signal-safe. 0 or -errno.
 */
int capture_lo_up(void);

/*
 * capture_local_socket — a socket bound to 127.0.0.1:`port` in the
 * calling thread's network namespace: SOCK_DGRAM (the run's DNS stub) or
 * SOCK_STREAM, listening (backlog 128); non-blocking, CLOEXEC. Ports
 * below 1024 need CAP_NET_BIND_SERVICE over the namespace.
 * Async-signal-safe. The fd or -errno.
 */
int capture_local_socket(int type, uint16_t port);

/* What a network namespace's setup hands the supervisor (MSG_DNS,
 * MSG_LISTEN, MSG_NFLOG, MSG_CAPTURE when init makes them): owned fds, -1
 * for none; `capture` CAPTURE_V4 | CAPTURE_V6, or 0 without capture. */
struct capture_fds {
        int dns, http, socks, cap4, cap6, nflog;
        unsigned capture;
};

/* capture_fds_init — every fd of `f` -1, no capture. */
void capture_fds_init(struct capture_fds *f);

/* capture_fds_close — close what `f` still owns; leaves it as _init does. */
void capture_fds_close(struct capture_fds *f);

/*
 * capture_adopt — the supervisor's side, for a network namespace an
 * engine made (ringfence-oci: a Kubernetes pod's, Podman's bridge), which
 * the calling thread has entered with the host's CAP_NET_ADMIN (init's
 * user namespace owns nothing there): lo up, the ruleset (capture_install
 * with `adopt`) always — even for a run without egress, so that nothing
 * leaves the engine's interfaces but through the run's egress — then the
 * DNS stub, the proxy listeners and, when p->capture, the capture
 * listeners and the NFLOG socket, into *out (capture_fds_init'd first;
 * closed again on error). `fail_commit` as for capture_install. 0 or
 * -errno.
 */
int capture_adopt(const struct rf_plan *p, bool fail_commit, struct capture_fds *out);

/*
 * capture_fresh — the supervisor's side for a root run's own, new network
 * namespace (the calling thread is in it, with host root's capabilities
 * over it): what init does there for a rootless run — lo up, when
 * p->capture the addresses, routes and ruleset (capture_install), the DNS
 * stub socket, the proxy listeners and, with capture, the capture
 * listeners and the NFLOG socket — into *out (capture_fds_init'd first; closed again on error).
 * *step is the step that failed (STEP_LOOPBACK, STEP_DNS, STEP_EGRESS,
 * STEP_CAPTURE). `fail_step`: the plan's test_fail_step (-1 outside test
 * builds): that step fails with EPERM, STEP_CAPTURE with a batch the
 * kernel refuses. 0 or -errno.
 */
int capture_fresh(const struct rf_plan *p, int fail_step, struct capture_fds *out, int *step);

/*
 * capture_listener — init's side: a listening TCP socket (backlog 128,
 * non-blocking, CLOEXEC) on 127.0.0.1 or [::1] (v6, IPV6_V6ONLY) port
 * RF_EGRESS_CAPTURE_PORT. Returns the fd or -errno.
 */
int capture_listener(bool v6);

/*
 * capture_nflog_open — init's side: a NETLINK_NETFILTER socket (non-
 * blocking, CLOEXEC) bound to NFLOG group RF_CAPTURE_NFLOG_GROUP in copy-
 * packet mode (RF_CAPTURE_NFLOG_RANGE bytes), every step ACKed. Needs
 * CAP_NET_ADMIN over the namespace. Returns the fd or -errno.
 */
int capture_nflog_open(void);
