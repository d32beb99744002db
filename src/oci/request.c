/*
 * request.c — a bundle's config as a run's policy overlay (request.h).
 *
 * Each check names the key it refuses; the table of standard mounts says
 * which mounts ringfence's own layout stands in for (a run always has its
 * own /proc, /dev, /dev/pts and /dev/shm; it never has /sys, a cgroup
 * tree or an mqueue mount: ringfence's floor, docs/OCI.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "oci/request.h"
#include "shared/macro.h"

static int refuse(struct rf_error *err, const char *kp, const char *fmt, ...) _printf_(3, 4);
static int refuse(struct rf_error *err, const char *kp, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        rf_error_vset(err, -EOPNOTSUPP, fmt, ap);
        va_end(ap);
        if (err)
                snprintf(err->keypath, sizeof err->keypath, "%s", kp);
        return -EOPNOTSUPP;
}

/* The mounts every config has, and what of them a run has of its own. */
static const struct {
        const char *destination, *type;
        bool given; /* ringfence's layout has it (else: not mounted, the floor) */
} standard_mounts[] = {
        {"/proc", "proc", true},
        {"/dev", "tmpfs", true},
        {"/dev/pts", "devpts", true},
        {"/dev/shm", "tmpfs", true},
        {"/dev/mqueue", "mqueue", false},
        {"/sys", "sysfs", false},
        {"/sys/fs/cgroup", "cgroup", false},
        {"/sys/fs/cgroup", "cgroup2", false},
};

/* Bind destinations whose file a run makes of its own: its DNS stub is
 * its egress (resolv.conf), its host name is the config's (hostname), its
 * hosts file names the run; /dev/shm is its own tmpfs. */
static const char *const own_files[] = {"/etc/resolv.conf", "/etc/hosts", "/etc/hostname",
                                        "/dev/shm"};

/* A tmpfs size= value: bytes, or with k, m, g (KiB, MiB, GiB). */
static int tmpfs_size(const char *v, uint64_t *out)
{
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (errno || end == v || v[0] == '-')
                return -EINVAL;
        unsigned shift = 0;
        switch (*end) {
        case 'k':
        case 'K':
                shift = 10, end++;
                break;
        case 'm':
        case 'M':
                shift = 20, end++;
                break;
        case 'g':
        case 'G':
                shift = 30, end++;
                break;
        case '\0':
                break;
        default:
                return -EINVAL;
        }
        if (*end || n == 0 || n > (OCI_TMPFS_MAX >> shift))
                return -ERANGE;
        *out = (uint64_t)n << shift;
        return 0;
}

/* One option of a bind or tmpfs mount: 0 (taken, or nothing to do: a run's
 * mounts are nosuid, nodev, private whatever they say), -EOPNOTSUPP. */
static int mount_option(const char *o, struct plan_mount *m, bool tmpfs)
{
        static const char *const harmless[] = {
                "bind",    "rbind",  "rw",          "private",     "rprivate",
                "slave",   "rslave", "nosuid",      "nodev",       "noexec",
                "exec",    "suid",   "dev",         "relatime",    "norelatime",
                "noatime", "atime",  "strictatime", "nodiratime",  "diratime",
                "z",       "Z",      "tmpcopyup",   "notmpcopyup", "nosymfollow"};
        if (!strcmp(o, "ro") || !strcmp(o, "rro")) {
                m->rdonly = true;
                return 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(harmless); i++)
                if (!strcmp(o, harmless[i]))
                        return 0;
        if (tmpfs && !strncmp(o, "size=", 5))
                return tmpfs_size(o + 5, &m->size) < 0 ? -EINVAL : 0;
        if (tmpfs && !strncmp(o, "mode=", 5)) {
                char *end;
                unsigned long v = strtoul(o + 5, &end, 8);
                if (*end || end == o + 5 || v > 07777)
                        return -EINVAL;
                m->mode = (mode_t)v;
                return 0;
        }
        if (tmpfs &&
            (!strncmp(o, "nr_inodes=", 10) || !strncmp(o, "uid=", 4) || !strncmp(o, "gid=", 4)))
                return 0;
        return -EOPNOTSUPP;
}

/* ringfence's own entries of a container's /dev (sandbox/plan.c add_dev)
 * and its console: a mount over one would replace what ringfence gives */
static const char *const dev_own[] = {"/dev/pts",    "/dev/shm",    "/dev/null",    "/dev/zero",
                                      "/dev/full",   "/dev/random", "/dev/urandom", "/dev/tty",
                                      "/dev/ptmx",   "/dev/fd",     "/dev/stdin",   "/dev/stdout",
                                      "/dev/stderr", "/dev/console"};

/* Is `a` the path `b` or beneath it (component-wise)? */
static bool at_or_beneath(const char *a, const char *b)
{
        size_t lb = strlen(b);
        return strncmp(a, b, lb) == 0 && (a[lb] == '\0' || a[lb] == '/');
}

int oci_mount_dest_check(const char *dst, bool bind, struct rf_error *err)
{
        /* a bind at "/run" would hold /run/ringfence, which init makes
         * (identity, broker, secrets), on the engine's host directory; a
         * tmpfs there (containerd's default spec has one) is init's own */
        bool own = !strcmp(dst, "/") || !strcmp(dst, "/dev") || (bind && !strcmp(dst, "/run")) ||
                   at_or_beneath(dst, "/proc") || at_or_beneath(dst, "/sys") ||
                   at_or_beneath(dst, OCI_RUN_OWN);
        for (size_t k = 0; k < ARRAY_SIZE(dev_own) && !own; k++)
                own = at_or_beneath(dst, dev_own[k]);
        if (own)
                return refuse(err, "mounts",
                              "%.200s: not over the root, /proc, /sys, /dev itself, "
                              "ringfence's own nodes in /dev (null, tty, pts, ptmx, console, "
                              "...), a bind at /run or ringfence's /run/ringfence",
                              dst);
        return 0;
}

int oci_mounts(const struct oci_spec *s, struct plan_mount *out, size_t *n, struct rf_error *err)
{
        char kp[64];
        *n = 0;
        for (size_t i = 0; i < s->n_mounts && i < OCI_MOUNTS_MAX; i++) {
                const struct oci_mount *m = &s->mounts[i];
                bool bind = m->type && !strcmp(m->type, "bind");
                for (size_t k = 0; k < m->n_options; k++)
                        bind |= !strcmp(m->options[k], "bind") || !strcmp(m->options[k], "rbind");
                bool tmpfs = !bind && m->type && !strcmp(m->type, "tmpfs");
                bool standard = false, own = false;
                for (size_t k = 0; k < ARRAY_SIZE(standard_mounts) && !standard; k++)
                        standard = !bind &&
                                   !strcmp(m->destination, standard_mounts[k].destination) &&
                                   m->type && !strcmp(m->type, standard_mounts[k].type);
                for (size_t k = 0; k < ARRAY_SIZE(own_files) && bind && !own; k++)
                        own = !strcmp(m->destination, own_files[k]);
                snprintf(kp, sizeof kp, "mounts[%zu]", i);
                if (standard || own)
                        continue;
                if (!bind && !tmpfs)
                        return refuse(err, kp,
                                      "%.200s (%.40s): a run has its own proc, /dev, devpts "
                                      "and /dev/shm, never sysfs, cgroup or mqueue; other "
                                      "mounts than bind and tmpfs: not yet",
                                      m->destination, m->type ? m->type : "none");
                int rc = oci_mount_dest_check(m->destination, bind, err);
                if (rc < 0) {
                        if (err)
                                snprintf(err->keypath, sizeof err->keypath, "%s", kp);
                        return rc;
                }
                struct plan_mount pm = {.dst = m->destination, .mode = 01777};
                if (bind) {
                        if (!m->source || m->source[0] != '/')
                                return rf_error_set(err, -EINVAL,
                                                    "%s: a bind needs an absolute source", kp);
                        pm.src = m->source;
                }
                for (size_t k = 0; k < m->n_options; k++) {
                        int r = mount_option(m->options[k], &pm, tmpfs);
                        if (r < 0)
                                return r == -EOPNOTSUPP
                                               ? refuse(err, kp,
                                                        "%.200s: option %.60s: not yet (a "
                                                        "run's mounts are private, nosuid, "
                                                        "nodev)",
                                                        m->destination, m->options[k])
                                               : rf_error_set(err, r,
                                                              "%s: option %.60s: "
                                                              "invalid",
                                                              kp, m->options[k]);
                }
                out[(*n)++] = pm;
        }
        return 0;
}

int oci_sysctls(const struct oci_spec *s, struct plan_sysctl *out, size_t *n, struct rf_error *err)
{
        if (s->n_sysctl > PLAN_SYSCTL_MAX)
                return rf_error_set(err, -E2BIG, "linux.sysctl: more than %d", PLAN_SYSCTL_MAX);
        for (size_t i = 0; i < s->n_sysctl; i++)
                out[i] =
                        (struct plan_sysctl){.name = s->sysctl[i].key, .value = s->sysctl[i].value};
        *n = s->n_sysctl;
        return 0;
}

static int check_namespaces(const struct oci_spec *s, struct rf_error *err)
{
        static const enum oci_ns needed[] = {OCI_NS_PID, OCI_NS_NETWORK, OCI_NS_MOUNT, OCI_NS_IPC,
                                             OCI_NS_UTS};
        unsigned have = 0;
        for (size_t i = 0; i < s->n_namespaces; i++) {
                enum oci_ns t = s->namespaces[i].type;
                /* a pod's network, ipc and uts namespaces may be joined: the
                 * caller checks they are a ringfence container's (ringfence-oci) */
                if (s->namespaces[i].path && t != OCI_NS_NETWORK && t != OCI_NS_IPC &&
                    t != OCI_NS_UTS)
                        return refuse(err, "linux.namespaces",
                                      "joining the %s namespace %.200s: refused (only a pod's "
                                      "network, ipc and uts: docs/OCI.md)",
                                      oci_ns_name(t), s->namespaces[i].path);
                have |= 1u << t;
        }
        for (size_t i = 0; i < ARRAY_SIZE(needed); i++)
                if (!(have & (1u << needed[i])))
                        return refuse(err, "linux.namespaces",
                                      "no %s namespace: a container shares nothing of the host's "
                                      "namespaces under ringfence-oci",
                                      oci_ns_name(needed[i]));
        return 0;
}

/* the host id of container id `id` through `maps`: 0, or -ENOENT */
static int idmap_find(const struct oci_idmap *maps, size_t n, uint32_t id, uint32_t *out)
{
        for (size_t i = 0; i < n; i++)
                if (id >= maps[i].container_id && id - maps[i].container_id < maps[i].size) {
                        *out = maps[i].host_id + (id - maps[i].container_id);
                        return 0;
                }
        return -ENOENT;
}

int oci_host_ids(const struct oci_spec *s, bool *has, uint32_t *uid, uint32_t *gid,
                 struct rf_error *err)
{
        *has = false;
        if (!s->n_uid_mappings && !s->n_gid_mappings)
                return 0;
        if (!s->n_uid_mappings || !s->n_gid_mappings)
                return refuse(err, "linux.uidMappings", "uid and gid mappings go together");
        if (idmap_find(s->uid_mappings, s->n_uid_mappings, s->uid, uid) < 0)
                return refuse(err, "linux.uidMappings", "no range holds the user %u", s->uid);
        if (idmap_find(s->gid_mappings, s->n_gid_mappings, s->gid, gid) < 0)
                return refuse(err, "linux.gidMappings", "no range holds the group %u", s->gid);
        if (*uid == 0 || *gid == 0)
                return refuse(err, *uid == 0 ? "linux.uidMappings" : "linux.gidMappings",
                              "the container's user mapped to the host's root: refused");
        *has = true;
        return 0;
}

int oci_netns_use(const struct oci_spec *s, const struct oci_netns_facts *f, struct rf_error *err)
{
        const char *cri = oci_spec_annotation(s, OCI_ANN_CRI_TYPE);
        const char *crio = oci_spec_annotation(s, OCI_ANN_CRIO_TYPE);
        bool member = (cri && !strcmp(cri, OCI_CRI_CONTAINER)) ||
                      (crio && !strcmp(crio, OCI_CRI_CONTAINER));
        if (f->host)
                return refuse(err, "linux.namespaces",
                              "the host's network namespace: a container on it would bypass its "
                              "egress");
        if (f->owned) {
                if ((oci_spec_annotation(s, OCI_ANN_ALLOW_HOSTS) ||
                     oci_spec_annotation(s, OCI_ANN_POLICY)) &&
                    !f->pods_egress)
                        return refuse(err, "annotations." OCI_ANN_ALLOW_HOSTS,
                                      "a container joining a pod's network namespace has the "
                                      "pod's egress: set it on the pod's sandbox container");
                return OCI_NETNS_JOIN;
        }
        if (member)
                return refuse(err, "linux.namespaces",
                              "a pod's container whose sandbox is not a ringfence-oci container "
                              "(the pod's network would leave its egress unenforced)");
        if (f->busy)
                return refuse(err, "linux.namespaces",
                              "a network namespace another runtime's processes are in: "
                              "ringfence-oci captures only a new one an engine made");
        return OCI_NETNS_ADOPT;
}

static int add_annotations(const struct oci_spec *s, struct rf_policy *o, struct rf_error *err)
{
        /* secrets come from the operator's named policy only: the
         * annotation (the pod author's) picks among its grants */
        if (oci_spec_annotation(s, OCI_ANN_SECRETS) && !oci_spec_annotation(s, OCI_ANN_POLICY))
                return refuse(err, "annotations." OCI_ANN_SECRETS,
                              "secrets are a named policy's grants: name it with " OCI_ANN_POLICY);
        const char *agent = oci_spec_annotation(s, OCI_ANN_AGENT);
        const char *hosts = oci_spec_annotation(s, OCI_ANN_ALLOW_HOSTS);
        int r;

        if ((r = policy_set_string(&o->agent, agent ? agent : OCI_AGENT_DEFAULT, POLICY_IDENT_MAX,
                                   err)) < 0) {
                snprintf(err->keypath, sizeof err->keypath, "annotations.%s", OCI_ANN_AGENT);
                return r;
        }
        for (const char *h = hosts; h && *h;) {
                size_t n = strcspn(h, ",");
                char rule[512];
                while (n && h[n - 1] == ' ')
                        n--;
                if (n >= sizeof rule)
                        return rf_error_set(err, -E2BIG, "annotations.%s: a rule too long",
                                            OCI_ANN_ALLOW_HOSTS);
                memcpy(rule, h, n);
                rule[n] = '\0';
                if (n && (r = policy_add_net_rule(o, rule, err)) < 0) {
                        snprintf(err->keypath, sizeof err->keypath, "annotations.%s",
                                 OCI_ANN_ALLOW_HOSTS);
                        return r;
                }
                h += strcspn(h, ",");
                while (*h == ',' || *h == ' ')
                        h++;
        }
        return 0;
}

int oci_overlay(const struct oci_spec *s, struct rf_policy *o, struct rf_error *err)
{
        int r;

        if (!s->has_process || s->n_args == 0)
                return rf_error_set(err, -EINVAL, "process.args: a command, required to run");
        /* process.user.additionalGids (the CRI writes the image's groups of
         * the user, [0 1 2 3 4 6 10 11 20 26 27] for root in Alpine): taken,
         * and given nothing, for there is nothing they could give — a
         * container's user namespace maps one gid, its user's, and every
         * file it sees (its image, its binds: idmapped the same way) is
         * owned by that gid or by none it could hold; the kernel would
         * refuse setgroups() with an unmapped gid. docs/OCI.md. */
        /* devices: the host's nodes, bound (ringfence-oci finds them) */
        for (size_t i = 0; i < s->n_devices; i++)
                if (s->devices[i].type == 'p')
                        return refuse(err, "linux.devices",
                                      "a FIFO device: not supported (a run binds the host's "
                                      "character and block devices)");
        /* what a run does not set: asked for with a value of its own, refused
         * (the defaults engines write are what a run has anyway) */
        if (s->has_umask && s->umask != 022)
                return refuse(err, "process.user.umask", "a umask other than 022: not yet");
        if (s->domainname && s->domainname[0])
                return refuse(err, "domainname", "a NIS domain name: not yet");
        if (s->memory_swap && s->memory_swap != s->memory_limit)
                return refuse(err, "linux.resources.memory.swap",
                              "a swap limit other than the memory limit: not yet");
        if (s->cpu_shares && (s->cpu_shares < 2 || s->cpu_shares > 262144))
                return rf_error_set(err, -EINVAL, "linux.resources.cpu.shares: 2-262144");
        if ((s->cpu_cpus && s->cpu_cpus[0]) || (s->cpu_mems && s->cpu_mems[0]))
                return refuse(err, "linux.resources.cpu", "cpus and mems: not yet");
        if ((r = check_namespaces(s, err)) < 0)
                return r;
        for (size_t i = 0; i < s->n_rlimits; i++) {
                const struct oci_rlimit *l = &s->rlimits[i];
                if (l->resource == RLIMIT_NOFILE) {
                        if (l->soft == 0 || l->soft > POLICY_NOFILE_MAX)
                                return rf_error_set(err, -EINVAL,
                                                    "process.rlimits: RLIMIT_NOFILE out of range");
                        o->nofile = l->soft;
                } else if (l->resource != RLIMIT_NPROC) /* the pids limit stands in */
                        return refuse(err, "process.rlimits", "rlimit %d: not yet", l->resource);
        }
        for (size_t i = 0; i < s->n_env; i++) {
                const char *eq = strchr(s->env[i], '=');
                char name[256];
                size_t n = (size_t)(eq - s->env[i]);
                if (n >= sizeof name)
                        return rf_error_set(err, -E2BIG, "process.env: a name too long");
                memcpy(name, s->env[i], n);
                name[n] = '\0';
                if ((r = policy_add_env(o, name, eq + 1, err)) < 0) {
                        snprintf(err->keypath, sizeof err->keypath, "process.env[%zu]", i);
                        return r;
                }
        }
        if (s->memory_limit)
                o->memory = s->memory_limit;
        if (s->pids_limit)
                o->pids = s->pids_limit > POLICY_PIDS_MAX ? POLICY_PIDS_MAX : s->pids_limit;
        if (s->has_cpu_quota) {
                uint64_t period = s->cpu_period ? s->cpu_period : 100000;
                uint64_t milli = s->cpu_quota * 1000 / period;
                o->cpus_milli = milli ? milli : 1;
        }
        return add_annotations(s, o, err);
}

int oci_policy_path(const struct oci_spec *s, char *buf, size_t len, struct rf_error *err)
{
        const char *name = oci_spec_annotation(s, OCI_ANN_POLICY);
        if (!name)
                return 0;
        if (!policy_profile_name_valid(name))
                return rf_error_set(err, -EINVAL,
                                    "annotations.%s: a policy name (a-z, 0-9, '-', '_')",
                                    OCI_ANN_POLICY);
        snprintf(buf, len, "%s/%s.json", OCI_POLICY_DIR, name);
        return 1;
}

int oci_policy_ceiling(const struct rf_policy *named, struct rf_policy *o, struct rf_error *err)
{
        if (o->n_net_allow)
                return rf_error_set(err, -EPERM,
                                    "annotations.%s: with %s the policy decides egress",
                                    OCI_ANN_ALLOW_HOSTS, OCI_ANN_POLICY);
        if (named->agent) {
                free(o->agent);
                o->agent = NULL; /* merged under the policy: its agent stands */
        }
        uint64_t *lim[] = {&o->memory, &o->pids, &o->cpus_milli, &o->nofile};
        const uint64_t cap[] = {named->memory, named->pids, named->cpus_milli, named->nofile};
        for (size_t i = 0; i < ARRAY_SIZE(lim); i++)
                if (cap[i] && (*lim[i] == 0 || *lim[i] > cap[i]))
                        *lim[i] = cap[i];
        return 0;
}

/* the first of two annotations that is set and non-empty, or NULL */
static const char *either(const struct oci_spec *sp, const char *a, const char *b)
{
        const char *v = oci_spec_annotation(sp, a);
        if (!v || !v[0])
                v = oci_spec_annotation(sp, b);
        return v && v[0] ? v : NULL;
}

void oci_identity(const struct oci_spec *sp, const char *id, char *out, size_t size)
{
        const char *ns = either(sp, OCI_ANN_POD_NAMESPACE, OCI_ANN_CRI_NAMESPACE);
        const char *pod = either(sp, OCI_ANN_POD_NAME, OCI_ANN_CRI_POD);
        const char *uid = either(sp, OCI_ANN_POD_UID, OCI_ANN_CRI_POD_UID);
        const char *name = either(sp, OCI_ANN_CONTAINER, OCI_ANN_CRI_CONTAINER);
        size_t n = 0;

        if (!size)
                return;
        out[0] = '\0';
#define ADD(...)                                                                                   \
        do {                                                                                       \
                if (n < size) {                                                                    \
                        int w_ = snprintf(out + n, size - n, __VA_ARGS__);                         \
                        n = w_ < 0 ? size : n + (size_t)w_;                                        \
                }                                                                                  \
        } while (0)
        ADD("id=%.128s", id);
        if (pod)
                ADD(" pod=%.128s/%.128s", ns ? ns : "", pod);
        if (uid)
                ADD(" pod_uid=%.128s", uid);
        if (name)
                ADD(" name=%.128s", name);
#undef ADD
}
