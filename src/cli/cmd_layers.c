/*
 * cmd_layers.c — `ringfence version --layers`: what this host offers.
 *
 * Prints the Landlock ABI the kernel offers and the one ringfence applies,
 * the cgroup mode a run would get (and which limits it can hold), the size
 * of the seccomp program, and the host uid range for root-started runs.
 * Read-only: creates nothing (the cgroup probe creates and removes one
 * empty cgroup beneath our own, exactly as a run would).
 */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "sandbox/cgroup.h"
#include "sandbox/landlock.h"
#include "sandbox/plan.h"
#include "sandbox/seccomp.h"

int cmd_layers(void)
{
        static struct rf_plan p; /* large: not on the stack */
        struct rf_error err = {0};
        struct rf_cgroup *cg = NULL;
        char id[RF_RUN_ID_LEN + 1];

        if (landlock_plan(&p, &err) < 0)
                printf("landlock: unavailable (%s)\n", err.msg);
        else
                printf("landlock: ABI %d applied (kernel offers %d, errata 0x%x)\n", p.landlock.abi,
                       p.landlock.abi_kernel, p.landlock.errata);
        err = (struct rf_error){0};
        if (seccomp_plan(&p, &err) < 0)
                printf("seccomp: unavailable (%s)\n", err.msg);
        else
                printf("seccomp: allowlist, %u BPF instructions, x86_64 only\n", p.seccomp.len);
        free(p.seccomp.filter);
        err = (struct rf_error){0};
        struct rf_limits lim = {0};
        if (rf_run_id_new(id) == 0 && cgroup_create(id, &lim, &cg, &err) == 0) {
                printf("cgroup: %s%s\n", cgroup_mode_name(cgroup_get_mode(cg)),
                       cgroup_get_mode(cg) == CGROUP_HYBRID
                               ? " (v2 for kill and accounting, v1 for limits asked for)"
                               : "");
                cgroup_destroy(cg);
        } else
                printf("cgroup: unavailable (%s)\n", err.msg);
        if (getuid() == 0)
                printf("run uids (root-started runs): %u..%u\n", RF_RUN_UID_BASE,
                       RF_RUN_UID_BASE + RF_RUN_UID_COUNT - 1);
        else
                printf("run uid: yours (rootless)\n");
        return 0;
}
