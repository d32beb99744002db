/*
 * wire.c — packing between the daemon and its request parser. Pure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/wire.h"
#include "policy/policy.h"

static int put_strv(char *buf, size_t size, size_t *off, char *const *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(v[i]) + 1;
                if (*off + l > size)
                        return -E2BIG;
                memcpy(buf + *off, v[i], l);
                *off += l;
        }
        return 0;
}

int wire_pack(const struct wire_head *h, const struct api_req *req, char *buf, size_t size)
{
        struct wire_head w = *h;
        size_t off = sizeof w;
        if (size < sizeof w)
                return -E2BIG;
        if (req && h->kind == WIRE_REQUEST) {
                w.op = req->op;
                w.flags = (req->block ? 1u : 0) | (req->follow ? 2u : 0) | (req->allow ? 4u : 0) |
                          (req->keep_state ? 8u : 0);
                w.tail = req->tail;
                memcpy(w.rule, req->rule, sizeof w.rule);
                memcpy(w.run, req->run, sizeof w.run);
                memcpy(w.agent, req->agent, sizeof w.agent);
                memcpy(w.reason, req->reason, sizeof w.reason);
                memcpy(w.secret, req->secret, sizeof w.secret);
                memcpy(w.workspace, req->workspace, sizeof w.workspace);
                memcpy(w.task, req->task, sizeof w.task);
                memcpy(w.on_behalf_of, req->on_behalf_of, sizeof w.on_behalf_of);
                memcpy(w.timeout, req->timeout, sizeof w.timeout);
                memcpy(w.memory, req->memory, sizeof w.memory);
                memcpy(w.cpus, req->cpus, sizeof w.cpus);
                memcpy(w.pids, req->pids, sizeof w.pids);
                w.argc = (uint32_t)req->argc;
                w.n_secrets = (uint32_t)req->n_secrets;
                w.n_hosts = (uint32_t)req->n_allow_hosts;
                w.n_env = (uint32_t)req->n_env;
                w.n_publish = (uint32_t)req->n_publish;
                w.n_ro = (uint32_t)req->n_ro;
                w.n_rw = (uint32_t)req->n_rw;
                w.n_profiles = (uint32_t)req->n_profiles;
                w.n_add_hosts = (uint32_t)req->n_add_hosts;
                if (put_strv(buf, size, &off, req->argv, req->argc) < 0 ||
                    put_strv(buf, size, &off, req->secrets, req->n_secrets) < 0 ||
                    put_strv(buf, size, &off, req->allow_hosts, req->n_allow_hosts) < 0 ||
                    put_strv(buf, size, &off, req->env, req->n_env) < 0 ||
                    put_strv(buf, size, &off, req->publish, req->n_publish) < 0 ||
                    put_strv(buf, size, &off, req->ro, req->n_ro) < 0 ||
                    put_strv(buf, size, &off, req->rw, req->n_rw) < 0 ||
                    put_strv(buf, size, &off, req->profiles, req->n_profiles) < 0 ||
                    put_strv(buf, size, &off, req->add_hosts, req->n_add_hosts) < 0)
                        return -E2BIG;
        }
        w.strings_len = (uint32_t)(off - sizeof w);
        memcpy(buf, &w, sizeof w);
        return (int)off;
}

/* a fixed array must hold a NUL */
#define TERMINATED(a) (memchr((a), '\0', sizeof(a)) != NULL)

static int take_strv(const char **p, const char *end, uint32_t n, size_t max_n, char ***out,
                     size_t *count)
{
        if (n > max_n)
                return -EBADMSG;
        if (!(*out = calloc((size_t)n + 1, sizeof **out)))
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                const char *z = memchr(*p, '\0', (size_t)(end - *p));
                if (!z)
                        return -EBADMSG;
                if (!((*out)[i] = strdup(*p)))
                        return -ENOMEM;
                (*count)++;
                *p = z + 1;
        }
        return 0;
}

int wire_unpack(const char *buf, size_t len, struct wire_head *h, struct api_req *req)
{
        memset(req, 0, sizeof *req);
        if (len < sizeof *h || len > WIRE_MAX)
                return -EBADMSG;
        memcpy(h, buf, sizeof *h);
        if (h->strings_len != len - sizeof *h || !TERMINATED(h->why) || !TERMINATED(h->run) ||
            !TERMINATED(h->agent) || !TERMINATED(h->reason) || !TERMINATED(h->secret) ||
            !TERMINATED(h->rule) || !TERMINATED(h->workspace) || !TERMINATED(h->task) ||
            !TERMINATED(h->on_behalf_of) || !TERMINATED(h->timeout) || !TERMINATED(h->memory) ||
            !TERMINATED(h->cpus) || !TERMINATED(h->pids) ||
            (h->kind != WIRE_MORE && h->kind != WIRE_ERROR && h->kind != WIRE_REQUEST))
                return -EBADMSG;
        if (h->kind == WIRE_ERROR && (h->status < 400 || h->status > 599))
                return -EBADMSG;
        if (h->kind != WIRE_REQUEST)
                return h->strings_len ? -EBADMSG : 0;
        if (h->op < 0 || h->op >= _API_OP_MAX)
                return -EBADMSG;
        req->op = (enum api_op)h->op;
        if (h->tail > API_TAIL_MAX || (req->op == API_RUN_OUTPUT && h->tail == 0))
                return -EBADMSG;
        req->tail = h->tail;
        req->block = h->flags & 1;
        req->follow = h->flags & 2;
        req->allow = h->flags & 4;
        req->keep_state = h->flags & 8;
        memcpy(req->rule, h->rule, sizeof req->rule);
        memcpy(req->run, h->run, sizeof req->run);
        memcpy(req->agent, h->agent, sizeof req->agent);
        memcpy(req->reason, h->reason, sizeof req->reason);
        memcpy(req->secret, h->secret, sizeof req->secret);
        memcpy(req->workspace, h->workspace, sizeof req->workspace);
        memcpy(req->task, h->task, sizeof req->task);
        memcpy(req->on_behalf_of, h->on_behalf_of, sizeof req->on_behalf_of);
        memcpy(req->timeout, h->timeout, sizeof req->timeout);
        memcpy(req->memory, h->memory, sizeof req->memory);
        memcpy(req->cpus, h->cpus, sizeof req->cpus);
        memcpy(req->pids, h->pids, sizeof req->pids);
        const char *p = buf + sizeof *h, *end = buf + len;
        int r;
        if ((r = take_strv(&p, end, h->argc, API_ARGV_MAX, &req->argv, &req->argc)) < 0 ||
            (r = take_strv(&p, end, h->n_secrets, API_SECRETS_MAX, &req->secrets,
                           &req->n_secrets)) < 0 ||
            (r = take_strv(&p, end, h->n_hosts, 256, &req->allow_hosts, &req->n_allow_hosts)) < 0 ||
            (r = take_strv(&p, end, h->n_env, API_ENV_MAX, &req->env, &req->n_env)) < 0 ||
            (r = take_strv(&p, end, h->n_publish, POLICY_PUBLISH_MAX, &req->publish,
                           &req->n_publish)) < 0 ||
            (r = take_strv(&p, end, h->n_ro, API_PATHS_MAX, &req->ro, &req->n_ro)) < 0 ||
            (r = take_strv(&p, end, h->n_rw, API_PATHS_MAX, &req->rw, &req->n_rw)) < 0 ||
            (r = take_strv(&p, end, h->n_profiles, API_PROFILES_MAX, &req->profiles,
                           &req->n_profiles)) < 0 ||
            (r = take_strv(&p, end, h->n_add_hosts, API_ADD_HOSTS_MAX, &req->add_hosts,
                           &req->n_add_hosts)) < 0 ||
            p != end) {
                api_req_clear(req);
                return r < 0 ? r : -EBADMSG;
        }
        if (req->op == API_START_RUN && req->argc == 0) {
                api_req_clear(req);
                return -EBADMSG;
        }
        return 0;
}
