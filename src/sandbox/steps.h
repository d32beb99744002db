/*
 * steps.h — the named setup steps of a run, one table.
 *
 * Every layer that must be in place before the command runs is a step. The
 * run's init reports a failing step as {step, errno} to the supervisor, which
 * prints "ringfence: cannot set up <what>: <strerror>" and exits 125. Test
 * builds can inject a failure at any step by name (RINGFENCE_TEST_FAIL);
 * release builds contain no such code.
 */
#pragma once

enum rf_step {
        STEP_USERNS,
        STEP_UIDMAP,
        STEP_MOUNTNS,
        STEP_PIDNS,
        STEP_NETNS,
        STEP_IPCNS,
        STEP_UTSNS,
        STEP_CGROUPNS,
        STEP_ROOTFS,
        STEP_SYSTEM,
        STEP_ETC,
        STEP_PROC,
        STEP_DEV,
        STEP_TMP,
        STEP_HOME,
        STEP_BINDS,
        STEP_WORKSPACE,
        STEP_PIVOT,
        STEP_HOSTNAME,
        STEP_LOOPBACK,
        STEP_DNS,
        STEP_EGRESS,
        STEP_CAPTURE,
        STEP_PTY,
        STEP_RLIMITS,
        STEP_CAPS,
        STEP_NNP,
        STEP_SESSION,
        STEP_CWD,
        STEP_LANDLOCK,
        STEP_SECCOMP,
        STEP_CGROUP,
        STEP_IDMAP,
        STEP_PROTECT,
        STEP_SECRETS,
        STEP_EXEC,
        STEP_SYSCTL,
        _STEP_MAX,
        _STEP_INVALID = -22,
};

/* Short stable name ("mountns"), used by tests and in messages. */
const char *rf_step_name(int step);
/* What the step sets up, for "cannot set up %s" ("the mount namespace"). */
const char *rf_step_what(int step);
/* Step for a name, or _STEP_INVALID. */
int rf_step_from_name(const char *name);
