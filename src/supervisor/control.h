/*
 * control.h — the per-run control channel: what `ringfence kill`, `pause`,
 * `resume`, `inspect` and `grant` say to a run's supervisor.
 *
 * Every supervisor (standalone `ringfence run` or, later, the daemon)
 * listens on STATE_DIR/runs/RUN/control.sock, a SOCK_SEQPACKET Unix
 * socket in a 0700 directory that no run can see. One request per
 * datagram, one reply:
 *
 *   status                 → ok STATE {json}
 *   kill [REASON]          → ok killed        (sent once the run is gone)
 *   kill-as UID [REASON]   → the same, recording UID as the actor: only from a root
 *                            peer (the daemon, acting for its API caller)
 *   pause | resume         → ok paused | ok running
 *   attach PID             → ok attached      (a child of the peer, joining the run:
 *                            moved into its cgroups; ringfence-oci exec)
 *   limits MEM PIDS CPU    → ok limits        (new cgroup limits: bytes, tasks, milli-CPUs,
 *                            each decimal > 0 or "-" to keep it; never above the run's
 *                            own; ringfence-oci update)
 *   revoke-secret NAME     → ok revoked N
 *   allow-host RULE        → ok allowed RULE  (the run's next egress process has it;
 *   revoke-host RULE       → ok revoked RULE   its open egress connections are closed)
 *   as UID REQUEST         → REQUEST, recording UID as the actor: only from a root peer
 *                            (the daemon, acting for its API caller)
 *   (anything else)        → err MESSAGE
 *
 * The peer is identified by SO_PEERCRED: root or the supervisor's own uid.
 * The request parser is pure and fuzzed (fuzz_control).
 */
#pragma once

#include <stddef.h>

#define CONTROL_MSG_MAX    1024 /* bytes of one request or of a reply's head */
#define CONTROL_REASON_MAX 256  /* bytes of a kill reason */
#define CONTROL_ARG_MAX    320  /* bytes of any argument (a network rule's canonical text) */

enum control_op {
        CTL_STATUS,
        CTL_KILL,
        CTL_PAUSE,
        CTL_RESUME,
        CTL_REVOKE_SECRET,
        CTL_ALLOW_HOST,
        CTL_REVOKE_HOST,
        CTL_KILL_AS,
        CTL_ATTACH,
        CTL_LIMITS,
        CTL_SIGNAL,
        _CTL_MAX,
        _CTL_INVALID = -22,
};

struct control_req {
        enum control_op op;
        char arg[CONTROL_ARG_MAX + 1]; /* kill: the reason ("" none); revoke-secret: the name;
                                        * allow-host / revoke-host: the rule, canonical */
        long actor;                    /* kill-as, as: whom a root peer acts for; -1 none */
        unsigned long long limits[3];  /* limits: memory, pids, milli-CPUs; 0 = keep */
        int signal;                    /* signal: the number (1..NSIG-1, not KILL/STOP) */
        int signal_all;                /* signal: 1 = every process of the run, 0 its command */
};

/*
 * control_req_parse — one request datagram: a verb, then for kill an
 * optional " REASON" (printable UTF-8, no control characters, at most
 * CONTROL_REASON_MAX bytes), for revoke-secret " NAME" (secret_name_valid);
 * or "as UID " and one such request (not kill-as), which sets req->actor.
 * 0, or -EBADMSG with *why a static explanation. Pure.
 */
int control_req_parse(const char *buf, size_t len, struct control_req *req, const char **why);

/* control_op_name — "kill", ... (the verb). */
const char *control_op_name(enum control_op op);
