/*
 * request.h — what a bundle's config asks for, as a run's policy overlay.
 *
 * ringfence-oci starts a container as a run (supervisor/start.h): its
 * config (oci/spec.h) becomes the settings a `ringfence run` flag would
 * give — the environment, the limits, the agent and egress from the
 * annotations — and everything ringfence gives every run stays (its own
 * namespaces, /proc, /dev, no capabilities, its seccomp floor, Landlock).
 * What a config asks for that ringfence-oci cannot give yet is refused
 * with its key path (-EOPNOTSUPP), never dropped. Pure.
 */
#pragma once

#include "oci/spec.h"
#include "policy/policy.h"
#include "sandbox/plan.h"
#include "shared/error.h"

/* The annotations ringfence-oci reads (docs/OCI.md). */
#define OCI_ANN_AGENT       "ringfence.io/agent"
#define OCI_ANN_ALLOW_HOSTS "ringfence.io/allow-hosts" /* rules, comma-separated */
#define OCI_ANN_POLICY      "ringfence.io/policy"      /* /etc/ringfence/policies/NAME.json */
#define OCI_POLICY_DIR      "/etc/ringfence/policies"
#define OCI_ANN_SECRETS     "ringfence.io/secrets" /* the policy's grants kept, by name */
#define OCI_AGENT_DEFAULT   "container"
#define OCI_TMPFS_MAX       (16ULL << 30)    /* the largest tmpfs= a config may ask */
#define OCI_RUN_OWN         "/run/ringfence" /* ringfence's files in a container */

/* the engines' names for a Kubernetes pod's sandbox and app containers */
#define OCI_ANN_CRI_TYPE  "io.kubernetes.cri.container-type"  /* containerd */
#define OCI_ANN_CRIO_TYPE "io.kubernetes.cri-o.ContainerType" /* CRI-O */
#define OCI_CRI_SANDBOX   "sandbox"
#define OCI_CRI_CONTAINER "container"

/* the engines' names for a Kubernetes container's identity (CRI) */
#define OCI_ANN_POD_NAMESPACE "io.kubernetes.pod.namespace"
#define OCI_ANN_POD_NAME      "io.kubernetes.pod.name"
#define OCI_ANN_POD_UID       "io.kubernetes.pod.uid"
#define OCI_ANN_CONTAINER     "io.kubernetes.container.name"
#define OCI_ANN_CRI_NAMESPACE "io.kubernetes.cri.sandbox-namespace" /* containerd */
#define OCI_ANN_CRI_POD       "io.kubernetes.cri.sandbox-name"
#define OCI_ANN_CRI_POD_UID   "io.kubernetes.cri.sandbox-uid"
#define OCI_ANN_CRI_CONTAINER "io.kubernetes.cri.container-name"
#define OCI_IDENTITY_MAX      640

/*
 * oci_identity — the container's identity as run.start records it:
 * "id=ID" and, where the engine's annotations give them, " pod=NS/NAME",
 * " pod_uid=UID", " name=NAME" (Kubernetes' keys, else containerd's CRI
 * keys), each value cut at 128 bytes; written into out (size bytes,
 * NUL-terminated, truncated). Pure: reads only the spec.
 */
void oci_identity(const struct oci_spec *sp, const char *id, char *out, size_t size);

/* what a container does with a network namespace its config joins by path */
enum oci_netns_use {
        OCI_NETNS_JOIN = 1, /* a pod's: a live ringfence-oci container's, whose egress it gets */
        OCI_NETNS_ADOPT,    /* an engine's, new: this container's run captures it */
};

/* what ringfence-oci found of that namespace (oci_netns_use) */
struct oci_netns_facts {
        bool owned; /* a live ringfence-oci container's init is in it (same --root) */
        bool host;  /* the host's (pid 1's) or ringfence-oci's own */
        bool busy;  /* some process is in it (not owned: another runtime's container) */
        /* owned: the container's OCI_ANN_ALLOW_HOSTS and OCI_ANN_POLICY, where
         * it has them, are the owner's, word for word (an engine passing the
         * pod's annotations to its containers) */
        bool pods_egress;
};

/*
 * oci_netns_use — the decision for spec `s` joining a network namespace by
 * path, given `f`: OCI_NETNS_JOIN for a pod's (a container with egress of
 * its own is refused: the pod's egress is its sandbox's — unless it is
 * the sandbox's own, restated: f->pods_egress); OCI_NETNS_ADOPT
 * for a new namespace an engine made (Podman's bridge, a Kubernetes pod's
 * sandbox container); refused (-EOPNOTSUPP, err saying why): the host's, a
 * busy one no ringfence container is in, and a Kubernetes app container
 * (OCI_ANN_CRI_TYPE or OCI_ANN_CRIO_TYPE "container") whose pod's sandbox
 * is not a ringfence-oci container. Pure.
 */
int oci_netns_use(const struct oci_spec *s, const struct oci_netns_facts *f, struct rf_error *err);

/*
 * oci_host_ids — the host ids spec `s`'s user maps to through its
 * linux.uidMappings and gidMappings (both, or neither: *has false): the
 * mapping range holding process.user.uid, and the one holding its gid.
 * Refused (-EOPNOTSUPP, err naming the key): mappings of only one kind, a
 * user or group no range holds, one mapped to the host's root (0). Pure.
 */
int oci_host_ids(const struct oci_spec *s, bool *has, uint32_t *uid, uint32_t *gid,
                 struct rf_error *err);

/*
 * oci_overlay — the settings of spec `s` onto overlay `o` (a fresh
 * policy): env, limits (memory, pids, cpu quota, RLIMIT_NOFILE), the agent
 * and allow rules of the annotations. Refuses (-EOPNOTSUPP, err naming the
 * key) what a run cannot give yet: a namespace joined by path or missing
 * (ringfence makes all of them), additional gids other than the primary,
 * devices, hooks, a seccomp profile, id mappings, rlimits other than
 * NOFILE and NPROC, a umask other than 022, an OOM score
 * adjustment, a domain name, a swap limit other than the memory limit,
 * cpu shares, cpus and mems. Capabilities and root.readonly false are
 * not refused: a run has none and a read-only root whatever the config
 * says (the floor, docs/OCI.md). 0 or -errno with err set.
 */
int oci_overlay(const struct oci_spec *s, struct rf_policy *o, struct rf_error *err);

/*
 * oci_mounts — the config's mounts a run does not have of its own, as plan
 * mounts into out[] (room for OCI_MOUNTS_MAX; strings point into `s`):
 * binds (type "bind", or an option "bind"/"rbind"; "ro" honoured) and
 * tmpfs (size=, mode=). Skipped: the standard proc, /dev, devpts,
 * /dev/shm, mqueue, sysfs and cgroup mounts (a run has its own /proc,
 * /dev, /dev/pts, /dev/shm and never sysfs, cgroup or mqueue: the floor),
 * and binds over /etc/resolv.conf, /etc/hosts, /etc/hostname and /dev/shm
 * (the run's own stand: its DNS stub is its egress). Refused
 * (-EOPNOTSUPP, err naming mounts[i]): other types, a destination
 * oci_mount_dest_check refuses, an option it cannot honour (shared
 * propagation, say). Destinations are the config's, as written: the
 * caller resolves them inside the root (mountpath.h) and checks the
 * resolved ones again. Pure; 0 or -errno.
 */
int oci_mounts(const struct oci_spec *s, struct plan_mount *out, size_t *n, struct rf_error *err);

/*
 * oci_mount_dest_check — may a config's mount land on `dst` (absolute,
 * clean)? Not on the root, /proc, /sys, /dev itself, ringfence's own
 * entries of /dev (null, zero, full, random, urandom, tty, pts, shm, ptmx,
 * fd, stdin/out/err, console) or beneath them, nor on OCI_RUN_OWN, where
 * the run's identity, broker and secrets are, nor — a `bind` — on /run
 * itself, which would put OCI_RUN_OWN on the engine's host directory (a
 * tmpfs there is init's own) (-EOPNOTSUPP, err set with
 * the key path "mounts"). Anything else beneath /dev is the container's (a
 * kubelet's /dev/termination-log), and so is /run/secrets: a container's
 * own secrets from ringfence are at /run/ringfence/secrets. Pure.
 */
int oci_mount_dest_check(const char *dst, bool bind, struct rf_error *err);

/*
 * oci_sysctls — linux.sysctl as plan sysctls into out[] (room for
 * PLAN_SYSCTL_MAX; strings point into `s`). Which names a run may set is
 * the plan's to say (the run's own namespaces' only). 0 or -E2BIG.
 */
int oci_sysctls(const struct oci_spec *s, struct plan_sysctl *out, size_t *n, struct rf_error *err);

/*
 * oci_policy_ceiling — a named policy (`named`, loaded) over the overlay
 * `o` a config made: the config may lower the policy's limits (memory,
 * pids, cpus, nofile), never raise them (a higher or absent one becomes
 * the policy's); it may not add allow rules (-EPERM: the policy decides
 * egress); the policy's agent, when it names one, is the run's. 0 or
 * -errno with err set.
 */
int oci_policy_ceiling(const struct rf_policy *named, struct rf_policy *o, struct rf_error *err);

/*
 * oci_policy_path — the named policy of OCI_ANN_POLICY into buf
 * ("/etc/ringfence/policies/NAME.json"): 1 when the annotation names one,
 * 0 when there is none, -EINVAL (err set) for a name that is not a-z 0-9
 * '-' '_'.
 */
int oci_policy_path(const struct oci_spec *s, char *buf, size_t len, struct rf_error *err);
