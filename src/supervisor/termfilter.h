/*
 * termfilter.h — what a run's terminal output may do to the operator's
 * terminal, and which of the terminal's replies the run is still owed.
 *
 * A run's output reaches the operator's terminal emulator, which does more
 * than draw: OSC 52 sets the host clipboard, OSC 0/1/2 the window title,
 * OSC 8 makes hyperlinks, DCS/APC/PM/SOS strings drive terminal-specific
 * features (kitty graphics, tmux passthrough, XTGETTCAP/DECRQSS queries), and
 * queries make the terminal *type* a reply into its input, where a reply
 * that arrives after the run has ended is read by the next host program
 * (the operator's shell).
 *
 * By default the supervisor passes the run → terminal stream through
 * termfilter_output, a streaming parser of ECMA-48 / DEC VT syntax written
 * as a table (state × byte class → action, next state). It keeps what
 * full-screen programs need: text, C0 controls, ESC sequences (charset
 * designations, keypad modes, save/restore cursor, RIS), and CSI sequences
 * (SGR, cursor and screen control, DEC private modes: alternate screen,
 * bracketed paste, mouse and focus reporting, the kitty keyboard protocol).
 * It drops:
 *
 *   - every OSC string except the colour queries OSC 10/11/12 ; ? ;
 *   - every DCS, SOS, PM and APC string (DECRQSS and XTGETTCAP queries too),
 *     and ESC k … ST (screen's and tmux's window name), parsed as a string;
 *   - CSI t window operations (title reports 20/21, title stack 22/23,
 *     resize, move, iconify), except the size reports 14/16/18;
 *   - queries whose replies are not tracked: DA3 (CSI = c), DECREQTPARM
 *     (CSI x), XTVERSION (CSI > q), XTSMGRAPHICS (CSI ? S), XTREPORTSGR,
 *     DECRQTSR, DECRQPSR, DECRQCRA (a checksum of screen contents the run
 *     did not write), DECRQLP, the DSRs other than 5/6, DECID (ESC Z);
 *     ESC SP G (which would switch the terminal's replies to 8-bit form);
 *   - malformed or overlong sequences (over TERMFILTER_SEQ_MAX bytes);
 *   - 8-bit C1 controls. The operator's terminal is taken to decode UTF-8:
 *     a byte 0x80..0x9F that continues a well-formed UTF-8 character (per
 *     Unicode table 3-7) is text; any other such byte is a C1 control and
 *     is dropped with the sequence it introduces, parsed as its 7-bit form
 *     would be (0x9B CSI to its final byte; 0x9D OSC, 0x90/0x98/0x9E/0x9F
 *     strings to their terminator, 0x9C ST included). Text reaches the
 *     terminal whole: a multi-byte character is held until complete, and
 *     of a malformed one the bytes 0x80..0x9F are dropped. So a byte
 *     0x80..0x9F is passed on only inside a well-formed character.
 *     U+0080..U+009F, the C1 controls encoded in UTF-8 (C2 80..C2 9F),
 *     which xterm acts on, are handled as the 8-bit bytes. (A
 *     terminal that takes 8-bit C1 controls instead of decoding UTF-8 is
 *     not supported: it could act on such a byte inside a character.)
 *
 * Read-only queries that TUIs rely on at start pass and are counted: DA1
 * (CSI c, CSI 0 c), DA2 (CSI > c), DSR (CSI 5 n), cursor position (CSI 6 n,
 * CSI ? 6 n), DECRQM (CSI [?] Pn $ p), the kitty keyboard query (CSI ? u),
 * text-area size reports (CSI 14/16/18 t) and OSC 10/11/12 ; ? (agent TUIs
 * ask for the background colour). termfilter_input observes the operator →
 * run stream (never changes it) and counts the replies; when the run ends,
 * the supervisor reads and drops the operator's input while
 * termfilter_pending() is non-zero, for about a second at most. At most
 * TERMFILTER_QUERIES_MAX of a kind are outstanding; more are dropped.
 *
 * Sequences split across reads are handled (the state carries over); only
 * an escape sequence's first TERMFILTER_SEQ_MAX bytes and an incomplete
 * UTF-8 character are ever held. A string (OSC, DCS, ...) is never held:
 * the filter consumes it to its terminator (BEL for OSC, ST, or a CAN/SUB
 * that cancels it, or an ESC that starts the next sequence), as a terminal
 * would. A sequence still unfinished when the run ends is dropped.
 *
 * `--raw-terminal` (an explicit operator choice per run) disables the
 * filter. Pure code: no allocation, no I/O, no logging; fuzzed by
 * tests/fuzz/fuzz_termfilter.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* bytes of one escape sequence held while it is decided (CSI parameters,
 * an OSC's first bytes); a longer sequence is dropped to its end */
#define TERMFILTER_SEQ_MAX 256
/* outstanding queries of one kind; more of that kind are dropped */
#define TERMFILTER_QUERIES_MAX 32
/* once the run has ended: how long the supervisor waits for owed replies */
#define TERMFILTER_REPLY_WAIT_MS 1000

/* the kinds of tracked queries, by the form of their reply */
enum termfilter_query {
        TFQ_DA,      /* CSI c, CSI > c          → CSI ? … c, CSI > … c */
        TFQ_DSR,     /* CSI 5 n                 → CSI 0 n (or 3 n) */
        TFQ_CPR,     /* CSI 6 n, CSI ? 6 n      → CSI [?] r ; c R */
        TFQ_DECRQM,  /* CSI [?] Pn $ p          → CSI [?] Pn ; Ps $ y */
        TFQ_KITTY,   /* CSI ? u                 → CSI ? flags u */
        TFQ_WINSIZE, /* CSI 14/16/18 t          → CSI 4/6/8 ; h ; w t */
        TFQ_COLOR,   /* OSC 10/11/12 ; ?        → OSC 1x ; rgb:… BEL/ST */
        _TFQ_MAX,
        _TFQ_INVALID = -22,
};

/* one direction's parser state; treat as opaque */
struct termfilter_parser {
        uint8_t state;
        uint8_t utf8_need;        /* continuation bytes still expected */
        uint8_t utf8_lo, utf8_hi; /* the range the next one must be in */
        uint8_t utf8_len;         /* bytes in utf8[] (output, ground only) */
        bool utf8_c1;             /* the pending character began with C2 */
        bool bad;                 /* the sequence in progress is dropped */
        uint16_t len;             /* bytes in seq[] */
        unsigned char utf8[4];    /* an incomplete character, held */
        unsigned char seq[TERMFILTER_SEQ_MAX];
};

/*
 * The filter of one output stream (and, for a pty, its input). Public so it
 * can be embedded; no pointers, nothing to free. Copies of the run's output
 * are held in out.seq/out.utf8: a caller that wipes what a run printed
 * wipes the struct too.
 */
struct termfilter {
        struct termfilter_parser out, in;
        bool track; /* queries pass and are counted (someone reads replies) */
        unsigned pending[_TFQ_MAX];
        uint64_t dropped; /* sequences dropped so far */
};

/*
 * termfilter_init — a filter in its initial state. `track_queries`: the
 * stream's replies come back through termfilter_input (a pty whose operator
 * side is a terminal); when false every query is dropped, since a reply
 * would reach whoever reads the terminal (not the run).
 */
void termfilter_init(struct termfilter *f, bool track_queries);

/*
 * termfilter_output — filter `n` bytes the run wrote (n may be 0) into
 * `out`, which has room for n + TERMFILTER_SEQ_MAX bytes. Returns the number
 * of bytes written to `out`. Never fails; `in` and `out` must not overlap.
 */
size_t termfilter_output(struct termfilter *f, const void *in, size_t n, void *out);

/*
 * termfilter_input — observe `n` bytes going from the operator's terminal to
 * the run: every complete reply to a tracked query that is outstanding
 * counts it answered. The bytes themselves are passed on (or dropped) by the
 * caller, unchanged. Never fails.
 */
void termfilter_input(struct termfilter *f, const void *in, size_t n);

/* termfilter_pending — queries passed to the terminal and not yet answered */
unsigned termfilter_pending(const struct termfilter *f);
