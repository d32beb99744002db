/*
 * broker.h — the wire protocol of a run's secret broker.
 *
 * The server lives in the supervisor, outside the run; its clients are the
 * run's processes, i.e. untrusted. A client connects to the Unix stream
 * socket BROKER_SOCKET inside its run and sends request lines; the server
 * answers each in order:
 *
 *   request:  "GET <name>\n"      exactly one space, name per
 *                                 secret_name_valid, no CR, the whole line
 *                                 including '\n' at most BROKER_REQ_MAX bytes
 *   reply:    "OK <len>\n" <len bytes of value>
 *                                 len decimal, no leading zeros except "0",
 *                                 at most BROKER_VALUE_MAX
 *         or  "ERR <code> <text>\n"
 *                                 code one of the broker_err tokens, text a
 *                                 short human explanation
 *
 * Everything here is pure (no I/O, no allocation) so both parsers are unit
 * tested and fuzzed (tests/fuzz/fuzz_broker.c). The request parser is what
 * faces the run: it accepts exactly one form and refuses everything else
 * rather than guess.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#define BROKER_REQ_MAX        256
#define BROKER_NAME_MAX       64
#define BROKER_VALUE_MAX      (64 * 1024)
#define BROKER_REPLY_HEAD_MAX 128 /* longest reply header line incl. \n */
#define BROKER_SOCKET         "/run/ringfence/broker.sock"

enum broker_err {
        BROKER_E_BADREQ,  /* "bad-request": the request line is malformed */
        BROKER_E_UNKNOWN, /* "unknown": no grant of that name */
        BROKER_E_REVOKED, /* "revoked" */
        BROKER_E_EXPIRED, /* "expired" (ttl) */
        BROKER_E_REFUSED, /* "refused": the audit record could not be written */
        BROKER_E_BUSY,    /* "busy" */
        _BROKER_E_MAX,
        _BROKER_E_INVALID = -EINVAL,
};

/* One parsed request: the name, NUL-terminated, valid per secret_name_valid. */
struct broker_req {
        char name[BROKER_NAME_MAX + 1];
};

/*
 * secret_name_valid — 1..BROKER_NAME_MAX bytes of [A-Za-z0-9_.-], not
 * starting with '.' or '-'. The rule for every secret name (store names,
 * broker names, /run/secrets file names). s[0..len) need not be
 * NUL-terminated. Pure.
 */
bool secret_name_valid(const char *s, size_t len);

/*
 * broker_req_parse — parse the first request in buf[0..len). Returns the
 * bytes consumed (> 0) with *req filled; 0 if more bytes are needed (no
 * '\n' yet and len < BROKER_REQ_MAX); -EBADMSG for a malformed line (wrong
 * verb, bad name, CR, NUL, extra spaces); -E2BIG if no '\n' within
 * BROKER_REQ_MAX bytes. Pure; called by the broker server on bytes from
 * the run.
 */
int broker_req_parse(const char *buf, size_t len, struct broker_req *req);

/*
 * broker_reply_ok — format "OK <len>\n" into buf[0..size) (NUL-terminated
 * when it fits); returns its length (without the NUL) or -ENOSPC. A
 * value_len over BROKER_VALUE_MAX cannot be sent: -EINVAL.
 */
int broker_reply_ok(char *buf, size_t size, size_t value_len);

/*
 * broker_reply_err — format "ERR <code> <text>\n" (a fixed short human text
 * per code, e.g. "ERR revoked the grant was revoked\n") into buf[0..size)
 * (NUL-terminated when it fits); returns its length (without the NUL) or
 * -ENOSPC; -EINVAL for a code that is not a broker_err.
 */
int broker_reply_err(char *buf, size_t size, enum broker_err code);

/*
 * broker_err_name — the code's wire token ("bad-request", "unknown",
 * "revoked", "expired", "refused", "busy"); "invalid" for anything else.
 * A static string.
 */
const char *broker_err_name(enum broker_err code);

/*
 * broker_reply_parse — client side: parse a reply header at buf[0..len).
 * Returns the header bytes consumed (> 0, the '\n' included) with *ok, and
 * *value_len (ok) or *code (not ok) set; 0 need more (no '\n' and
 * len < BROKER_REPLY_HEAD_MAX); -EBADMSG malformed (unknown code, bad
 * number, len > BROKER_VALUE_MAX, over-long line). An ERR line's text is
 * whatever follows the code and one space, up to the '\n' (printable ASCII
 * only); the caller may show it from buf. Pure; used by ringfence-secret.
 */
int broker_reply_parse(const char *buf, size_t len, bool *ok, size_t *value_len,
                       enum broker_err *code);
