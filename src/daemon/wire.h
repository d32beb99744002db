/*
 * wire.h — what the daemon's unprivileged request parser sends back.
 *
 * The privileged daemon reads a client's bytes and hands them, with a
 * connection id, to the parser process (parser.c); the parser answers
 * with "more", an error (HTTP status and message) or the routed request,
 * packed here: a fixed header with bounded character arrays and counts,
 * then the argv, secret names and host rules as NUL-terminated strings.
 * wire_unpack() trusts nothing of it (the parser is the part of the daemon
 * that faces clients): every count, length and terminator is checked.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "daemon/api.h"

#define WIRE_MAX (256 * 1024) /* bytes of one packed message */

enum wire_kind { WIRE_MORE = 1, WIRE_ERROR, WIRE_REQUEST };

struct wire_head {
        uint32_t conn;
        uint32_t kind;  /* enum wire_kind */
        int32_t status; /* WIRE_ERROR: the HTTP status */
        char why[256];  /* WIRE_ERROR */
        int32_t op;
        uint32_t flags; /* 1 block, 2 follow, 4 allow */
        uint32_t tail;  /* API_RUN_OUTPUT: bytes, 1..API_TAIL_MAX */
        char run[40];
        char agent[API_NAME_MAX + 1];
        char reason[257];
        char secret[65];
        char rule[321];
        char workspace[4096];
        char task[API_NAME_MAX + 1], on_behalf_of[API_NAME_MAX + 1];
        char timeout[32];
        char memory[32], cpus[32], pids[32];
        uint32_t argc, n_secrets, n_hosts, n_env, n_publish, n_ro, n_rw, n_profiles, n_add_hosts;
        uint32_t strings_len; /* bytes of strings after the head */
};

/* wire_pack — a routed request (or error) into buf; returns its length or -E2BIG. */
int wire_pack(const struct wire_head *h, const struct api_req *req, char *buf, size_t size);

/* wire_unpack — check and unpack; *req owns copies. 0 or -EBADMSG. Pure. */
int wire_unpack(const char *buf, size_t len, struct wire_head *h, struct api_req *req);
