/*
 * larkfiles: Lark's own grammar files against python3-lark (larkfiles.h).
 */
#include "larkfiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/hash.h"
#include "../../base/utf8.h"
#include "../../grammar/load.h"

#define LARK_DIR "/usr/lib/python3/dist-packages/lark/grammars/"
#define DOC_DIR "/usr/share/doc/python-lark-doc/examples/"
#define PYTHON "/usr/bin/python3" /* Debian's, which has python3-lark */

const xp_lark_file_t xp_lark_files[] = {
    /* terminals only, for %import: Lark refuses both as grammars, for any
     * start ("Using an undefined rule"); common.lark is refused here before
     * that, at _STRING_ESC_INNER's lone look-behind (%import
     * common.ESCAPED_STRING reads the whole idiom, larklook.h) */
    {LARK_DIR "common.lark", "start", "look-around", NULL},
    {LARK_DIR "lark.lark", "start", NULL, NULL},
    {LARK_DIR "python.lark", "file_input", NULL, NULL},
    {LARK_DIR "unicode.lark", "start", "no rule 'start'", NULL},
    {DOC_DIR "grammars/verilog.lark", "start", NULL, NULL},
    {DOC_DIR "advanced/python2.lark", "file_input", NULL, NULL},
    {DOC_DIR "advanced/template_lark.lark", "start", NULL, NULL},
    {DOC_DIR "composition/csv.lark", "start", NULL, NULL},
    {DOC_DIR "composition/json.lark", "start", NULL, NULL},
    {DOC_DIR "composition/storage.lark", "start", NULL,
     DOC_DIR "composition/combined_csv_and_json.txt"},
    {DOC_DIR "relative-imports/multiple2.lark", "start", NULL, NULL},
    {DOC_DIR "relative-imports/multiple3.lark", "start", NULL, NULL},
    {DOC_DIR "relative-imports/multiples.lark", "start", NULL, NULL},
    {DOC_DIR "standalone/json.lark", "value", NULL, NULL},
    {DOC_DIR "tests/negative_priority.lark", "start", NULL, NULL},
    {DOC_DIR "tests/no_newline_at_end.lark", "start", NULL, NULL},
    /* written here: what Lark's files above do not reach */
    {"tests/fixtures/lark/features.lark", "start", NULL, NULL},
    {"tests/fixtures/lark/compose.lark", "start", NULL, NULL},
    {"tests/fixtures/lark/adjacent.lark", "start", NULL, NULL},
    {"tests/fixtures/lark/lookaround.lark", "start", NULL, "tests/fixtures/lark/lookaround.txt"},
};
const size_t xp_lark_nfiles = sizeof xp_lark_files / sizeof xp_lark_files[0];

/* Python's \s is a Unicode class (and holds \x1C to \x1F), the lexer's
 * an ASCII one (docs/grammars.md): a string so judged, of a file whose
 * terminals use \s (SPACED below), holds one of those characters.  (The
 * other cause there was, Lark's greedy %ignore, is read as Lark reads it:
 * xp_lark_load.) */
#define UNICODE_SPACE "\\s of Python's re holds spaces outside ASCII, not here"
static int has_python_space(const uint8_t *s, size_t n)
{
    static const uint32_t spaces[] = {0x1C,   0x1D,   0x1E,   0x1F,   0x85,   0xA0,
                                      0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = tb_utf8_decode(s + i, n - i, &cp);
        if (!k)
            return 0; /* not UTF-8: Lark reads no text */
        for (size_t j = 0; j < sizeof spaces / sizeof *spaces; j++)
            if (cp == spaces[j] || (cp >= 0x2000 && cp <= 0x200A))
                return 1;
        i += k;
    }
    return 0;
}

static const char *const SPACED[] = {
    LARK_DIR "lark.lark",
    DOC_DIR "advanced/template_lark.lark",
    DOC_DIR "grammars/verilog.lark",
};

int xp_lark_load(gr_cfg_t *cfg, const char *path, const char *start, tb_err_t *err)
{
    gr_load_opts_t o = {.format = "lark", .start_name = start, .semantics = 1 + GR_SEM_LARK};
    return gr_cfg_load_opts(cfg, path, &o, err);
}

int xp_lark_available(void)
{
    return access(DOC_DIR "composition/storage.lark", R_OK) == 0 &&
           system(PYTHON " -c 'import lark' 2>/dev/null") == 0;
}

const char *xp_lark_cause(const char *path, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < sizeof SPACED / sizeof SPACED[0]; i++)
        if (!strcmp(SPACED[i], path) && has_python_space(s, n))
            return UNICODE_SPACE;
    return NULL;
}

/* xorshift64: the draws of one seed are the same on every machine. */
static uint32_t draw(uint64_t *rng, uint32_t n)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return (uint32_t)(*rng % n);
}

int xp_lark_mutate(tb_buf_t *text, uint64_t *rng)
{
    if (!text->len)
        return 0;
    size_t at = draw(rng, (uint32_t)text->len);
    uint8_t other = text->data[draw(rng, (uint32_t)text->len)];
    switch (draw(rng, 3)) {
    case 0:
        memmove(text->data + at, text->data + at + 1, text->len - at - 1);
        text->len--;
        return 0;
    case 1:
        if (tb_buf_putc(text, 0))
            return -1;
        memmove(text->data + at + 1, text->data + at, text->len - at - 1);
        text->data[at] = other;
        return 0;
    default:
        text->data[at] = other;
        return 0;
    }
}

#define WALK_STATES 20000

/* The bytes of the shortest way from state `from` to an accepting one,
 * appended to out: 0, 1 if none within WALK_STATES states, -1 on memory.
 * The states looked at are kept with the entry they were reached from
 * (parent) and the byte that led there. */
static int finish(gr_gram_t *g, uint32_t from, tb_buf_t *out)
{
    typedef struct {
        uint32_t state, parent;
        uint8_t byte;
    } node_t;
    TB_VEC(node_t) q = {0};
    tb_u64map_t seen;
    if (tb_u64map_init(&seen, WALK_STATES))
        return -1;
    node_t first = {from, UINT32_MAX, 0};
    int rc = tb_vec_push(&q, first) || tb_u64map_put(&seen, from, 0) ? -1 : 1;
    for (size_t head = 0; rc == 1 && head < q.len && q.len < WALK_STATES; head++) {
        if (gr_accepting(g, q.data[head].state)) {
            size_t n = 0;
            for (uint32_t k = (uint32_t)head; q.data[k].parent != UINT32_MAX; k = q.data[k].parent)
                n++;
            size_t at = out->len;
            rc = 0;
            for (size_t i = 0; !rc && i < n; i++)
                rc = tb_buf_putc(out, 0);
            for (uint32_t k = (uint32_t)head; !rc && q.data[k].parent != UINT32_MAX;
                 k = q.data[k].parent)
                out->data[at + --n] = q.data[k].byte;
            rc = rc ? -1 : 0;
            break;
        }
        for (unsigned b = 0; b < 256 && rc == 1; b++) {
            uint32_t t = gr_step(g, q.data[head].state, (uint8_t)b);
            uint64_t v;
            if (t == GR_DEAD || tb_u64map_get(&seen, t, &v))
                continue;
            node_t x = {t, (uint32_t)head, (uint8_t)b};
            if (tb_vec_push(&q, x) || tb_u64map_put(&seen, t, 0))
                rc = -1;
        }
    }
    free(q.data);
    tb_u64map_free(&seen);
    return rc;
}

int xp_lark_walk(gr_gram_t *g, uint64_t *rng, size_t max_len, tb_buf_t *out,
                 tb_err_t *err)
{
    uint32_t st = GR_START, next[256];
    uint8_t byte[256];
    size_t len = 1 + draw(rng, (uint32_t)max_len);
    for (size_t i = 0; i < len; i++) {
        if (gr_accepting(g, st) && draw(rng, 8) == 0)
            break; /* a sentence short of the length drawn, now and then */
        size_t n = 0;
        for (unsigned b = 0; b < 256; b++)
            if ((next[n] = gr_step(g, st, (uint8_t)b)) != GR_DEAD)
                byte[n++] = (uint8_t)b;
        if (!n)
            break;
        size_t k = draw(rng, (uint32_t)n);
        if (tb_buf_putc(out, byte[k]))
            return tb_fail(err, "out of memory");
        st = next[k];
    }
    int rc = st == GR_DEAD ? 1 : finish(g, st, out);
    if (rc < 0)
        return tb_fail(err, "out of memory");
    return gr_gram_error(g, err) ? -1 : rc;
}

int xp_lark_verdicts(const char *root, const char *path, const char *start,
                     const tb_buf_t *texts, size_t n, int *want, tb_err_t *err)
{
    char in[] = "/tmp/tokbench-lark-XXXXXX", out[64], cmd[8400];
    int fd = mkstemp(in);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f)
        return tb_fail(err, "%s: cannot write the strings for Lark", in);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < texts[i].len; k++)
            fprintf(f, "%02x", texts[i].data[k]);
        fputc('\n', f);
    }
    fclose(f);
    snprintf(out, sizeof out, "%s.out", in);
    int w = snprintf(cmd, sizeof cmd, PYTHON " '%s/scripts/ref/lark_check.py' '%s' '%s' < %s > %s",
                     root, path, start, in, out);
    int rc = w < 0 || (size_t)w >= sizeof cmd ? tb_fail(err, "%s: the path is too long", path)
                                              : 0;
    int status = rc ? 0 : system(cmd);
    f = rc ? NULL : fopen(out, "r");
    char line[1100];
    for (size_t i = 0; f && !rc && i < n; i++) {
        if (!fgets(line, sizeof line, f))
            rc = tb_fail(err, "%s: lark_check.py gave %zu verdicts of %zu (exit %d)", path, i,
                         n, status);
        else if (line[0] == 'E')
            rc = tb_fail(err, "%s: Lark refuses it: %s", path, line + 2);
        else
            want[i] = line[0] == '1';
    }
    if (f)
        fclose(f);
    else if (!rc)
        rc = tb_fail(err, "%s: no verdicts from lark_check.py (exit %d)", path, status);
    remove(in);
    remove(out);
    return rc;
}

int xp_lark_refuses(const char *root, const char *path, const char *start, char *msg,
                    size_t size, tb_err_t *err)
{
    char cmd[8400];
    int w = snprintf(cmd, sizeof cmd, PYTHON " '%s/scripts/ref/lark_check.py' '%s' '%s' "
                     "</dev/null", root, path, start);
    if (w < 0 || (size_t)w >= sizeof cmd)
        return tb_fail(err, "%s: the path is too long", path);
    FILE *f = popen(cmd, "r");
    if (!f)
        return tb_fail(err, "%s: cannot run lark_check.py", path);
    if (!fgets(msg, (int)size, f))
        msg[0] = 0;
    pclose(f);
    msg[strcspn(msg, "\n")] = 0;
    return msg[0] == 'E';
}

int xp_lark_judge(gr_gram_t *g, const char *path, const tb_buf_t *texts, size_t n,
                  const int *want, xp_lark_judged_t *out, tb_err_t *err)
{
    *out = (xp_lark_judged_t){.strings = n};
    for (size_t k = 0; k < n; k++) {
        uint32_t s = gr_feed(g, GR_START, texts[k].data, texts[k].len, NULL);
        int got = s != GR_DEAD && gr_accepting(g, s);
        out->sentences += (size_t)got;
        if (got == want[k])
            continue;
        const char *cause = xp_lark_cause(path, texts[k].data, texts[k].len);
        if (cause) {
            out->caused++;
            out->cause = out->cause ? out->cause : cause;
            continue;
        }
        if (!out->differ++)
            snprintf(out->first, sizeof out->first, "'%.*s': here %s, Lark %s",
                     (int)(texts[k].len > 200 ? 200 : texts[k].len),
                     (const char *)texts[k].data, got ? "a sentence" : "refused",
                     want[k] ? "a sentence" : "refused");
    }
    return gr_gram_error(g, err) ? -1 : 0;
}
