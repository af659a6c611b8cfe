/*
 * llgmasks: tokbench's masks against llguidance's on llguidance's test
 * grammars (llgmasks.h).  The cases are read whole, every grammar loaded
 * and its strings judged; one run of tb-llguidance then takes every
 * grammar both load, and its output is compared line by line.
 */
#include "llgmasks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "../../base/file.h"
#include "../../grammar/load.h"
#include "../../grammar/match.h"

const char *const xp_llg_verdicts[XP_LLG_N] = {
    [XP_LLG_SAME] = "same",
    [XP_LLG_EXPLAINED] = "explained differences",
    [XP_LLG_UNEXPLAINED] = "unexplained differences",
    [XP_LLG_NOT_RUN] = "no string to run",
    [XP_LLG_REFUSED_HERE] = "refused here",
    [XP_LLG_REFUSED] = "refused by llguidance",
    [XP_LLG_REF_FAILED] = "llguidance failed",
};

int xp_llg_write_tokens(const tok_vocab_t *v, const char *path, tb_err_t *why)
{
    trie_keys_t keys;
    if (trie_keys_from_vocab(&keys, v, TRIE_SPECIALS_MARKED, why))
        return -1;
    const trie_key_t **by_id = calloc(v->size ? v->size : 1, sizeof *by_id);
    FILE *f = by_id ? fopen(path, "w") : NULL;
    for (size_t k = 0; by_id && k < keys.n; k++) /* the keys are sorted by bytes */
        by_id[keys.keys[k].id] = &keys.keys[k];
    for (uint32_t id = 0; f && id < v->size; id++) {
        for (uint32_t j = 0; by_id[id] && j < by_id[id]->len; j++)
            fprintf(f, "%02x", by_id[id]->s[j]);
        fputc('\n', f);
    }
    free(by_id);
    trie_keys_free(&keys);
    if (!f || fclose(f))
        return tb_fail(why, "%s: %s", path, strerror(errno)), 1;
    return 0;
}

/* A string of a case: what llguidance's test wants of it ('p' pass, 'f'
 * refused before its end, 'x' a prefix not accepted, 'r' refused either
 * way) and its bytes, in the cases file's data. */
typedef struct {
    char want;
    const uint8_t *s;
    size_t n;
} llg_str_t;

/* Data layout: one case per call of llguidance's helpers, its grammar and
 * strings pointing into the cases file's bytes. */
typedef struct {
    xp_llg_grammar_t out;
    const char *text;
    size_t len;
    int refuses;          /* llguidance's test wants it refused */
    TB_VEC(llg_str_t) strs;
    gr_gram_t *g;         /* loaded here, or NULL */
} llg_case_t;

typedef TB_VEC(llg_case_t) llg_cases_t;

typedef struct {
    const uint8_t *start, *p, *end;
    const char *path;
} reader_t;

/* One "WORD [N]" header line into line (NUL-terminated); 0 at the end. */
static int header(reader_t *r, char *line, size_t size, tb_err_t *err)
{
    if (r->p >= r->end)
        return 0;
    const uint8_t *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    size_t len = nl ? (size_t)(nl - r->p) : 0;
    if (!nl || len >= size)
        return tb_fail(err, "%s: offset %zu: not a header line", r->path,
                       (size_t)(r->p - r->start));
    memcpy(line, r->p, len);
    line[len] = 0;
    r->p = nl + 1;
    return 1;
}

/* The N bytes after a header and their newline. */
static const uint8_t *payload(reader_t *r, size_t n, const char *what, tb_err_t *err)
{
    const uint8_t *s = r->p;
    if ((size_t)(r->end - r->p) < n + 1 || s[n] != '\n')
        return tb_fail(err, "%s: %s: %zu bytes announced, the file ends first", r->path, what,
                       n), NULL;
    r->p += n + 1;
    return s;
}

/* One case from its "grammar" line to its "end". */
static int read_case(reader_t *r, llg_case_t *c, tb_err_t *err)
{
    char line[256], word[64];
    unsigned long long n = 0;
    int more;
    while ((more = header(r, line, sizeof line, err)) > 0 && strcmp(line, "end")) {
        if (!strcmp(line, "load"))
            continue;
        if (sscanf(line, "%63s %llu", word, &n) != 2)
            return tb_fail(err, "%s: %s: '%s' is not WORD N", r->path, c->out.where, line);
        const uint8_t *s = payload(r, (size_t)n, c->out.where, err);
        if (!s)
            return -1;
        static const char WANTS[][8] = {"pass", "fail", "final", "reject"};
        size_t k = 0;
        while (k < 4 && strcmp(word, WANTS[k]))
            k++;
        if (!strcmp(word, "grammar")) {
            c->text = (const char *)s;
            c->len = (size_t)n;
        } else if (!strcmp(word, "refuse")) {
            c->refuses = 1;
        } else if (k < 4) {
            llg_str_t str = {"pfxr"[k], s, (size_t)n};
            if (tb_vec_push(&c->strs, str))
                return tb_fail(err, "out of memory");
        } else {
            return tb_fail(err, "%s: %s: unknown line '%s'", r->path, c->out.where, word);
        }
    }
    if (more < 0)
        return -1;
    if (!more || !c->text)
        return tb_fail(err, "%s: %s: the case has no grammar or no end", r->path,
                       c->out.where);
    return 0;
}

static int read_cases(const uint8_t *data, size_t len, const char *path, llg_cases_t *cases,
                      tb_err_t *err)
{
    reader_t r = {data, data, data + len, path};
    char line[256];
    int more;
    while ((more = header(&r, line, sizeof line, err)) > 0) {
        llg_case_t c = {0};
        char helper[64];
        if (sscanf(line, "case %127s %63s", c.out.where, helper) != 2)
            return tb_fail(err, "%s: '%s' is not a case line", path, line);
        if (tb_vec_push(cases, c))
            return tb_fail(err, "out of memory");
        if (read_case(&r, &cases->data[cases->len - 1], err))
            return -1;
    }
    return more;
}

/* The grammar as tokbench reads it under llguidance's semantics (greedy
 * lexemes, lazy where declared: docs/grammars.md), so that the
 * greedy-lexing cause should match nothing; its special tokens are ids of
 * r's vocabulary. */
static gr_gram_t *load(const xp_llg_run_t *r, const llg_case_t *c, tb_err_t *err)
{
    gr_cfg_t cfg;
    gr_load_opts_t o = {.format = "lark", .semantics = 1 + GR_SEM_LLGUIDANCE,
                        .vocab = tok_vocab(r->tok)};
    if (gr_cfg_parse_opts(&cfg, c->text, c->len, c->out.where, &o, err))
        return NULL;
    return gr_gram_new(&cfg, NULL, err);
}

/* The verdict on s over bytes, as llguidance's helpers define it. */
static int agrees(gr_gram_t *g, const llg_str_t *s)
{
    size_t at = 0;
    uint32_t st = gr_feed(g, GR_START, s->s, s->n, &at);
    int accepted = st != GR_DEAD && gr_accepting(g, st);
    switch (s->want) {
    case 'p': return accepted;
    case 'f': return st == GR_DEAD;
    case 'x': return st != GR_DEAD && !accepted;
    default: return !accepted;
    }
}

/* The job line of a grammar both load: its passing strings tokenized. */
static int job_line(const xp_llg_run_t *r, const llg_case_t *c, FILE *f, tb_err_t *err)
{
    json_t *insts = json_array(), *text = json_stringn(c->text, c->len);
    json_t *job = json_pack("{s:s, s:o, s:o}", "name", c->out.where, "lark", text,
                            "instances", insts);
    int rc = job ? 0 : tb_fail(err, "%s: its grammar is not UTF-8, or out of memory",
                               c->out.where);
    for (size_t i = 0; !rc && i < c->strs.len; i++) {
        if (c->strs.data[i].want != 'p')
            continue;
        tok_ids_t ids = {0};
        json_t *arr = json_array();
        rc = !arr || tok_encode(r->tok, c->strs.data[i].s, c->strs.data[i].n, &ids, err) ? -1
                                                                                        : 0;
        for (size_t k = 0; !rc && k < ids.len; k++)
            rc = json_array_append_new(arr, json_integer(ids.data[k]));
        if (!rc)
            rc = json_array_append_new(insts, json_pack("{s:I, s:b, s:O}", "index",
                                                        (json_int_t)i, "valid", 1, "ids", arr));
        json_decref(arr);
        free(ids.data);
    }
    char *s = rc ? NULL : json_dumps(job, JSON_COMPACT);
    if (s)
        fprintf(f, "%s\n", s);
    else if (!rc)
        rc = tb_fail(err, "out of memory");
    free(s);
    json_decref(job);
    return rc;
}

/* Runs tb-llguidance over the jobs, its lines into out. */
static int run_llg(const xp_llg_run_t *r, const char *tokens, const char *jobs,
                   const char *out, tb_err_t *err)
{
    char cmd[8192];
    int32_t eos = tok_vocab(r->tok)->eos;
    if (eos < 0)
        return tb_fail(err, "the vocabulary names no end-of-text token for llguidance");
    int w = snprintf(cmd, sizeof cmd, "'%s' maskbench --masks --tokens '%s' --eos %d "
                     "--timeout %u '%s' > '%s' 2> '%s.err'", r->prog, tokens, eos,
                     r->timeout ? r->timeout : 30, jobs, out, out);
    if (w < 0 || (size_t)w >= sizeof cmd)
        return tb_fail(err, "%s: the command line is too long", r->prog);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
        return tb_fail(err, "%s failed (its messages: %s.err)", r->prog, out);
    return 0;
}

/* The end of text at state st after text: tokbench's masks hold no
 * end-of-text token, so llguidance's is compared with st accepting, and a
 * disagreement counted under its cause, in place of the one xp_xg_diff
 * gave llguidance's token.  Returns what it adds to the differing tokens. */
static int end_diff(const xp_xg_ctx_t *ctx, const tb_bitset_t *theirs, const tb_buf_t *text,
                    uint32_t st, int our_end, size_t counts[XP_XG_CAUSES],
                    uint32_t *unexplained)
{
    uint32_t eos = (uint32_t)ctx->vocab->eos;
    int their_end = tb_bitset_get(theirs, eos);
    if (our_end == their_end)
        return 0;
    xp_xg_cause_t why = xp_xg_end_cause(ctx, text->data, text->len, our_end);
    counts[why]++;
    if ((why == XP_XG_OURS || why == XP_XG_THEIRS) && *unexplained == UINT32_MAX)
        *unexplained = eos;
    if (!their_end)
        return 1;
    counts[xp_xg_cause(ctx, text->data, text->len, st, eos, 0)]--;
    return 0;
}

/* Compares one instance of llguidance's line with tokbench's masks. */
static int compare_instance(const xp_llg_run_t *r, llg_case_t *c, json_t *in, gr_rec_t *rec,
                            xp_xg_ctx_t *ctx, tb_bitset_t *ours, tb_bitset_t *theirs,
                            tb_err_t *err)
{
    json_t *masks = json_object_get(in, "masks"), *ids = json_object_get(in, "ids");
    size_t i = (size_t)json_integer_value(json_object_get(in, "index"));
    if (i >= c->strs.len)
        return tb_fail(err, "%s: llguidance's instance %zu is not a string of it",
                       c->out.where, i);
    if (!json_is_null(json_object_get(in, "at")) && !c->out.detail[0])
        snprintf(c->out.detail, sizeof c->out.detail, "llguidance refuses passing string "
                 "%zu at token %lld", i, json_integer_value(json_object_get(in, "at")));
    tb_buf_t text = {0};
    uint32_t st = GR_START;
    /* the causes read the text from its first byte: never a null pointer */
    int rc = tb_buf_reserve(&text, 1) ? tb_fail(err, "out of memory") : 0;
    for (size_t k = 0; !rc && k < json_array_size(masks) && st != GR_DEAD; k++) {
        const char *hex = json_string_value(json_array_get(masks, k));
        if (!hex || xp_xg_read_hex(hex, theirs, err) ||
            gr_mask(r->trie, rec, st, ours, NULL, err)) {
            rc = tb_wrap(err, "%s, string %zu, mask %zu", c->out.where, i, k);
            break;
        }
        size_t counts[XP_XG_CAUSES] = {0}, n;
        uint32_t unexplained;
        size_t d = xp_xg_diff(ctx, ours, theirs, text.data, text.len, st, counts,
                              &unexplained);
        uint32_t eos = (uint32_t)ctx->vocab->eos;
        int our_end = gr_accepting(ctx->g, st);
        d += end_diff(ctx, theirs, &text, st, our_end, counts, &unexplained);
        c->out.steps++;
        c->out.equal += d == 0;
        for (int j = 0; j < XP_XG_CAUSES; j++)
            c->out.counts[j] += counts[j];
        if (unexplained != UINT32_MAX && !strstr(c->out.detail, "unexplained")) {
            const uint8_t *s = tok_vocab_token(ctx->vocab, unexplained, &n);
            int by_ours = unexplained == eos ? our_end : tb_bitset_get(ours, unexplained);
            snprintf(c->out.detail, sizeof c->out.detail, "first unexplained: string %zu, "
                     "after \"%.*s\", token %u \"%.*s\" (for the end of text: the text may "
                     "end) allowed by %s only", i,
                     (int)(text.len > 80 ? 80 : text.len), (const char *)text.data,
                     unexplained, (int)(n > 40 ? 40 : n), (const char *)s,
                     by_ours ? "tokbench" : "llguidance");
        }
        uint32_t id = (uint32_t)json_integer_value(json_array_get(ids, k));
        const uint8_t *s = id < ctx->vocab->size ? tok_vocab_token(ctx->vocab, id, &n) : NULL;
        if (!s || tb_buf_put(&text, s, n))
            rc = tb_fail(err, "%s: token %u: not in the vocabulary, or out of memory",
                         c->out.where, id);
        else
            st = gr_feed(ctx->g, st, s, n, NULL);
    }
    tb_buf_free(&text);
    return rc;
}

/* One line of llguidance's output against its case. */
static int compare_line(const xp_llg_run_t *r, llg_case_t *c, json_t *line,
                        tb_bitset_t *ours, tb_bitset_t *theirs, tb_err_t *err)
{
    const char *outcome = json_string_value(json_object_get(line, "outcome"));
    if (!outcome || !strcmp(outcome, "compile_error") || !strcmp(outcome, "crash") ||
        !strcmp(outcome, "timeout") || !strcmp(outcome, "bad_input")) {
        const char *e = json_string_value(json_object_get(line, "error"));
        c->out.verdict = XP_LLG_REF_FAILED;
        snprintf(c->out.detail, sizeof c->out.detail, "%s: %.400s", outcome ? outcome : "?",
                 e ? e : "");
        return 0;
    }
    gr_rec_t rec;
    if (gr_rec_init(&rec, c->g, r->max_len, err))
        return -1;
    /* a %json grammar is a schema's: the JSON causes apply */
    int schema = c->out.json;
    xp_xg_ctx_t ctx = {.vocab = tok_vocab(r->tok), .trie = r->trie, .g = c->g,
                       .schema = schema, .llguidance = 1, .json = schema ? r->json : NULL,
                       .ignores = memmem(c->text, c->len, "%ignore", 7) != NULL};
    size_t k;
    json_t *in;
    int rc = 0;
    json_array_foreach(json_object_get(line, "instances"), k, in) {
        if (!rc)
            rc = compare_instance(r, c, in, &rec, &ctx, ours, theirs, err);
    }
    gr_rec_free(&rec);
    size_t unexplained = c->out.counts[XP_XG_OURS] + c->out.counts[XP_XG_THEIRS];
    c->out.verdict = !c->out.steps ? XP_LLG_NOT_RUN
                     : unexplained ? XP_LLG_UNEXPLAINED
                     : c->out.equal < c->out.steps ? XP_LLG_EXPLAINED : XP_LLG_SAME;
    return rc;
}

/* Reads llguidance's output and compares each line with its case. */
static int compare_all(const xp_llg_run_t *r, llg_cases_t *cases, const char *out,
                       tb_err_t *err)
{
    FILE *f = fopen(out, "r");
    if (!f)
        return tb_fail(err, "%s: %s", out, strerror(errno));
    tb_bitset_t ours = {0}, theirs = {0};
    int rc = tb_bitset_init(&ours, trie_mask_bits(r->trie)) ||
                     tb_bitset_init(&theirs, tok_vocab(r->tok)->size)
                 ? tb_fail(err, "out of memory")
                 : 0;
    char *line = NULL;
    size_t cap = 0, next = 0;
    while (!rc && getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        const char *name = json_string_value(json_object_get(j, "file"));
        while (name && next < cases->len && strcmp(cases->data[next].out.where, name))
            next++; /* lines come in the cases' order */
        if (!name || next == cases->len)
            rc = tb_fail(err, "%s: a line for no case of ours: %.100s", out, line);
        else
            rc = compare_line(r, &cases->data[next++], j, &ours, &theirs, err);
        json_decref(j);
    }
    free(line);
    fclose(f);
    tb_bitset_free(&ours);
    tb_bitset_free(&theirs);
    return rc;
}

/* Loads every case here and judges its strings; the jobs file gets the
 * grammars to compare.  Returns how many. */
static int load_all(const xp_llg_run_t *r, llg_cases_t *cases, FILE *jobs, size_t *n,
                    tb_err_t *err)
{
    for (size_t i = 0; i < cases->len; i++) {
        llg_case_t *c = &cases->data[i];
        tb_err_t why = {{0}};
        c->g = load(r, c, &why);
        c->out.loaded = c->g != NULL;
        c->out.json = memmem(c->text, c->len, "%json", 5) != NULL;
        for (size_t k = 0; c->g && k < c->strs.len; k++) {
            c->out.strings++;
            c->out.agree += agrees(c->g, &c->strs.data[k]);
        }
        size_t passing = 0;
        for (size_t k = 0; k < c->strs.len; k++)
            passing += c->strs.data[k].want == 'p';
        c->out.verdict = c->refuses ? XP_LLG_REFUSED
                         : !c->g    ? XP_LLG_REFUSED_HERE
                                    : XP_LLG_NOT_RUN;
        if (!c->g)
            snprintf(c->out.detail, sizeof c->out.detail, "%.500s", why.msg);
        if (c->g && !c->refuses && passing) {
            if (job_line(r, c, jobs, err))
                return -1;
            ++*n;
        }
    }
    return 0;
}

int xp_llg_masks(const xp_llg_run_t *r,
                 int (*on_grammar)(void *ctx, const xp_llg_grammar_t *g, tb_err_t *err),
                 void *ctx, tb_err_t *err)
{
    uint8_t *data = NULL;
    size_t len, n = 0;
    llg_cases_t cases = {0};
    char tokens[4200], jobs[4200], out[4200];
    snprintf(tokens, sizeof tokens, "%s/llg-masks.tokens", r->dir);
    snprintf(jobs, sizeof jobs, "%s/llg-masks.jobs", r->dir);
    snprintf(out, sizeof out, "%s/llg-masks.out", r->dir);
    int rc = tb_read_file(r->cases, &data, &len, err) ? -1
             : read_cases(data, len, r->cases, &cases, err);
    FILE *f = rc ? NULL : fopen(jobs, "w");
    if (!rc && !f)
        rc = tb_fail(err, "%s: %s", jobs, strerror(errno));
    if (!rc)
        rc = load_all(r, &cases, f, &n, err);
    if (f && fclose(f) && !rc)
        rc = tb_fail(err, "%s: %s", jobs, strerror(errno));
    if (!rc && n)
        rc = xp_llg_write_tokens(tok_vocab(r->tok), tokens, err) ? -1
             : run_llg(r, tokens, jobs, out, err) ? -1
             : compare_all(r, &cases, out, err);
    for (size_t i = 0; i < cases.len; i++) {
        if (!rc)
            rc = on_grammar(ctx, &cases.data[i].out, err);
        gr_gram_free(cases.data[i].g);
        free(cases.data[i].strs.data);
    }
    free(cases.data);
    free(data);
    return rc;
}
