/*
 * proxy.c — the egress process's event loop: HTTP forward proxy (absolute
 * form, keep-alive, every request checked), CONNECT tunnels with a TLS
 * SNI check, SOCKS5 CONNECT, captured connections (the run's transparent
 * path: original destination → name or literal, then TLS / HTTP / plain
 * by the first bytes), its own asynchronous resolver. See egress.h.
 *
 * Every front-end ends in route(), the one decision (rules, resolution,
 * address classes, egress.allow before the dial of the checked address);
 * have_address() then does what the front-end needs before the dial.
 *
 * One poll loop over the two listeners, the event channel and every
 * connection's client, upstream and DNS sockets. A connection is a state
 * machine; the table `next_state` lists every transition the code makes,
 * and conn_to() refuses any other (a bug there closes the connection
 * rather than letting it reach a state it should not).
 *
 * Order for one connection, whatever the protocol:
 *   read the request (head / SOCKS request) → decide by name (deny wins,
 *   then static hosts, then allow rules; IP literals only by IP/CIDR
 *   rules) → resolve (static host, literal, or DNS) → classify every
 *   address, keep the first acceptable one → [a tunnel to a TLS port: 200,
 *   read the ClientHello, SNI must equal the host] → record egress.allow
 *   (refuse if it cannot be recorded) → dial exactly that address → relay
 *   [a tunnel on a port its rule names: the first client bytes are held
 *   until judged plain, or a ClientHello naming the host].
 * Every refusal is recorded as egress.deny (coalesced per host and port)
 * with its reason and what would allow it (`fix`), and answered: 400, 403,
 * 502, 504 with an explanation (deny()), or the SOCKS reply code. HTTP/1.0
 * clients are served (http.h); their requests go up as HTTP/1.0.
 *
 * A request body goes up as it came, in place, re-chunked or buffered
 * (struct conn: bmode; body_rewrite): in a run with injections a chunked
 * body is always read de-chunked, so the placeholder check and the
 * replacement see the body as one stream, and sent re-chunked; a body
 * whose placeholders change its length gets a new Content-Length (at most
 * BODY_BUFFER_MAX buffered) or chunked framing. Every size on the way is
 * bounded (docs/SECRETS.md "Request bodies").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "policy/addr.h"
#include "egress/captured.h"
#include "egress/dnsresp.h"
#include "egress/egress-internal.h"
#include "egress/http.h"
#include "policy/httprule.h"
#include "egress/inject.h"
#include "egress/socks.h"
#include "egress/tls.h"
#include "egress/wsframe.h"
#include "egress/wsframe.h"
#include "secrets/mask.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "tls/tlsterm.h"

#define RELAY_BUF 32768 /* heads and framed bodies; bulk bytes are spliced */

/*
 * A captured connection decided but not yet heard from, to a destination
 * where only TLS and HTTP may pass (no rule names its port for plain
 * TCP): how long its first bytes may take. TLS and HTTP clients speak the
 * moment they are connected (a ClientHello, a request line: within
 * milliseconds; a cold JVM setting up its first TLS context, about the
 * slowest, within a second or so). A client still silent after this
 * waits for the server to speak first (SMTP, MySQL), which only plain TCP
 * could carry: it gets its reset now, not after EGRESS_HEAD_MS. 5 s
 * leaves a loaded or CPU-limited run (and an ASan build) a wide margin.
 */
#define EGRESS_FIRST_MS 5000

/*
 * A captured connection refused before its first bytes were read (at
 * accept: a port no rule allows, a pool address never handed out, a
 * loopback destination; or once its name resolved to an address refused):
 * how long to wait for them, so that an HTTP client gets its 403 with the
 * hint and a TLS client its alert however its first write raced the
 * accept. A client that sends nothing gets its reset after this: short,
 * so a refusal still answers well within a second.
 */
#define EGRESS_REFUSE_WAIT_MS 500

enum cstate {
        CS_SOCKS_GREET, /* SOCKS: reading the greeting */
        CS_SOCKS_REQ,   /* SOCKS: reading the request */
        CS_HEAD,        /* HTTP: reading a request head */
        CS_CAPTURED,    /* captured: accepted, its original destination being decided */
        CS_FIRST,       /* captured: decided, reading the first bytes (TLS / HTTP / other) */
        CS_REFUSE,      /* captured: refused before its first bytes came, reading them to answer */
        CS_RESOLVE,     /* waiting for DNS */
        CS_SNI,         /* CONNECT to a TLS port: 200 sent, reading the ClientHello */
        CS_TLS_ACCEPT,  /* terminated: the handshake with the run's client */
        CS_DIAL,        /* non-blocking connect to the checked address */
        CS_TLS_CONNECT, /* terminated: the verified handshake with the upstream */
        CS_BODY,        /* HTTP: forwarding the request body */
        CS_RESP,        /* HTTP: relaying the response */
        CS_TUNNEL,      /* CONNECT / SOCKS: raw relay both ways */
        CS_DRAIN,       /* writing what is left to the client, then close */
        CS_DEAD,
        _CS_MAX,
};

/* Every transition the code makes; anything else closes the connection. */
static const bool next_state[_CS_MAX][_CS_MAX] = {
        [CS_SOCKS_GREET] = {[CS_SOCKS_REQ] = true, [CS_DRAIN] = true, [CS_DEAD] = true},
        [CS_SOCKS_REQ] = {[CS_RESOLVE] = true,
                          [CS_DIAL] = true,
                          [CS_SNI] = true,
                          [CS_DRAIN] = true,
                          [CS_DEAD] = true},
        [CS_HEAD] = {[CS_RESOLVE] = true,
                     [CS_DIAL] = true,
                     [CS_TLS_CONNECT] = true, /* a first request waiting for up_start's handshake */
                     [CS_SNI] = true,
                     [CS_BODY] = true,
                     [CS_DRAIN] = true,
                     [CS_DEAD] = true},
        [CS_CAPTURED] = {[CS_RESOLVE] = true,
                         [CS_FIRST] = true,
                         [CS_REFUSE] = true,
                         [CS_DIAL] = true,
                         [CS_DRAIN] = true,
                         [CS_DEAD] = true},
        [CS_FIRST] =
                {[CS_DIAL] = true, [CS_TLS_ACCEPT] = true, [CS_DRAIN] = true, [CS_DEAD] = true},
        [CS_RESOLVE] = {[CS_DIAL] = true,
                        [CS_SNI] = true,
                        [CS_FIRST] = true,
                        [CS_REFUSE] = true,
                        [CS_DRAIN] = true,
                        [CS_DEAD] = true},
        [CS_REFUSE] = {[CS_DRAIN] = true, [CS_DEAD] = true},
        [CS_SNI] = {[CS_DIAL] = true, [CS_TLS_ACCEPT] = true, [CS_DEAD] = true},
        [CS_TLS_ACCEPT] = {[CS_HEAD] = true, [CS_DRAIN] = true, [CS_DEAD] = true},
        [CS_DIAL] = {[CS_TUNNEL] = true,
                     [CS_BODY] = true,
                     [CS_TLS_CONNECT] = true,
                     [CS_DRAIN] = true,
                     [CS_DEAD] = true},
        [CS_TLS_CONNECT] = {[CS_BODY] = true, [CS_DRAIN] = true, [CS_DEAD] = true},
        [CS_BODY] = {[CS_RESP] = true, [CS_DRAIN] = true, [CS_DEAD] = true},
        [CS_RESP] = {[CS_HEAD] = true, [CS_TUNNEL] = true, [CS_DRAIN] = true, [CS_DEAD] = true},
        /* CS_HEAD: a captured connection dialled first whose client then
         * opened with an HTTP request (tunnel_sniff) */
        [CS_TUNNEL] = {[CS_HEAD] = true, [CS_DRAIN] = true, [CS_DEAD] = true},
        [CS_DRAIN] = {[CS_DEAD] = true},
};

enum watched {
        W_CLIENT,
        W_UP,
        W_DNS,
};

enum proto {
        PR_HTTP,
        PR_CONNECT,
        PR_SOCKS,
        PR_CAPTURE, /* a captured connection not (or not yet) HTTP: TLS or plain TCP */
};

static const char *const proto_name[] = {
        [PR_HTTP] = "http",
        [PR_CONNECT] = "connect",
        [PR_SOCKS] = "socks5",
        [PR_CAPTURE] = "tcp",
};

struct relay {
        char d[RELAY_BUF];
        size_t off, len;
};

/*
 * Bulk bytes (a tunnel, a response body of known length) move socket →
 * pipe → socket with splice(2), never through this process's memory; the
 * buffers above carry heads and whatever the proxy must read.
 */
#define SPLICE_MAX (1 << 20)
/* a direction switches to splice once it has carried this much: small
 * exchanges never cost a pipe (two fds, kernel pages) */
#define SPLICE_AFTER (64 * 1024)
/* splices in and out per event while neither side blocks */
#define SPLICE_PASSES 4
struct spipe {
        int r, w;   /* -1 until first used */
        size_t len; /* bytes in the pipe */
};

/*
 * A request body toward a secret's host that is rewritten, not passed on
 * (see body_rewrite): BM_CHUNK de-chunks what the client sends (or reads
 * its Content-Length), scans it as one stream, replaces and re-chunks it;
 * BM_BUFFER reads a Content-Length body whole into `buf` (at most
 * BODY_BUFFER_MAX, and BODY_BUFFER_TOTAL for all connections at once),
 * then sends the head with the new Content-Length and the body replaced.
 * Allocated for such a request only, freed when its body is out.
 */
#define BODY_BUFFER_MAX   (1 << 20)  /* a body buffered to rewrite its Content-Length */
#define BODY_BUFFER_TOTAL (16 << 20) /* all buffered bodies at once: beyond, re-chunked */
#define BODY_CHUNK_FRAME  24         /* room a re-chunked piece's framing needs */
struct body_rw {
        int64_t in_left; /* Content-Length bytes still to come from the client (-1: chunked) */
        bool ended;      /* the client's body is all read */
        bool out_done;   /* ... and all of it is in c2u, the last chunk included */
        bool stalled;    /* has what room in c2u would move: the upstream's POLLOUT steps it */
        char *buf;       /* BM_BUFFER: the body as read (owned) */
        size_t buf_len, buf_cap, flushed;
        size_t dec_len;
        size_t held; /* BM_CHUNK: the first `held` bytes of dec wait for the client's next */
        char dec[RELAY_BUF]; /* BM_CHUNK: body bytes read, not yet replaced (a held beginning);
                              * last: not zeroed */
};

struct conn {
        enum cstate st;
        enum proto proto;
        int cfd, ufd, dfd;   /* client, upstream, DNS */
        size_t in_len;       /* bytes in `in` */
        struct spipe pu, pd; /* client → upstream, upstream → client */
        /* the current destination */
        char host[256];
        uint16_t port;
        char cur_host[256]; /* what ufd is connected to (keep-alive reuse) */
        uint16_t cur_port;
        int family;
        uint8_t addr[16];
        char addr_text[64];
        char rule[RULE_TEXT_MAX + 8]; /* "allow <rule>" / "deny <rule>" */
        bool static_host;             /* the name is an operator-declared --add-host */
        bool ip_rule;                 /* an IP/CIDR allow rule covers the address */
        bool port_rule;               /* the allow rule deciding names explicit ports */
        bool sniff;      /* tunnel: the client's first bytes not yet judged (TLS or plain) */
        bool replied;    /* the client has its 200 / SOCKS success: no error answer now */
        bool client_eof; /* tunnel: the client shut its sending side */
        bool up_shut;    /* ... and the upstream got the same (shutdown SHUT_WR) */
        /* a captured connection (egress.h): its destination is fixed by the
         * address the run dialled, not by anything the client sends */
        bool captured;
        bool cap_tls;      /* its first bytes were a TLS record: refusals get a TLS alert */
        bool cap_plain_ok; /* a rule or network.plain_ports allows plain TCP to it */
        bool cap_literal;  /* the destination is an IP literal (not a pool name) */
        bool rst;          /* close with RST (SO_LINGER 0): the client sees ECONNRESET */
        /* TLS termination (a connection to an injection host, docs/TLS.md):
         * the sessions on cfd and ufd (owned; freed with their fd), the
         * address route() checked and not yet dialled, and what a session's
         * last -EAGAIN waits for beyond the obvious (a read that must write,
         * a write that must read) */
        struct rf_tls_conn *ctls, *utls;
        bool term; /* the run's side is terminated: requests are read here */
        /* its upstream, dialled and verified while the run's client still
         * shakes hands (up_start): what its first request finds */
        enum { UP_IDLE, UP_CONNECTING, UP_HANDSHAKE, UP_READY, UP_FAILED } upst;
        bool up_tried; /* up_start ran (at the CONNECT, or at the ClientHello) */
        char up_why[RF_TLS_REASON_MAX + 96];
        bool addr_ready;    /* route() decided c->addr; the first request dials it */
        bool no_notify;     /* the upstream cut its stream: no close_notify to the client */
        bool want_out[2];   /* W_CLIENT / W_UP: a read waits for POLLOUT */
        bool want_in[2];    /* ... a write waits for POLLIN */
        int8_t tls_end[2];  /* a session's end (-1 EOF, -2 error) read after data: next step */
        char cap_name[256]; /* the name (or literal text) it was decided for */
        uint16_t cap_port;
        /* resolver */
        uint16_t qid[2];
        bool qdone[2];
        struct dns_answer ans[2];
        size_t ns;
        int64_t dns_deadline;
        /* HTTP framing */
        char trace[33], span[17]; /* traceparent ids of the request being forwarded */
        bool req_recorded;        /* its egress.request is written */
        int64_t req_left;         /* request body bytes left (-1: chunked) */
        struct http_chunked req_ch;
        bool req_head; /* the request was HEAD */
        bool ws; /* the request asks for a WebSocket: a 101 turns the connection into a tunnel */
        struct ws_frames wsf; /* a scrubbed WebSocket: the server's frame headers */
        bool client_close;
        char method[16];
        size_t rhead_len;
        bool resp_in_head;
        int64_t resp_left; /* -1 chunked, -2 until close */
        struct http_chunked resp_ch;
        /* accounting */
        uint64_t up, down;
        int64_t t0, deadline;
        bool allowed; /* egress.allow recorded: egress.close owed */
        /* credential injection: the response comes from a secret's host and
         * is scrubbed of its value in u2c; the last `hold` bytes of u2c may
         * begin a value and wait for the next bytes (inject_scrub_inplace) */
        bool scrub;
        size_t hold;
        int64_t hold_until; /* held bytes go out (their tail scrubbed) if nothing follows by then */
        /* what went out of a possible value when a hold timed out: the
         * next bytes are still matched against its rest (inject_scrub_resume) */
        struct inject_resume resume;
        /* the request body's last bytes already checked, so a placeholder
         * cut between two reads is still seen (body_exfil) */
        char bcarry[SECRET_PH_LEN_MAX];
        size_t bcarry_len;
        uint64_t own;           /* the injections whose hosts this request goes to */
        uint64_t inj_pending;   /* ... whose value it carries: secret.inject once it is sent */
        size_t inj_head_left;   /* bytes of its head still to be written upstream */
        uint64_t body_own;      /* the injections its body may carry (replaced there) */
        uint64_t body_injected; /* ... that it did carry: secret.inject once the body is out */
        /* how the request body goes up: BM_PASS as it came (a Content-Length
         * body; any body in a run without injections), BM_INPLACE the same
         * with placeholders as long as their values replaced in place,
         * BM_CHUNK and BM_BUFFER rewritten (struct body_rw) */
        enum { BM_PASS, BM_INPLACE, BM_CHUNK, BM_BUFFER } bmode;
        struct body_rw *brw; /* owned: BM_CHUNK / BM_BUFFER only */
        bool head_parked;    /* BM_BUFFER: the head in c2u waits for the body's new length */
        /* epoll: what each of client, upstream, DNS is registered with */
        int reg_fd[3];
        uint32_t reg_ev[3];
        uint32_t rev[3]; /* events of this round */
        size_t idx;      /* in E.conns */
        bool queued;     /* in E.active: stepped this round */

        /* the buffers last: a connection is reset up to here (conn_new) */
        char in[HTTP_HEAD_MAX + TLS_HELLO_MAX / 4]; /* unconsumed client bytes */
        struct relay c2u, u2c;
        struct http_request rq; /* the request being forwarded (spans into `in`) */
        char rhead[HTTP_HEAD_MAX];
        char inj_path[2100]; /* the target of the request inj_pending is for */
        /* scrubbed responses: which bytes of u2c are chunk framing (one
         * bit each; the scrubber reads the body as one stream past them) */
        uint8_t framing[RELAY_BUF / 8];
        /* CS_REFUSE: the refusal, recorded already, to answer once the
         * first bytes are in (written by deny before the state is entered) */
        char refuse_why[512];
        char refuse_rule[RULE_TEXT_MAX + 8]; /* "" for none */
        int refuse_status;                   /* the HTTP status */
        int refuse_hint;                     /* an enum hint */
};

/* Freed connections kept for reuse: a fresh 190 KB allocation per
 * connection cost page faults and zeroing on every request. */
#define CONN_CACHE_MAX 16
static struct conn *conn_cache[CONN_CACHE_MAX];
static size_t n_conn_cache;

/* what was read before a tunnel opened goes into its relay buffer whole */
_Static_assert(sizeof(((struct conn *)0)->in) <= RELAY_BUF, "in must fit a relay buffer");

static struct {
        const struct egress_config *cfg;
        int events;
        struct conn **conns; /* every open connection, cfg->max_conns slots */
        size_t n_conns;
        struct conn **active; /* the connections to step this round (same size) */
        size_t n_active;
        struct conn **again; /* TLS bytes buffered in a session: step next round (same size) */
        size_t n_again;
        int64_t next_deadline; /* no connection's deadline is earlier (-1: none) */
        uint64_t bytes;        /* both ways, for limits.egress_bytes */
        bool accept_paused;    /* out of fds: listeners not polled until a connection closes */
        int epfd;
        struct synth_map *map;         /* the run's name map (owned), grown from synth_fd */
        int synth_fd;                  /* the map channel, or -1 */
        bool map_ok;                   /* false once the channel broke: pool addresses refused */
        struct inject_needles needles; /* the injected values and their base64 forms */
        uint64_t scrubbed;             /* occurrences replaced in responses */
        size_t body_buffered;          /* bytes of all BM_BUFFER bodies (BODY_BUFFER_TOTAL) */
} E;

/*
 * epoll registrations follow what each connection wants this round
 * (watch); every close of a watched fd goes through unwatch_close, so a
 * registration never outlives its fd (a reused fd number must not be
 * taken for the old one). The listeners and the event channel carry
 * small numbers in data.u64; a connection's fds carry its address with
 * the watched index in the low bits (struct conn is aligned far beyond 4).
 */
#define TAG_HTTP   1
#define TAG_SOCKS  2
#define TAG_EVENTS 3
#define TAG_CAP4   4
#define TAG_CAP6   5
#define TAG_SYNTH  6

static void watch(struct conn *c, enum watched w, int fd, uint32_t ev)
{
        if (fd < 0 || ev == 0) {
                if (c->reg_fd[w] >= 0)
                        (void)epoll_ctl(E.epfd, EPOLL_CTL_DEL, c->reg_fd[w], NULL);
                c->reg_fd[w] = -1;
                c->reg_ev[w] = 0;
                return;
        }
        if (c->reg_fd[w] == fd && c->reg_ev[w] == ev)
                return;
        struct epoll_event e = {.events = ev, .data.u64 = (uint64_t)(uintptr_t)c | (uint64_t)w};
        int op = c->reg_fd[w] == fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        if (op == EPOLL_CTL_ADD && c->reg_fd[w] >= 0)
                (void)epoll_ctl(E.epfd, EPOLL_CTL_DEL, c->reg_fd[w], NULL);
        if (epoll_ctl(E.epfd, op, fd, &e) < 0 && errno == EEXIST)
                (void)epoll_ctl(E.epfd, EPOLL_CTL_MOD, fd, &e);
        c->reg_fd[w] = fd;
        c->reg_ev[w] = ev;
}

static int unwatch_close(struct conn *c, enum watched w, int fd)
{
        struct rf_tls_conn **t = w == W_CLIENT ? &c->ctls : w == W_UP ? &c->utls : NULL;
        if (t && *t && fd >= 0 && fd == (w == W_CLIENT ? c->cfd : c->ufd)) {
                /* the session goes with its socket; a clean end gets its
                 * close_notify (one non-blocking try: a client reading
                 * until close must tell the end from a cut) */
                if (!c->rst && !(w == W_CLIENT && c->no_notify))
                        (void)E.cfg->tls->shutdown(*t);
                E.cfg->tls->conn_free(*t);
                *t = NULL;
                c->want_out[w] = c->want_in[w] = false;
                c->tls_end[w] = 0;
        }
        if (fd >= 0 && c->reg_fd[w] == fd) {
                (void)epoll_ctl(E.epfd, EPOLL_CTL_DEL, fd, NULL);
                c->reg_fd[w] = -1;
                c->reg_ev[w] = 0;
        }
        return safe_close(fd);
}

/*
 * Bytes to and from one side, through its TLS session when it has one
 * (terminated connections); otherwise the socket. Same results as
 * read(2) / send(2): -1 with errno (EAGAIN: wait; anything else: the side
 * is gone or broke). A session's -EAGAIN may wait for the other direction
 * of its socket: want_out / want_in say so to conn_watch.
 */
static ssize_t io_read(struct conn *c, enum watched w, void *buf, size_t n)
{
        struct rf_tls_conn *t = w == W_CLIENT ? c->ctls : c->utls;
        if (!t)
                return read(w == W_CLIENT ? c->cfd : c->ufd, buf, n);
        ssize_t r = E.cfg->tls->read(t, buf, n);
        c->want_out[w] = r == -EAGAIN && E.cfg->tls->want(t) == POLLOUT;
        if (r >= 0)
                return r;
        errno = (int)-r;
        return -1;
}

static ssize_t io_write(struct conn *c, enum watched w, const void *buf, size_t n)
{
        struct rf_tls_conn *t = w == W_CLIENT ? c->ctls : c->utls;
        if (!t)
                return send(w == W_CLIENT ? c->cfd : c->ufd, buf, n, MSG_NOSIGNAL);
        ssize_t r = E.cfg->tls->write(t, buf, n);
        c->want_in[w] = r == -EAGAIN && E.cfg->tls->want(t) == POLLIN;
        if (r >= 0)
                return r;
        errno = (int)-r;
        return -1;
}

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void conn_to(struct conn *c, enum cstate s)
{
        if (!next_state[c->st][s])
                s = CS_DEAD;
        c->st = s;
}

/* ---- events ---------------------------------------------------------------- */

#define EVENT_STR_MAX 1024 /* bytes of a string field; a longer one is cut and marked */

struct evf {
        const char *k;
        const char *s; /* string, or NULL for the integer */
        int64_t i;
};

/*
 * Records of what already happened ("async") wait in this queue until the
 * end of the loop's round, or until a record an action waits on goes out
 * (then ahead of it, in the same datagram: the supervisor writes a
 * datagram's records in order, and answers its last). So the bytes a
 * round relays reach the client before the supervisor is woken to record
 * them, and the records of one round, with the record an action then
 * waits on, cost one datagram and one wake-up. Nothing stays queued while
 * the process waits for events: the supervisor writes them while the
 * connection waits on its peers, not when an action waits on it.
 */
#define EVQ_MAX EGRESS_EVENT_RECORDS_MAX
static struct {
        char d[EGRESS_EVENT_BATCH_MAX];
        size_t len, n; /* bytes, records: `record\nrecord...` (egress.h) */
} evq;
static bool events_timed; /* SO_RCVTIMEO is set: recv alone waits for an answer */

/* Send what is queued as one datagram: 0, or -EIO (then the channel is done). */
static int evq_flush(void)
{
        int r = 0;
        if (evq.n &&
            (E.events < 0 || send(E.events, evq.d, evq.len, MSG_NOSIGNAL) != (ssize_t)evq.len))
                r = -EIO;
        evq.len = evq.n = 0;
        return r;
}

/* Queue one record behind the others, the queue first sent when it has
 * no room: 0, or -EIO. */
static int evq_add(const char *rec, size_t len)
{
        if ((evq.n == EVQ_MAX || evq.len + 1 + len > sizeof evq.d) && evq_flush() < 0)
                return -EIO;
        if (evq.n)
                evq.d[evq.len++] = '\n';
        memcpy(evq.d + evq.len, rec, len);
        evq.len += len;
        evq.n++;
        return 0;
}

/*
 * Record one event through the supervisor. `sync`: wait for its answer
 * (must succeed: a negative answer, a timeout or a broken channel is a
 * refusal) — for the records an action waits on (egress.allow,
 * egress.request). The others record what already happened (a response,
 * a close, a refusal): they are queued (above) and sent without waiting;
 * the supervisor writes them in order, before any later record of this run.
 */
static int64_t event_send(const char *name, const char *key, const struct evf *f, size_t n,
                          bool sync)
{
        struct json_buf b = {0};
        json_buf_append(&b, sync ? "{\"event\":" : "{\"async\":true,\"event\":", sync ? 9 : 22);
        json_buf_append_string(&b, name, strlen(name));
        if (key) {
                json_buf_append(&b, ",\"key\":", 7);
                json_buf_append_string(&b, key, strlen(key));
        }
        json_buf_append(&b, ",\"fields\":{", 11);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        json_buf_append(&b, ",", 1);
                json_buf_append_string(&b, f[i].k, strlen(f[i].k));
                json_buf_append(&b, ":", 1);
                if (f[i].s) {
                        /* a longer string is cut, and says so: the supervisor
                         * then also redacts a value's start left at the cut */
                        size_t l = strnlen(f[i].s, EVENT_STR_MAX + 1);
                        if (l > EVENT_STR_MAX) {
                                char cut[EVENT_STR_MAX + sizeof REDACT_CUT_MARK];
                                memcpy(cut, f[i].s, EVENT_STR_MAX);
                                memcpy(cut + EVENT_STR_MAX, REDACT_CUT_MARK,
                                       sizeof REDACT_CUT_MARK);
                                json_buf_append_string(&b, cut, sizeof cut - 1);
                        } else
                                json_buf_append_string(&b, f[i].s, l);
                } else {
                        char num[32];
                        int l = snprintf(num, sizeof num, "%" PRId64, f[i].i);
                        json_buf_append(&b, num, (size_t)l);
                }
        }
        json_buf_append(&b, "}}", 2);
        int64_t r = -EIO;
        if (b.error || b.len > EGRESS_EVENT_MAX || E.events < 0)
                goto done;
        if (evq_add(b.data, b.len) < 0)
                goto done;
        if (!sync) {
                r = 1;
                goto done;
        }
        if (evq_flush() < 0) /* the queue, this record last: it is answered */
                goto done;
        int64_t ans;
        struct pollfd p = {.fd = E.events, .events = POLLIN};
        if ((events_timed || poll(&p, 1, 5000) == 1) &&
            recv(E.events, &ans, sizeof ans, 0) == sizeof ans)
                r = ans;
        else
                /* no answer in time: a late one would be taken for the
                 * next event's; the channel is done, every later
                 * action is refused */
                E.events = -1;
done:
        json_buf_done(&b);
        return r;
}

/* An event an action waits on. */
static int64_t event(const char *name, const char *key, const struct evf *f, size_t n)
{
        return event_send(name, key, f, n, true);
}

/* An event recording what already happened. */
static void event_async(const char *name, const char *key, const struct evf *f, size_t n)
{
        (void)event_send(name, key, f, n, false);
}

/*
 * A refusal, recorded before the client can see it: a client that gives up
 * on its 403 can end the run, and the supervisor then stops this process
 * at once, so a refusal still queued would never be recorded (seen under
 * load). Refusals are rare; the one extra datagram is nothing.
 */
static void event_deny_now(const char *key, const struct evf *f, size_t n)
{
        event_async("egress.deny", key, f, n);
        (void)evq_flush();
}

/* The path a connection came by, for its records. */
static const char *via(const struct conn *c)
{
        return c->captured ? "capture" : "proxy";
}

/* Its protocol, for its records: a captured one says what it carried. */
static const char *conn_proto(const struct conn *c)
{
        if (c->term)
                return "https";
        if (c->captured && c->proto != PR_HTTP)
                return c->cap_tls ? "tls" : "tcp";
        return proto_name[c->proto];
}

/* ---- answers to the client --------------------------------------------------- */

/*
 * A TLS fatal alert, access_denied (49), in a TLS 1.2 record: what a
 * captured TLS client gets when its ClientHello is refused (its library
 * then says "access denied" instead of a bare reset).
 */
static const char tls_alert_denied[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31};

static void client_send(struct conn *c, const char *s, size_t len)
{
        /* into the u2c relay: written by the loop, then the connection drains */
        size_t room = RELAY_BUF - c->u2c.off - c->u2c.len;
        if (len > room)
                len = room;
        memcpy(c->u2c.d + c->u2c.off + c->u2c.len, s, len);
        c->u2c.len += len;
}

/*
 * What would allow a refused destination, as the operator would write it.
 * A hint is given only when it names something not already in force:
 * ALLOW_NAME only when no allow rule matched the name and port, the
 * address hints only when no IP/CIDR rule covers the address (or the
 * decision would have gone the other way).
 */
enum hint {
        HINT_NONE,         /* nothing allows it (a malformed request, fronting, ...) */
        HINT_ALLOW_NAME,   /* --allow-host NAME:PORT */
        HINT_ALLOW_ADDR,   /* --allow-host ADDR:PORT (an IP literal) */
        HINT_ADDR_OR_HOST, /* --allow-host ADDR:PORT or --add-host NAME:ADDR */
        HINT_ADD_HOST,     /* --add-host NAME:ADDR (the name does not resolve) */
        HINT_DENY_RULE,    /* a deny rule decided: no flag overrides it */
        HINT_PLAIN,        /* a plain protocol where only TLS is allowed */
};

/* addr_text as a rule's address: IPv6 in brackets (a port follows). */
static void addr_rule_text(const struct conn *c, char *out, size_t n)
{
        snprintf(out, n, strchr(c->addr_text, ':') ? "[%s]" : "%s", c->addr_text);
}

/*
 * The flag (or the policy change) that would allow c's destination, into
 * fix ("" for HINT_NONE). Short: it goes into egress.deny's "fix" field,
 * the end-of-run summary and the 403 body.
 */
static void hint_text(const struct conn *c, enum hint h, char *fix, size_t n)
{
        char a[80];
        addr_rule_text(c, a, sizeof a);
        switch (h) {
        case HINT_ALLOW_NAME:
                snprintf(fix, n, "--allow-host %s:%u", c->host, c->port);
                break;
        case HINT_ALLOW_ADDR:
                snprintf(fix, n, "--allow-host %s:%u", a, c->port);
                break;
        case HINT_ADDR_OR_HOST:
                snprintf(fix, n, "--allow-host %s:%u or --add-host %s:%s", a, c->port, c->host,
                         c->addr_text);
                break;
        case HINT_ADD_HOST:
                snprintf(fix, n, "--add-host %s:ADDR if the name has a fixed address", c->host);
                break;
        case HINT_DENY_RULE:
                snprintf(fix, n,
                         "remove \"%s\" from network.deny (deny rules win over allow rules)",
                         !strncmp(c->rule, "deny ", 5) ? c->rule + 5 : "?");
                break;
        case HINT_PLAIN:
                if (c->port == 443)
                        snprintf(fix, n, "list 443 in network.plain_ports");
                else
                        snprintf(fix, n,
                                 "--allow-host %s:%u (a rule naming the port allows plain TCP)",
                                 c->host, c->port);
                break;
        case HINT_NONE:
        default:
                fix[0] = '\0';
                break;
        }
}

static const char *status_text(int http_status)
{
        switch (http_status) {
        case 403:
                return "Forbidden";
        case 501:
                return "Not Implemented";
        case 502:
                return "Bad Gateway";
        case 504:
                return "Gateway Timeout";
        default:
                return "Bad Request";
        }
}

/* A refusal's record: egress.deny (coalesced per host:port) with the reason and the fix. */
static void deny_record(struct conn *c, const char *reason, const char *rule, enum hint h)
{
        char key[300], fix[RULE_TEXT_MAX + 400];
        hint_text(c, h, fix, sizeof fix);
        snprintf(key, sizeof key, "%s:%u", c->host, c->port);
        struct evf f[] = {
                {"host", c->host, 0},      {"port", NULL, c->port},
                {"addr", c->addr_text, 0}, {"rule", rule ? rule : "(none)", 0},
                {"reason", reason, 0},     {"proto", conn_proto(c), 0},
                {"fix", fix, 0},           {"via", via(c), 0},
        };
        event_deny_now(key, f, ARRAY_SIZE(f));
}

/*
 * A refusal's answer, once recorded (unless the client already has its
 * 200 / SOCKS success: then the connection just closes), then drain. A
 * connection left with nothing to send (a reset, an open tunnel) closes
 * at once: nothing would wake it before its deadline.
 */
static void deny_answer(struct conn *c, const char *reason, const char *rule, int http_status,
                        enum socks_reply socks_code, enum hint h)
{
        char fix[RULE_TEXT_MAX + 400];
        hint_text(c, h, fix, sizeof fix);
        if (c->replied && !c->term) {
                /* the tunnel is open on the client's side: no answer fits in it */
        } else if (c->captured && c->proto != PR_HTTP) {
                /* no HTTP request was read: a TLS alert after a ClientHello,
                 * else a reset (ECONNRESET at once, never a hang) */
                if (c->cap_tls && c->u2c.len == 0 && c->pd.len == 0)
                        client_send(c, tls_alert_denied, sizeof tls_alert_denied);
                else
                        c->rst = true;
        } else if (c->proto == PR_SOCKS) {
                uint8_t rep[10];
                socks_reply_build(socks_code, rep);
                client_send(c, (const char *)rep, sizeof rep);
        } else {
                /* Only HTTP gets a text body, and an HTTP target has no byte
                 * <= 0x20 or >= 0x7f (http.c refuses the request before),
                 * so the host quoted here is printable as it is; SOCKS5
                 * names, which may hold any byte, get no body. */
                char body[2048], msg[2400];
                char rulepart[RULE_TEXT_MAX + 16] = "";
                int bl;
                if (rule)
                        snprintf(rulepart, sizeof rulepart, " (rule %s)", rule);
                if (!c->host[0])
                        bl = snprintf(body, sizeof body, "ringfence: request refused: %s.\n",
                                      reason);
                else if (h == HINT_ALLOW_NAME)
                        bl = snprintf(body, sizeof body,
                                      "ringfence: egress to %s:%u refused: %s%s.\n"
                                      "To allow it, add \"%s:%u\" to network.allow in the run's "
                                      "policy, or run with %s.\n",
                                      c->host, c->port, reason, rulepart, c->host, c->port, fix);
                else if (fix[0])
                        bl = snprintf(body, sizeof body,
                                      "ringfence: egress to %s:%u refused: %s%s.\n"
                                      "To allow it, %s%s.\n",
                                      c->host, c->port, reason, rulepart,
                                      fix[0] == '-' ? "run with " : "", fix);
                else
                        bl = snprintf(body, sizeof body,
                                      "ringfence: egress to %s:%u refused: %s%s.\n", c->host,
                                      c->port, reason, rulepart);
                if (bl < 0 || (size_t)bl >= sizeof body)
                        bl = (int)strlen(body);
                int ml = snprintf(msg, sizeof msg,
                                  "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
                                  "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                                  http_status, status_text(http_status), bl, body);
                if (ml > 0)
                        client_send(c, msg, (size_t)ml < sizeof msg ? (size_t)ml : sizeof msg - 1);
        }
        /* the answer gets its own time to leave (a refusal at a deadline,
         * the 504, would otherwise be cut at once) */
        c->deadline = now_ms() + EGRESS_HEAD_MS;
        conn_to(c, CS_DRAIN);
        if (c->u2c.len == 0 && c->pd.len == 0)
                conn_to(c, CS_DEAD);
}

/*
 * A captured connection refused before its first bytes were read: read
 * what has come (up to the size of `in`) and say what it is (an HTTP
 * request: proto PR_HTTP; a TLS record: cap_tls). true when no more can
 * come (the client shut its side, or the socket broke).
 */
static bool refuse_read(struct conn *c)
{
        bool end = false;
        while (c->in_len < sizeof c->in) {
                ssize_t n = read(c->cfd, c->in + c->in_len, sizeof c->in - c->in_len);
                if (n > 0) {
                        c->in_len += (size_t)n;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                end = n == 0 || errno != EAGAIN;
                break;
        }
        enum captured_first k = captured_first_bytes((const uint8_t *)c->in, c->in_len);
        c->cap_tls = k == CAPF_TLS;
        if (k == CAPF_HTTP)
                c->proto = PR_HTTP;
        return end;
}

/*
 * CS_REFUSE: the first bytes as they come; once they are whole
 * (captured_first_whole), the client stops sending, or the wait is over
 * (timed_out), the answer they call for: a 403 with the hint for an HTTP
 * request, an alert for a ClientHello, a reset for nothing at all or any
 * other protocol.
 */
static void refuse_more(struct conn *c, bool timed_out)
{
        bool end = refuse_read(c);
        if (!end && !timed_out &&
            !captured_first_whole((const uint8_t *)c->in, c->in_len, sizeof c->in))
                return;
        deny_answer(c, c->refuse_why, c->refuse_rule[0] ? c->refuse_rule : NULL, c->refuse_status,
                    SOCKS_NOT_ALLOWED, (enum hint)c->refuse_hint);
}

/*
 * Refuse: record egress.deny (deny_record), answer and drain
 * (deny_answer). An empty c->host is a request that named no destination
 * (malformed): its answer gives no hint.
 *
 * A captured connection refused before its first bytes were read (at
 * accept, or once its name resolved) is answered by what it sends: an
 * HTTP request its 403 with the hint, a ClientHello an alert, nothing or
 * any other protocol a reset. What has come is read now; if that is not
 * yet enough, the connection waits EGRESS_REFUSE_WAIT_MS for the rest
 * (CS_REFUSE), so the answer does not depend on whether the client's
 * first write beat the accept. The record is written now, with what is
 * known of the protocol: the run may end before the answer.
 */
static void deny(struct conn *c, const char *reason, const char *rule, int http_status,
                 enum socks_reply socks_code, enum hint h)
{
        if (c->captured && c->proto == PR_CAPTURE && !c->cap_tls && c->in_len == 0 &&
            (c->st == CS_CAPTURED || c->st == CS_RESOLVE)) {
                bool end = refuse_read(c);
                deny_record(c, reason, rule, h);
                if (!end &&
                    !captured_first_whole((const uint8_t *)c->in, c->in_len, sizeof c->in)) {
                        snprintf(c->refuse_why, sizeof c->refuse_why, "%s", reason);
                        snprintf(c->refuse_rule, sizeof c->refuse_rule, "%s", rule ? rule : "");
                        c->refuse_status = http_status;
                        c->refuse_hint = (int)h;
                        c->dfd = unwatch_close(c, W_DNS, c->dfd);
                        conn_to(c, CS_REFUSE);
                        c->deadline = now_ms() + EGRESS_REFUSE_WAIT_MS;
                        return;
                }
        } else
                deny_record(c, reason, rule, h);
        deny_answer(c, reason, rule, http_status, socks_code, h);
}

/* ---- credential injection (inject.h) ------------------------------------------- */

/*
 * The placeholder (or the value) of secret `s` stood where it may not go:
 * secret.exfil (secret, destination, where it stood, whether the value
 * itself; never either text), sent and answered before the refusal, so a
 * binding with on_exfil "kill" has the supervisor end the run now; then
 * the refusal every front-end gives (403, SOCKS reply, reset or alert).
 */
/* The one header a binding puts its value into, set on every request to
 * its hosts: its header template's, or Authorization for "basic". Its
 * name (not NUL-terminated) and *len, or NULL: any header value. */
static const char *tmpl_header(const struct inject_secret *s, size_t *len)
{
        if (s->basic[0]) {
                *len = 13;
                return "Authorization";
        }
        const char *colon = strchr(s->header, ':');
        *len = colon ? (size_t)(colon - s->header) : 0;
        return colon ? s->header : NULL;
}

static void exfil(struct conn *c, const struct inject_secret *s, const char *where,
                  const char *form)
{
        char dest[300], reason[1024];
        snprintf(dest, sizeof dest, "%s:%u", c->host, c->port);
        struct evf f[] = {
                {"name", s->name, 0},
                {"secret_version", NULL, s->version},
                {"destination", dest, 0},
                {"where", where, 0},
                {"form", form, 0},
                {"via", via(c), 0},
                {"action", s->exfil_kill ? "kill" : "refuse", 0},
        };
        (void)event_send("secret.exfil", NULL, f, ARRAY_SIZE(f), true);
        /* where this binding lets the value go: its header template's
         * header (else any request-header value), its query parameter,
         * request bodies */
        char places[SECRET_HEADER_MAX + SECRET_QUERY_MAX + 96];
        size_t tl;
        const char *tn = tmpl_header(s, &tl);
        int n = tn ? snprintf(places, sizeof places, "the request header %.*s%s", (int)tl, tn,
                              s->basic[0] ? " (HTTP Basic credentials)" : "")
                   : snprintf(places, sizeof places, "request header values");
        size_t pl = n > 0 && (size_t)n < sizeof places ? (size_t)n : 0;
        if (s->query[0])
                pl += (size_t)snprintf(places + pl, sizeof places - pl, "%s the query parameter %s",
                                       s->body ? "," : " and", s->query);
        if (s->body)
                snprintf(places + pl, sizeof places - pl, " and request bodies");
        snprintf(reason, sizeof reason,
                 "the %s of the injected secret %s stands in the %s; it is only ever "
                 "replaced in %s to the secret's own hosts (secret.exfil)",
                 form, s->name, where, places);
        deny(c, reason, NULL, 403, SOCKS_NOT_ALLOWED, HINT_NONE);
}

/* A name (host, CONNECT target, SOCKS5 host, captured name, SNI) that
 * carries a placeholder or value: refused as exfiltration. true when refused. */
static bool exfil_name(struct conn *c, const char *name, const char *where)
{
        const char *form;
        const struct inject_secret *s =
                inject_mentions_name(E.cfg->inject, E.cfg->n_inject, name, strlen(name), &form);
        if (!s)
                return false;
        exfil(c, s, where, form);
        return true;
}

static const char *name_where(const struct conn *c)
{
        return c->captured              ? "captured connection's name"
               : c->proto == PR_SOCKS   ? "SOCKS5 host"
               : c->proto == PR_CONNECT ? "CONNECT target"
                                        : "request's host";
}

/* ---- the decision ------------------------------------------------------------ */

static bool port_plain(uint16_t port)
{
        for (size_t i = 0; i < E.cfg->n_plain_ports; i++)
                if (E.cfg->plain_ports[i] == port)
                        return true;
        return false;
}

/*
 * By name (before any lookup): deny rules first, then the static hosts,
 * then allow rules. Returns true when the name may proceed (c->rule set).
 */
static bool decide_name(struct conn *c, const char **reason, enum hint *hint)
{
        const struct egress_config *g = E.cfg;
        for (size_t i = 0; i < g->n_deny; i++)
                if ((g->deny[i].kind == RULE_HOST || g->deny[i].kind == RULE_SUFFIX) &&
                    net_rule_match_host(&g->deny[i], c->host, c->port)) {
                        snprintf(c->rule, sizeof c->rule, "deny %s", g->deny[i].text);
                        *reason = "a deny rule matches";
                        *hint = HINT_DENY_RULE;
                        return false;
                }
        for (size_t i = 0; i < g->n_allow; i++)
                if ((g->allow[i].kind == RULE_HOST || g->allow[i].kind == RULE_SUFFIX) &&
                    net_rule_match_host(&g->allow[i], c->host, c->port)) {
                        snprintf(c->rule, sizeof c->rule, "allow %s", g->allow[i].text);
                        c->port_rule = g->allow[i].n_ports > 0;
                        return true;
                }
        *reason = "no allow rule matches (default: no egress)";
        *hint = HINT_ALLOW_NAME;
        c->rule[0] = '\0';
        return false;
}

/*
 * An address, once known: deny IP rules, allow IP rules, then (for a name
 * not declared with --add-host) its class and whether it is the host's
 * own. On a refusal *hint says what would allow it: an IP rule for the
 * address, or (a name) declaring the name's address with --add-host.
 */
static bool decide_addr(struct conn *c, int family, const uint8_t addr[16], const char **reason,
                        enum hint *hint)
{
        char text[64];
        addr_format(addr, family, text, sizeof text);
        const struct egress_config *g = E.cfg;
        for (size_t i = 0; i < g->n_deny; i++)
                if ((g->deny[i].kind == RULE_IP || g->deny[i].kind == RULE_CIDR) &&
                    net_rule_match_addr(&g->deny[i], addr, family, c->port)) {
                        snprintf(c->rule, sizeof c->rule, "deny %s", g->deny[i].text);
                        *reason = "a deny rule matches the address";
                        *hint = HINT_DENY_RULE;
                        return false;
                }
        for (size_t i = 0; i < g->n_allow; i++)
                if ((g->allow[i].kind == RULE_IP || g->allow[i].kind == RULE_CIDR) &&
                    net_rule_match_addr(&g->allow[i], addr, family, c->port)) {
                        snprintf(c->rule, sizeof c->rule, "allow %s", g->allow[i].text);
                        c->ip_rule = true;
                        /* the name's rule or this one may name the port */
                        c->port_rule = c->port_rule || g->allow[i].n_ports > 0;
                        return true; /* an explicit IP/CIDR allow covers any class */
                }
        if (c->static_host)
                return true; /* the operator declared this name's address */
        enum addr_class k = addr_classify(addr, family);
        if (k != ADDR_PUBLIC) {
                static char why[128];
                snprintf(why, sizeof why, "the address is %s (%s)", addr_class_name(k), text);
                *reason = why;
                *hint = HINT_ADDR_OR_HOST;
                return false;
        }
        for (size_t i = 0; i < g->n_own; i++)
                if (g->own_family[i] == family &&
                    !memcmp(g->own[i], addr, family == AF_INET ? 4 : 16)) {
                        static char why[128];
                        snprintf(why, sizeof why, "the address is this host's own (%s)", text);
                        *reason = why;
                        *hint = HINT_ADDR_OR_HOST;
                        return false;
                }
        return true;
}

/* ---- resolving ---------------------------------------------------------------- */

static void dns_send(struct conn *c)
{
        const struct egress_config *g = E.cfg;
        static const uint16_t qt[2] = {1, 28};
        c->dfd = unwatch_close(c, W_DNS, c->dfd);
        if (c->ns >= g->n_ns)
                return;
        c->dfd = socket(g->ns[c->ns].ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->dfd < 0 ||
            connect(c->dfd, (const struct sockaddr *)&g->ns[c->ns], g->ns_len[c->ns]) < 0) {
                c->dfd = unwatch_close(c, W_DNS, c->dfd);
                return;
        }
        for (int i = 0; i < 2; i++) {
                uint8_t q[DNSR_QUERY_MAX];
                if (c->qdone[i])
                        continue;
                if (getrandom(&c->qid[i], sizeof c->qid[i], 0) != sizeof c->qid[i])
                        c->qid[i] = (uint16_t)(now_ms() * 7919 + i);
                int n = dns_query_build(c->host, qt[i], c->qid[i], q, sizeof q);
                if (n > 0)
                        (void)send(c->dfd, q, (size_t)n, 0);
        }
        c->dns_deadline = now_ms() + EGRESS_RESOLVE_MS / (int64_t)(g->n_ns ? g->n_ns : 1);
}

static void start_resolve(struct conn *c)
{
        memset(c->qdone, 0, sizeof c->qdone);
        memset(c->ans, 0, sizeof c->ans);
        c->ns = 0;
        conn_to(c, CS_RESOLVE);
        dns_send(c);
        if (c->dfd < 0)
                deny(c, "the name does not resolve: no nameserver is reachable", NULL, 502,
                     SOCKS_HOST_UNREACHABLE, HINT_ADD_HOST);
}

static void have_address(struct conn *c);

/*
 * Why the resolver gave no address: its answer for A (and AAAA), by name.
 * A query still unanswered counts as "no answer" (the deadline passed).
 */
static const char *no_address_reason(const struct conn *c)
{
        static char why[160];
        static const char *const rcode_name[] = {
                [0] = "NOERROR",  [1] = "FORMERR", [2] = "SERVFAIL",
                [3] = "NXDOMAIN", [4] = "NOTIMP",  [5] = "REFUSED",
        };
        char part[2][48];
        for (int q = 0; q < 2; q++) {
                uint8_t rc = c->ans[q].rcode;
                if (!c->qdone[q])
                        snprintf(part[q], sizeof part[q], "no answer (timeout)");
                else if (rc == 0)
                        snprintf(part[q], sizeof part[q], "NOERROR without an address");
                else if (rc < ARRAY_SIZE(rcode_name))
                        snprintf(part[q], sizeof part[q], "%s", rcode_name[rc]);
                else
                        snprintf(part[q], sizeof part[q], "rcode %u", rc);
        }
        if (!strcmp(part[0], part[1]))
                snprintf(why, sizeof why, "the name does not resolve: %s", part[0]);
        else
                snprintf(why, sizeof why, "the name does not resolve: %s (A), %s (AAAA)", part[0],
                         part[1]);
        return why;
}

static void resolved(struct conn *c)
{
        const char *reason = NULL;
        enum hint hint = HINT_NONE;
        char name_rule[sizeof c->rule];
        bool name_port_rule = c->port_rule;
        c->dfd = unwatch_close(c, W_DNS, c->dfd);
        memcpy(name_rule, c->rule, sizeof name_rule);
        for (int q = 0; q < 2; q++)
                for (size_t i = 0; i < c->ans[q].n; i++) {
                        const char *why = NULL;
                        /* each address on its own */
                        memcpy(c->rule, name_rule, sizeof c->rule);
                        c->port_rule = name_port_rule;
                        addr_format(c->ans[q].addr[i], c->ans[q].family[i], c->addr_text,
                                    sizeof c->addr_text);
                        if (decide_addr(c, c->ans[q].family[i], c->ans[q].addr[i], &why, &hint)) {
                                c->family = c->ans[q].family[i];
                                memcpy(c->addr, c->ans[q].addr[i], 16);
                                have_address(c);
                                return;
                        }
                        reason = why;
                        if (!strncmp(c->rule, "deny ", 5))
                                goto refuse; /* an address of the name is denied: so is the name */
                }
        if (!reason) {
                /* no address at all: the resolver's answer, as a gateway error */
                c->addr_text[0] = '\0';
                deny(c, no_address_reason(c), NULL, 502, SOCKS_HOST_UNREACHABLE, HINT_ADD_HOST);
                return;
        }
refuse:
        deny(c, reason, c->rule[0] ? c->rule : NULL, 403, SOCKS_NOT_ALLOWED, hint);
}

static void on_dns(struct conn *c)
{
        uint8_t msg[1500];
        static const uint16_t qt[2] = {1, 28};
        ssize_t n;
        while ((n = recv(c->dfd, msg, sizeof msg, 0)) > 0) {
                for (int q = 0; q < 2; q++) {
                        struct dns_answer a;
                        if (c->qdone[q] ||
                            dns_response_parse(msg, (size_t)n, c->qid[q], c->host, qt[q], &a) < 0)
                                continue;
                        c->qdone[q] = true;
                        c->ans[q] = a;
                }
                if (c->qdone[0] && c->qdone[1]) {
                        resolved(c);
                        return;
                }
        }
}

static void dns_timeout(struct conn *c)
{
        c->ns++;
        if (c->ns < E.cfg->n_ns) {
                dns_send(c);
                if (c->dfd >= 0)
                        return;
        }
        /* what did answer decides; none: resolved() says the resolver timed out */
        resolved(c);
}

/*
 * egress.close for the upstream connection that was allowed (it is named
 * by what it was dialled for, cur_host:cur_port), and a fresh count for
 * the next one. Nothing if no connection was allowed.
 */
static void record_close(struct conn *c)
{
        if (!c->allowed)
                return;
        struct evf f[] = {
                {"host", c->cur_host, 0},
                {"port", NULL, c->cur_port},
                {"bytes_up", NULL, (int64_t)c->up},
                {"bytes_down", NULL, (int64_t)c->down},
                {"duration_ms", NULL, now_ms() - c->t0},
        };
        event_async("egress.close", NULL, f, ARRAY_SIZE(f));
        c->allowed = false;
        c->up = c->down = 0;
        c->t0 = now_ms();
}

/* ---- dialling --------------------------------------------------------------------- */

static int64_t record_request(struct conn *c, bool sync);

/*
 * The allowed upstream did not take the connection (errno e): a gateway
 * error naming the address, never a policy hint (the rule is in force).
 * Refused → 502, timed out → 504, unreachable and the rest → 502.
 */
static void upstream_failed(struct conn *c, int e)
{
        char why[160], a[80];
        int status = 502;
        enum socks_reply rep = SOCKS_HOST_UNREACHABLE;
        const char *what;

        addr_rule_text(c, a, sizeof a);
        switch (e) {
        case ECONNREFUSED:
                what = "refused the connection";
                rep = SOCKS_CONN_REFUSED;
                break;
        case ETIMEDOUT:
                what = "did not answer (connect timed out)";
                status = 504;
                break;
        case ENETUNREACH:
                what = "is unreachable (no route to its network)";
                rep = SOCKS_NET_UNREACHABLE;
                break;
        case EHOSTUNREACH:
                what = "is unreachable (no route to the host)";
                break;
        default:
                what = "could not be connected to";
                rep = SOCKS_GENERAL_FAILURE;
                break;
        }
        snprintf(why, sizeof why, "the upstream %s:%u %s", a, c->port, what);
        c->ufd = unwatch_close(c, W_UP, c->ufd);
        c->allowed = false;
        deny(c, why, c->rule, status, rep, HINT_NONE);
}

static int dial_connect(struct conn *c);

static void dial(struct conn *c)
{
        char key[300];

        snprintf(key, sizeof key, "%s:%u", c->host, c->port);
        struct evf f[] = {
                {"host", c->host, 0}, {"port", NULL, c->port},     {"addr", c->addr_text, 0},
                {"rule", c->rule, 0}, {"proto", conn_proto(c), 0}, {"via", via(c), 0},
        };
        int64_t r;
        if (c->proto == PR_HTTP) {
                /* one round trip for both records: egress.allow goes ahead
                 * unanswered, and the answer to egress.request reports a
                 * failure of either (the supervisor keeps it) — both are
                 * written before the connection exists */
                r = event_send("egress.allow", NULL, f, ARRAY_SIZE(f), false);
                if (r > 0)
                        r = record_request(c, true);
                c->req_recorded = r > 0;
        } else
                r = event("egress.allow", NULL, f, ARRAY_SIZE(f));
        if (r <= 0) {
                /* no record, no connection */
                deny(c,
                     r == -EDQUOT ? "the run is over its audit budget"
                                  : "the connection could not be recorded",
                     c->rule, 403, SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
        c->allowed = true;
        if (dial_connect(c) < 0) {
                upstream_failed(c, errno);
                return;
        }
        c->deadline = now_ms() + EGRESS_CONNECT_MS;
        conn_to(c, CS_DIAL);
}

/* The non-blocking connect to the checked address (c->ufd); -1 with errno. */
static int dial_connect(struct conn *c)
{
        struct sockaddr_storage ss = {0};
        socklen_t len;
        if (c->family == AF_INET) {
                struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
                s4->sin_family = AF_INET;
                s4->sin_port = htons(c->port);
                memcpy(&s4->sin_addr, c->addr, 4);
                len = sizeof *s4;
        } else {
                struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
                s6->sin6_family = AF_INET6;
                s6->sin6_port = htons(c->port);
                memcpy(&s6->sin6_addr, c->addr, 16);
                len = sizeof *s6;
        }
        c->ufd = unwatch_close(c, W_UP, c->ufd);
        c->ufd = socket(c->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->ufd >= 0) {
                int one = 1;
                (void)setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        if (c->ufd < 0 ||
            (connect(c->ufd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS))
                return -1;
        snprintf(c->cur_host, sizeof c->cur_host, "%s", c->host);
        c->cur_port = c->port;
        return 0;
}

/* Forward the current request head, rewritten for the origin server. */
static void send_request_head(struct conn *c);

/* ---- TLS termination (docs/TLS.md) ---------------------------------------------------- */

/*
 * Whether c's destination (a canonical name and a port) is one to
 * terminate: an injection or an HTTP rule names that host and port (a
 * bare host: 443) and the TLS module is loaded. Every other TLS
 * connection stays a blind tunnel with its SNI check.
 */
static bool term_wanted(const struct conn *c)
{
        if (!E.cfg->tls || c->term)
                return false;
        for (size_t k = 0; k < E.cfg->n_inject; k++)
                if (inject_tls_match(&E.cfg->inject[k], c->host, c->port))
                        return true;
        /* a host and port with HTTP rules: its requests must be read here */
        return httprule_ruled(E.cfg->http, E.cfg->n_http, c->host, c->port);
}

/* egress.tls: one side's handshake completed (the upstream's verified). */
static void tls_record(struct conn *c, const char *side, const struct rf_tls_conn *t)
{
        const char *v = E.cfg->tls->version(t);
        struct evf f[] = {
                {"host", c->host, 0},           {"port", NULL, c->port}, {"side", side, 0},
                {"tls_version", v ? v : "", 0}, {"via", via(c), 0},
        };
        event_async("egress.tls", NULL, f, ARRAY_SIZE(f));
}

/* The run's side of the handshake, once its socket is ready again. */
static void tls_accept_step(struct conn *c)
{
        int r = E.cfg->tls->handshake(c->ctls);
        if (r == -EAGAIN)
                return;
        if (r < 0) {
                /* a client that does not trust the run CA (a pinned one)
                 * ends here: its upstream, dialled meanwhile, closes unused */
                char reason[RF_TLS_REASON_MAX + 64], key[300];
                snprintf(reason, sizeof reason, "TLS handshake with the run's client failed: %s",
                         E.cfg->tls->reason(c->ctls));
                snprintf(key, sizeof key, "%s:%u", c->host, c->port);
                struct evf f[] = {
                        {"host", c->host, 0}, {"port", NULL, c->port}, {"addr", c->addr_text, 0},
                        {"rule", c->rule, 0}, {"reason", reason, 0},   {"proto", "https", 0},
                        {"fix", "", 0},       {"via", via(c), 0},
                };
                event_deny_now(key, f, ARRAY_SIZE(f));
                c->st = CS_DEAD;
                return;
        }
        tls_record(c, "client", c->ctls);
        c->proto = PR_HTTP;
        conn_to(c, CS_HEAD);
        c->deadline = now_ms() + EGRESS_HEAD_MS;
}

/*
 * Terminate c: its ClientHello (judged: SNI = the host) is in c->in; the
 * session reads it from there, presents the run CA's leaf for the host,
 * and the connection then carries HTTP requests read here, each decided,
 * injected and recorded like a captured one's (on_head_captured; the
 * first dials the address route() checked).
 */
static void up_start(struct conn *c);

static void tls_accept_start(struct conn *c)
{
        int r = E.cfg->tls->server_new(E.cfg->tls_ca_own, c->cfd, c->host, c->in, c->in_len,
                                       &c->ctls);
        explicit_bzero(c->in, c->in_len);
        c->in_len = 0;
        if (r < 0) {
                c->rst = true;
                deny(c, "the TLS connection could not be terminated (injection or HTTP rules)",
                     c->rule, 502, SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
        c->term = true;
        snprintf(c->cap_name, sizeof c->cap_name, "%s", c->host);
        c->cap_port = c->port;
        c->cap_literal = false;
        c->addr_ready = true;
        c->deadline = now_ms() + EGRESS_HEAD_MS;
        conn_to(c, CS_TLS_ACCEPT);
        if (!c->up_tried)
                up_start(c); /* not begun when the tunnel opened */
        tls_accept_step(c);
}

/* The upstream's side: verified against the host's trust (and
 * --upstream-ca), its name checked; a failure is the client's 502. */
/* The upstream's client session on c->ufd; -1 with why[] on failure (a
 * trust that does not parse hands back a session carrying its reason). */
static int up_session(struct conn *c, char *why, size_t n)
{
        if (E.cfg->tls->client_new(E.cfg->tls_trust, c->ufd, c->host, &c->utls) >= 0)
                return 0;
        snprintf(why, n, "the upstream TLS session could not be set up%s%s", c->utls ? ": " : "",
                 c->utls ? E.cfg->tls->reason(c->utls) : "");
        return -1;
}

/* One step of the upstream's handshake: 0 done (egress.tls recorded),
 * -EAGAIN, or -1 with why[]. */
static int up_handshake(struct conn *c, char *why, size_t n)
{
        int r = E.cfg->tls->handshake(c->utls);
        if (r == -EAGAIN)
                return r;
        if (r < 0) {
                snprintf(why, n, "the upstream's TLS %s: %s",
                         r == -EKEYREJECTED ? "certificate was refused" : "handshake failed",
                         E.cfg->tls->reason(c->utls));
                return -1;
        }
        tls_record(c, "upstream", c->utls);
        return 0;
}

static void tls_connect_step(struct conn *c)
{
        char why[RF_TLS_REASON_MAX + 96];
        int r = up_handshake(c, why, sizeof why);
        if (r == -EAGAIN)
                return;
        if (r < 0) {
                c->ufd = unwatch_close(c, W_UP, c->ufd);
                c->allowed = false;
                deny(c, why, c->rule, 502, SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
        send_request_head(c);
}

/* The pre-dialled upstream failed: why, for the first request's 502. */
static void up_fail(struct conn *c, const char *why)
{
        snprintf(c->up_why, sizeof c->up_why, "%s", why);
        c->ufd = unwatch_close(c, W_UP, c->ufd);
        c->upst = UP_FAILED;
}

/* The pre-dialled upstream's connect, then its verified handshake. */
static void up_step(struct conn *c)
{
        char why[sizeof c->up_why];
        if (c->upst == UP_CONNECTING) {
                int e = 0;
                socklen_t l = sizeof e;
                if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &l) < 0 || e) {
                        snprintf(why, sizeof why,
                                 "the upstream %s:%u could not be connected to (%s)", c->addr_text,
                                 c->port, strerror(e ? e : errno));
                        up_fail(c, why);
                        return;
                }
                if (up_session(c, why, sizeof why) < 0) {
                        up_fail(c, why);
                        return;
                }
                c->upst = UP_HANDSHAKE;
        }
        if (c->upst != UP_HANDSHAKE)
                return;
        int r = up_handshake(c, why, sizeof why);
        if (r == -EAGAIN)
                return;
        if (r < 0)
                up_fail(c, why);
        else
                c->upst = UP_READY;
}

/*
 * A terminated connection's upstream, started at once (the address route()
 * checked, egress.allow recorded first: no record, no connection), so its
 * connect and handshake overlap the run's client's handshake. Any failure
 * here leaves it to the first request (dial() again, or its 502).
 */
static void up_start(struct conn *c)
{
        struct evf f[] = {
                {"host", c->host, 0}, {"port", NULL, c->port}, {"addr", c->addr_text, 0},
                {"rule", c->rule, 0}, {"proto", "https", 0},   {"via", via(c), 0},
        };
        c->up_tried = true; /* once: a refused record is asked again by the first request */
        if (event("egress.allow", NULL, f, ARRAY_SIZE(f)) <= 0)
                return;
        c->allowed = true;
        if (dial_connect(c) < 0) {
                char why[sizeof c->up_why];
                snprintf(why, sizeof why, "the upstream %s:%u could not be connected to (%s)",
                         c->addr_text, c->port, strerror(errno));
                c->allowed = false;
                up_fail(c, why); /* the first request's 502, not a second dial */
                return;
        }
        c->upst = UP_CONNECTING;
}

/* The first request of a terminated connection: its upstream as far as it got. */
static void up_use(struct conn *c)
{
        int up = c->upst;
        c->upst = UP_IDLE;
        c->deadline = now_ms() + EGRESS_CONNECT_MS;
        switch (up) {
        case UP_READY:
                send_request_head(c);
                return;
        case UP_CONNECTING:
                conn_to(c, CS_DIAL); /* its POLLOUT goes on to tls_connect_start */
                return;
        case UP_HANDSHAKE:
                conn_to(c, CS_TLS_CONNECT);
                tls_connect_step(c);
                return;
        case UP_FAILED:
        default:
                c->allowed = false;
                deny(c, c->up_why, c->rule, 502, SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
}

/* What the pre-dialled upstream waits for (epoll events), or 0. */
static uint32_t up_interest(const struct conn *c)
{
        if (c->upst == UP_CONNECTING)
                return EPOLLOUT;
        if (c->upst == UP_HANDSHAKE)
                return E.cfg->tls->want(c->utls) == POLLOUT ? EPOLLOUT : EPOLLIN;
        return 0;
}

static void tls_connect_start(struct conn *c)
{
        char why[RF_TLS_REASON_MAX + 96];
        if (up_session(c, why, sizeof why) < 0) {
                c->ufd = unwatch_close(c, W_UP, c->ufd);
                c->allowed = false;
                deny(c, why, c->rule, 502, SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
        conn_to(c, CS_TLS_CONNECT);
        c->deadline = now_ms() + EGRESS_CONNECT_MS;
        tls_connect_step(c);
}

/*
 * A tunnel (CONNECT or SOCKS alike) is one of three kinds:
 *   - to a port in network.plain_ports: dialled, then opened, bytes as they come;
 *   - allowed by a rule that names the port (--allow-host db.internal:5432),
 *     port 443 excepted: dialled, then opened, and the client's first
 *     bytes judged before any goes up (tunnel_sniff): a stream that opens
 *     like TLS must be a ClientHello naming the host; anything else is
 *     the plain protocol the rule's port was allowed for;
 *   - otherwise (a rule for any port, or 443): a TLS port. Answered first,
 *     the ClientHello read and its SNI checked, then dialled — or, for a
 *     host whose TLS is terminated, dialled at once and its handshake
 *     begun while the ClientHello comes, closed unused if it is refused.
 */
static void on_first(struct conn *c);

static void have_address(struct conn *c)
{
        if (c->captured) {
                /*
                 * A captured connection (egress.h): an HTTP request of a
                 * keep-alive connection routed anew is dialled at once; on
                 * a port a rule names (80 and 443 excepted: HTTP and TLS
                 * speak first) or listed in network.plain_ports it is
                 * dialled first and its first bytes held like a CONNECT's
                 * to such a port (a server that speaks first, SMTP, an SSH
                 * banner, is heard at once); anywhere else the first bytes
                 * decide before anything is dialled (on_first).
                 */
                /* a host with HTTP rules carries HTTP only: never plain TCP */
                c->cap_plain_ok = (port_plain(c->port) || (c->port_rule && c->port != 443)) &&
                                  !httprule_ruled(E.cfg->http, E.cfg->n_http, c->host, c->port);
                if (c->proto == PR_HTTP) {
                        dial(c);
                        return;
                }
                /* a destination to terminate: its first bytes decide (a
                 * ClientHello is terminated, plain HTTP served) */
                if (c->cap_plain_ok && c->port != 80 && c->port != 443 && !term_wanted(c)) {
                        c->sniff = true;
                        dial(c);
                        return;
                }
                conn_to(c, CS_FIRST);
                /* where only TLS and HTTP pass, a silent client waits for
                 * a server that speaks first: refused after EGRESS_FIRST_MS */
                c->deadline = now_ms() +
                              (c->cap_plain_ok || c->in_len ? EGRESS_HEAD_MS : EGRESS_FIRST_MS);
                if (c->in_len)
                        on_first(c);
                return;
        }
        bool tunnel = c->proto == PR_CONNECT || c->proto == PR_SOCKS;
        bool term = tunnel && term_wanted(c); /* a ClientHello to terminate comes first */
        c->sniff = tunnel && !term && !port_plain(c->port) && c->port_rule && c->port != 443;
        if (tunnel && (term || (!port_plain(c->port) && !c->sniff))) {
                if (c->proto == PR_SOCKS) {
                        uint8_t rep[10];
                        socks_reply_build(SOCKS_OK, rep);
                        client_send(c, (const char *)rep, sizeof rep);
                } else
                        client_send(c, "HTTP/1.1 200 Connection established\r\n\r\n", 39);
                c->replied = true;
                conn_to(c, CS_SNI);
                /* a host to terminate: its upstream is dialled and its
                 * handshake begun while the client's ClientHello is on
                 * its way (the destination is decided and its address
                 * checked; a ClientHello that fails its check closes it) */
                if (term)
                        up_start(c);
                return;
        }
        dial(c);
}

/*
 * THE decision, for every front-end (the HTTP proxy, CONNECT, SOCKS5 and
 * captured connections alike): c->host (a name or an IP literal) and
 * c->port are the destination. A literal is decided by IP/CIDR rules only;
 * a name by deny rules, then the static hosts (--add-host), then allow
 * rules, then resolved on the host's side and every address classified
 * (decide_addr); the first acceptable address goes to have_address(),
 * which chooses what the front-end does before the dial (read a
 * ClientHello, an HTTP head, hold the first bytes), and dial() records
 * egress.allow and connects to exactly that address. Credential
 * injection hooks in here (issue 15). Every refusal is deny().
 */
static void route(struct conn *c)
{
        const char *reason = NULL;
        uint8_t addr[16];
        int family;

        c->static_host = c->ip_rule = c->port_rule = false;
        c->addr_text[0] = '\0';
        if (E.cfg->n_inject && exfil_name(c, c->host, name_where(c)))
                return;
        if (net_ip_parse(c->host, strlen(c->host), false, addr, &family) == 0) {
                /* an IP literal: only an IP/CIDR rule may allow it */
                addr_format(addr, family, c->addr_text, sizeof c->addr_text);
                c->rule[0] = '\0';
                enum hint hint = HINT_ALLOW_ADDR;
                if (!decide_addr(c, family, addr, &reason, &hint) || !c->ip_rule) {
                        /* a literal has no name to declare: only an IP rule helps */
                        deny(c, reason ? reason : "IP literals need an IP or CIDR allow rule",
                             c->rule[0] ? c->rule : NULL, 403, SOCKS_NOT_ALLOWED,
                             hint == HINT_DENY_RULE ? HINT_DENY_RULE : HINT_ALLOW_ADDR);
                        return;
                }
                c->family = family;
                memcpy(c->addr, addr, 16);
                have_address(c);
                return;
        }
        char canon[NET_HOST_MAX + 1];
        if (net_host_canonical(c->host, strlen(c->host), canon, &reason) < 0 ||
            net_host_is_ip_spelling(canon)) {
                deny(c, reason ? reason : "an IP address in an unusual spelling", NULL, 403,
                     SOCKS_NOT_ALLOWED, HINT_NONE);
                return;
        }
        snprintf(c->host, sizeof c->host, "%s", canon);
        enum hint hint = HINT_NONE;
        if (!decide_name(c, &reason, &hint)) {
                deny(c, reason, c->rule[0] ? c->rule : NULL, 403, SOCKS_NOT_ALLOWED, hint);
                return;
        }
        for (size_t i = 0; i < E.cfg->n_hosts; i++)
                if (!strcmp(E.cfg->hosts[i].name, c->host)) {
                        c->static_host = true;
                        c->family = E.cfg->hosts[i].family;
                        memcpy(c->addr, E.cfg->hosts[i].addr, 16);
                        addr_format(c->addr, c->family, c->addr_text, sizeof c->addr_text);
                        if (!decide_addr(c, c->family, c->addr, &reason, &hint)) {
                                deny(c, reason, c->rule, 403, SOCKS_NOT_ALLOWED, hint);
                                return;
                        }
                        have_address(c);
                        return;
                }
        start_resolve(c);
}

/* ---- HTTP ----------------------------------------------------------------------- */

/* The request's method into c->method: one longer than it holds (15
 * characters; WebDAV's longest standard one, VERSION-CONTROL, fits) is
 * refused with 501, never cut and sent as another method. */
static bool method_take(struct conn *c, const struct http_request *rq)
{
        if (rq->method.len >= sizeof c->method) {
                deny(c, "a request method of more than 15 characters", NULL, 501,
                     SOCKS_GENERAL_FAILURE, HINT_NONE);
                return false;
        }
        snprintf(c->method, sizeof c->method, "%.*s", (int)rq->method.len, c->in + rq->method.off);
        return true;
}

/*
 * HTTP rules (httprule.h): the request just parsed (c->rq, its method in
 * c->method) to a host and port an HTTP rule names must match one of that
 * host's rules; else 403 naming the method, the path and the host's
 * rules, and egress.deny. Called for every request right after it is
 * parsed and before anything of it is recorded, dialled or sent (on_head
 * for proxied requests, on_head_captured for captured and terminated
 * ones). A path (before any '?') that carries an injected secret's
 * placeholder is left to send_request_head, which refuses it as
 * secret.exfil; one in the query is judged here like any other, since a
 * binding that declares a query parameter has it replaced and the request
 * sent (skipping the rules for it let a run with such a binding use any
 * method and path on the host). true when refused.
 */
static bool http_rules_refuse(struct conn *c)
{
        if (!E.cfg->n_http)
                return false;
        const struct http_request *rq = &c->rq;
        char canon[NET_HOST_MAX + 1];
        const char *why = NULL;
        if (net_host_canonical(c->host, strlen(c->host), canon, &why) < 0)
                return false; /* an address (rules name hosts) or no name: route() decides */
        const char *target = rq->path.len ? c->in + rq->path.off : "/";
        size_t tlen = rq->path.len ? rq->path.len : 1;
        const char *form;
        const char *qm = memchr(target, '?', tlen);
        if (E.cfg->n_inject &&
            inject_mentions(E.cfg->inject, E.cfg->n_inject, target,
                            qm ? (size_t)(qm - target) : tlen, false, false, &form))
                return false;
        why = NULL;
        enum httprule_verdict v = httprule_check(E.cfg->http, E.cfg->n_http, canon, c->port,
                                                 c->method, strlen(c->method), target, tlen, &why);
        if (v != HTTPRULE_BAD_PATH && v != HTTPRULE_NO_RULE)
                return false;
        /* the path judged (the query is not), cut: it goes into a record
         * and the answer (its bytes are printable: http.c checked them) */
        static char rules[1024], reason[1200];
        const char *q = memchr(target, '?', tlen);
        size_t pl = q ? (size_t)(q - target) : tlen;
        httprule_host_text(E.cfg->http, E.cfg->n_http, canon, c->port, rules, sizeof rules);
        if (v == HTTPRULE_BAD_PATH)
                snprintf(reason, sizeof reason, "%s %.*s%s: %s, which no HTTP rule matches",
                         c->method, (int)(pl > 512 ? 512 : pl), target, pl > 512 ? "..." : "",
                         why ? why : "refused");
        else
                snprintf(reason, sizeof reason, "no HTTP rule allows %s %.*s%s", c->method,
                         (int)(pl > 512 ? 512 : pl), target, pl > 512 ? "..." : "");
        snprintf(c->host, sizeof c->host, "%s", canon);
        deny(c, reason, rules, 403, SOCKS_NOT_ALLOWED, HINT_NONE);
        return true;
}

/*
 * A captured connection's HTTP request (origin form): its Host must name
 * the destination the connection was decided for (the name the run
 * resolved, or the literal it dialled) and its port, unless that is 80;
 * then it is served like a proxied request: checked, stamped, recorded.
 */
static void on_head_captured(struct conn *c)
{
        const char *why = "malformed request";
        int r = http_captured_request_parse(c->in, c->in_len, &c->rq, &why);
        c->proto = PR_HTTP;
        snprintf(c->host, sizeof c->host, "%s", c->cap_name);
        c->port = c->cap_port;
        if (r == 0) {
                if (c->in_len >= HTTP_HEAD_MAX)
                        deny(c, "request head too large", NULL, 400, SOCKS_GENERAL_FAILURE,
                             HINT_NONE);
                return;
        }
        if (r < 0) {
                deny(c, r == -E2BIG ? "request head too large" : why, NULL, 400,
                     SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
        const struct http_request *rq = &c->rq;
        char said[NET_HOST_MAX + 1] = "";
        const char *reason = NULL;
        uint8_t a[16];
        int fam;
        if (c->cap_literal) {
                if (net_ip_parse(rq->host, strlen(rq->host), false, a, &fam) == 0)
                        addr_format(a, fam, said, sizeof said);
        } else if (net_host_canonical(rq->host, strlen(rq->host), said, &reason) < 0)
                said[0] = '\0';
        if (strcmp(said, c->cap_name) != 0 ||
            (rq->host_has_port ? rq->port != c->cap_port : c->cap_port != (c->term ? 443 : 80))) {
                static char m[2 * NET_HOST_MAX + 120];
                snprintf(m, sizeof m,
                         "the Host header (%s%s%u) names another destination than the "
                         "connection's (%s:%u)",
                         rq->host, ":",
                         rq->host_has_port ? rq->port
                         : c->term         ? 443
                                           : 80,
                         c->cap_name, c->cap_port);
                deny(c, m, NULL, 403, SOCKS_NOT_ALLOWED, HINT_NONE);
                return;
        }
        if (!method_take(c, rq))
                return;
        c->req_head = !strcmp(c->method, "HEAD");
        c->client_close = rq->close;
        c->req_left = rq->chunked ? -1 : rq->content_length > 0 ? rq->content_length : 0;
        http_chunked_init(&c->req_ch);
        if (http_rules_refuse(c))
                return;
        if (c->ufd >= 0 && c->st == CS_HEAD && !c->addr_ready) {
                /* keep-alive: the same destination, allowed a moment ago
                 * (not the upstream up_start dialled: up_use below) */
                send_request_head(c);
                return;
        }
        if (c->st == CS_FIRST || c->addr_ready) {
                c->addr_ready = false;
                if (c->upst != UP_IDLE)
                        up_use(c); /* dialled when the connection was terminated */
                else
                        dial(c); /* decided already (route), address checked */
                return;
        }
        /* the upstream went: decide and resolve anew */
        record_close(c);
        c->ufd = unwatch_close(c, W_UP, c->ufd);
        route(c);
}

static void on_head(struct conn *c)
{
        const char *why = "malformed request";
        if (c->captured || c->term) {
                on_head_captured(c);
                return;
        }
        int r = http_request_parse(c->in, c->in_len, &c->rq, &why);
        if (r == 0) {
                if (c->in_len >= HTTP_HEAD_MAX) {
                        c->proto = PR_HTTP;
                        deny(c, "request head too large", NULL, 400, SOCKS_GENERAL_FAILURE,
                             HINT_NONE);
                }
                return;
        }
        if (r < 0) {
                c->proto = PR_HTTP;
                c->host[0] = '\0';
                deny(c, r == -E2BIG ? "request head too large" : why, NULL, 400,
                     SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
        const struct http_request *rq = &c->rq;
        c->proto = rq->connect ? PR_CONNECT : PR_HTTP;
        snprintf(c->host, sizeof c->host, "%s", rq->host);
        c->port = rq->port;
        if (!method_take(c, rq))
                return;
        c->req_head = !strcmp(c->method, "HEAD");
        c->client_close = rq->close;
        c->req_left = rq->chunked ? -1 : rq->content_length > 0 ? rq->content_length : 0;
        http_chunked_init(&c->req_ch);
        if (c->proto == PR_HTTP && http_rules_refuse(c))
                return;
        /* keep-alive: every request is decided on its own; one for the
         * destination the upstream connection already serves (allowed by
         * the same rules a moment ago) reuses it, any other is routed anew */
        char canon[NET_HOST_MAX + 1];
        const char *reason = NULL;
        bool literal = net_ip_parse(c->host, strlen(c->host), false, c->addr, &c->family) == 0;
        if (c->proto == PR_HTTP && c->ufd >= 0 && c->port == c->cur_port &&
            (literal ? !strcmp(c->host, c->cur_host)
                     : net_host_canonical(c->host, strlen(c->host), canon, &reason) == 0 &&
                               !strcmp(canon, c->cur_host))) {
                if (!literal)
                        snprintf(c->host, sizeof c->host, "%s", canon);
                send_request_head(c);
                return;
        }
        if (c->ufd >= 0)
                record_close(c); /* the previous destination's connection ends here */
        c->ufd = unwatch_close(c, W_UP, c->ufd);
        if (c->proto == PR_CONNECT) {
                /* the tunnel's first bytes (a ClientHello) may follow the head */
                memmove(c->in, c->in + rq->head_len, c->in_len - rq->head_len);
                c->in_len -= rq->head_len;
        }
        route(c);
}

static void hex(char *out, size_t n)
{
        static const char digits[] = "0123456789abcdef";
        uint8_t b[32];
        if (getrandom(b, n / 2, 0) != (ssize_t)(n / 2))
                memset(b, 0x5a, sizeof b);
        for (size_t i = 0; i < n / 2; i++) {
                out[2 * i] = digits[b[i] >> 4];
                out[2 * i + 1] = digits[b[i] & 15];
        }
        out[n] = '\0';
}

/* A client traceparent "00-<32 hex>-<16 hex>-<2 hex>" becomes the parent. */
static bool traceparent_ok(const char *v, size_t len)
{
        if (len != 55 || v[2] != '-' || v[35] != '-' || v[52] != '-')
                return false;
        for (size_t i = 0; i < len; i++)
                if (i != 2 && i != 35 && i != 52 &&
                    !((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f')))
                        return false;
        return true;
}

/*
 * Hop-by-hop headers stay here (the proxy decides the upstream connection's
 * fate; an Upgrade would turn the stream into something it cannot frame),
 * and the run's own trace headers are replaced by ringfence's.
 */
static bool header_dropped(const char *name, size_t len)
{
        static const char *const dropped[] = {
                "connection", "keep-alive", "proxy-connection", "proxy-authorization", "upgrade",
                "te",         "trailer",    "traceparent",      "tracestate",          "baggage",
        };
        for (size_t i = 0; i < ARRAY_SIZE(dropped); i++)
                if (strlen(dropped[i]) == len && !strncasecmp(name, dropped[i], len))
                        return true;
        return false;
}

/*
 * Toward a secret's hosts, request headers that would let an answer carry
 * the value past the scrubber: a compressed body (Accept-Encoding: identity
 * is sent instead), a slice of it (Range, If-Range: a reflecting endpoint
 * asked for bytes 1.. of the value returns a suffix no needle matches), a
 * compressed WebSocket (Sec-WebSocket-Extensions: permessage-deflate).
 */
static bool header_scrub_hostile(const char *name, size_t len)
{
        static const char *const hostile[] = {"accept-encoding", "range", "if-range",
                                              "sec-websocket-extensions"};
        for (size_t i = 0; i < ARRAY_SIZE(hostile); i++)
                if (strlen(hostile[i]) == len && !strncasecmp(name, hostile[i], len))
                        return true;
        return false;
}

/* egress.request for the current request (new trace and span ids). */
static int64_t record_request(struct conn *c, bool sync)
{
        const struct http_request *rq = &c->rq;
        const struct http_header *tp = http_header_find(rq, c->in, "traceparent");

        if (tp && traceparent_ok(c->in + tp->value.off, tp->value.len))
                snprintf(c->trace, sizeof c->trace, "%.32s", c->in + tp->value.off + 3);
        else
                hex(c->trace, 32);
        hex(c->span, 16);
        char path[2100];
        snprintf(path, sizeof path, "%.*s%s", (int)(rq->path.len > 2048 ? 2048 : rq->path.len),
                 c->in + rq->path.off, rq->path.len > 2048 ? "...(cut)" : "");
        struct evf f[] = {
                {"method", c->method, 0},  {"host", c->host, 0},
                {"port", NULL, c->port},   {"path", path[0] ? path : "/", 0},
                {"trace_id", c->trace, 0}, {"span_id", c->span, 0},
                {"via", via(c), 0},
        };
        return event_send("egress.request", NULL, f, ARRAY_SIZE(f), sync);
}

/* The request's body_rw (BM_CHUNK, BM_BUFFER): in_left its
 * Content-Length, -1 chunked. 0 or -ENOMEM. */
static void body_rw_free(struct conn *c);

static int body_rw_new(struct conn *c, int64_t in_left)
{
        body_rw_free(c); /* never two: a request's is freed when its body is out */
        struct body_rw *b = malloc(sizeof *b);
        if (!b)
                return -ENOMEM;
        memset(b, 0, offsetof(struct body_rw, dec));
        b->in_left = in_left;
        if (c->bmode == BM_BUFFER) {
                b->buf_cap = (size_t)in_left;
                if (!(b->buf = malloc(b->buf_cap))) {
                        free(b);
                        return -ENOMEM;
                }
                E.body_buffered += b->buf_cap;
        }
        c->brw = b;
        c->req_left = -1; /* until the rewritten body is out (body_rewrite) */
        return 0;
}

static void body_rw_free(struct conn *c)
{
        struct body_rw *b = c->brw;
        if (!b)
                return;
        if (b->buf) {
                E.body_buffered -= b->buf_cap;
                free(b->buf);
        }
        free(b);
        c->brw = NULL;
        c->head_parked = false;
}

#ifdef RF_TEST_BUILD
/* Test builds only: RINGFENCE_TEST_BODY_MODE=buffer or chunk (read once
 * at the loop's start) sends a Content-Length body that would be replaced
 * in place (BM_INPLACE) through BM_BUFFER or BM_CHUNK instead, so the
 * tests drive those paths end to end with placeholders as long as their
 * values (inject_tls.sh). Release builds have no such switch. */
static int test_body_mode;
#endif

/* A request head that does not fit the upstream buffer (RELAY_BUF): what
 * of it was written there wiped (an injected value may be in it), the
 * upstream closed, 400 to the client. Never forwarded with a part left
 * out. */
static void head_too_large(struct conn *c, struct relay *o)
{
        explicit_bzero(o->d, RELAY_BUF);
        c->ufd = unwatch_close(c, W_UP, c->ufd);
        deny(c, "request head too large", NULL, 400, SOCKS_GENERAL_FAILURE, HINT_NONE);
}

static void send_request_head(struct conn *c)
{
        const struct http_request *rq = &c->rq;

        if (!c->req_recorded && record_request(c, true) <= 0) {
                c->ufd = unwatch_close(c, W_UP, c->ufd);
                deny(c, "the request could not be recorded", c->rule, 403, SOCKS_GENERAL_FAILURE,
                     HINT_NONE);
                return;
        }
        c->req_recorded = false;
        /* request line in origin form, headers minus hop-by-hop proxy ones and
         * any trace headers of the run's, then ringfence's attribution */
        struct relay *o = &c->c2u;
        o->off = 0;
        /* credential injection: the placeholder in the target only as the
         * value of a query parameter a binding declares, toward the
         * secret's own hosts (replaced there); anywhere else in a target
         * it is refused. In headers replaced toward the secret's own
         * hosts, refused elsewhere (below). */
        uint64_t own = 0, injected = 0;
        const char *tgt = rq->path.len ? c->in + rq->path.off : "/";
        size_t tl = rq->path.len ? rq->path.len : 1;
        static char tq[2][HTTP_HEAD_MAX + 3 * INJECT_VALUE_MAX];
        bool tq_used = false;
        for (size_t k = 0; k < E.cfg->n_inject; k++)
                if (c->term ? inject_tls_match(&E.cfg->inject[k], c->host, c->port)
                            : inject_host_match(&E.cfg->inject[k], c->host, c->port))
                        own |= 1ULL << k;
        /* a header name is never a place for the placeholder (only values
         * are replaced): refused toward every host, the secret's own
         * included, compared without case as names are */
        for (size_t i = 0; E.cfg->n_inject && i < rq->n_headers; i++) {
                const char *form;
                const struct inject_secret *s = inject_mentions(
                        E.cfg->inject, E.cfg->n_inject, c->in + rq->headers[i].name.off,
                        rq->headers[i].name.len, true, false, &form);
                if (!s)
                        continue;
                c->ufd = unwatch_close(c, W_UP, c->ufd);
                exfil(c, s, "request header name", form);
                return;
        }
        for (size_t k = 0, w = 0; k < E.cfg->n_inject; k++) {
                size_t ql;
                if (!(own & (1ULL << k)) || !E.cfg->inject[k].query[0])
                        continue;
                int r = inject_query(&E.cfg->inject[k], tgt, tl, tq[w], sizeof tq[0], &ql);
                tq_used = true;
                if (r < 0) {
                        explicit_bzero(tq, sizeof tq);
                        c->ufd = unwatch_close(c, W_UP, c->ufd);
                        deny(c, "request target too long", NULL, 400, SOCKS_GENERAL_FAILURE,
                             HINT_NONE);
                        return;
                }
                if (r > 0) {
                        tgt = tq[w];
                        tl = ql;
                        w ^= 1;
                        injected |= 1ULL << k;
                }
        }
        for (size_t k = 0; k < E.cfg->n_inject; k++) {
                const char *form;
                if (!inject_mentions(&E.cfg->inject[k], 1, tgt, tl, false, false, &form) ||
                    (!strcmp(form, "value") && (injected & (1ULL << k))))
                        continue;
                if (tq_used)
                        explicit_bzero(tq, sizeof tq);
                c->ufd = unwatch_close(c, W_UP, c->ufd);
                exfil(c, &E.cfg->inject[k], "request target (URL)", form);
                return;
        }
        /* how its body goes up (struct conn: bmode). Toward a binding with
         * "body" a body is rewritten unless every such placeholder is as
         * long as its value (in place, the framing kept); a chunked body in
         * a run with injections is always de-chunked and scanned as one
         * stream (a placeholder cut by chunk framing is still found) and
         * re-chunked: nothing of the client's framing goes up */
        uint64_t bown = 0;
        bool same_len = true;
        for (size_t k = 0; k < E.cfg->n_inject; k++)
                if ((own & (1ULL << k)) && E.cfg->inject[k].body) {
                        bown |= 1ULL << k;
                        same_len &= E.cfg->inject[k].ph_len == E.cfg->inject[k].len;
                }
        c->bmode = BM_PASS;
        if (rq->chunked && E.cfg->n_inject)
                c->bmode = BM_CHUNK;
        else if (rq->content_length > 0 && bown && same_len)
                c->bmode = BM_INPLACE;
        else if (rq->content_length > 0 && bown) {
                if (rq->content_length <= BODY_BUFFER_MAX &&
                    E.body_buffered + (size_t)rq->content_length <= BODY_BUFFER_TOTAL)
                        c->bmode = BM_BUFFER;
                else if (!rq->http10)
                        c->bmode = BM_CHUNK;
                else {
                        /* HTTP/1.0 cannot be re-chunked: in place, for the
                         * placeholders as long as their values only (any
                         * other is refused in it, as secret.exfil) */
                        c->bmode = BM_INPLACE;
                        for (size_t k = 0; k < E.cfg->n_inject; k++)
                                if (E.cfg->inject[k].ph_len != E.cfg->inject[k].len)
                                        bown &= ~(1ULL << k);
                }
        }
#ifdef RF_TEST_BUILD
        if (c->bmode == BM_INPLACE && same_len && test_body_mode &&
            (test_body_mode == BM_CHUNK ? !rq->http10 : rq->content_length <= BODY_BUFFER_MAX))
                c->bmode = test_body_mode;
#endif
        bool rewrite = c->bmode == BM_CHUNK || c->bmode == BM_BUFFER;
        const struct http_header *expect = http_header_find(rq, c->in, "expect");
        bool cont = c->bmode == BM_BUFFER && expect && expect->value.len == 12 &&
                    !strncasecmp(c->in + expect->value.off, "100-continue", 12);
        /* an HTTP/1.0 request goes up as 1.0: the answer then has no
         * chunked framing the client could not read, and ends the connection;
         * one without a Host gets one from its target (RFC 9112 3.2) */
        int n = snprintf(o->d, RELAY_BUF, "%s %.*s HTTP/1.%c\r\n", c->method, (int)tl, tgt,
                         rq->http10 ? '0' : '1');
        if (tq_used)
                explicit_bzero(tq, sizeof tq);
        if (n < 0 || n >= RELAY_BUF) {
                explicit_bzero(o->d, RELAY_BUF);
                c->ufd = unwatch_close(c, W_UP, c->ufd);
                deny(c, "request target too long", NULL, 400, SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
        size_t len = (size_t)n;
        if (!http_header_find(rq, c->in, "host")) {
                char port[8] = "";
                if (c->port != 80)
                        snprintf(port, sizeof port, ":%u", c->port);
                n = snprintf(o->d + len, RELAY_BUF - len,
                             rq->host_is_ipv6 ? "Host: [%s]%s\r\n" : "Host: %s%s\r\n", c->host,
                             port);
                len += n > 0 ? (size_t)n : 0;
        }
        static char ib[2][HTTP_HEAD_MAX + 2 * INJECT_VALUE_MAX];
        for (size_t i = 0; i < rq->n_headers; i++) {
                const struct http_header *h = &rq->headers[i];
                const char *name = c->in + h->name.off;
                if (header_dropped(name, h->name.len))
                        continue;
                const char *v = c->in + h->value.off;
                size_t vl = h->value.len;
                if (own && header_scrub_hostile(name, h->name.len))
                        continue; /* see header_scrub_hostile */
                /* a rewritten body's framing is ringfence's (below); a
                 * buffered one's 100 Continue too (the head waits for the
                 * body, so the host could not answer it) */
                if (rewrite && ((h->name.len == 14 && !strncasecmp(name, "content-length", 14)) ||
                                (h->name.len == 17 && !strncasecmp(name, "transfer-encoding", 17))))
                        continue;
                if (cont && h == expect)
                        continue;
                bool templated = false;
                for (size_t k = 0; k < E.cfg->n_inject; k++) {
                        const struct inject_secret *s = &E.cfg->inject[k];
                        const char *form;
                        size_t tnl;
                        const char *tn = tmpl_header(s, &tnl);
                        bool mine = tn && tnl == h->name.len && !strncasecmp(tn, name, tnl);
                        if ((own & (1ULL << k)) && mine)
                                templated = true; /* the template sets this header */
                        if (!inject_mentions(s, 1, v, vl, false, true, &form))
                                continue;
                        /* toward another host, refused; toward the
                         * secret's own, a binding with a header template
                         * puts its value in that header only: its
                         * placeholder in any other is refused, never
                         * replaced (the value in another header is the
                         * run's own business, as in a body) */
                        bool elsewhere = tn && !mine && !strcmp(form, "placeholder");
                        if (!(own & (1ULL << k)) || elsewhere) {
                                char where[128];
                                snprintf(where, sizeof where, "request header %.*s%s",
                                         (int)(h->name.len > 64 ? 64 : h->name.len), name,
                                         (own & (1ULL << k)) ? " (not the binding's header)" : "");
                                c->ufd = unwatch_close(c, W_UP, c->ufd);
                                exfil(c, s, where, form);
                                return;
                        }
                        size_t rl;
                        char *dst = ib[v == ib[0] ? 1 : 0];
                        bool authz = h->name.len == 13 && !strncasecmp(name, "authorization", 13);
                        int r = inject_header_value(s, authz, v, vl, dst, sizeof ib[0], &rl);
                        if (r < 0) {
                                head_too_large(c, o);
                                return;
                        }
                        if (r > 0) {
                                v = dst;
                                vl = rl;
                                injected |= 1ULL << k;
                        }
                }
                if (templated)
                        continue;
                n = snprintf(o->d + len, RELAY_BUF - len, "%.*s: %.*s\r\n", (int)h->name.len, name,
                             (int)vl, v);
                if (n < 0 || (size_t)n >= RELAY_BUF - len) {
                        head_too_large(c, o); /* never forward a head with a header left out */
                        return;
                }
                len += (size_t)n;
        }
        for (size_t k = 0; own && k < E.cfg->n_inject; k++) {
                const struct inject_secret *s = &E.cfg->inject[k];
                const char *hole = strstr(s->header, "{}");
                if (!(own & (1ULL << k)) || (!hole && !s->basic[0]))
                        continue;
                if (s->basic[0]) {
                        /* "basic": Authorization: Basic base64(user:value) */
                        static char bh[INJECT_BASIC_HEADER_MAX];
                        int bl = inject_basic_header(s, bh, sizeof bh);
                        n = bl < 0 ? -1 : snprintf(o->d + len, RELAY_BUF - len, "%.*s\r\n", bl, bh);
                        explicit_bzero(bh, sizeof bh);
                } else
                        n = snprintf(o->d + len, RELAY_BUF - len, "%.*s%.*s%s\r\n",
                                     (int)(hole - s->header), s->header, (int)s->len,
                                     (const char *)s->value, hole + 2);
                if (n < 0 || (size_t)n >= RELAY_BUF - len) {
                        head_too_large(c, o);
                        return;
                }
                len += (size_t)n;
                injected |= 1ULL << k;
        }
        /* a WebSocket upgrade goes up as one (the value injected into
         * it like any request's); its 101 makes the connection a tunnel */
        c->ws = http_request_websocket(rq, c->in);
        if (c->ws) {
                n = snprintf(o->d + len, RELAY_BUF - len,
                             "Connection: Upgrade\r\nUpgrade: websocket\r\n");
                len += n > 0 && (size_t)n < RELAY_BUF - len ? (size_t)n : 0;
        }
        c->scrub = own != 0 && E.needles.count > 0;
        c->hold = 0;
        c->own = own;
        c->bcarry_len = 0;
        if (own) {
                n = snprintf(o->d + len, RELAY_BUF - len, "Accept-Encoding: identity\r\n");
                len += n > 0 && (size_t)n < RELAY_BUF - len ? (size_t)n : 0;
        }
        if (c->bmode == BM_CHUNK) {
                n = snprintf(o->d + len, RELAY_BUF - len, "Transfer-Encoding: chunked\r\n");
                if (n < 0 || (size_t)n >= RELAY_BUF - len) {
                        head_too_large(c, o);
                        return;
                }
                len += (size_t)n;
        }
        /* secret.inject once the request is out whole (inject_records):
         * a body refused after the head never carried the value */
        c->inj_pending = injected;
        c->body_own = c->bmode == BM_PASS ? 0 : bown;
        c->body_injected = 0;
        if (injected)
                explicit_bzero(ib, sizeof ib);
        if (injected || c->body_own) {
                snprintf(c->inj_path, sizeof c->inj_path, "%.*s%s",
                         (int)(rq->path.len > 2048 ? 2048 : rq->path.len), c->in + rq->path.off,
                         rq->path.len > 2048 ? "...(cut)" : "");
        }
        n = snprintf(
                o->d + len, RELAY_BUF - len,
                "traceparent: 00-%s-%s-01\r\nbaggage: ringfence.run=%s,ringfence.agent=%s\r\n\r\n",
                c->trace, c->span, E.cfg->run_id, E.cfg->agent);
        /* BM_BUFFER: room left for the Content-Length line it gets later */
        size_t spare = c->bmode == BM_BUFFER ? 48 : 0;
        if (n < 0 || (size_t)n + spare >= RELAY_BUF - len ||
            (rewrite && body_rw_new(c, rq->chunked ? -1 : rq->content_length) < 0)) {
                explicit_bzero(o->d, RELAY_BUF);
                c->ufd = unwatch_close(c, W_UP, c->ufd);
                bool big = n < 0 || (size_t)n + spare >= RELAY_BUF - len;
                deny(c, big ? "request head too large" : "out of memory for the request body", NULL,
                     big ? 400 : 502, SOCKS_GENERAL_FAILURE, HINT_NONE);
                return;
        }
        o->len = len + (size_t)n;
        if (c->bmode == BM_BUFFER) {
                /* the head waits, without its last CRLF, for the body's length */
                o->len -= 2;
                c->head_parked = true;
                if (cont)
                        client_send(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
        }
        c->inj_head_left = o->len;
        /* the body follows whatever of it is already buffered */
        memmove(c->in, c->in + rq->head_len, c->in_len - rq->head_len);
        c->in_len -= rq->head_len;
        c->rhead_len = 0;
        c->resp_in_head = true;
        conn_to(c, CS_BODY);
}

/* secret.inject for each injection of `bits` the request just sent
 * carried (in its head, or `in_body`). */
static void inject_records(struct conn *c, uint64_t bits, bool in_body)
{
        for (size_t k = 0; bits && k < E.cfg->n_inject; k++) {
                if (!(bits & (1ULL << k)))
                        continue;
                struct evf f[] = {
                        {"name", E.cfg->inject[k].name, 0},
                        {"secret_version", NULL, E.cfg->inject[k].version},
                        {"host", c->host, 0},
                        {"port", NULL, c->port},
                        {"method", c->method, 0},
                        {"path", c->inj_path[0] ? c->inj_path : "/", 0},
                        {"scheme", c->term ? "https" : "http", 0},
                        {"in", in_body ? "body" : "head", 0},
                        {"trace_id", c->trace, 0},
                        {"via", via(c), 0},
                };
                event_async("secret.inject", NULL, f, ARRAY_SIZE(f));
        }
}

/*
 * The request body is never a place for a placeholder but where a binding
 * with "body" replaces it (`skip`: those secrets' placeholders, in a body
 * read before it is replaced), nor for a value toward another host: `len`
 * new body bytes at p (decoded: chunk framing never splits what is looked
 * for), checked together with the carry of the previous ones. true when
 * the request was refused (nothing of p was sent).
 */
static bool body_exfil(struct conn *c, const char *p, size_t len, uint64_t skip)
{
        static char win[SECRET_PH_LEN_MAX + RELAY_BUF];
        if (!E.cfg->n_inject || len == 0)
                return false;
        memcpy(win, c->bcarry, c->bcarry_len);
        memcpy(win + c->bcarry_len, p, len);
        size_t wl = c->bcarry_len + len;
        for (size_t k = 0; k < E.cfg->n_inject; k++) {
                const struct inject_secret *sk = &E.cfg->inject[k];
                const char *form;
                if (!inject_mentions(sk, 1, win, wl, false, false, &form))
                        continue;
                if (!strcmp(form, "value") && (c->own & (1ULL << k)))
                        continue; /* the value to its own host: the run's business */
                if (skip & (1ULL << k))
                        continue; /* replaced on its way up (body_rewrite) */
                explicit_bzero(win, wl);
                c->ufd = unwatch_close(c, W_UP, c->ufd);
                exfil(c, sk, "request body", form);
                return true;
        }
        size_t keep = wl < sizeof c->bcarry ? wl : sizeof c->bcarry;
        memcpy(c->bcarry, win + wl - keep, keep);
        c->bcarry_len = keep;
        explicit_bzero(win, wl);
        return false;
}

/* A rewritten body refused for what it holds: nothing more goes up. */
static void body_refused(struct conn *c)
{
        c->c2u.off = c->c2u.len = 0; /* a head waiting in it goes nowhere either */
        c->inj_pending = 0;          /* ... and never carried the value */
        body_rw_free(c);
}

/*
 * BM_CHUNK and BM_BUFFER (struct body_rw): the client's body bytes are
 * read from c->in as one stream (chunk data only: sizes, extensions and
 * trailers go nowhere), checked (body_exfil), and
 *   BM_CHUNK: replaced (inject_body_rewrite, a possible beginning of a
 *   placeholder held in dec for the next bytes) and written to c2u as
 *   chunks of what came out, the last chunk once the client's body ended;
 *   BM_BUFFER: kept in buf until the client's body ended, then the parked
 *   head gets the replaced body's length and the body follows, replaced
 *   as it goes into c2u.
 * Steps as far as c->in and the room in c2u allow; stalled when c2u's
 * room stopped it (conn_interest then waits for the upstream to take
 * bytes). The request's req_left becomes 0 once the whole body is in c2u.
 */
static void body_rewrite(struct conn *c)
{
        struct body_rw *b = c->brw;
        struct relay *o = &c->c2u;
        static char tmp[RELAY_BUF]; /* a replaced piece, values in it: wiped */
        for (;;) {
                bool progress = false;
                bool chunk = c->bmode == BM_CHUNK;
                if (!b->ended && c->in_len) {
                        char *dst = chunk ? b->dec + b->dec_len : b->buf + b->buf_len;
                        size_t room = chunk ? sizeof b->dec - b->dec_len : b->buf_cap - b->buf_len;
                        size_t got = 0, used;
                        if (b->in_left < 0) {
                                bool done = false;
                                const char *why;
                                ssize_t k = http_chunked_decode(&c->req_ch, c->in, c->in_len, dst,
                                                                room, &got, &done, &why);
                                if (k < 0) {
                                        conn_to(c, CS_DEAD);
                                        return;
                                }
                                used = (size_t)k;
                                b->ended = done;
                        } else {
                                got = c->in_len < room ? c->in_len : room;
                                if ((uint64_t)got > (uint64_t)b->in_left)
                                        got = (size_t)b->in_left;
                                memcpy(dst, c->in, got);
                                used = got;
                                b->in_left -= (int64_t)got;
                                b->ended = b->in_left == 0;
                        }
                        if (got && body_exfil(c, dst, got, c->body_own)) {
                                body_refused(c);
                                return;
                        }
                        memmove(c->in, c->in + used, c->in_len - used);
                        c->in_len -= used;
                        if (chunk)
                                b->dec_len += got;
                        else
                                b->buf_len += got;
                        progress = used > 0;
                }
                size_t room = RELAY_BUF - o->off - o->len, ol = 0, used = 0;
                if (chunk && b->dec_len && room > BODY_CHUNK_FRAME) {
                        size_t cap = room - BODY_CHUNK_FRAME;
                        used = inject_body_rewrite(E.cfg->inject, E.cfg->n_inject, c->body_own,
                                                   b->dec, b->dec_len, !b->ended, tmp, cap, &ol,
                                                   &c->body_injected);
                        if (ol) {
                                char *w = o->d + o->off + o->len;
                                int hl = snprintf(w, BODY_CHUNK_FRAME, "%zx\r\n", ol);
                                memcpy(w + hl, tmp, ol);
                                memcpy(w + hl + ol, "\r\n", 2);
                                o->len += (size_t)hl + ol + 2;
                                explicit_bzero(tmp, ol);
                        }
                        memmove(b->dec, b->dec + used, b->dec_len - used);
                        b->dec_len -= used;
                        /* what stays is a held beginning, unless the room
                         * stopped it (a value or a byte more always fits
                         * in what is left otherwise) */
                        b->held = ol + INJECT_VALUE_MAX < cap ? b->dec_len : 0;
                        room = RELAY_BUF - o->off - o->len;
                }
                if (chunk && b->ended && b->dec_len == 0 && room >= 5) {
                        memcpy(o->d + o->off + o->len, "0\r\n\r\n", 5);
                        o->len += 5;
                        b->out_done = true;
                }
                if (!chunk && b->ended) {
                        if (c->head_parked) {
                                size_t nl;
                                uint64_t seen = 0;
                                (void)inject_body_rewrite(E.cfg->inject, E.cfg->n_inject,
                                                          c->body_own, b->buf, b->buf_len, false,
                                                          NULL, SIZE_MAX, &nl, &seen);
                                int hl = snprintf(o->d + o->off + o->len, room,
                                                  "Content-Length: %zu\r\n\r\n", nl);
                                o->len += (size_t)hl;
                                c->inj_head_left += (size_t)hl;
                                c->head_parked = false;
                                room = RELAY_BUF - o->off - o->len;
                                progress = true;
                        }
                        if (b->flushed < b->buf_len && room) {
                                used = inject_body_rewrite(
                                        E.cfg->inject, E.cfg->n_inject, c->body_own,
                                        b->buf + b->flushed, b->buf_len - b->flushed, false,
                                        o->d + o->off + o->len, room, &ol, &c->body_injected);
                                o->len += ol;
                                b->flushed += used;
                        }
                        b->out_done = b->flushed == b->buf_len;
                }
                progress |= used > 0;
                if (b->out_done) {
                        c->req_left = 0; /* the body is in c2u whole */
                        body_rw_free(c);
                        return;
                }
                if (!progress)
                        break;
        }
        /* work that only room in c2u lets go on: once the write made room,
         * no event of the client's would come for it, so the upstream's
         * POLLOUT steps it (with c2u empty it then always moves: nothing
         * spins on it) */
        b->stalled = (b->ended && !b->out_done) || (c->bmode == BM_CHUNK && b->dec_len > b->held);
}

/* Move request-body bytes from c->in to the upstream buffer, per framing. */
static void body_from_in(struct conn *c)
{
        struct relay *o = &c->c2u;
        if (c->brw) {
                body_rewrite(c);
                return;
        }
        while (c->in_len > 0 && (c->req_left != 0)) {
                size_t room = RELAY_BUF - o->off - o->len;
                if (room == 0)
                        return;
                size_t take = c->in_len < room ? c->in_len : room;
                if (c->req_left > 0 && (uint64_t)take > (uint64_t)c->req_left)
                        take = (size_t)c->req_left;
                if (c->req_left < 0) {
                        bool done = false;
                        const char *why;
                        ssize_t k = http_chunked_feed(&c->req_ch, c->in, take, &done, &why);
                        if (k < 0) {
                                conn_to(c, CS_DEAD);
                                return;
                        }
                        take = (size_t)k;
                        if (done)
                                c->req_left = 0;
                } else {
                        /* a binding with "body": the placeholder replaced in
                         * place; a possible beginning of one at the end waits
                         * in `in` for the bytes after it */
                        if (c->body_own) {
                                bool more = (uint64_t)take < (uint64_t)c->req_left;
                                size_t h = inject_body(E.cfg->inject, E.cfg->n_inject, c->body_own,
                                                       c->in, take, more, &c->body_injected);
                                if (h == take)
                                        return;
                                take -= h;
                        }
                        c->req_left -= (int64_t)take;
                }
                if (body_exfil(c, c->in, take, 0)) {
                        o->off = o->len = 0; /* the head waiting in it goes nowhere either */
                        c->inj_pending = 0;  /* ... and never carried the value */
                        return;
                }
                memcpy(o->d + o->off + o->len, c->in, take);
                o->len += take;
                memmove(c->in, c->in + take, c->in_len - take);
                c->in_len -= take;
        }
}

/* ---- the response scrubber's view of u2c ------------------------------------------ */

/* how long bytes that may begin the value wait for the next ones (an idle
 * WebSocket, a stream that pauses) */
#define SCRUB_HOLD_MS 200

static bool framing_bit(const struct conn *c, size_t i)
{
        return c->framing[i / 8] & (1u << (i % 8));
}

/* Any framing byte in u2c[from..to)? 64 bytes' bits at a time (a body of
 * known length has none: this runs over every buffer the scrubber sees). */
static bool framing_any(const struct conn *c, size_t from, size_t to)
{
        size_t i = from;
        for (; i < to && i % 64; i++)
                if (framing_bit(c, i))
                        return true;
        for (; i + 64 <= to; i += 64) {
                uint64_t w;
                memcpy(&w, c->framing + i / 8, sizeof w);
                if (w)
                        return true;
        }
        for (; i < to; i++)
                if (framing_bit(c, i))
                        return true;
        return false;
}

static void framing_clear(struct conn *c, size_t from, size_t to)
{
        size_t i = from;
        for (; i < to && i % 8; i++)
                c->framing[i / 8] &= (uint8_t) ~(1u << (i % 8));
        if (i + 8 <= to) {
                memset(c->framing + i / 8, 0, (to - i) / 8);
                i += (to - i) / 8 * 8;
        }
        for (; i < to; i++)
                c->framing[i / 8] &= (uint8_t) ~(1u << (i % 8));
}

/* The bytes left in u2c (held ones) to its front, their framing bits too. */
static void u2c_to_front(struct conn *c)
{
        struct relay *o = &c->u2c;
        if (c->scrub)
                for (size_t i = 0; i < o->len; i++) {
                        bool f = framing_bit(c, o->off + i);
                        c->framing[i / 8] = (uint8_t)((c->framing[i / 8] & ~(1u << (i % 8))) |
                                                      ((unsigned)f << (i % 8)));
                }
        memmove(o->d, o->d + o->off, o->len);
        o->off = 0;
}

/*
 * Scrub u2c from the held bytes up to its end, chunk framing skipped: the
 * value (or its base64) is found even when the host's chunked framing
 * splits it, and replaced in place (framing untouched). Sets c->hold to
 * the bytes (from the first byte of a possible beginning of a value) that
 * must wait for the next read; at the end of a response (`ended`) a value
 * cut short there is replaced too and nothing is held.
 */
/* Scrub buf[from..len) in place, first going on with a value a pause cut
 * (*rs: its rest at buf[from] is overwritten, inject_scrub_resume); the
 * bytes at the end that must wait, none once `ended` (a value cut short
 * there replaced, and *rs set for the bytes that may still follow). */
static size_t scrub_span(char *buf, size_t len, size_t from, bool ended, struct inject_resume *rs)
{
        if (rs->any && from < len)
                from += inject_scrub_resume(&E.needles, rs, buf + from, len - from, &E.scrubbed);
        size_t h = inject_scrub_inplace(&E.needles, buf, len, from, &E.scrubbed);
        if (ended && h) {
                (void)inject_scrub_pending(&E.needles, buf, len, h, rs);
                (void)inject_scrub_tail(&E.needles, buf, len, h, &E.scrubbed);
                h = 0;
        }
        return h;
}

static void scrub_u2c(struct conn *c, size_t start, bool ended)
{
        static char g[RELAY_BUF];
        static uint16_t at[RELAY_BUF];
        _Static_assert(RELAY_BUF <= 65536, "u2c offsets fit 16 bits");
        struct relay *o = &c->u2c;
        size_t end = o->off + o->len;
        size_t from = start - (c->hold <= start - o->off ? c->hold : start - o->off);
        size_t hold_at; /* the first byte that waits (end: none) */
        if (!framing_any(c, from, end)) {
                /* no framing in the way (a body of known length): in place */
                hold_at = end - scrub_span(o->d, end, from, ended, &c->resume);
        } else {
                size_t n = 0;
                for (size_t i = from; i < end; i++)
                        if (!framing_bit(c, i)) {
                                g[n] = o->d[i];
                                at[n++] = (uint16_t)i;
                        }
                size_t h = scrub_span(g, n, 0, ended, &c->resume);
                for (size_t j = 0; j < n; j++)
                        o->d[at[j]] = g[j];
                explicit_bzero(g, n);
                hold_at = h ? at[n - h] : end;
        }
        size_t before = c->hold;
        c->hold = end - hold_at;
        if (c->hold && (!before || end > start))
                c->hold_until = now_ms() + SCRUB_HOLD_MS;
}

/*
 * A scrubbed WebSocket's server bytes u2c[from..end): their frame headers
 * marked as framing for scrub_u2c. A frame the scrubber cannot read into
 * (compressed, masked) ends the connection: false.
 */
static bool ws_mark(struct conn *c, size_t from)
{
        const char *why = "";
        struct relay *o = &c->u2c;
        size_t end = o->off + o->len;
        if (ws_frames_feed(&c->wsf, (const uint8_t *)o->d + from, end - from, c->framing, from,
                           &why) >= 0)
                return true;
        char key[300], reason[200];
        snprintf(key, sizeof key, "%s:%u", c->host, c->port);
        snprintf(reason, sizeof reason, "the injection host sent %s: ended", why);
        struct evf f[] = {
                {"host", c->host, 0}, {"port", NULL, c->port}, {"addr", c->addr_text, 0},
                {"rule", c->rule, 0}, {"reason", reason, 0},   {"proto", conn_proto(c), 0},
                {"fix", "", 0},       {"via", via(c), 0},
        };
        event_deny_now(key, f, ARRAY_SIZE(f));
        o->len = from - o->off; /* nothing of it reaches the run */
        c->hold = 0;
        c->st = CS_DEAD;
        return false;
}

/* Response bytes arrived in u2c (from `start`): find the head and the end. */
static void on_response_bytes(struct conn *c, size_t start)
{
        struct relay *o = &c->u2c;
        size_t pos = start;
        while (pos < o->off + o->len) {
                if (c->resp_in_head) {
                        size_t n = o->off + o->len - pos;
                        if (n > sizeof c->rhead - c->rhead_len)
                                n = sizeof c->rhead - c->rhead_len;
                        memcpy(c->rhead + c->rhead_len, o->d + pos, n);
                        struct http_response rs;
                        const char *why;
                        int r = http_response_parse(c->rhead, c->rhead_len + n, &rs, &why);
                        if (r == 0 && c->rhead_len + n < sizeof c->rhead) {
                                c->rhead_len += n;
                                return;
                        }
                        /* a head too large or malformed: drained, the
                         * connection ends — but from a secret's host never
                         * passed on, since its body could be anything the
                         * scrubber cannot follow (a compressed one) */
                        if (r <= 0 && !c->scrub) {
                                conn_to(c, CS_DRAIN);
                                return;
                        }
                        const char *hostile =
                                r <= 0       ? "sent an answer whose head could not be read "
                                               "(malformed or too large)"
                                : !c->scrub  ? NULL
                                : rs.encoded ? "compressed its answer (Content-Encoding) although "
                                               "asked for identity"
                                : rs.status == 206
                                        ? "answered with a part of a resource (206), which could "
                                          "hold a slice of the injected value"
                                : rs.status == 101 && rs.ws_extensions
                                        ? "opened a WebSocket with an extension (compressed "
                                          "frames) although none was asked for"
                                        : NULL;
                        if (hostile) {
                                /* an answer of a secret's host the scrubber could
                                 * not see the value in: the head (held whole) and
                                 * all after it never reach the run */
                                size_t head_at = pos - c->rhead_len;
                                c->rhead_len = 0;
                                c->hold = 0;
                                if (head_at < o->off) {
                                        conn_to(c, CS_DEAD);
                                        return;
                                }
                                o->len = head_at - o->off;
                                c->ufd = unwatch_close(c, W_UP, c->ufd);
                                c->client_close = true;
                                char hw[256];
                                snprintf(hw, sizeof hw,
                                         "the injection host %s: the injected value could not be "
                                         "kept out of it",
                                         hostile);
                                deny(c, hw, c->rule, 502, SOCKS_GENERAL_FAILURE, HINT_NONE);
                                return;
                        }
                        pos += (size_t)r - c->rhead_len;
                        c->rhead_len = 0;
                        struct evf f[] = {{"host", c->host, 0}, {"status", NULL, rs.status}};
                        event_async("egress.response", NULL, f, ARRAY_SIZE(f));
                        if (rs.status == 101 && c->ws) {
                                /* the WebSocket is open: what follows are its
                                 * frames both ways, relayed (and, from a
                                 * secret's host, still scrubbed) */
                                c->resp_in_head = false;
                                c->resp_left = 0;
                                c->client_close = true; /* nothing HTTP after it */
                                size_t room = RELAY_BUF - c->c2u.off - c->c2u.len;
                                if (c->in_len <= room) {
                                        memcpy(c->c2u.d + c->c2u.off + c->c2u.len, c->in,
                                               c->in_len);
                                        c->c2u.len += c->in_len;
                                        c->in_len = 0;
                                        conn_to(c, CS_TUNNEL);
                                        ws_frames_init(&c->wsf);
                                        if (c->scrub)
                                                (void)ws_mark(c, pos);
                                } else
                                        conn_to(c, CS_DRAIN);
                                return;
                        }
                        if (rs.status < 200)
                                continue; /* 1xx: another head follows */
                        c->resp_in_head = false;
                        if (c->req_head || rs.status == 204 || rs.status == 304)
                                c->resp_left = 0;
                        else if (rs.chunked) {
                                c->resp_left = -1;
                                http_chunked_init(&c->resp_ch);
                        } else if (rs.content_length >= 0)
                                c->resp_left = rs.content_length;
                        else
                                c->resp_left = -2;
                        if (rs.close)
                                c->client_close = true;
                } else if (c->resp_left == -2) {
                        return; /* until the server closes */
                } else if (c->resp_left == -1) {
                        bool done = false;
                        const char *why;
                        ssize_t k = http_chunked_feed_map(&c->resp_ch, o->d + pos,
                                                          o->off + o->len - pos, &done, &why,
                                                          c->scrub ? c->framing : NULL, pos);
                        if (k < 0) {
                                conn_to(c, CS_DRAIN);
                                return;
                        }
                        pos += (size_t)k;
                        if (done)
                                c->resp_left = 0;
                } else if (c->resp_left > 0) {
                        size_t n = o->off + o->len - pos;
                        if ((uint64_t)n > (uint64_t)c->resp_left)
                                n = (size_t)c->resp_left;
                        pos += n;
                        c->resp_left -= (int64_t)n;
                }
                if (!c->resp_in_head && c->resp_left == 0) {
                        /* the response ended: bytes after it are not ours */
                        o->len = pos - o->off;
                        if (c->client_close)
                                conn_to(c, CS_DRAIN);
                        else {
                                conn_to(c, CS_HEAD);
                                c->deadline = now_ms() + EGRESS_HEAD_MS; /* absolute */
                        }
                        return;
                }
        }
}

/* ---- SOCKS ------------------------------------------------------------------------- */

/*
 * A SOCKS5 name is any bytes but NUL. One that is not UTF-8 could not be
 * recorded (an audit record is JSON text: its egress.deny would be lost),
 * so the non-ASCII bytes of such a name are kept as the text "\xNN" (cut
 * to fit); it is refused by canonicalisation either way.
 */
static void socks_host_copy(struct conn *c, const char *name)
{
        static const char hexd[] = "0123456789abcdef";
        size_t len = strlen(name), o = 0;
        if (json_utf8_valid(name, len, NULL)) {
                snprintf(c->host, sizeof c->host, "%s", name);
                return;
        }
        for (size_t i = 0; i < len && o + 5 <= sizeof c->host; i++) {
                unsigned char b = (unsigned char)name[i];
                if (b < 0x80) {
                        c->host[o++] = (char)b;
                } else {
                        c->host[o++] = '\\';
                        c->host[o++] = 'x';
                        c->host[o++] = hexd[b >> 4];
                        c->host[o++] = hexd[b & 15];
                }
        }
        c->host[o] = '\0';
}

static void on_socks(struct conn *c)
{
        if (c->st == CS_SOCKS_GREET) {
                bool no_auth = false;
                int r = socks_greeting_parse((uint8_t *)c->in, c->in_len, &no_auth);
                if (r == 0)
                        return;
                if (r < 0 || !no_auth) {
                        client_send(c, "\x05\xff", 2);
                        conn_to(c, CS_DRAIN);
                        return;
                }
                memmove(c->in, c->in + r, c->in_len - (size_t)r);
                c->in_len -= (size_t)r;
                client_send(c, "\x05\x00", 2);
                conn_to(c, CS_SOCKS_REQ);
        }
        struct socks_request rq;
        enum socks_reply rep = SOCKS_GENERAL_FAILURE;
        int r = socks_request_parse((uint8_t *)c->in, c->in_len, &rq, &rep);
        if (r == 0)
                return;
        c->proto = PR_SOCKS;
        if (r < 0 || rq.cmd != 1) {
                c->host[0] = '\0';
                deny(c, r < 0 ? "malformed SOCKS request" : "only CONNECT is served", NULL, 400,
                     r < 0 ? rep : SOCKS_CMD_UNSUPPORTED, HINT_NONE);
                return;
        }
        memmove(c->in, c->in + r, c->in_len - (size_t)r);
        c->in_len -= (size_t)r;
        c->port = rq.port;
        if (rq.atyp == 3) {
                socks_host_copy(c, rq.host);
                /* a name kept as text may have been cut to fit: its own
                 * bytes are looked at for a placeholder first */
                if (E.cfg->n_inject && strcmp(c->host, rq.host) &&
                    exfil_name(c, rq.host, name_where(c)))
                        return;
        } else
                addr_format(rq.addr, rq.atyp == 1 ? AF_INET : AF_INET6, c->host, sizeof c->host);
        route(c);
}

/* ---- captured connections ------------------------------------------------------------ */

static int judge_first_bytes(struct conn *c, const uint8_t *buf, size_t len, size_t cap,
                             bool must_tls);

/*
 * The first bytes of a captured connection decided (have_address put it
 * in CS_FIRST): a ClientHello must name the destination; an HTTP request
 * is served as one (on_head_captured); anything else is plain TCP, only
 * where a rule naming the port or network.plain_ports allows it.
 */
static void on_first(struct conn *c)
{
        enum captured_first k = captured_first_bytes((const uint8_t *)c->in, c->in_len);
        if (k == CAPF_NEED_MORE && c->in_len < sizeof c->in)
                return;
        switch (k) {
        case CAPF_TLS:
                c->cap_tls = true;
                if (judge_first_bytes(c, (const uint8_t *)c->in, c->in_len, sizeof c->in, true) <=
                    0)
                        return;
                if (term_wanted(c))
                        tls_accept_start(c);
                else
                        dial(c);
                return;
        case CAPF_HTTP:
                on_head_captured(c);
                return;
        case CAPF_NEED_MORE:
        case CAPF_OTHER:
        default:
                if (c->cap_plain_ok) {
                        dial(c); /* held bytes go up once connected */
                        return;
                }
                deny(c, "neither TLS nor HTTP; plain TCP needs a rule naming the port", c->rule,
                     403, SOCKS_NOT_ALLOWED, HINT_PLAIN);
                return;
        }
}

/*
 * Read what the run's resolver sent (synth.h) into this process's map: at
 * every captured accept (an answer the run holds has its entry waiting
 * by then) and whenever the channel is readable (so it never fills up).
 * A broken channel: no pool address passes from then on.
 */
static void synth_take(void)
{
        if (E.synth_fd >= 0 && synth_drain(E.synth_fd, E.map) < 0) {
                E.map_ok = false;
                (void)epoll_ctl(E.epfd, EPOLL_CTL_DEL, E.synth_fd, NULL);
                E.synth_fd = -1;
        }
}

/* what <linux/netfilter_ipv4.h> and <linux/netfilter_ipv6/ip6_tables.h> call
 * SO_ORIGINAL_DST and IP6T_SO_ORIGINAL_DST (their headers pull in more) */
#define RF_SO_ORIGINAL_DST 80

/*
 * A connection accepted on a capture listener of `family`: its original
 * destination (conntrack's; a connection the kernel did not translate
 * has none that differs: its destination is the listener itself, and is
 * refused as such), decided by captured_dest_decide against this
 * process's map (drained first, so an answer the run holds has its entry
 * here), then route() as any other destination.
 */
static void captured_start(struct conn *c, int family)
{
        struct sockaddr_storage od = {0};
        socklen_t len = sizeof od;
        uint8_t addr[16] = {0};
        uint16_t port = 0;
        c->captured = true;
        c->proto = PR_CAPTURE;
        if (getsockopt(c->cfd, family == AF_INET ? SOL_IP : SOL_IPV6, RF_SO_ORIGINAL_DST, &od,
                       &len) < 0) {
                len = sizeof od;
                if (getsockname(c->cfd, (struct sockaddr *)&od, &len) < 0)
                        od.ss_family = AF_UNSPEC;
        }
        if (od.ss_family == AF_INET) {
                const struct sockaddr_in *s4 = (const struct sockaddr_in *)&od;
                memcpy(addr, &s4->sin_addr, 4);
                port = ntohs(s4->sin_port);
        } else if (od.ss_family == AF_INET6) {
                const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&od;
                memcpy(addr, &s6->sin6_addr, 16);
                port = ntohs(s6->sin6_port);
        }
        synth_take();
        struct captured_dest d;
        c->port = c->cap_port = port;
        addr_format(addr, od.ss_family, c->addr_text, sizeof c->addr_text);
        switch (captured_dest_decide(E.map, E.map_ok, od.ss_family, addr, port, &d)) {
        case CAPD_NAME:
                snprintf(c->host, sizeof c->host, "%s", d.name);
                break;
        case CAPD_LITERAL:
                snprintf(c->host, sizeof c->host, "%s", c->addr_text);
                c->cap_literal = true;
                break;
        case CAPD_REFUSE:
        default:
                snprintf(c->host, sizeof c->host, "%s",
                         od.ss_family == AF_UNSPEC ? "(unknown)" : c->addr_text);
                deny(c, d.reason ? d.reason : "no original destination", NULL, 403,
                     SOCKS_NOT_ALLOWED, HINT_NONE);
                return;
        }
        snprintf(c->cap_name, sizeof c->cap_name, "%s", c->host);
        route(c);
}

/* ---- the loop ------------------------------------------------------------------------ */

static struct conn *conn_new(int fd, bool socks, bool captured)
{
        struct conn *c = n_conn_cache ? conn_cache[--n_conn_cache] : malloc(sizeof *c);
        if (!c)
                return NULL;
        memset(c, 0, offsetof(struct conn, in));
        c->reg_fd[0] = c->reg_fd[1] = c->reg_fd[2] = -1;
        c->c2u.off = c->c2u.len = c->u2c.off = c->u2c.len = 0;
        c->cfd = fd;
        c->ufd = c->dfd = -1;
        c->pu.r = c->pu.w = c->pd.r = c->pd.w = -1;
        c->st = captured ? CS_CAPTURED : socks ? CS_SOCKS_GREET : CS_HEAD;
        c->proto = captured ? PR_CAPTURE : socks ? PR_SOCKS : PR_HTTP;
        c->t0 = now_ms();
        c->deadline = c->t0 + EGRESS_HEAD_MS;
        return c;
}

static void conn_free(struct conn *c)
{
        record_close(c);
        if (c->rst) {
                /* a refusal after accept: RST, so the client sees ECONNRESET at once */
                struct linger l = {.l_onoff = 1, .l_linger = 0};
                (void)setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        }
        unwatch_close(c, W_CLIENT, c->cfd);
        unwatch_close(c, W_UP, c->ufd);
        unwatch_close(c, W_DNS, c->dfd);
        safe_close(c->pu.r);
        safe_close(c->pu.w);
        safe_close(c->pd.r);
        safe_close(c->pd.w);
        body_rw_free(c);
        if (n_conn_cache < CONN_CACHE_MAX)
                conn_cache[n_conn_cache++] = c;
        else
                free(c);
}

/* Step c in this round (once, however many of its fds had events). */
static void conn_queue(struct conn *c)
{
        if (!c->queued) {
                c->queued = true;
                E.active[E.n_active++] = c;
        }
}

enum listener {
        L_HTTP,
        L_SOCKS,
        L_CAP4,
        L_CAP6,
};

static void on_accept(int lfd, enum listener kind)
{
        bool socks = kind == L_SOCKS, captured = kind == L_CAP4 || kind == L_CAP6;
        for (;;) {
                int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        /* out of fds: stop polling the listeners until a
                         * connection goes, instead of spinning */
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                            errno == ENOMEM)
                                E.accept_paused = true;
                        return;
                }
                if (E.n_conns >= E.cfg->max_conns) {
                        struct evf f[] = {{"limit", "egress_connections", 0},
                                          {"max", NULL, E.cfg->max_conns}};
                        event_async("egress.limit", "egress_connections", f, ARRAY_SIZE(f));
                        if (captured) {
                                struct linger l = {.l_onoff = 1, .l_linger = 0};
                                (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
                        } else if (socks)
                                (void)!write(fd, "\x05\xff", 2);
                        else {
                                static const char m[] =
                                        "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 52\r\n"
                                        "Connection: close\r\n\r\nringfence: too many egress "
                                        "connections for this run\n";
                                (void)!write(fd, m, sizeof m - 1);
                        }
                        safe_close(fd);
                        continue;
                }
                /* a relay must not add Nagle's delay to what it forwards */
                int one = 1;
                (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct conn *c = conn_new(fd, socks, captured);
                if (!c) {
                        safe_close(fd);
                        return;
                }
                c->idx = E.n_conns;
                E.conns[E.n_conns++] = c;
                if (captured)
                        captured_start(c, kind == L_CAP4 ? AF_INET : AF_INET6);
                /* the request usually follows the connect at once: read it
                 * in this round instead of waiting for the next */
                c->rev[W_CLIENT] = EPOLLIN;
                conn_queue(c);
        }
}

/* Read from side w into relay o; counts toward the quota. 0 ok, -1 EOF, -2 error. */
static int relay_read(struct conn *c, enum watched w, struct relay *o, uint64_t *count)
{
        /* a TLS session gives one record (16 KiB at most) per read: the
         * buffer is filled from several while they come, in one step */
        bool tls = w == W_CLIENT ? c->ctls != NULL : c->utls != NULL;
        if (c->tls_end[w])
                return c->tls_end[w];
        for (int pass = 0; pass < (tls ? 4 : 1); pass++) {
                size_t room = RELAY_BUF - o->off - o->len;
                if (room == 0)
                        return 0;
                ssize_t n = io_read(c, w, o->d + o->off + o->len, room);
                int end = n == 0 ? -1 : n < 0 && errno != EAGAIN && errno != EINTR ? -2 : 0;
                if (end && pass) {
                        /* the bytes of this step first; the end in the next
                         * (conn_watch steps it again at once) */
                        c->tls_end[w] = (int8_t)end;
                        return 0;
                }
                if (end)
                        return end;
                if (n < 0)
                        return 0;
                o->len += (size_t)n;
                *count += (uint64_t)n;
                E.bytes += (uint64_t)n;
        }
        return 0;
}

static int relay_write(struct conn *c, enum watched w, struct relay *o)
{
        if (o->len == 0)
                return 0;
        ssize_t n = io_write(c, w, o->d + o->off, o->len);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -1;
        if (w == W_UP && c->inj_pending) {
                /* the head carrying the value is out whole: recorded now */
                if ((size_t)n >= c->inj_head_left) {
                        inject_records(c, c->inj_pending, false);
                        c->inj_pending = 0;
                } else
                        c->inj_head_left -= (size_t)n;
        }
        o->off += (size_t)n;
        o->len -= (size_t)n;
        if (o->len == 0)
                o->off = 0;
        return 0;
}

static int spipe_open(struct spipe *p)
{
        int fds[2];
        if (p->r >= 0)
                return 0;
        if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0)
                return -1;
        p->r = fds[0];
        p->w = fds[1];
        /* 256 KiB: pipe pages are charged to the egress processes' shared uid */
        (void)fcntl(p->w, F_SETPIPE_SZ, 256 * 1024);
        return 0;
}

/* fd → pipe, at most max bytes: > 0 moved, 0 nothing now, -1 EOF, -2 error. */
static ssize_t spipe_in(struct spipe *p, int fd, size_t max, uint64_t *count)
{
        if (spipe_open(p) < 0)
                return -1;
        ssize_t n = splice(fd, NULL, p->w, NULL, max, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
                p->len += (size_t)n;
                *count += (uint64_t)n;
                E.bytes += (uint64_t)n;
                return n;
        }
        if (n == 0)
                return -1;
        return errno == EAGAIN || errno == EINTR ? 0 : -2;
}

/* pipe → fd, as much as goes now: 0, or -1 on error. */
static int spipe_out(struct spipe *p, int fd)
{
        while (p->len > 0) {
                ssize_t n = splice(p->r, NULL, fd, NULL, p->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                if (n > 0)
                        p->len -= (size_t)n;
                else
                        return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        }
        return 0;
}

/* A response body of known length, once its buffered part is out. */
static bool resp_splicing(const struct conn *c)
{
        /* never from or to a TLS session: those bytes are not the socket's */
        return c->st == CS_RESP && !c->scrub && !c->ctls && !c->utls && !c->resp_in_head &&
               c->resp_left > 0 && c->u2c.len == 0 &&
               (c->resp_left >= SPLICE_AFTER || c->pd.r >= 0);
}

static void quota_check(struct conn *c)
{
        if (E.cfg->bytes_quota && E.bytes > E.cfg->bytes_quota && c->st != CS_DRAIN &&
            c->st != CS_DEAD) {
                struct evf f[] = {{"limit", "egress_bytes", 0},
                                  {"max", NULL, (int64_t)E.cfg->bytes_quota}};
                event_async("egress.limit", "egress_bytes", f, ARRAY_SIZE(f));
                c->st = CS_DEAD;
        }
}

/*
 * Judge a tunnel's first client bytes buf[0..len) against c->host.
 * `must_tls`: a TLS port, where anything but a ClientHello naming the host
 * is refused; otherwise (a rule naming the port) a stream that does not
 * open like TLS (first byte not a TLS record type, 20..24) is plain and
 * passes, and one that does is held to the same SNI rule. Returns 1 to
 * pass, 0 to wait for more bytes, -1 refused (egress.deny recorded, the
 * connection to close: the client already has its 200).
 */
static int judge_first_bytes(struct conn *c, const uint8_t *buf, size_t len, size_t cap,
                             bool must_tls)
{
        char sni[TLS_SNI_MAX + 1];
        const char *why = "";
        if (len == 0)
                return 0;
        if (!must_tls && (buf[0] < 20 || buf[0] > 24))
                return 1; /* a plain protocol, on the port the rule names */
        enum tls_sni_result r = tls_client_hello_sni(buf, len, sni, &why);
        if (r == TLS_NEED_MORE) {
                if (len < cap)
                        return 0;
                r = TLS_MALFORMED;
        }
        const char *reason = NULL;
        enum hint hint = HINT_NONE;
        if (r == TLS_SNI_ABSENT)
                reason = "the TLS ClientHello names no server (SNI)";
        else if (r == TLS_NOT_TLS && must_tls) {
                reason = "not TLS; only TLS with the host's name passes on this port";
                hint = HINT_PLAIN;
        } else if (r == TLS_NOT_TLS)
                reason = "a TLS record that is not a ClientHello opens the stream";
        else if (r == TLS_MALFORMED)
                reason = "malformed TLS ClientHello";
        else if (E.cfg->n_inject && r == TLS_SNI_FOUND && strcmp(sni, c->host) != 0 &&
                 inject_mentions_name(E.cfg->inject, E.cfg->n_inject, sni, strlen(sni), &why)) {
                const char *form;
                const struct inject_secret *s = inject_mentions_name(E.cfg->inject, E.cfg->n_inject,
                                                                     sni, strlen(sni), &form);
                char dest[300];
                snprintf(dest, sizeof dest, "%s:%u", c->host, c->port);
                struct evf f[] = {
                        {"name", s->name, 0},
                        {"secret_version", NULL, s->version},
                        {"destination", dest, 0},
                        {"where", "TLS SNI", 0},
                        {"form", form, 0},
                        {"via", via(c), 0},
                        {"action", s->exfil_kill ? "kill" : "refuse", 0},
                };
                (void)event_send("secret.exfil", NULL, f, ARRAY_SIZE(f), true);
                reason = "the TLS SNI carries an injected secret's placeholder (secret.exfil)";
        } else if (strcmp(sni, c->host) != 0)
                reason = c->captured
                                 ? "the TLS SNI differs from the name the connection is "
                                   "for (domain fronting)"
                                 : "the TLS SNI differs from the CONNECT host (domain fronting)";
        if (!reason)
                return 1;
        char key[300], fix[RULE_TEXT_MAX + 400];
        hint_text(c, hint, fix, sizeof fix);
        snprintf(key, sizeof key, "%s:%u", c->host, c->port);
        struct evf f[] = {{"host", c->host, 0},
                          {"port", NULL, c->port},
                          {"sni", r == TLS_SNI_FOUND ? sni : "", 0},
                          {"reason", reason, 0},
                          {"proto", conn_proto(c), 0},
                          {"fix", fix, 0},
                          {"via", via(c), 0}};
        event_deny_now(key, f, ARRAY_SIZE(f));
        if (c->captured && c->u2c.len == 0 && c->pd.len == 0 && buf[0] == 22) {
                /* a captured ClientHello: a TLS alert, then the close */
                client_send(c, tls_alert_denied, sizeof tls_alert_denied);
                c->deadline = now_ms() + EGRESS_HEAD_MS;
                c->st = CS_DRAIN;
        } else {
                c->rst = c->captured;
                c->st = CS_DEAD; /* the 200 is out: just close the tunnel */
        }
        return -1;
}

static void on_sni(struct conn *c)
{
        if (judge_first_bytes(c, (const uint8_t *)c->in, c->in_len, sizeof c->in, true) <= 0)
                return;
        if (term_wanted(c))
                tls_accept_start(c);
        else
                dial(c);
}

/*
 * A tunnel opened by a rule naming its port: hold the client's bytes (in
 * c2u) until judge_first_bytes() passes them; nothing goes up before.
 */
static void tunnel_sniff(struct conn *c)
{
        if (c->client_eof && c->c2u.len == 0) {
                c->sniff = false; /* nothing sent at all: nothing to judge */
                return;
        }
        if (c->captured) {
                /* dialled first (a port a rule names), but the client opens
                 * with an HTTP request before the server said anything: it
                 * is served as one (Host checked, stamped, recorded) on
                 * the connection already made */
                enum captured_first f =
                        captured_first_bytes((const uint8_t *)c->c2u.d + c->c2u.off, c->c2u.len);
                if (f == CAPF_NEED_MORE && !c->client_eof && c->down == 0)
                        return;
                if (f == CAPF_HTTP && c->down == 0 && c->c2u.len <= sizeof c->in) {
                        memcpy(c->in, c->c2u.d + c->c2u.off, c->c2u.len);
                        c->in_len = c->c2u.len;
                        c->c2u.off = c->c2u.len = 0;
                        c->sniff = false;
                        c->proto = PR_HTTP;
                        conn_to(c, CS_HEAD);
                        c->deadline = now_ms() + EGRESS_HEAD_MS;
                        on_head(c);
                        return;
                }
        }
        /* after the client's EOF no more bytes come: what is held is all */
        int k = judge_first_bytes(c, (const uint8_t *)c->c2u.d + c->c2u.off, c->c2u.len,
                                  c->client_eof ? c->c2u.len : RELAY_BUF - c->c2u.off, false);
        if (k > 0)
                c->sniff = false;
}

static void conn_step(struct conn *c, short cre, short ure, short dre)
{
        if (c->dfd >= 0 && dre && c->st == CS_RESOLVE)
                on_dns(c);
        /* a TLS read that waited for its socket to take bytes */
        if (c->want_out[W_CLIENT] && (cre & POLLOUT))
                cre |= POLLIN;
        if (c->want_out[W_UP] && (ure & POLLOUT))
                ure |= POLLIN;
        if ((c->upst == UP_CONNECTING || c->upst == UP_HANDSHAKE) && ure)
                up_step(c);
        if (c->st == CS_TLS_ACCEPT) {
                if (cre)
                        tls_accept_step(c);
                if (c->st != CS_HEAD)
                        return; /* still shaking hands, or refused */
        }
        if (c->st == CS_TLS_CONNECT) {
                if (ure)
                        tls_connect_step(c);
                if (c->st == CS_TLS_CONNECT)
                        return;
        }
        if (cre & (POLLIN | POLLHUP | POLLERR)) {
                switch (c->st) {
                case CS_SOCKS_GREET:
                case CS_SOCKS_REQ:
                case CS_HEAD:
                case CS_FIRST:
                case CS_SNI: {
                        ssize_t n =
                                io_read(c, W_CLIENT, c->in + c->in_len, sizeof c->in - c->in_len);
                        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                                c->st = CS_DEAD;
                                return;
                        }
                        if (n > 0) {
                                c->in_len += (size_t)n;
                                /* it speaks: the rest of its head gets the usual time */
                                if (c->st == CS_FIRST && c->in_len == (size_t)n)
                                        c->deadline = now_ms() + EGRESS_HEAD_MS;
                                if (c->st == CS_HEAD)
                                        on_head(c);
                                else if (c->st == CS_FIRST)
                                        on_first(c);
                                else if (c->st == CS_SNI)
                                        on_sni(c);
                                else
                                        on_socks(c);
                        }
                        break;
                }
                case CS_REFUSE:
                        refuse_more(c, false);
                        break;
                case CS_BODY:
                        if (c->in_len < sizeof c->in) {
                                ssize_t n = io_read(c, W_CLIENT, c->in + c->in_len,
                                                    sizeof c->in - c->in_len);
                                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                                        c->st = CS_DEAD;
                                        return;
                                }
                                if (n > 0) {
                                        c->in_len += (size_t)n;
                                        c->up += (uint64_t)n;
                                        E.bytes += (uint64_t)n;
                                }
                        }
                        break;
                case CS_TUNNEL:
                        if (c->c2u.len == 0 && !c->ctls && !c->utls &&
                            (c->up >= SPLICE_AFTER || c->pu.r >= 0)) {
                                if (c->c2u.off > 0)
                                        c->c2u.off = 0;
                                ssize_t k = 0;
                                if (c->pu.len < SPLICE_MAX)
                                        k = spipe_in(&c->pu, c->cfd, SPLICE_MAX - c->pu.len,
                                                     &c->up);
                                if (k == -1)
                                        c->client_eof = true; /* half-close: see below */
                                else if (k < 0) {
                                        (void)spipe_out(&c->pu, c->ufd);
                                        c->st = CS_DRAIN;
                                }
                        } else {
                                if (c->c2u.len == 0)
                                        c->c2u.off = 0;
                                int k = relay_read(c, W_CLIENT, &c->c2u, &c->up);
                                if (k == -1)
                                        c->client_eof = true; /* half-close: see below */
                                else if (k < 0)
                                        c->st = CS_DRAIN;
                        }
                        break;
                default:
                        break;
                }
        }
        if (c->st == CS_DIAL && (ure & (POLLOUT | POLLERR | POLLHUP))) {
                int e = 0;
                socklen_t l = sizeof e;
                if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &l) < 0 || e) {
                        upstream_failed(c, e ? e : errno);
                        return;
                }
                c->deadline = now_ms() + EGRESS_IDLE_MS;
                if (c->proto == PR_SOCKS) {
                        if (!c->replied) {
                                uint8_t rep[10];
                                socks_reply_build(SOCKS_OK, rep);
                                client_send(c, (const char *)rep, sizeof rep);
                                c->replied = true;
                        }
                        conn_to(c, CS_TUNNEL);
                } else if (c->proto == PR_CONNECT) {
                        if (!c->replied) {
                                client_send(c, "HTTP/1.1 200 Connection established\r\n\r\n", 39);
                                c->replied = true;
                        }
                        conn_to(c, CS_TUNNEL);
                } else if (c->proto == PR_CAPTURE) {
                        conn_to(c, CS_TUNNEL); /* the client thinks it is connected already */
                } else if (c->term) {
                        tls_connect_start(c); /* the request goes once upstream is verified */
                } else {
                        send_request_head(c);
                }
                /* anything already read (a ClientHello, a SOCKS payload) goes up */
                if (c->st == CS_TUNNEL && c->in_len) {
                        memcpy(c->c2u.d, c->in, c->in_len);
                        c->c2u.off = 0;
                        c->c2u.len = c->in_len;
                        c->in_len = 0;
                }
                if (c->st == CS_TUNNEL && c->sniff)
                        tunnel_sniff(c); /* they may be all the client sends first */
                return;
        }
        if (c->st == CS_BODY)
                body_from_in(c);
        if ((c->st == CS_TUNNEL && c->u2c.len == 0 && !c->ctls && !c->utls && !c->scrub &&
             (c->down >= SPLICE_AFTER || c->pd.r >= 0)) ||
            resp_splicing(c)) {
                /* in and straight out again while both sides keep up: a
                 * pipe holds 256 KiB, and each extra pass saves a round
                 * through epoll_wait (and its epoll_ctl changes) */
                for (int pass = 0; pass < SPLICE_PASSES && (ure & (POLLIN | POLLHUP | POLLERR)) &&
                                   c->pd.len < SPLICE_MAX;
                     pass++) {
                        size_t max = SPLICE_MAX - c->pd.len;
                        if (c->st == CS_RESP && (uint64_t)c->resp_left < max)
                                max = (size_t)c->resp_left;
                        ssize_t k = spipe_in(&c->pd, c->ufd, max, &c->down);
                        if (k < 0)
                                conn_to(c, CS_DRAIN); /* the server is gone (or cut the body) */
                        else if (c->st == CS_RESP)
                                c->resp_left -= k;
                        if (k <= 0 || (c->st == CS_RESP && c->resp_left == 0))
                                break;
                        if (spipe_out(&c->pd, c->cfd) < 0) {
                                c->st = CS_DEAD;
                                break;
                        }
                        if (c->pd.len)
                                break; /* the client is behind: wait until it can take more */
                }
        } else if ((c->st == CS_TUNNEL || c->st == CS_RESP) && c->pd.len == 0 &&
                   (ure & (POLLIN | POLLHUP | POLLERR))) {
                if (c->u2c.len == 0)
                        c->u2c.off = 0;
                else if (c->u2c.len == c->hold && c->u2c.off > 0)
                        u2c_to_front(c);
                size_t start = c->u2c.off + c->u2c.len;
                int rk = relay_read(c, W_UP, &c->u2c, &c->down);
                if (c->scrub)
                        framing_clear(c, start, c->u2c.off + c->u2c.len);
                if (rk < 0) {
                        /* the server is gone: what is held goes out, a
                         * value cut short at the end scrubbed too */
                        if (c->scrub && c->hold)
                                scrub_u2c(c, c->u2c.off + c->u2c.len, true);
                        c->hold = 0;
                        if (c->utls && rk == -2)
                                c->no_notify =
                                        true; /* cut, not closed: the client must see a cut */
                        if (c->st == CS_RESP && c->resp_left != -2 && c->resp_in_head) {
                                c->st = CS_DRAIN;
                        } else
                                conn_to(c, CS_DRAIN);
                } else if (c->st == CS_RESP || c->scrub) {
                        /* the framing first (it marks chunk framing for the
                         * scrubber, and may end the response), then the
                         * scrub over the body as one stream */
                        bool resp = c->st == CS_RESP;
                        if (resp)
                                on_response_bytes(c, start);
                        else if (c->st == CS_TUNNEL && c->ws && c->scrub)
                                (void)ws_mark(c, start);
                        if (c->scrub && c->st != CS_DEAD) {
                                bool ended = resp && c->st != CS_RESP && c->st != CS_TUNNEL;
                                scrub_u2c(c, start, ended);
                                /* a response head is held whole until read: a
                                 * refusal of it (compressed) replaces it all */
                                if (c->st == CS_RESP && c->resp_in_head && c->rhead_len > c->hold)
                                        c->hold = c->rhead_len;
                        } else if (resp && c->st != CS_RESP && c->st != CS_TUNNEL)
                                c->hold = 0; /* the response ended: nothing more can match */
                }
        }
        if (c->st == CS_TUNNEL && c->sniff)
                tunnel_sniff(c);
        /* write what there is now, not only after the next poll says so */
        if (c->ufd >= 0 && c->c2u.len && c->st != CS_DIAL && c->st != CS_TLS_CONNECT &&
            c->st != CS_DEAD && !c->sniff && !c->head_parked)
                if (relay_write(c, W_UP, &c->c2u) < 0)
                        c->st = CS_DEAD;
        /* a body copied as it came (or in place): the write emptied c2u
         * while `in` still holds body bytes. They follow now: with `in`
         * full no event of the client's comes, with c2u empty none of the
         * upstream's, and the request would stall until the idle deadline
         * (a placeholder at the end of such a body never seen, its 403
         * never sent). A held beginning of a placeholder moves nothing:
         * it waits for the client's next bytes. */
        while (c->st == CS_BODY && !c->brw && c->in_len && c->c2u.len == 0 && c->req_left != 0 &&
               c->ufd >= 0 && !c->sniff && !c->head_parked) {
                size_t before = c->in_len;
                body_from_in(c);
                if (c->st != CS_BODY || c->in_len == before)
                        break;
                if (relay_write(c, W_UP, &c->c2u) < 0)
                        c->st = CS_DEAD;
        }
        size_t held = c->st == CS_RESP || c->st == CS_TUNNEL ? c->hold : 0;
        if (c->u2c.len > held && c->st != CS_DEAD) {
                size_t off0 = c->u2c.off, out = c->u2c.len - held;
                c->u2c.len = out;
                if (relay_write(c, W_CLIENT, &c->u2c) < 0)
                        c->st = CS_DEAD;
                c->u2c.off = off0 + (out - c->u2c.len);
                c->u2c.len += held;
                if (c->u2c.len == 0)
                        c->u2c.off = 0;
                else if (held && c->u2c.len == held && c->u2c.off > 0)
                        u2c_to_front(c); /* only the held bytes left: room to read */
        }
        if (c->pu.len && c->ufd >= 0 && c->st != CS_DEAD && spipe_out(&c->pu, c->ufd) < 0)
                c->st = CS_DEAD;
        if (c->pd.len && c->u2c.len == 0 && c->st != CS_DEAD && spipe_out(&c->pd, c->cfd) < 0)
                c->st = CS_DEAD;
        /* the client finished sending (socat, `nc -N`): once its bytes are
         * up, the server gets the same half-close and its answer still
         * comes back; the server's EOF then ends the tunnel */
        if (c->st == CS_TUNNEL && c->client_eof && !c->up_shut && !c->sniff && c->c2u.len == 0 &&
            c->pu.len == 0) {
                if (c->utls)
                        (void)E.cfg->tls->shutdown(c->utls); /* close_notify, not a bare FIN */
                else
                        (void)shutdown(c->ufd, SHUT_WR);
                c->up_shut = true;
        }
        /* a spliced body is complete once its last byte left the pipe */
        if (c->st == CS_RESP && !c->resp_in_head && c->resp_left == 0 && c->pd.len == 0 &&
            c->u2c.len == 0) {
                if (c->client_close)
                        conn_to(c, CS_DRAIN);
                else {
                        conn_to(c, CS_HEAD);
                        c->deadline = now_ms() + EGRESS_HEAD_MS; /* absolute */
                }
        }
        /* the request is out: the response is next (checked after the
         * writes, or the loop would wait for an event that never comes) */
        if (c->st == CS_BODY && c->req_left == 0 && c->c2u.len == 0) {
                inject_records(c, c->body_injected, true); /* the body is out whole */
                c->body_injected = 0;
                conn_to(c, CS_RESP);
        }
        if (c->st == CS_HEAD && c->in_len > 0 && c->u2c.len == 0 && c->pd.len == 0)
                on_head(c); /* the next request may already be buffered */
        if (c->st == CS_DRAIN && c->u2c.len == 0 && c->pd.len == 0)
                c->st = CS_DEAD;
        quota_check(c);
}

/* What c waits for on its client and upstream sockets (epoll events). */
static void conn_interest(const struct conn *c, uint32_t *cev, uint32_t *uev)
{
        if (c->st == CS_TLS_ACCEPT || c->st == CS_TLS_CONNECT) {
                /* a handshake: only its socket, for what it waits for */
                bool up = c->st == CS_TLS_CONNECT;
                short w = E.cfg->tls->want(up ? c->utls : c->ctls);
                uint32_t ev = w == POLLOUT ? EPOLLOUT : EPOLLIN;
                *cev = up ? 0 : ev;
                *uev = up ? ev : up_interest(c);
                return;
        }
        bool rd_client = c->st == CS_SOCKS_GREET || c->st == CS_SOCKS_REQ || c->st == CS_HEAD ||
                         c->st == CS_SNI || c->st == CS_FIRST || c->st == CS_REFUSE ||
                         (c->st == CS_BODY && c->in_len < sizeof c->in) ||
                         (c->st == CS_TUNNEL && !c->client_eof &&
                          c->c2u.off + c->c2u.len < RELAY_BUF && c->pu.len < SPLICE_MAX);
        bool rd_up = (c->st == CS_TUNNEL ||
                      (c->st == CS_RESP && (c->resp_in_head || c->resp_left != 0))) &&
                     c->u2c.off + c->u2c.len < RELAY_BUF && c->pd.len < SPLICE_MAX;
        bool wr_client =
                c->u2c.len > (c->st == CS_RESP || c->st == CS_TUNNEL ? c->hold : 0) || c->pd.len;
        bool wr_up = (c->c2u.len && !c->sniff && !c->head_parked) || c->pu.len ||
                     c->st == CS_DIAL || (c->brw && c->brw->stalled);
        *cev = (rd_client || c->want_in[W_CLIENT] ? EPOLLIN : 0) |
               (wr_client || c->want_out[W_CLIENT] ? EPOLLOUT : 0);
        *uev = (rd_up || c->want_in[W_UP] ? EPOLLIN : 0) |
               (wr_up || c->want_out[W_UP] ? EPOLLOUT : 0) | up_interest(c);
}

/* What c waits for now, registered with epoll (no call if unchanged). */
static void conn_watch(struct conn *c)
{
        uint32_t cev, uev;
        conn_interest(c, &cev, &uev);
        watch(c, W_CLIENT, c->cfd, cev);
        watch(c, W_UP, c->ufd, uev);
        watch(c, W_DNS, c->dfd, EPOLLIN);
        if (c->st == CS_TLS_ACCEPT || c->st == CS_TLS_CONNECT)
                return;
        /* bytes a TLS session already decrypted raise no event on its
         * socket: the connection is stepped again next round instead */
        bool rd_client = (cev & EPOLLIN) != 0, rd_up = (uev & EPOLLIN) != 0;
        bool cp =
                c->ctls && rd_client && (c->tls_end[W_CLIENT] || E.cfg->tls->pending(c->ctls) > 0);
        bool up = c->utls && rd_up && (c->tls_end[W_UP] || E.cfg->tls->pending(c->utls) > 0);
        if (cp || up) {
                c->rev[W_CLIENT] |= cp ? EPOLLIN : 0;
                c->rev[W_UP] |= up ? EPOLLIN : 0;
                E.again[E.n_again++] = c;
        }
}

/* Bytes c has moved or holds: changes when a step made progress. */
static uint64_t conn_progress(const struct conn *c)
{
        return c->up + c->down + c->u2c.len + c->c2u.len + c->pd.len + c->pu.len + c->in_len;
}

/*
 * A terminated connection in a bulk transfer is stepped again at once, for
 * what it would wait for, while its bytes move (a socket that is not ready
 * answers EAGAIN: no progress, the burst ends), so a transfer returns to
 * epoll — and changes its registration — once per burst, not once per
 * TLS record. At most CONN_BURST steps (~1 MiB of a bulk transfer, ~2 ms
 * here): the other connections wait no longer than that. 16 steps made a
 * bulk transfer go round epoll_wait 4x as often, with two epoll_ctl each
 * (perf stat, bench/inject).
 */
#define CONN_BURST 64
static void conn_burst(struct conn *c)
{
        for (int k = 0; k < CONN_BURST && (c->ctls || c->utls) &&
                        (c->st == CS_RESP || c->st == CS_TUNNEL || c->st == CS_BODY);
             k++) {
                uint32_t cev, uev;
                uint64_t before = conn_progress(c);
                conn_interest(c, &cev, &uev);
                if (!cev && !uev)
                        return;
                conn_step(c, (short)cev, (short)uev, 0);
                if (conn_progress(c) == before)
                        return;
        }
}

static int64_t conn_deadline(const struct conn *c)
{
        int64_t d = c->st == CS_RESOLVE ? c->dns_deadline : c->deadline;
        return c->hold && c->hold_until < d ? c->hold_until : d;
}

/* Its deadline passed: a DNS retry, or the end of the connection. */
static void conn_expire(struct conn *c, int64_t now)
{
        if (c->hold && now >= c->hold_until && c->st != CS_DEAD) {
                /* nothing completed the possible beginning of a value: it
                 * goes out (a long beginning of the value itself replaced) */
                scrub_u2c(c, c->u2c.off + c->u2c.len, true);
                c->hold = 0;
        }
        if (c->st == CS_RESOLVE && now >= c->dns_deadline)
                dns_timeout(c);
        else if (c->st != CS_RESOLVE && c->st != CS_DEAD && now >= c->deadline) {
                if (c->st == CS_DIAL || c->st == CS_TLS_CONNECT)
                        upstream_failed(c, ETIMEDOUT); /* a 504, or the SOCKS reply */
                else if (c->st == CS_TUNNEL || c->st == CS_RESP || c->st == CS_BODY ||
                         c->st == CS_DRAIN || c->st == CS_SNI || c->st == CS_TLS_ACCEPT)
                        c->st = CS_DEAD;
                else if (c->st == CS_REFUSE)
                        refuse_more(c, true); /* the wait is over: answer what came */
                else if (c->st == CS_FIRST && !c->cap_plain_ok && c->in_len == 0) {
                        char why[200];
                        snprintf(why, sizeof why,
                                 "the client sent nothing within %d s: it waits for a server "
                                 "that speaks first, which is plain TCP, and plain TCP needs a "
                                 "rule naming the port",
                                 EGRESS_FIRST_MS / 1000);
                        deny(c, why, c->rule[0] ? c->rule : NULL, 403, SOCKS_NOT_ALLOWED,
                             HINT_PLAIN);
                } else
                        deny(c, "timed out waiting for the request", NULL, 400, SOCKS_TTL_EXPIRED,
                             HINT_NONE);
        }
}

/*
 * One round steps only the connections that had an event (or were just
 * accepted), so opening the 10,000th tunnel costs what the first did; the
 * others are looked at only when the earliest deadline among them comes
 * (E.next_deadline is a lower bound: a deadline pushed later only makes
 * that look early, never late).
 */
/* (Un)watch the listeners that exist (fd -1: none). */
static int listeners_watch(const int lfd[4], int op, bool on)
{
        static const uint64_t tag[4] = {TAG_HTTP, TAG_SOCKS, TAG_CAP4, TAG_CAP6};
        for (int i = 0; i < 4; i++) {
                struct epoll_event e = {.events = on ? EPOLLIN : 0, .data.u64 = tag[i]};
                if (lfd[i] >= 0 && epoll_ctl(E.epfd, op, lfd[i], &e) < 0)
                        return -1;
        }
        return 0;
}

_Noreturn void egress_loop(const struct egress_config *cfg, const struct egress_fds *fds,
                           int events_fd, struct synth_map *map)
{
        struct epoll_event evs[256];
        bool paused = false;
        const int lfd[4] = {fds->http, fds->socks, fds->cap4, fds->cap6};

        E.cfg = cfg;
#ifdef RF_TEST_BUILD
        const char *tbm = getenv("RINGFENCE_TEST_BODY_MODE");
        test_body_mode = !tbm                     ? 0
                         : !strcmp(tbm, "buffer") ? BM_BUFFER
                         : !strcmp(tbm, "chunk")  ? BM_CHUNK
                                                  : 0;
#endif
        if (cfg->n_inject && inject_needles_new(cfg->inject, cfg->n_inject, &E.needles) < 0)
                _exit(1); /* no scrubbing, no injection: the supervisor sees egress.lost */
        E.events = events_fd;
        E.map = map;
        E.synth_fd = fds->synth_rx;
        E.map_ok = true;
        E.next_deadline = -1;
        E.epfd = epoll_create1(EPOLL_CLOEXEC);
        E.conns = calloc(cfg->max_conns ? cfg->max_conns : 1, sizeof *E.conns);
        E.active = calloc(cfg->max_conns ? cfg->max_conns : 1, sizeof *E.active);
        E.again = calloc(cfg->max_conns ? cfg->max_conns : 1, sizeof *E.again);
        struct epoll_event l3 = {.events = 0, .data.u64 = TAG_EVENTS},
                           l4 = {.events = EPOLLIN, .data.u64 = TAG_SYNTH};
        if (E.epfd < 0 || !E.conns || !E.active || !E.again ||
            listeners_watch(lfd, EPOLL_CTL_ADD, true) < 0 ||
            epoll_ctl(E.epfd, EPOLL_CTL_ADD, events_fd, &l3) < 0 ||
            (E.synth_fd >= 0 && epoll_ctl(E.epfd, EPOLL_CTL_ADD, E.synth_fd, &l4) < 0))
                _exit(1);
        /* an answer that does not come within 5 s ends the channel (event_send) */
        struct timeval tv = {.tv_sec = 5};
        events_timed = setsockopt(events_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0;
        for (;;) {
                int64_t now = now_ms();
                if (E.accept_paused && E.n_conns == 0)
                        E.accept_paused = false; /* nothing to wait for: try again */
                if (paused != E.accept_paused) {
                        paused = E.accept_paused;
                        (void)listeners_watch(lfd, EPOLL_CTL_MOD, !paused);
                }
                (void)evq_flush(); /* nothing waits in the queue while this process does */
                int64_t next = E.next_deadline;
                int timeout = E.n_again ? 0 : next < 0 ? -1 : next <= now ? 0 : (int)(next - now);
                int n = epoll_wait(E.epfd, evs, (int)ARRAY_SIZE(evs), timeout);
                if (n < 0 && errno != EINTR)
                        _exit(1);
                bool acc[4] = {false, false, false, false};
                E.n_active = 0;
                for (int i = 0; i < n; i++) {
                        uint64_t tag = evs[i].data.u64;
                        if (tag >= TAG_HTTP && tag <= TAG_CAP6 && tag != TAG_EVENTS)
                                acc[tag == TAG_HTTP    ? L_HTTP
                                    : tag == TAG_SOCKS ? L_SOCKS
                                    : tag == TAG_CAP4  ? L_CAP4
                                                       : L_CAP6] = true;
                        else if (tag == TAG_SYNTH)
                                synth_take();
                        else if (tag == TAG_EVENTS) {
                                if (evs[i].events & (EPOLLHUP | EPOLLERR))
                                        _exit(0); /* the supervisor is gone: so is the run */
                        } else {
                                struct conn *c = (struct conn *)(uintptr_t)(tag & ~(uint64_t)3);
                                c->rev[tag & 3] |= evs[i].events;
                                conn_queue(c);
                        }
                }
                for (size_t i = 0; i < E.n_again; i++)
                        conn_queue(E.again[i]); /* its rev says what to read */
                E.n_again = 0;
                for (int l = L_HTTP; l <= L_CAP6; l++)
                        if (acc[l])
                                on_accept(lfd[l], (enum listener)l);
                now = now_ms();
                /* the deadlines, when the earliest of them has come */
                if (E.next_deadline >= 0 && now >= E.next_deadline) {
                        E.next_deadline = -1;
                        for (size_t i = 0; i < E.n_conns; i++) {
                                struct conn *c = E.conns[i];
                                if (c->queued)
                                        continue; /* stepped below, and its deadline checked */
                                if (now >= conn_deadline(c)) {
                                        conn_expire(c, now);
                                        conn_queue(c);
                                } else if (E.next_deadline < 0 ||
                                           conn_deadline(c) < E.next_deadline)
                                        E.next_deadline = conn_deadline(c);
                        }
                }
                for (size_t i = 0; i < E.n_active; i++) {
                        struct conn *c = E.active[i];
                        short cre = (short)c->rev[W_CLIENT], ure = (short)c->rev[W_UP],
                              dre = (short)c->rev[W_DNS];
                        c->rev[0] = c->rev[1] = c->rev[2] = 0;
                        if (cre || ure || dre) {
                                conn_step(c, cre, ure, dre);
                                conn_burst(c);
                        }
                        conn_expire(c, now);
                        if (c->st == CS_TUNNEL || c->st == CS_RESP || c->st == CS_BODY)
                                if (cre || ure)
                                        c->deadline = now + EGRESS_IDLE_MS;
                }
                /* reap, and watch what the others wait for now */
                for (size_t i = 0; i < E.n_active; i++) {
                        struct conn *c = E.active[i];
                        c->queued = false;
                        if (c->st == CS_DEAD) {
                                struct conn *last = E.conns[--E.n_conns];
                                E.conns[c->idx] = last;
                                last->idx = c->idx;
                                conn_free(c);
                                E.accept_paused = false;
                                continue;
                        }
                        conn_watch(c);
                        int64_t d = conn_deadline(c);
                        if (E.next_deadline < 0 || d < E.next_deadline)
                                E.next_deadline = d;
                }
                if (E.n_conns == 0)
                        E.next_deadline = -1;
        }
}
