/*
 * msg.h — the typed messages between a supervisor and its run's init.
 *
 * One SOCK_SEQPACKET socketpair per run. Every message is one fixed-size
 * struct rf_msg, optionally carrying one fd (SCM_RIGHTS). A receiver
 * rejects a datagram of any other size, truncated control data, more than
 * one fd, or an fd on a type that carries none (OpenBSD's m_end habit:
 * nothing unexpected is silently accepted).
 *
 * The run's init is non-dumpable and capability-less, so nothing inside the
 * run can reach this channel to forge messages.
 */
#pragma once

#include <stdint.h>

enum rf_msg_type {
        MSG_READY = 1,   /* init → S: dumpable for a moment, write my id maps (rootless) */
        MSG_GO,          /* S → init: id maps written; carries initial window size and
                          * GO_PLACED in value */
        MSG_FAIL,        /* init → S: setup step failed {step, err} */
        MSG_PTY,         /* init → S: the master of the run's pty (fd) */
        MSG_EXEC_OK,     /* init → S: the command was executed */
        MSG_EXIT,        /* init → S: the command ended; value = wait status, step =
                          * EXIT_ALONE or 0 */
        MSG_SIGNAL,      /* S → init (or the command child waiting for START): forward signal
                          * `value` to the command's group */
        MSG_TREE,        /* S → init: detached mount (fd) for plan op `value` (root runs) */
        MSG_START,       /* S → the command child waiting for it (or init, see GO_PLACED): the
                          * command may start (in the run's cgroups, registered, uid vetted) */
        MSG_DNS,         /* init → S: the run's DNS stub socket, 127.0.0.1:53 in its netns (fd) */
        MSG_LISTEN,      /* init → S: an egress listener in the run's netns (fd); value = port */
        MSG_SECRETS,     /* S → init: the env and file deliveries (memfd), before GO */
        MSG_SECRETS_DIR, /* init → S: /run/secrets through a writable clone (dir fd): revocation */
        MSG_BROKER,  /* init → S: the listening broker socket, /run/ringfence/broker.sock (fd) */
        MSG_CAPTURE, /* init → S: capture is committed in the run's netns; value = CAPTURE_* */
        MSG_NFLOG,   /* init → S: the NFLOG socket of the run's ruleset refusals (fd) */
        MSG_TRUST, /* S → init: the run's TLS trust files (sealed memfd, trustfiles.h), before START
                    */
        MSG_CONNECT,   /* S → init: connect to the run's loopback port `value` (a published
                        * port of the plan); step = the supervisor's slot, echoed */
        MSG_CONNECTED, /* init → S: that socket (fd, connecting), or none with err */
        MSG_BUILT, /* init → S: root built, privileges dropped, waiting for START (OCI create) */
        _MSG_MAX,
        _MSG_INVALID = -22,
};

/* MSG_CAPTURE value: the families whose pool address, default route and
 * redirect are in place (issue 14; src/egress/synth.h). MSG_LISTEN of the
 * capture listeners: value = RF_EGRESS_CAPTURE_PORT (127.0.0.1) or
 * RF_EGRESS_CAPTURE_PORT | CAPTURE_LISTEN_V6 ([::1]). */
#define CAPTURE_V4        1
#define CAPTURE_V6        2
#define CAPTURE_LISTEN_V6 0x10000

/* MSG_GO value: init is in every cgroup of the run already (born there):
 * no migration follows, so a process it forks now is placed as it will be. */
#define GO_PLACED 1

/* MSG_EXIT step: init has no child left, live or zombie, of any kind
 * (waitid __WALL: ECHILD), so no other process of the run exists — every
 * process of its pid namespace descends from init or was given to it —
 * and init exits at once without running anything else. The supervisor
 * may then close the run without waiting for init's own teardown
 * (namespaces, address space) and reaps it last, before the cgroup goes.
 * 0: others are left for the kernel's pid-namespace teardown to kill, and
 * the supervisor waits for init's end as always. */
#define EXIT_ALONE 1

/* MSG_CONNECTED value: the run port, | CONNECTED_V6 when the run's [::1]
 * answered (nothing listened on its 127.0.0.1) */
#define CONNECTED_V6 0x10000

struct rf_msg {
        uint32_t type;       /* enum rf_msg_type */
        int32_t step;        /* enum rf_step (MSG_FAIL) */
        int32_t err;         /* positive errno (MSG_FAIL) */
        int32_t value;       /* wait status (MSG_EXIT), signal (MSG_SIGNAL) */
        uint16_t rows, cols; /* MSG_GO: terminal size */
};

/*
 * rf_msg_send — send one message, with `fd` attached if fd >= 0.
 * Async-signal-safe (no allocation): callable between clone and exec.
 * Returns 0 or -errno.
 */
int rf_msg_send(int sock, const struct rf_msg *m, int fd);

/*
 * rf_msg_recv — receive one message. If `fd` is non-NULL it receives an
 * attached fd (or -1); an fd arriving on a message type that carries none
 * is closed and the message rejected. Returns 1 on a message, 0 on EOF,
 * -EBADMSG on a malformed datagram, or -errno. Async-signal-safe.
 */
int rf_msg_recv(int sock, struct rf_msg *m, int *fd);
