/*
 * run.h — supervise one run from spawn to exit (standalone `ringfence run`).
 *
 * The supervisor owns the run's lifecycle (a state table in run.c), relays
 * the run's terminal or stdio, forwards signals, enforces the wall-clock
 * timeout and maps the outcome to the exit status MISSION.md defines:
 * the command's own status, 128+N for a signal, 124 for --timeout,
 * 125 when ringfence refused or failed (the command did not run),
 * 126/127 when the command is not executable / not found.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sandbox/plan.h"
#include "shared/error.h"

struct rf_child; /* sandbox/launch.h */

#define RUN_LOG_DEFAULT (64ULL << 20) /* --log-max of --detach and daemon runs */

enum {
        RF_EXIT_TIMEOUT = 124,
        RF_EXIT_REFUSED = 125,
        RF_EXIT_NOEXEC = 126,
        RF_EXIT_NOTFOUND = 127,
};

struct rf_cgroup;
struct audit_emitter;
struct egress_config;
struct publish;

/*
 * supervisor_run — spawn the run described by `plan` into the cgroups `cg`
 * (created by the caller with cgroup_create(); may be mode "none") and
 * supervise it to the end (`rs`: timeout, events, egress, secrets). The run's own events (its DNS
 * stub's refusals, later egress and secrets) are recorded through `ev` (may be NULL). An OOM kill
 * inside the run ends the whole run (137, err names the memory limit). `timeout_ms` 0 means none.
 * Returns the exit status for `ringfence run` (0..255). When it returns RF_EXIT_REFUSED, `err`
 * holds the one line to print. Prints nothing itself except the timeout notice contract lines
 * returned through `err` (err->msg set, code 0 = notice). Called in the CLI process; blocks the
 * signals it handles.
 */
struct rf_grants;
struct registry;
struct run_services {
        uint64_t timeout_ms;          /* 0: none */
        struct audit_emitter *ev;     /* the run's events, or NULL */
        struct egress_config *egress; /* NULL: connections are refused; `grant` edits it */
        struct rf_grants *grants;     /* the run's secrets (broker, revocation), or NULL */
        bool mask_output;             /* bound values in stdout/stderr become *** */
        bool raw_terminal; /* --raw-terminal: the run's output reaches a terminal unfiltered */
        uint64_t log_max;  /* output to a regular file stops (with a note) past this; 0 none */
        /* once init exists: register the run (its control socket in *reg);
         * a failure kills the run before the command starts. NULL: none */
        bool storm_kill; /* network.on_refusal_storm "kill": a refusal storm ends the run */
        int (*registered)(void *ctx, struct rf_error *err);
        void *registered_ctx;
        struct registry **reg;
        /* plans with trust_late (TLS termination): right after init is
         * cloned (before the run is vetted and registered), the making of
         * its trust files, handed to init (MSG_TRUST on `chan`) as soon as
         * they are made, so that init finishes the root meanwhile; ... */
        void (*trust_begin)(void *ctx, int chan);
        /* ... and once the run is registered, its end: 0, 1 when init
         * could not take them (it failed a step and went), or -errno (a
         * failure of either, which kills the run before the command
         * starts). Both are set, or neither. */
        int (*trust)(void *ctx, struct rf_error *err);
        void *trust_ctx;
        /* network.publish: the host's listeners (publish_open), relayed
         * into the run while it runs; borrowed, or NULL */
        struct publish *publish;
        /* the OCI process model (plan->clone_parent): with `held`, the run
         * is held created — init has built the root, dropped its
         * privileges and waits — until `start_gate` is readable (a byte is
         * read from it); `held` is told init's pid once init is there (the
         * engine's `create` returns then). The timeout counts from the
         * start. A terminating signal before the start ends the run. */
        void (*held)(void *ctx, pid_t init);
        void *held_ctx;
        int start_gate;
        /* the OCI console socket: the run's pty master goes to `console`
         * (with held_ctx), which hands it on; the supervisor keeps no copy
         * and relays nothing. NULL: the supervisor relays the terminal */
        void (*console)(void *ctx, int master);
        /* the plan, once built, before init is cloned (with held_ctx): an
         * OCI container's join plan is written from it (joinplan.h). A
         * failure refuses the run. NULL: none */
        int (*planned)(void *ctx, const struct rf_plan *plan, struct rf_error *err);
        /* where init goes when it reported EXIT_ALONE (sandbox/msg.h): still
         * exiting, no other process of the run left; the caller reaps it
         * (sandbox_reap, then closes pidfd) before removing the run's
         * cgroup. Untouched otherwise. NULL: reaped before returning */
        struct rf_child *init_left;
};
int supervisor_run(struct rf_plan *plan, struct rf_cgroup *cg, const struct run_services *rs,
                   struct rf_error *err);
