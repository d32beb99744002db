/*
 * steps.c — names and descriptions of the setup steps (see steps.h).
 */
#include <string.h>

#include "shared/macro.h"
#include "steps.h"

static const struct {
        const char *name;
        const char *what;
} step_table[_STEP_MAX] = {
        [STEP_USERNS] = {"userns", "the user namespace"},
        [STEP_UIDMAP] = {"uidmap", "the user namespace id maps"},
        [STEP_MOUNTNS] = {"mountns", "the mount namespace"},
        [STEP_PIDNS] = {"pidns", "the pid namespace"},
        [STEP_NETNS] = {"netns", "the network namespace"},
        [STEP_IPCNS] = {"ipcns", "the ipc namespace"},
        [STEP_UTSNS] = {"utsns", "the uts namespace"},
        [STEP_CGROUPNS] = {"cgroupns", "the cgroup namespace"},
        [STEP_ROOTFS] = {"rootfs", "the new root filesystem"},
        [STEP_SYSTEM] = {"system", "the read-only system directories"},
        [STEP_ETC] = {"etc", "the run's /etc"},
        [STEP_PROC] = {"proc", "/proc"},
        [STEP_DEV] = {"dev", "/dev"},
        [STEP_TMP] = {"tmp", "the private /tmp"},
        [STEP_HOME] = {"home", "the private home directory"},
        [STEP_BINDS] = {"binds", "the policy's extra paths"},
        [STEP_WORKSPACE] = {"workspace", "the workspace"},
        [STEP_PIVOT] = {"pivot", "the switch to the new root"},
        [STEP_HOSTNAME] = {"hostname", "the hostname"},
        [STEP_LOOPBACK] = {"loopback", "the loopback interface"},
        [STEP_DNS] = {"dns", "the run's DNS stub socket"},
        [STEP_EGRESS] = {"egress", "the run's egress proxy listeners"},
        [STEP_CAPTURE] =
                {"capture",
                 "the run's transparent capture (pool addresses, routes, nftables ruleset)"},
        [STEP_PTY] = {"pty", "the run's terminal"},
        [STEP_RLIMITS] = {"rlimits", "resource limits"},
        [STEP_CAPS] = {"caps", "the capability drop"},
        [STEP_NNP] = {"nnp", "no_new_privs"},
        [STEP_SESSION] = {"session", "the run's session"},
        [STEP_CWD] = {"cwd", "the working directory"},
        [STEP_LANDLOCK] = {"landlock", "the Landlock filesystem rules"},
        [STEP_SECCOMP] = {"seccomp", "the seccomp filter"},
        [STEP_CGROUP] = {"cgroup", "the run's cgroup and limits"},
        [STEP_IDMAP] = {"idmap", "the run's host uid and idmapped workspace"},
        [STEP_PROTECT] = {"protect", "the protected paths"},
        [STEP_SECRETS] = {"secrets", "the run's secrets (/run/secrets, the broker socket)"},
        [STEP_EXEC] = {"exec", "the command"},
        [STEP_SYSCTL] = {"sysctl", "the namespaced sysctls of the container's config"},
};

const char *rf_step_name(int step)
{
        if (step < 0 || step >= _STEP_MAX)
                return "unknown";
        return step_table[step].name;
}

const char *rf_step_what(int step)
{
        if (step < 0 || step >= _STEP_MAX)
                return "an unknown step";
        return step_table[step].what;
}

int rf_step_from_name(const char *name)
{
        for (int i = 0; i < _STEP_MAX; i++)
                if (strcmp(step_table[i].name, name) == 0)
                        return i;
        return _STEP_INVALID;
}
