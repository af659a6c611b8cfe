/*
 * pretok: the pre-tokenizer steps (Hugging Face semantics) that cut a
 * normalized span into the words the model merges.
 *
 * Every step re-splits the words of the step before it.  Regex splits run
 * PCRE2 (UTF, UCP, JIT) over each word as a subject of its own, as the
 * reference runs its regex over each split string; PCRE2_MATCH_INVALID_UTF
 * lets invalid UTF-8 through (it never matches, so it lands in the gaps).
 *
 * Buffers: the text, the word list and the match data belong to the
 * caller and are reused; the steps and their compiled patterns are only
 * read.  A step appends its new words (and, when it rewrites the text, the
 * new text) behind the old ones and then moves them down, so a warm call
 * does not allocate.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/utf8.h"
#include "tok_internal.h"
#include "uprops.h"

/* GPT-2's split pattern, which ByteLevel(use_regex) applies. */
static const char gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+"
    "|\\s+(?!\\S)|\\s+";

/* ---- compiling ------------------------------------------------------- */

/* PCRE2's tables are not the references'.  Its \s under UCP is "\p{Z}, \h
 * and \v", which has U+180E (no White_Space since Unicode 6.3) and lacks
 * U+0085; Oniguruma (Hugging Face) and Rust's regex (tiktoken) use the
 * White_Space property.  Its \p{..} are of its release (Unicode 14.0 in
 * 10.42), the references' of Unicode 16.0 (uprops.h).  So \s, \S, \d (Nd)
 * and the general categories (\p{L}, \pN, \P{Lu}, \p{^M}) become class
 * items that match uprops's sets exactly (White_Space as ranges; a category
 * as PCRE2's \p{..} plus the ranges its tables lack, see uprops.c), in
 * brackets outside a class and bare inside one.  Other property names
 * (scripts) are left to PCRE2. */
static int put_category(uint32_t mask, int negate, int in_class, tb_buf_t *out)
{
    if (!in_class) /* a class of its own: PCRE2 negates it, items stay short */
        return tb_buf_put(out, negate ? "[^" : "[", negate ? 2u : 1u) ||
               put_category(mask, 0, 1, out) || tb_buf_putc(out, ']');
    return mask ? tok_uprops_class_items(mask, negate, out)
                : tok_uprops_space_items(negate, out);
}

/* p[*i] is the 'p' or 'P' of a property escape: returns its categories and
 * moves *i to its last byte, or returns 0 (and leaves *i) when the name is
 * no general category. */
static uint32_t parse_category(const uint8_t *p, size_t n, size_t *i, int *negate)
{
    size_t at = *i + 1, name = at, len = 1;
    *negate = p[*i] == 'P';
    if (at < n && p[at] == '{') {
        const uint8_t *end = memchr(p + at, '}', n - at);
        if (!end)
            return 0;
        name = at + 1;
        len = (size_t)(end - p) - name;
        if (len && p[name] == '^') {
            *negate = !*negate;
            name++;
            len--;
        }
        at = (size_t)(end - p);
    } else if (at >= n) {
        return 0;
    }
    uint32_t mask = tok_uprops_mask((const char *)p + name, len);
    if (mask)
        *i = at;
    return mask;
}

static int rewrite_classes(const uint8_t *p, size_t n, tb_buf_t *out)
{
    int in_class = 0;
    out->len = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = 0, negate;
        uint32_t mask;
        if (p[i] == '\\' && i + 1 < n) {
            uint8_t c = p[++i];
            if (c == 's' || c == 'S') /* mask 0: White_Space */
                rc = put_category(0, c == 'S', in_class, out);
            else if (c == 'd' || c == 'D')
                rc = put_category(tok_uprops_mask("Nd", 2), c == 'D', in_class, out);
            else if ((c == 'p' || c == 'P') &&
                     (mask = parse_category(p, n, &i, &negate)))
                rc = put_category(mask, negate, in_class, out);
            else
                rc = tb_buf_putc(out, '\\') || tb_buf_putc(out, c);
        } else if (!in_class && p[i] == '[') {
            in_class = 1;
            rc = tb_buf_putc(out, '[');
            /* a ']' first in the class (after an optional '^') is literal */
            if (i + 1 < n && p[i + 1] == '^')
                rc |= tb_buf_putc(out, p[++i]);
            if (i + 1 < n && p[i + 1] == ']')
                rc |= tb_buf_putc(out, p[++i]);
        } else if (in_class && p[i] == '[' && i + 1 < n && p[i + 1] == ':') {
            const uint8_t *end = memmem(p + i, n - i, ":]", 2);
            size_t upto = end ? (size_t)(end - p) + 2 : n;
            rc = tb_buf_put(out, p + i, upto - i); /* POSIX [:name:] */
            i = upto - 1;
        } else {
            if (in_class && p[i] == ']')
                in_class = 0;
            rc = tb_buf_putc(out, p[i]);
        }
        if (rc)
            return -1;
    }
    return 0;
}

int tok_pre_compile(tok_pre_t *p, const uint8_t *pattern, size_t len,
                    int literal, tb_err_t *err)
{
    if (pattern != p->pattern.data) {
        p->pattern.len = 0;
        if (tb_buf_put(&p->pattern, pattern, len))
            return tb_fail(err, "out of memory for a pre-tokenizer pattern");
    }
    tb_buf_t src = {0};
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
    if (literal)
        opts |= PCRE2_LITERAL;
    else
        opts |= PCRE2_UCP;
    if (!literal && rewrite_classes(p->pattern.data, len, &src)) {
        tb_buf_free(&src);
        return tb_fail(err, "out of memory for a pre-tokenizer pattern");
    }
    int code;
    PCRE2_SIZE at;
    pcre2_code *re =
        pcre2_compile(literal ? p->pattern.data : src.data, literal ? len : src.len,
                      opts, &code, &at, NULL);
    tb_buf_free(&src);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        return tb_fail(err, "pre-tokenizer pattern /%.*s/: %s (near byte %zu)",
                       (int)(len > 200 ? 200 : len), (const char *)pattern,
                       (const char *)msg, (size_t)at);
    }
    pcre2_code_free(p->re);
    /* a JIT copy of the pattern replaced (jit_copy) goes with it */
    pcre2_code_free(atomic_exchange(&p->jit, NULL));
    p->re = re;
    p->literal = literal;
    p->fast = literal ? TOK_FAST_NONE : tok_fast_kind(p->pattern.data, len);
    /* A pattern with a hand-written matcher asks PCRE2 only about invalid
     * UTF-8, and is JIT-compiled the first time it does (jit_copy).
     * Without JIT support matching falls back to the interpreter. */
    if (!p->fast)
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return 0;
}

int tok_pre_prepare(tok_pre_t *p, tb_err_t *err)
{
    if (p->re || p->kind == TOK_PRE_METASPACE || p->kind == TOK_PRE_BERT ||
        (p->kind == TOK_PRE_BYTE_LEVEL && !(p->flags & 2)))
        return 0; /* compiled already, or no pattern to run */
    const char *pat = NULL;
    if (p->kind == TOK_PRE_BYTE_LEVEL)
        pat = gpt2_pattern;
    else if (p->kind == TOK_PRE_DIGITS)
        pat = p->flags & 1 ? "\\p{N}" : "\\p{N}+";
    else if (p->kind == TOK_PRE_WHITESPACE_SPLIT)
        pat = "\\s+";
    if (!pat)
        return tb_fail(err, "pre-tokenizer split has no compiled pattern");
    return tok_pre_compile(p, (const uint8_t *)pat, strlen(pat), 0, err);
}

/* ---- splitting ------------------------------------------------------- */

/* Applies a split behaviour to the stream of (piece, is_match) segments of
 * one word.  `cur` is the last piece of the reference's accumulator: it can
 * still grow, and is emitted (when not empty) once the next piece starts. */
typedef struct {
    tok_spans_t *words;
    tok_split_behavior_t behavior;
    int invert;
    uint32_t base;        /* offset of the word in the text */
    int have_cur, prev_match;
    uint32_t cur_s, cur_e;
    int have_pend;        /* MergedWithNext: a match waiting for its next */
    uint32_t pend_s, pend_e;
    int oom;
} splitter_t;

static void flush(splitter_t *sp)
{
    if (sp->have_cur && sp->cur_e > sp->cur_s &&
        tb_vec_push(sp->words, ((tok_span_t){sp->base + sp->cur_s,
                                             sp->cur_e - sp->cur_s})))
        sp->oom = 1;
    sp->have_cur = 0;
}

static void start(splitter_t *sp, uint32_t s, uint32_t e)
{
    flush(sp);
    sp->have_cur = 1;
    sp->cur_s = s;
    sp->cur_e = e;
}

static void segment(splitter_t *sp, uint32_t s, uint32_t e, int m)
{
    if (sp->invert)
        m = !m;
    switch (sp->behavior) {
    case TOK_SPLIT_REMOVED:
        if (!m)
            start(sp, s, e);
        break;
    case TOK_SPLIT_ISOLATED:
        start(sp, s, e);
        break;
    case TOK_SPLIT_CONTIGUOUS:
        if (m == sp->prev_match && sp->have_cur)
            sp->cur_e = e;
        else
            start(sp, s, e);
        break;
    case TOK_SPLIT_MERGED_WITH_PREVIOUS:
        if (m && !sp->prev_match && sp->have_cur)
            sp->cur_e = e;
        else
            start(sp, s, e);
        break;
    case TOK_SPLIT_MERGED_WITH_NEXT:
        /* the reference folds from the right: a match joins the piece after
         * it when that piece is not a match */
        if (sp->have_pend) {
            sp->have_pend = 0;
            if (!m) {
                start(sp, sp->pend_s, e);
                break;
            }
            start(sp, sp->pend_s, sp->pend_e);
        }
        if (m) {
            sp->have_pend = 1;
            sp->pend_s = s;
            sp->pend_e = e;
        } else {
            start(sp, s, e);
        }
        break;
    }
    sp->prev_match = m;
}

static void finish(splitter_t *sp)
{
    if (sp->have_pend)
        start(sp, sp->pend_s, sp->pend_e);
    sp->have_pend = 0;
    flush(sp);
}

/* The JIT-compiled copy of p's pattern, which has a hand-written matcher,
 * made the first time that matcher cannot answer: most texts never need
 * it, and JIT-compiling at load paged in some 0.4 MiB of PCRE2's compiler,
 * an eighth of cl100k's whole load from its compiled file, where the
 * interpreter matched invalid UTF-8 at a third of the speed.  A copy, not
 * p->re compiled in place, since other threads may be matching p->re. */
static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;

static const pcre2_code *jit_copy(const tok_pre_t *p)
{
    _Atomic(pcre2_code *) *slot = (_Atomic(pcre2_code *) *)&p->jit;
    pcre2_code *re = atomic_load_explicit(slot, memory_order_acquire);
    if (re)
        return re;
    pthread_mutex_lock(&jit_lock);
    re = atomic_load_explicit(slot, memory_order_relaxed);
    if (!re && (re = pcre2_code_copy(p->re))) {
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
        atomic_store_explicit(slot, re, memory_order_release);
    }
    pthread_mutex_unlock(&jit_lock);
    return re ? re : p->re;
}

/* The next match at or after pos: 1 with [*ms, *me), or PCRE2's negative
 * code (PCRE2_ERROR_NOMATCH: none).  A pattern with a hand-written matcher
 * (fastsplit.c) matches at pos itself unless that matcher cannot say, and
 * none of those patterns matches the empty string, so nothing matches at
 * the word's end.  0 from PCRE2 (the ovector is too small for the groups)
 * is a match too: only the whole match's pair is read. */
static int match_at(const tok_pre_t *p, pcre2_match_data *md, const uint8_t *s,
                    size_t n, size_t pos, size_t *ms, size_t *me)
{
    const pcre2_code *re = p->re;
    if (p->fast) {
        if (pos >= n)
            return PCRE2_ERROR_NOMATCH;
        if ((*me = tok_fast_match(p->fast, s, n, pos))) {
            *ms = pos;
            return 1;
        }
        re = jit_copy(p);
    }
    int rc = pcre2_jit_match(re, s, n, pos, 0, md, NULL);
    if (rc == PCRE2_ERROR_JIT_BADOPTION || rc == PCRE2_ERROR_JIT_STACKLIMIT)
        rc = pcre2_match(re, s, n, pos, 0, md, NULL);
    if (rc < 0)
        return rc;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    *ms = ov[0];
    *me = ov[1];
    return 1;
}

/* Isolated matches of a hand-written matcher (which never matches the
 * empty string, and matches wherever the last match ended) are the words
 * themselves: they go straight to the list (tok_fast_words), without
 * segment's state machine (a fifth of the instructions of splitting
 * Llama 3's words), until the text ends or the matcher cannot say.
 * Returns where that is (len if out of memory, with sp->oom set). */
static size_t push_fast_words(const tok_pre_t *p, splitter_t *sp, const uint8_t *s,
                              size_t len)
{
    size_t end = tok_fast_words(p->fast, s, len, sp->base, sp->words);
    if (end == SIZE_MAX) {
        sp->oom = 1;
        return len;
    }
    return end;
}

/* Cuts the word text[off..off+len) at the matches of p's pattern, the way
 * Oniguruma's find_iter walks it: an empty match right where the previous
 * match ended is skipped by one character. */
static int split_word(const tok_pre_t *p, pcre2_match_data *md, splitter_t *sp,
                      const uint8_t *text, uint32_t off, uint32_t len,
                      tb_err_t *err)
{
    const uint8_t *s = text + off;
    size_t pos = 0, prev = 0, last_end = SIZE_MAX;
    sp->base = off;
    sp->have_cur = sp->prev_match = sp->have_pend = 0;
    if (p->fast && sp->behavior == TOK_SPLIT_ISOLATED && !sp->invert &&
        (pos = prev = push_fast_words(p, sp, s, len)))
        last_end = pos;
    while (pos <= len) {
        size_t ms, me;
        int rc = match_at(p, md, s, len, pos, &ms, &me);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return tb_fail(err, "pre-tokenizer pattern /%.*s/ at text byte %zu: %s",
                           (int)(p->pattern.len > 200 ? 200 : p->pattern.len),
                           (const char *)p->pattern.data, off + pos,
                           (const char *)msg);
        }
        if (ms == me && last_end == me) {
            if (pos >= len)
                break;
            size_t step = tb_utf8_lead_len(s[pos]);
            pos = step < len - pos ? pos + step : len;
            continue;
        }
        if (prev != ms)
            segment(sp, (uint32_t)prev, (uint32_t)ms, 0);
        segment(sp, (uint32_t)ms, (uint32_t)me, 1);
        prev = last_end = pos = me;
    }
    if (prev != len)
        segment(sp, (uint32_t)prev, len, 0);
    finish(sp);
    return sp->oom ? tb_fail(err, "out of memory splitting words") : 0;
}

/* Removes the first k words: the old ones, once the new are behind them. */
static void drop_front(tok_spans_t *words, size_t k)
{
    if (words->len > k)
        memmove(words->data, words->data + k,
                (words->len - k) * sizeof *words->data);
    words->len -= k;
}

/* Re-splits every current word; the new words replace the old. */
static int split_all(const tok_pre_t *p, pcre2_match_data *md,
                     tok_split_behavior_t behavior, int invert, tb_buf_t *text,
                     tok_spans_t *words, tb_err_t *err)
{
    if (!p->re)
        return tb_fail(err, "pre-tokenizer /%.*s/ was never compiled "
                            "(tok_prepare)",
                       (int)p->pattern.len, (const char *)p->pattern.data);
    splitter_t sp = {.words = words, .behavior = behavior, .invert = invert};
    size_t k = words->len;
    for (size_t i = 0; i < k; i++) {
        tok_span_t w = words->data[i];
        if (split_word(p, md, &sp, text->data, w.off, w.len, err))
            return -1;
    }
    drop_front(words, k);
    return 0;
}

/* ---- steps that rewrite the text ------------------------------------- */

/* Rebuilds the text word by word.  With `prefix` a space is put before
 * every word that does not start with one (ByteLevel's add_prefix_space,
 * Metaspace's prepend); with `meta` every U+2581 becomes a space, since the
 * vocabulary stores the marker as a space. */
static int rewrite_words(tb_buf_t *text, tok_spans_t *words, int prefix, int meta)
{
    size_t t0 = text->len;
    for (size_t i = 0; i < words->len; i++) {
        tok_span_t *w = &words->data[i];
        if (tb_buf_reserve(text, (size_t)w->len + 1))
            return -1;
        const uint8_t *src = text->data + w->off; /* after the reserve */
        size_t start = text->len;
        uint8_t *dst = text->data + start;
        size_t n = 0;
        int lead_marker = w->len >= 3 && !memcmp(src, "\xE2\x96\x81", 3);
        if (prefix && src[0] != ' ' && !(meta && lead_marker))
            dst[n++] = ' ';
        for (size_t j = 0; j < w->len;) {
            if (meta && j + 3 <= w->len && !memcmp(src + j, "\xE2\x96\x81", 3)) {
                dst[n++] = ' ';
                j += 3;
            } else {
                dst[n++] = src[j++];
            }
        }
        text->len += n;
        w->off = (uint32_t)(start - t0);
        w->len = (uint32_t)n;
    }
    if (text->len > t0)
        memmove(text->data, text->data + t0, text->len - t0);
    text->len -= t0;
    return 0;
}

/* Metaspace(split): a new word starts at every space. */
static int split_before_spaces(tb_buf_t *text, tok_spans_t *words)
{
    size_t k = words->len;
    for (size_t i = 0; i < k; i++) {
        tok_span_t w = words->data[i];
        uint32_t s = w.off, end = w.off + w.len;
        for (uint32_t j = w.off + 1; j <= end; j++) {
            if (j < end && text->data[j] != ' ')
                continue;
            if (tb_vec_push(words, ((tok_span_t){s, j - s})))
                return -1;
            s = j;
        }
    }
    drop_front(words, k);
    return 0;
}

/* BertPreTokenizer: white space (Rust's char::is_whitespace) ends a word
 * and is dropped; a punctuation mark (bert.c's) is a word of its own.  The
 * memos answer the letters of a script after its first without a search
 * (two thirds of the work of a non-ASCII word). */
static int split_bert(tb_buf_t *text, tok_spans_t *words)
{
    tok_ranges_memo_t space_memo = TOK_RANGES_MEMO_EMPTY;
    tok_ranges_memo_t punct_memo = TOK_RANGES_MEMO_EMPTY;
    size_t k = words->len;
    for (size_t i = 0; i < k; i++) {
        tok_span_t w = words->data[i];
        uint32_t start = w.off, end = w.off + w.len;
        for (uint32_t j = w.off; j < end;) {
            uint32_t c = text->data[j];
            size_t len = 1;
            if (c >= 0x80 && !(len = tb_utf8_decode(text->data + j, end - j, &c))) {
                len = 1; /* a stray byte: a letter, as U+FFFD would be */
                c = 0xFFFD;
            }
            int space = c < 0x80 ? c == ' ' || (c >= '\t' && c <= '\r')
                                 : tok_uprops_is_space_memo(c, &space_memo);
            int punct = !space && tok_bert_is_punct(c, &punct_memo);
            if ((space || punct) && start < j &&
                tb_vec_push(words, ((tok_span_t){start, j - start})))
                return -1;
            if (punct && tb_vec_push(words, ((tok_span_t){j, (uint32_t)len})))
                return -1;
            j += (uint32_t)len;
            if (space || punct)
                start = j;
        }
        if (start < end && tb_vec_push(words, ((tok_span_t){start, end - start})))
            return -1;
    }
    drop_front(words, k);
    return 0;
}

static int run_step(const tok_pre_t *p, pcre2_match_data *md, int first,
                    tb_buf_t *text, tok_spans_t *words, tb_err_t *err)
{
    int prepend;
    switch (p->kind) {
    case TOK_PRE_SPLIT:
        return split_all(p, md, p->behavior, p->invert, text, words, err);
    case TOK_PRE_BYTE_LEVEL:
        if ((p->flags & 1) && rewrite_words(text, words, 1, 0))
            return tb_fail(err, "out of memory adding prefix spaces");
        return p->flags & 2
                   ? split_all(p, md, TOK_SPLIT_ISOLATED, 0, text, words, err)
                   : 0;
    case TOK_PRE_METASPACE:
        prepend = p->flags & 4 ? first : (int)(p->flags & 1);
        if (rewrite_words(text, words, prepend, 1) ||
            ((p->flags & 2) && split_before_spaces(text, words)))
            return tb_fail(err, "out of memory in the metaspace pre-tokenizer");
        return 0;
    case TOK_PRE_DIGITS:
        return split_all(p, md, TOK_SPLIT_ISOLATED, 0, text, words, err);
    case TOK_PRE_WHITESPACE_SPLIT:
        return split_all(p, md, TOK_SPLIT_REMOVED, 0, text, words, err);
    case TOK_PRE_BERT:
        return split_bert(text, words) ? tb_fail(err, "out of memory splitting words") : 0;
    }
    return tb_fail(err, "unknown pre-tokenizer kind %d", (int)p->kind);
}

int tok_pretokenize(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *s,
                    size_t n, int first, tb_buf_t *text_out, tok_spans_t *words,
                    tb_err_t *err)
{
    text_out->len = 0;
    words->len = 0;
    /* spans are 32-bit and a rewrite may add a byte per word */
    if (n > UINT32_MAX / 2)
        return tb_fail(err, "pre-tokenizer: a span of %zu bytes is too long", n);
    if (tb_buf_put(text_out, s, n))
        return tb_fail(err, "out of memory copying %zu bytes of text", n);
    if (n && tb_vec_push(words, ((tok_span_t){0, (uint32_t)n})))
        return tb_fail(err, "out of memory for the word list");
    if (!st->md && !(st->md = pcre2_match_data_create(1, NULL)))
        return tb_fail(err, "out of memory for the pre-tokenizer's match data");
    for (size_t i = 0; i < t->pres.len; i++)
        if (run_step(&t->pres.data[i], st->md, first, text_out, words, err))
            return -1;
    return 0;
}
