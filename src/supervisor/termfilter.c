/*
 * termfilter.c — the run → terminal filter and the reply tracker (design and
 * the list of what passes: termfilter.h).
 *
 * One parser of ECMA-48 / DEC VT syntax serves both directions: a table
 * maps (state, byte class) to (action, next state). Byte classes come after
 * a UTF-8 pre-stage, which decides whether a byte 0x80..0x9F continues a
 * well-formed character (text) or is a C1 control. What an action does
 * depends on the direction: on output it emits or drops bytes; on input it
 * only recognises replies (the input bytes are never changed).
 *
 * Invariant that makes the output side safe: the filter only ever emits
 * text bytes (never ESC, never a lone 0x80..0x9F) and whole sequences it has
 * decided to keep, each starting from the ground state. So the terminal,
 * which parses only what is emitted, is in its ground state between them,
 * whatever the run wrote.
 */
#include <string.h>

#include "supervisor/termfilter.h"

enum tf_state {
        TS_GROUND,
        TS_ESC,     /* after ESC */
        TS_ESC_INT, /* ESC and intermediates (charset designations and the like) */
        TS_CSI,     /* CSI, parameters and intermediates until the final byte */
        TS_OSC,     /* an OSC string */
        TS_OSC_ESC, /* ESC inside an OSC string: ST if a backslash follows */
        TS_STR,     /* a DCS, SOS, PM or APC string */
        TS_STR_ESC, /* ESC inside one of those */
        _TS_MAX,
};

enum tf_class {
        TC_EXEC,      /* C0 controls not listed below */
        TC_BEL,       /* 0x07 */
        TC_CAN,       /* CAN 0x18, SUB 0x1a: cancel a sequence */
        TC_ESC,       /* 0x1b */
        TC_INTER,     /* 0x20..0x2f */
        TC_PARAM,     /* 0x30..0x3f */
        TC_LBRACKET,  /* '[': ESC [ is CSI */
        TC_RBRACKET,  /* ']': ESC ] is OSC */
        TC_STRINTRO,  /* 'P' 'X' '^' '_': DCS, SOS, PM, APC; 'k': screen/tmux name */
        TC_BACKSLASH, /* '\\': ESC \ is ST */
        TC_FINAL,     /* other 0x40..0x7e */
        TC_DEL,       /* 0x7f */
        TC_TEXT,      /* 0xa0..0xff, and 0x80..0xbf continuing a UTF-8 character */
        TC_C1_CSI,    /* lone 0x9b */
        TC_C1_OSC,    /* lone 0x9d */
        TC_C1_STR,    /* lone 0x90 0x98 0x9e 0x9f */
        TC_C1_ST,     /* lone 0x9c */
        TC_C1,        /* other lone 0x80..0x9f */
        _TC_MAX,
};

enum tf_action {
        TA_PRINT,   /* text: emitted (a multi-byte character once complete) */
        TA_EXEC,    /* a C0 control: emitted (inside a sequence, too, as terminals run it) */
        TA_IGNORE,  /* this byte is dropped; nothing else changes */
        TA_DROP,    /* this byte and the sequence in progress are dropped */
        TA_BAD,     /* this byte is dropped and so will be the sequence */
        TA_ESC,     /* a new escape sequence starts (one in progress is dropped) */
        TA_COLLECT, /* held as part of the sequence */
        TA_CSI,     /* a CSI starts (ESC [ or 0x9b) */
        TA_OSC,     /* an OSC starts (ESC ] or 0x9d) */
        TA_STR,     /* a DCS, SOS, PM or APC string starts */
        TA_PUT,     /* a byte of a string */
        TA_STR_ESC, /* ESC inside a string */
        TA_ESC_END, /* the final byte of an ESC sequence: decide */
        TA_CSI_END, /* the final byte of a CSI: decide */
        TA_STR_END, /* a string's terminator (BEL for OSC, ST): decide */
        TA_REDO,    /* ESC inside a string not followed by '\': the string ended;
                     * the byte is read again after that ESC */
};

struct tf_entry {
        uint8_t action, next;
};

#define E(a, s)                                                                                    \
        {                                                                                          \
                TA_##a, TS_##s                                                                     \
        }
/* C1 controls act from any state outside strings, as in DEC's parser */
#define C1_ANYWHERE                                                                                \
        [TC_C1_CSI] = E(CSI, CSI), [TC_C1_OSC] = E(OSC, OSC), [TC_C1_STR] = E(STR, STR),           \
        [TC_C1_ST] = E(DROP, GROUND), [TC_C1] = E(DROP, GROUND)

static const struct tf_entry table[_TS_MAX][_TC_MAX] = {
        [TS_GROUND] = {[TC_EXEC] = E(EXEC, GROUND),
                       [TC_BEL] = E(EXEC, GROUND),
                       [TC_CAN] = E(EXEC, GROUND),
                       [TC_ESC] = E(ESC, ESC),
                       [TC_INTER] = E(PRINT, GROUND),
                       [TC_PARAM] = E(PRINT, GROUND),
                       [TC_LBRACKET] = E(PRINT, GROUND),
                       [TC_RBRACKET] = E(PRINT, GROUND),
                       [TC_STRINTRO] = E(PRINT, GROUND),
                       [TC_BACKSLASH] = E(PRINT, GROUND),
                       [TC_FINAL] = E(PRINT, GROUND),
                       [TC_DEL] = E(PRINT, GROUND),
                       [TC_TEXT] = E(PRINT, GROUND),
                       C1_ANYWHERE},
        [TS_ESC] = {[TC_EXEC] = E(EXEC, ESC),
                    [TC_BEL] = E(EXEC, ESC),
                    [TC_CAN] = E(DROP, GROUND),
                    [TC_ESC] = E(ESC, ESC),
                    [TC_INTER] = E(COLLECT, ESC_INT),
                    [TC_PARAM] = E(ESC_END, GROUND), /* ESC 7, ESC 8, ESC =, ESC > */
                    [TC_LBRACKET] = E(CSI, CSI),
                    [TC_RBRACKET] = E(OSC, OSC),
                    [TC_STRINTRO] = E(STR, STR),
                    [TC_BACKSLASH] = E(DROP, GROUND), /* a stray ST */
                    [TC_FINAL] = E(ESC_END, GROUND),
                    [TC_DEL] = E(IGNORE, ESC),
                    [TC_TEXT] = E(DROP, GROUND),
                    C1_ANYWHERE},
        [TS_ESC_INT] = {[TC_EXEC] = E(EXEC, ESC_INT),
                        [TC_BEL] = E(EXEC, ESC_INT),
                        [TC_CAN] = E(DROP, GROUND),
                        [TC_ESC] = E(ESC, ESC),
                        [TC_INTER] = E(COLLECT, ESC_INT),
                        [TC_PARAM] = E(ESC_END, GROUND),
                        [TC_LBRACKET] = E(ESC_END, GROUND),
                        [TC_RBRACKET] = E(ESC_END, GROUND),
                        [TC_STRINTRO] = E(ESC_END, GROUND),
                        [TC_BACKSLASH] = E(ESC_END, GROUND),
                        [TC_FINAL] = E(ESC_END, GROUND),
                        [TC_DEL] = E(IGNORE, ESC_INT),
                        [TC_TEXT] = E(DROP, GROUND),
                        C1_ANYWHERE},
        [TS_CSI] = {[TC_EXEC] = E(EXEC, CSI),
                    [TC_BEL] = E(EXEC, CSI),
                    [TC_CAN] = E(DROP, GROUND),
                    [TC_ESC] = E(ESC, ESC),
                    [TC_INTER] = E(COLLECT, CSI),
                    [TC_PARAM] = E(COLLECT, CSI),
                    [TC_LBRACKET] = E(CSI_END, GROUND),
                    [TC_RBRACKET] = E(CSI_END, GROUND),
                    [TC_STRINTRO] = E(CSI_END, GROUND),
                    [TC_BACKSLASH] = E(CSI_END, GROUND),
                    [TC_FINAL] = E(CSI_END, GROUND),
                    [TC_DEL] = E(IGNORE, CSI),
                    [TC_TEXT] = E(BAD, CSI),
                    C1_ANYWHERE},
        [TS_OSC] = {[TC_EXEC] = E(IGNORE, OSC),
                    [TC_BEL] = E(STR_END, GROUND),
                    [TC_CAN] = E(DROP, GROUND),
                    [TC_ESC] = E(STR_ESC, OSC_ESC),
                    [TC_INTER] = E(PUT, OSC),
                    [TC_PARAM] = E(PUT, OSC),
                    [TC_LBRACKET] = E(PUT, OSC),
                    [TC_RBRACKET] = E(PUT, OSC),
                    [TC_STRINTRO] = E(PUT, OSC),
                    [TC_BACKSLASH] = E(PUT, OSC),
                    [TC_FINAL] = E(PUT, OSC),
                    [TC_DEL] = E(PUT, OSC),
                    [TC_TEXT] = E(PUT, OSC),
                    [TC_C1_CSI] = E(PUT, OSC),
                    [TC_C1_OSC] = E(PUT, OSC),
                    [TC_C1_STR] = E(PUT, OSC),
                    [TC_C1_ST] = E(STR_END, GROUND),
                    [TC_C1] = E(PUT, OSC)},
        [TS_OSC_ESC] = {[TC_EXEC] = E(REDO, ESC),
                        [TC_BEL] = E(REDO, ESC),
                        [TC_CAN] = E(REDO, ESC),
                        [TC_ESC] = E(REDO, ESC),
                        [TC_INTER] = E(REDO, ESC),
                        [TC_PARAM] = E(REDO, ESC),
                        [TC_LBRACKET] = E(REDO, ESC),
                        [TC_RBRACKET] = E(REDO, ESC),
                        [TC_STRINTRO] = E(REDO, ESC),
                        [TC_BACKSLASH] = E(STR_END, GROUND),
                        [TC_FINAL] = E(REDO, ESC),
                        [TC_DEL] = E(REDO, ESC),
                        [TC_TEXT] = E(REDO, ESC),
                        [TC_C1_CSI] = E(REDO, ESC),
                        [TC_C1_OSC] = E(REDO, ESC),
                        [TC_C1_STR] = E(REDO, ESC),
                        [TC_C1_ST] = E(REDO, ESC),
                        [TC_C1] = E(REDO, ESC)},
        [TS_STR] = {[TC_EXEC] = E(PUT, STR),
                    [TC_BEL] = E(PUT, STR),
                    [TC_CAN] = E(DROP, GROUND),
                    [TC_ESC] = E(STR_ESC, STR_ESC),
                    [TC_INTER] = E(PUT, STR),
                    [TC_PARAM] = E(PUT, STR),
                    [TC_LBRACKET] = E(PUT, STR),
                    [TC_RBRACKET] = E(PUT, STR),
                    [TC_STRINTRO] = E(PUT, STR),
                    [TC_BACKSLASH] = E(PUT, STR),
                    [TC_FINAL] = E(PUT, STR),
                    [TC_DEL] = E(PUT, STR),
                    [TC_TEXT] = E(PUT, STR),
                    [TC_C1_CSI] = E(PUT, STR),
                    [TC_C1_OSC] = E(PUT, STR),
                    [TC_C1_STR] = E(PUT, STR),
                    [TC_C1_ST] = E(STR_END, GROUND),
                    [TC_C1] = E(PUT, STR)},
        [TS_STR_ESC] = {[TC_EXEC] = E(REDO, ESC),
                        [TC_BEL] = E(REDO, ESC),
                        [TC_CAN] = E(REDO, ESC),
                        [TC_ESC] = E(REDO, ESC),
                        [TC_INTER] = E(REDO, ESC),
                        [TC_PARAM] = E(REDO, ESC),
                        [TC_LBRACKET] = E(REDO, ESC),
                        [TC_RBRACKET] = E(REDO, ESC),
                        [TC_STRINTRO] = E(REDO, ESC),
                        [TC_BACKSLASH] = E(STR_END, GROUND),
                        [TC_FINAL] = E(REDO, ESC),
                        [TC_DEL] = E(REDO, ESC),
                        [TC_TEXT] = E(REDO, ESC),
                        [TC_C1_CSI] = E(REDO, ESC),
                        [TC_C1_OSC] = E(REDO, ESC),
                        [TC_C1_STR] = E(REDO, ESC),
                        [TC_C1_ST] = E(REDO, ESC),
                        [TC_C1] = E(REDO, ESC)},
};
#undef C1_ANYWHERE
#undef E

/* "1x;?" after ESC ]: the longest OSC head that is still a query */
#define OSC_QUERY_LEN 4
/* a number in a parameter larger than this makes the sequence malformed */
#define PARAM_VALUE_MAX 65535
#define PARAMS_MAX      4

/* ---- byte classes, after the UTF-8 pre-stage ------------------------------ */

static enum tf_class class_ascii(unsigned char b)
{
        if (b == 0x07)
                return TC_BEL;
        if (b == 0x18 || b == 0x1a)
                return TC_CAN;
        if (b == 0x1b)
                return TC_ESC;
        if (b < 0x20)
                return TC_EXEC;
        if (b < 0x30)
                return TC_INTER;
        if (b < 0x40)
                return TC_PARAM;
        switch (b) {
        case '[':
                return TC_LBRACKET;
        case ']':
                return TC_RBRACKET;
        case 'P':
        case 'X':
        case '^':
        case '_':
        case 'k': /* ESC k NAME ST: screen's and tmux's window name */
                return TC_STRINTRO;
        case '\\':
                return TC_BACKSLASH;
        case 0x7f:
                return TC_DEL;
        default:
                return TC_FINAL;
        }
}

static enum tf_class class_c1(unsigned char b)
{
        switch (b) {
        case 0x9b:
                return TC_C1_CSI;
        case 0x9d:
                return TC_C1_OSC;
        case 0x90:
        case 0x98:
        case 0x9e:
        case 0x9f:
                return TC_C1_STR;
        case 0x9c:
                return TC_C1_ST;
        default:
                return TC_C1;
        }
}

/* A byte not continuing a character: its class; a lead byte arms the
 * decoder with what must follow (Unicode 15, table 3-7). */
static enum tf_class class_fresh(struct termfilter_parser *p, unsigned char b)
{
        if (b < 0x80)
                return class_ascii(b);
        if (b < 0xa0)
                return class_c1(b);
        p->utf8_c1 = b == 0xc2;
        p->utf8_lo = 0x80;
        p->utf8_hi = 0xbf;
        if (b >= 0xc2 && b <= 0xdf)
                p->utf8_need = 1;
        else if (b >= 0xe0 && b <= 0xef) {
                p->utf8_need = 2;
                if (b == 0xe0)
                        p->utf8_lo = 0xa0;
                else if (b == 0xed)
                        p->utf8_hi = 0x9f;
        } else if (b >= 0xf0 && b <= 0xf4) {
                p->utf8_need = 3;
                if (b == 0xf0)
                        p->utf8_lo = 0x90;
                else if (b == 0xf4)
                        p->utf8_hi = 0x8f;
        }
        return TC_TEXT;
}

/* ---- output helpers ------------------------------------------------------- */

struct sink {
        unsigned char *o; /* NULL: the input direction, nothing is emitted */
        size_t n;
};

static void emit(struct sink *s, const unsigned char *b, size_t n)
{
        if (s->o) {
                memcpy(s->o + s->n, b, n);
                s->n += n;
        }
}

/* A held character turned out malformed: what of it is safe to show. */
static void utf8_flush_malformed(struct termfilter_parser *p, struct sink *s)
{
        for (size_t i = 0; i < p->utf8_len; i++)
                if (p->utf8[i] >= 0xa0)
                        emit(s, &p->utf8[i], 1);
        p->utf8_len = 0;
}

static void print_text(struct termfilter_parser *p, struct sink *s, unsigned char b, bool cont)
{
        if (cont) {
                if (p->utf8_len == 0) {
                        /* its lead byte was not passed on as text */
                        if (b >= 0xa0)
                                emit(s, &b, 1);
                        return;
                }
                p->utf8[p->utf8_len++] = b;
                if (p->utf8_need == 0) {
                        emit(s, p->utf8, p->utf8_len);
                        p->utf8_len = 0;
                }
        } else if (p->utf8_need) {
                p->utf8[0] = b; /* a lead byte: held until the character is whole */
                p->utf8_len = 1;
        } else
                emit(s, &b, 1);
}

static void seq_add(struct termfilter_parser *p, unsigned char b)
{
        if (p->len < TERMFILTER_SEQ_MAX)
                p->seq[p->len++] = b;
        else
                p->bad = true; /* overlong: dropped to its end */
}

static void seq_start(struct termfilter_parser *p)
{
        p->len = 0;
        p->bad = false;
}

/* ---- CSI anatomy ------------------------------------------------------------ */

struct csi {
        char prefix; /* '<' '=' '>' '?' or 0 */
        char inter;  /* the one intermediate byte, or 0 */
        char final;
        unsigned n; /* numeric parameters parsed */
        unsigned v[PARAMS_MAX];
        bool numeric; /* parameters are numbers separated by ';' (n of them) */
};

/* Split a held CSI (ESC [ or 0x9b … final). False when it is malformed: a
 * prefix not first, parameters after an intermediate, or more than one
 * intermediate. */
static bool csi_parse(const unsigned char *seq, size_t len, struct csi *c)
{
        size_t i = seq[0] == 0x1b ? 2 : 1, end = len - 1;
        bool digits = false;

        *c = (struct csi){.final = (char)seq[end], .numeric = true};
        if (i < end && seq[i] >= '<' && seq[i] <= '?')
                c->prefix = (char)seq[i++];
        for (; i < end && seq[i] >= 0x30 && seq[i] <= 0x3f; i++) {
                unsigned char b = seq[i];
                if (b >= '0' && b <= '9') {
                        if (!digits) {
                                if (c->n == PARAMS_MAX)
                                        c->numeric = false;
                                else
                                        c->v[c->n++] = 0;
                                digits = true;
                        }
                        if (c->numeric) {
                                c->v[c->n - 1] = c->v[c->n - 1] * 10 + (unsigned)(b - '0');
                                if (c->v[c->n - 1] > PARAM_VALUE_MAX)
                                        c->numeric = false;
                        }
                } else if (b == ';') {
                        if (!digits) { /* an empty parameter is 0 */
                                if (c->n == PARAMS_MAX)
                                        c->numeric = false;
                                else
                                        c->v[c->n++] = 0;
                        }
                        digits = false;
                } else if (b == ':')
                        c->numeric = false; /* sub-parameters (SGR colours): fine, not numeric */
                else
                        return false; /* '<' '=' '>' '?' after the first byte */
        }
        if (i < end && seq[i] >= 0x20 && seq[i] <= 0x2f)
                c->inter = (char)seq[i++];
        return i == end;
}

/* ---- output decisions ------------------------------------------------------ */

enum csi_verdict { CV_KEEP, CV_DROP, CV_DA, CV_DSR, CV_DECRQM, CV_KITTY, CV_WINOPS };

/* CSI forms that are not simply kept: (prefix, intermediate, final) */
static const struct csi_rule {
        char prefix, inter, final;
        enum csi_verdict verdict;
} csi_rules[] = {
        {0, 0, 'c', CV_DA},         /* DA1 */
        {'>', 0, 'c', CV_DA},       /* DA2 */
        {'=', 0, 'c', CV_DROP},     /* DA3: the reply is a DCS */
        {'?', 0, 'c', CV_DROP},     /* not a query anywhere it matters */
        {'<', 0, 'c', CV_DROP},     /* ditto */
        {0, 0, 'n', CV_DSR},        /* DSR 5, CPR 6; others dropped */
        {'?', 0, 'n', CV_DSR},      /* DECXCPR ? 6; others (printer, keyboard, …) dropped */
        {0, 0, 'x', CV_DROP},       /* DECREQTPARM */
        {0, '$', 'p', CV_DECRQM},   /* DECRQM, ANSI modes */
        {'?', '$', 'p', CV_DECRQM}, /* DECRQM, DEC private modes */
        {0, 0, 't', CV_WINOPS},     /* window ops: only the size reports pass */
        {'>', 0, 'q', CV_DROP},     /* XTVERSION: the reply is a DCS */
        {'?', 0, 'S', CV_DROP},     /* XTSMGRAPHICS */
        {0, '#', '|', CV_DROP},     /* XTREPORTSGR */
        {0, '\'', '|', CV_DROP},    /* DECRQLP */
        {0, '$', 'u', CV_DROP},     /* DECRQTSR: the reply is a DCS */
        {'?', 0, 'u', CV_KITTY},    /* kitty keyboard flags query */
        {0, '$', 'w', CV_DROP},     /* DECRQPSR: the reply is a DCS */
        {0, '*', 'y', CV_DROP},     /* DECRQCRA: a checksum of what is on screen */
};

/* Count a query if it may pass; false: drop it. Only 7-bit forms pass
 * (a UTF-8 terminal would not answer an 8-bit one). */
static bool query_pass(struct termfilter *f, const struct termfilter_parser *p,
                       enum termfilter_query q)
{
        if (!f->track || p->seq[0] != 0x1b || f->pending[q] >= TERMFILTER_QUERIES_MAX)
                return false;
        f->pending[q]++;
        return true;
}

static bool csi_keep(struct termfilter *f, const struct termfilter_parser *p)
{
        struct csi c;

        /* 8-bit CSI: a UTF-8 terminal does not take 0x9b as one, and a
         * byte 0x80..0x9f outside a character is never passed on */
        if (p->seq[0] != 0x1b || !csi_parse(p->seq, p->len, &c))
                return false;
        enum csi_verdict v = CV_KEEP;
        for (size_t i = 0; i < sizeof csi_rules / sizeof csi_rules[0]; i++)
                if (csi_rules[i].prefix == c.prefix && csi_rules[i].inter == c.inter &&
                    csi_rules[i].final == c.final) {
                        v = csi_rules[i].verdict;
                        break;
                }
        switch (v) {
        case CV_KEEP:
                return true;
        case CV_DA:
                return c.numeric && (c.n == 0 || (c.n == 1 && c.v[0] == 0)) &&
                       query_pass(f, p, TFQ_DA);
        case CV_DSR:
                if (!c.numeric || c.n != 1)
                        return false;
                if (c.v[0] == 6)
                        return query_pass(f, p, TFQ_CPR);
                return c.v[0] == 5 && !c.prefix && query_pass(f, p, TFQ_DSR);
        case CV_DECRQM:
                return c.numeric && c.n == 1 && query_pass(f, p, TFQ_DECRQM);
        case CV_KITTY:
                return c.numeric && c.n == 0 && query_pass(f, p, TFQ_KITTY);
        case CV_WINOPS:
                /* 14 t, 14;2 t: text area / window in pixels; 16 t cell size;
                 * 18 t text area in characters. Everything else moves,
                 * resizes or (de)iconifies the window, or reports or
                 * stacks its title. */
                return c.numeric &&
                       ((c.n == 1 && (c.v[0] == 14 || c.v[0] == 16 || c.v[0] == 18)) ||
                        (c.n == 2 && c.v[0] == 14 && c.v[1] <= 2)) &&
                       query_pass(f, p, TFQ_WINSIZE);
        case CV_DROP:
        default:
                return false;
        }
}

static bool esc_keep(const struct termfilter_parser *p)
{
        unsigned char final = p->seq[p->len - 1];
        if (p->len == 2 && final == 'Z')
                return false; /* DECID: a query, answered like DA1 */
        if (p->len == 3 && p->seq[1] == ' ' && final == 'G')
                return false; /* S8C1T: the terminal would answer in 8-bit form */
        return true;
}

/* An OSC's head (after ESC ] or 0x9d) is a colour query: "1x;?" */
static bool osc_is_color_query(const struct termfilter_parser *p)
{
        size_t i = p->seq[0] == 0x1b ? 2 : 1;
        const unsigned char *h = p->seq + i;
        return p->len - i == OSC_QUERY_LEN && h[0] == '1' && h[1] >= '0' && h[1] <= '2' &&
               h[2] == ';' && h[3] == '?';
}

/* ---- input decisions: replies ----------------------------------------------- */

static void answered(struct termfilter *f, enum termfilter_query q)
{
        if (f->pending[q] > 0)
                f->pending[q]--;
}

static void csi_reply(struct termfilter *f, const struct termfilter_parser *p)
{
        struct csi c;

        if (p->bad || !csi_parse(p->seq, p->len, &c))
                return;
        if (c.final == 'c' && !c.inter && (c.prefix == '?' || c.prefix == '>'))
                answered(f, TFQ_DA);
        else if (c.final == 'n' && !c.inter && !c.prefix && c.numeric && c.n == 1 &&
                 (c.v[0] == 0 || c.v[0] == 3))
                answered(f, TFQ_DSR);
        else if (c.final == 'R' && !c.inter && (!c.prefix || c.prefix == '?') && c.numeric &&
                 c.n >= 2)
                answered(f, TFQ_CPR);
        else if (c.final == 'y' && c.inter == '$')
                answered(f, TFQ_DECRQM);
        else if (c.final == 'u' && !c.inter && c.prefix == '?')
                answered(f, TFQ_KITTY);
        else if (c.final == 't' && !c.inter && !c.prefix && c.numeric && c.n == 3 &&
                 (c.v[0] == 4 || c.v[0] == 6 || c.v[0] == 8))
                answered(f, TFQ_WINSIZE);
}

static void osc_reply(struct termfilter *f, const struct termfilter_parser *p)
{
        size_t i = p->seq[0] == 0x1b ? 2 : 1;
        const unsigned char *h = p->seq + i;
        if (p->len - i >= 3 && h[0] == '1' && h[1] >= '0' && h[1] <= '2' && h[2] == ';')
                answered(f, TFQ_COLOR);
}

/* ---- the engine --------------------------------------------------------------- */

static void step(struct termfilter *f, struct termfilter_parser *p, struct sink *s, unsigned char b)
{
        bool output = s->o != NULL, cont = false;
        enum tf_class cls;

        if (p->utf8_need && b >= p->utf8_lo && b <= p->utf8_hi) {
                p->utf8_need--;
                p->utf8_lo = 0x80;
                p->utf8_hi = 0xbf;
                if (p->utf8_c1 && b < 0xa0) {
                        /* U+0080..U+009F: a C1 control encoded in UTF-8,
                         * which some terminals (xterm) act on as on the
                         * 8-bit byte: handled as that byte, the C2 with it */
                        p->utf8_c1 = false;
                        p->utf8_len = 0;
                        cls = class_c1(b);
                } else {
                        cls = TC_TEXT;
                        cont = true;
                }
        } else {
                if (p->utf8_need) { /* a character cut short */
                        p->utf8_need = 0;
                        utf8_flush_malformed(p, s);
                }
                cls = class_fresh(p, b);
        }

        for (;;) {
                enum tf_state st = (enum tf_state)p->state;
                struct tf_entry e = table[st][cls];
                p->state = e.next;
                switch ((enum tf_action)e.action) {
                case TA_PRINT:
                        if (output)
                                print_text(p, s, b, cont);
                        return;
                case TA_EXEC:
                        emit(s, &b, 1);
                        return;
                case TA_IGNORE:
                        return;
                case TA_DROP:
                        f->dropped += output;
                        p->len = 0;
                        return;
                case TA_BAD:
                        p->bad = true;
                        return;
                case TA_ESC:
                        if (st != TS_GROUND)
                                f->dropped += output; /* the sequence it interrupts */
                        seq_start(p);
                        seq_add(p, b);
                        return;
                case TA_COLLECT:
                        seq_add(p, b);
                        return;
                case TA_CSI:
                case TA_OSC:
                        if (b >= 0x80) { /* a C1 introducer: anything before it is gone */
                                if (st != TS_GROUND)
                                        f->dropped += output;
                                seq_start(p);
                        }
                        seq_add(p, b);
                        return;
                case TA_STR:
                        seq_start(p);
                        p->bad = true; /* these strings are never kept */
                        return;
                case TA_PUT:
                        /* an OSC's head is held while it may be a colour query
                         * (output) or name a colour reply (input) */
                        if (st == TS_OSC && !p->bad) {
                                size_t head = p->len - (p->seq[0] == 0x1b ? 2 : 1);
                                if (head < OSC_QUERY_LEN)
                                        seq_add(p, b);
                                else if (output)
                                        p->bad = true;
                        }
                        return;
                case TA_STR_ESC:
                        return;
                case TA_ESC_END:
                        seq_add(p, b);
                        if (output && !p->bad && esc_keep(p))
                                emit(s, p->seq, p->len);
                        else
                                f->dropped += output;
                        p->len = 0;
                        return;
                case TA_CSI_END:
                        seq_add(p, b);
                        if (!output)
                                csi_reply(f, p);
                        else if (!p->bad && csi_keep(f, p))
                                emit(s, p->seq, p->len);
                        else
                                f->dropped++;
                        p->len = 0;
                        return;
                case TA_STR_END:
                        if (st == TS_OSC || st == TS_OSC_ESC) {
                                if (!output) {
                                        if (!p->bad)
                                                osc_reply(f, p);
                                } else if (!p->bad && b != 0x9c && osc_is_color_query(p) &&
                                           query_pass(f, p, TFQ_COLOR)) {
                                        /* the terminator as it came: BEL or ESC \ */
                                        static const unsigned char esc = 0x1b;
                                        emit(s, p->seq, p->len);
                                        if (st == TS_OSC_ESC)
                                                emit(s, &esc, 1);
                                        emit(s, &b, 1);
                                } else
                                        f->dropped++;
                        } else
                                f->dropped += output;
                        p->len = 0;
                        return;
                case TA_REDO:
                        /* the string ended at that ESC (dropped); the ESC
                         * starts a sequence of which b is the next byte */
                        f->dropped += output;
                        seq_start(p);
                        seq_add(p, 0x1b);
                        continue; /* p->state is TS_ESC now: read b again */
                default:
                        return;
                }
        }
}

void termfilter_init(struct termfilter *f, bool track_queries)
{
        memset(f, 0, sizeof *f);
        f->out.state = f->in.state = TS_GROUND;
        f->track = track_queries;
}

/* The table's shortcut for the common case: in the ground state with no
 * character pending, every byte below 0x80 but ESC is text or a C0 control
 * that passes unchanged and leaves the state as it is. */
static size_t plain_run(const struct termfilter_parser *p, const unsigned char *b, size_t n)
{
        size_t j = 0;
        if (p->state != TS_GROUND || p->utf8_need)
                return 0;
        while (j < n && b[j] < 0x80 && b[j] != 0x1b)
                j++;
        return j;
}

size_t termfilter_output(struct termfilter *f, const void *in, size_t n, void *out)
{
        struct sink s = {.o = out};
        const unsigned char *b = in;

        for (size_t i = 0; i < n;) {
                size_t k = plain_run(&f->out, b + i, n - i);
                if (k) {
                        emit(&s, b + i, k);
                        i += k;
                } else
                        step(f, &f->out, &s, b[i++]);
        }
        return s.n;
}

void termfilter_input(struct termfilter *f, const void *in, size_t n)
{
        struct sink s = {0};
        const unsigned char *b = in;

        for (size_t i = 0; i < n;) {
                size_t k = plain_run(&f->in, b + i, n - i);
                if (k)
                        i += k;
                else
                        step(f, &f->in, &s, b[i++]);
        }
}

unsigned termfilter_pending(const struct termfilter *f)
{
        unsigned total = 0;
        for (size_t i = 0; i < _TFQ_MAX; i++)
                total += f->pending[i];
        return total;
}
