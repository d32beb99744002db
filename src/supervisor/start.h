/*
 * start.h — start one run from a request and supervise it to its end.
 *
 * The one place a run is started: the CLI (`ringfence run`) builds a
 * struct run_request from its flags and profiles; the daemon builds a
 * typed request (supervisor/runwire.h) that the supervisor it execs
 * (`ringfence run --request-fd 3`) turns into one, its profiles applied
 * there as the caller; the OCI front end builds one from a bundle. run_start
 * then does, in order, what makes a run: the audit log first (no record,
 * no run), the policy (file, then the request's flags on top, defaults,
 * trigger token), the run's identity, the agent's block, the secrets, the
 * TLS trust's checks, the plan, the cgroups, the wake-loop breaker, run.start, the
 * egress configuration, grants, published ports, registration, the run
 * itself (supervisor_run), run.exit. Every refusal on the way is recorded
 * (run.refused before run.start, run.exit after) and undoes what was made,
 * through one cleanup (start.c), never a ladder.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sandbox/plan.h"
#include "shared/error.h"

struct rf_policy;
struct rf_grants;
struct rf_plan;

struct run_request {
        /* the policy: the file (NULL: none), then `overlay` (the request's
         * own settings: flags, profiles) merged on top, then the defaults */
        const char *policy_file;
        const struct rf_policy *overlay;
        const char *trigger_token; /* --triggered-by, or NULL */
        char *const *argv;         /* the command */
        /* an engine's container: its identity for run.start ("id=ID
         * pod=NS/NAME pod_uid=UID name=NAME", the parts the engine gave),
         * or NULL */
        const char *container;
        const char *state_dir;     /* canonical, existing */
        const char *key_file;      /* the secret store's key, NULL: the state dir's */
        const char *run_id;        /* chosen by the caller (daemon, --detach), or NULL */
        const char *cwd;           /* canonical; NULL: this process's */
        const char *host_home;     /* the caller's home (canonical), or NULL */
        const char *cwd_inside;    /* a rootfs run's directory inside, or NULL */
        const char *hostname;      /* the run's host name, or NULL: ringfence's */
        const char *const *masked; /* paths inside hidden (OCI maskedPaths) */
        size_t n_masked;
        const char *const *readonly; /* paths inside made read-only (OCI readonlyPaths) */
        size_t n_readonly;
        const struct plan_mount *mounts; /* an OCI bundle's binds and tmpfs (with a rootfs) */
        size_t n_mounts;
        const struct plan_device *devices; /* an OCI bundle's devices, host nodes found */
        size_t n_devices;
        const struct plan_sysctl *sysctl; /* an OCI bundle's namespaced sysctls */
        size_t n_sysctl;
        const struct rf_seccomp_plan *seccomp_extra; /* an OCI container's profile, or NULL */
        /* an OCI pod: the network, ipc and uts namespaces init is born in
         * (PLAN_JOIN_*: borrowed fds, -1 for a new one), or NULL: all new */
        const int *join_ns;
        /* the joined network namespace is an engine's, for this run to
         * capture and serve (plan->adopt_net); only with join_ns[NET] */
        bool adopt_net;
        /* an OCI container's process.oomScoreAdj (-1000..1000), and its
         * relative cpu weight (linux.resources.cpu.shares, 0: none) */
        bool has_oom_score_adj;
        int oom_score_adj;
        uint64_t cpu_shares;
        /* the policy's secret grants kept, by binding name (comma-separated;
         * policy_keep_secrets), or NULL: all of them */
        const char *keep_secrets;
        /* an OCI bundle's own id mapping: the host ids its user maps to
         * (plan_input.host_ids), or none: one allocated */
        bool host_ids;
        uid_t host_uid;
        gid_t host_gid;
        const struct cgroup_place *cgroup; /* an OCI container's cgroupsPath, or NULL:
                                            * "ringfence-<run id>" beneath ours */
        const char *term, *lang;           /* passed through, or NULL */
        bool use_pty;                      /* the run gets a terminal */
        unsigned preserve_fds; /* OCI --preserve-fds: the caller's fds 3..3+N-1, open, go
                                * to the command as they are (plan.h) */
        uid_t uid;             /* whose run it is: ps, the API, published ports */
        /* the daemon's caller: the workspace must be this inode */
        bool expect_ws;
        dev_t expect_ws_dev;
        ino_t expect_ws_ino;
        /* the daemon's caller: every read-only and read-write path is
         * opened as it (pin) and must still be that inode */
        bool pinned;
        uid_t pin_uid;
        const struct plan_kept *kept; /* --keep-state */
        size_t n_kept;
        const char *const *home_rels; /* files the profiles make beneath $HOME */
        size_t n_home_rels;
        bool mask_output;
        bool raw_terminal;
        uint64_t log_max;  /* 0: none */
        FILE *refusals_to; /* the end-of-run summary of refusals, or NULL */

        /* the front end's part, each optional, all with `ctx` */
        void *ctx;
        /* a read-only or read-write path, checked as the caller (pinned) */
        int (*pin)(void *ctx, const char *path, bool rw, struct plan_pin *pin,
                   struct rf_error *err);
        /* the secrets are resolved: whatever else held a value may go */
        void (*resolved)(void *ctx);
        /* the profiles' files for $HOME, rendered with the run's
         * placeholders: files[] (data malloc'd, freed by run_start), *n */
        int (*home_files)(void *ctx, const char *workspace, const struct rf_policy *pol,
                          const struct rf_grants *grants, struct plan_home_file *files, size_t *n,
                          struct rf_error *err);
        /* the run is registered (and its TLS trust made): a caller that
         * waited for that may go */
        void (*ready)(void *ctx);
        /* one line for the operator (a note, a failure once the run is
         * over); never a refusal, which comes back in err */
        void (*note)(void *ctx, const char *line);
        /* OCI create (docs/OCI.md): init is cloned as the caller's
         * sibling, the child of the caller's parent (the engine's shim);
         * `held` is told its pid once it is built and waiting, and the
         * command starts when `start_gate` is readable. NULL: a run that
         * starts at once, init our child */
        void (*held)(void *ctx, pid_t init);
        int start_gate;
        /* with `held` and use_pty: the run's pty master, to hand on (the
         * OCI console socket); the supervisor relays nothing */
        void (*console)(void *ctx, int master);
        /* with `held`: the plan, built, before init is cloned (the OCI join
         * plan is written from it); a failure refuses the run */
        int (*planned)(void *ctx, const struct rf_plan *plan, struct rf_error *err);
};

/*
 * run_start — start the run `req` asks for and supervise it to its end.
 * Returns its exit status (MISSION.md: the command's, 128+N, 124, 125 when
 * refused or failed, 126/127); err holds the one line to print when its
 * msg is set (a refusal, or the note a timeout gives). Blocks the
 * terminating signals (the supervisor forwards them to the run).
 */
int run_start(const struct run_request *req, struct rf_error *err);
