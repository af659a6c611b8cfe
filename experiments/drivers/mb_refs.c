/*
 * mb_refs: the reference engines of the MaskBench driver (maskbench.h),
 * run on a sample of its schemas after tokbench, one at a time:
 *   xgrammar    XGrammar 0.1.27 (scripts/ref/xgrammar.js maskbench under
 *               node: anyWhitespace on, strictMode off), tokenizing with
 *               Hugging Face's tokenizers from the same tokenizer.json;
 *   llguidance  llguidance 1.8.0 (scripts/ref/llguidance, built by `make
 *               llguidance-ref`), fed the ids tokbench's tokenizer gives
 *               (a jobs file: each schema file with its instances' ids) over
 *               the vocabulary's bytes (a tokens file, specials marked as
 *               toktrie marks them), its end of text the vocabulary's eos.
 * Both print one JSON line per schema (outcome, TTFM, TBM samples, the
 * instances' verdicts), stored here under the engine's impl name as
 * tokbench's are; llguidance also gives each mask's thread CPU time.  An
 * engine that cannot run (no node, no build) leaves the case going on with
 * its note saying why.  Then, on the first N schemas of the sample that
 * tokbench ran, first instance each, the engine's masks (its --masks
 * output) are compared with tokbench's token by token, each differing token
 * put down to a cause (refs/xgdiff.h): impl "xgrammar masks", "llguidance
 * masks", every point where they differ listed on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/utf8.h"
#include "../../grammar/load.h"
#include "../../grammar/match.h"
#include "../cli/cli.h"
#include "../refs/llgmasks.h"
#include "../refs/xgdiff.h"
#include "maskbench.h"
#include "pyjson.h"
#include "setup.h"

/* A reference program's command line and the files it reads, written into
 * the driver's scratch directory. */
typedef struct {
    char *argv[16];
    char prog[4200], vocab[4200], jobs[128], tokens[128], in[128], secs[16], eos[16];
} mb_cmd_t;

typedef struct mb_engine mb_engine_t;

struct mb_engine {
    const char *impl, *name;                     /* "xgrammar", "XGrammar" */
    const char *opt_every, *opt_timeout, *opt_masks;
    const char *by_hand;                         /* how to see why it failed */
    /* Writes the input for the schemas pick[0..n) and the command line;
     * masks: with masks, first instance only.  1 with why when the engine
     * cannot run, -1 on memory. */
    int (*prepare)(const mb_t *s, const size_t *pick, size_t n, int masks, mb_cmd_t *c,
                   tb_err_t *why);
};

/* The references' outcome names as the outcomes table spells them; a file
 * one cannot read is a compile error, as it is for tokbench. */
static const char *ref_outcome(const char *o)
{
    static const char *const map[][2] = {
        {"pass", "passing"}, {"compile_error", "compile error"},
        {"bad_input", "compile error"}, {"validation_error", "validation error"},
        {"invalidation_error", "invalidation error"}, {"timeout", "timeout"},
    };
    for (size_t i = 0; o && i < sizeof map / sizeof *map; i++)
        if (!strcmp(o, map[i][0]))
            return map[i][1];
    return "crash";
}

static void append(char *buf, size_t size, const char *sep, const char *text)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s%s", n ? sep : "", text);
}

/* The outcome's detail: the reference's error, else its first failed instance
 * (a validation error first) in the words of tokbench's; then its compile
 * warnings. */
static void ref_detail(json_t *j, xp_outcome_t *o)
{
    const char *e = json_string_value(json_object_get(j, "error"));
    append(o->detail, sizeof o->detail, "", e ? e : "");
    for (int pass = 0; !e && pass < 2 && !o->detail[0]; pass++) {
        size_t k;
        json_t *in;
        json_array_foreach(json_object_get(j, "instances"), k, in) {
            const char *v = json_string_value(json_object_get(in, "outcome"));
            long long at = json_integer_value(json_object_get(in, "at"));
            long long n = json_integer_value(json_object_get(in, "tokens"));
            long long i = json_integer_value(json_object_get(in, "index"));
            if (pass == 0 && v && !strcmp(v, "validation_error"))
                snprintf(o->detail, sizeof o->detail, "instance %lld: token %lld of %lld %s",
                         i, at, n, at < n ? "refused" : "(end not accepting)");
            else if (pass == 1 && v && !strcmp(v, "invalidation_error"))
                snprintf(o->detail, sizeof o->detail, "instance %lld accepted", i);
            if (o->detail[0])
                break;
        }
    }
    size_t k;
    json_t *w;
    json_array_foreach(json_object_get(j, "warnings"), k, w) {
        char text[512];
        snprintf(text, sizeof text, "%s%.400s", k ? "" : "warning: ",
                 json_string_value(w) ? json_string_value(w) : "");
        append(o->detail, sizeof o->detail, "; ", text);
    }
}

/* One line of the reference's output into an outcome row of impl and the
 * sums: 0, 1 when the line is not JSON (left out), -1 on memory. */
static int ref_line(mb_sum_t *sum, const char *impl, const char *line, xp_env_t *env,
                    tb_err_t *err)
{
    json_t *j = json_loads(line, 0, NULL);
    if (!j)
        return 1;
    xp_outcome_t o = {0};
    snprintf(o.impl, sizeof o.impl, "%s", impl);
    snprintf(o.item, sizeof o.item, "%s", json_string_value(json_object_get(j, "file"))
             ? json_string_value(json_object_get(j, "file")) : "?");
    snprintf(o.outcome, sizeof o.outcome, "%s",
             ref_outcome(json_string_value(json_object_get(j, "outcome"))));
    ref_detail(j, &o);
    json_t *ttfm = json_object_get(j, "ttfm_us"), *tbm = json_object_get(j, "tbm_us");
    int rc = 0;
    if (json_is_number(ttfm)) {
        o.ttfm_us = json_number_value(ttfm);
        rc = tb_vec_push(&sum->ttfm, o.ttfm_us) ||
             tb_vec_push(&sum->ttfm_cpu, json_number_value(json_object_get(j, "ttfm_cpu_us")));
    }
    size_t k;
    json_t *v;
    json_array_foreach(tbm, k, v) {
        double us = json_number_value(v);
        o.max_us = us > o.max_us ? us : o.max_us;
        o.masks++;
        rc = rc || tb_vec_push(&sum->tbm, us);
    }
    json_array_foreach(json_object_get(j, "tbm_cpu_us"), k, v) /* llguidance's only */
        rc = rc || tb_vec_push(&sum->tbm_cpu, json_number_value(v));
    json_array_foreach(json_object_get(j, "instances"), k, v)
        o.tokens += (uint64_t)json_integer_value(json_object_get(v, "tokens"));
    json_decref(j);
    mb_count(sum, o.outcome);
    return rc ? tb_fail(err, "out of memory") : xp_env_outcome(env, &o, err);
}

/* Whether tokbench compiled item's schema and ran its instances: its
 * outcome is passing, validation error or invalidation error. */
static int ran_here(const xp_env_t *env, const char *item)
{
    for (size_t i = 0; i < env->outcomes.len; i++) {
        const xp_outcome_t *o = &env->outcomes.data[i];
        if ((!o->impl[0] || !strcmp(o->impl, "tokbench")) && !strcmp(o->item, item))
            return !strcmp(o->outcome, "passing") || strstr(o->outcome, "validation");
    }
    return 0;
}

/* XGrammar reads the schema files' paths on stdin and tokenizes them
 * itself. */
static int xg_prepare(const mb_t *s, const size_t *pick, size_t n, int masks, mb_cmd_t *c,
                      tb_err_t *why)
{
    const char *root = xp_data_root(why);
    if (!root)
        return 1;
    snprintf(c->prog, sizeof c->prog, "%s/scripts/ref/xgrammar.js", root);
    snprintf(c->in, sizeof c->in, "%s/xgrammar.list", s->tmpdir);
    FILE *f = fopen(c->in, "w");
    for (size_t i = 0; f && i < n; i++)
        fprintf(f, "%s\n", s->files[pick[i]]);
    if (!f || fclose(f))
        return tb_fail(why, "%s: %s", c->in, strerror(errno)), 1;
    /* without masks the list ends before "--masks" */
    char *argv[] = {"node", c->prog, "maskbench", "--vocab", (char *)s->vocab, "--timeout",
                    c->secs, masks ? "--masks" : NULL, "--instance-index", "0", NULL};
    memcpy(c->argv, argv, sizeof argv);
    return 0;
}

/* One jobs line for llguidance: the schema file and its instances (the
 * first only with masks) as tokbench tokenizes them. */
static int job_line(const mb_t *s, const char *path, int masks, FILE *f, tb_err_t *why)
{
    json_error_t je;
    json_t *file = xp_py_load_file(path, &je), *insts = json_array(), *tests;
    json_t *job = json_pack("{s:s, s:o}", "file", path, "instances", insts);
    int rc = job ? 0 : -1;
    size_t k;
    json_t *t;
    tests = json_object_get(file, "tests"); /* unreadable: llguidance says bad_input */
    json_array_foreach(tests, k, t) {
        if (rc || (masks && k > 0))
            break;
        tb_buf_t text = {0};
        tok_ids_t ids = {0};
        json_t *arr = json_array();
        if (!arr || xp_py_dumps(json_object_get(t, "data"), &text) ||
            tok_encode(s->tok, text.data, text.len, &ids, why))
            rc = -1;
        for (size_t i = 0; !rc && i < ids.len; i++)
            rc = json_array_append_new(arr, json_integer(ids.data[i]));
        if (!rc)
            rc = json_array_append_new(insts, json_pack("{s:I, s:b, s:O}", "index",
                                       (json_int_t)k, "valid",
                                       json_is_true(json_object_get(t, "valid")), "ids", arr));
        json_decref(arr);
        tb_buf_free(&text);
        free(ids.data);
    }
    char *line = rc ? NULL : json_dumps(job, JSON_COMPACT);
    if (line)
        fprintf(f, "%s\n", line);
    else
        rc = tb_fail(why, "%s: its instances could not be written for llguidance%s%s", path,
                     why->msg[0] ? ": " : "", why->msg);
    free(line);
    json_decref(job);
    json_decref(file);
    return rc;
}

/* llguidance reads a jobs file of token ids and the vocabulary's bytes. */
static int llg_prepare(const mb_t *s, const size_t *pick, size_t n, int masks, mb_cmd_t *c,
                       tb_err_t *why)
{
    const char *root = xp_data_root(why);
    if (!root)
        return 1;
    snprintf(c->prog, sizeof c->prog, "%s/build/llguidance/target/release/tb-llguidance", root);
    if (access(c->prog, X_OK))
        return tb_fail(why, "no %s (`make llguidance-ref` builds it where cargo and "
                       "../shared/llguidance are)", c->prog), 1;
    int32_t eos = tok_vocab(s->tok)->eos;
    if (eos < 0)
        return tb_fail(why, "the vocabulary names no end-of-text token for llguidance"), 1;
    snprintf(c->eos, sizeof c->eos, "%d", eos);
    snprintf(c->tokens, sizeof c->tokens, "%s/llguidance.tokens", s->tmpdir);
    snprintf(c->jobs, sizeof c->jobs, "%s/llguidance.jobs", s->tmpdir);
    snprintf(c->in, sizeof c->in, "/dev/null");
    int rc = xp_llg_write_tokens(tok_vocab(s->tok), c->tokens, why);
    FILE *f = rc ? NULL : fopen(c->jobs, "w");
    if (!rc && !f)
        return tb_fail(why, "%s: %s", c->jobs, strerror(errno)), 1;
    for (size_t i = 0; !rc && i < n; i++)
        rc = job_line(s, s->files[pick[i]], masks, f, why);
    if (f && fclose(f) && !rc)
        rc = tb_fail(why, "%s: %s", c->jobs, strerror(errno));
    char *argv[] = {c->prog, "maskbench", "--tokens", c->tokens, "--eos", c->eos, "--timeout",
                    c->secs, c->jobs, masks ? "--masks" : NULL, NULL};
    memcpy(c->argv, argv, sizeof argv);
    return rc;
}

static const mb_engine_t engines[MB_REFS] = {
    [MB_XGRAMMAR] = {"xgrammar", "XGrammar", "xgrammar", "xgtimeout", "xgmasks",
                     "run scripts/ref/xgrammar.js maskbench by hand to see why", xg_prepare},
    [MB_LLGUIDANCE] = {"llguidance", "llguidance", "llguidance", "llgtimeout", "llgmasks",
                       "run build/llguidance/target/release/tb-llguidance by hand to see why",
                       llg_prepare},
};

void mb_ref_options(mb_ref_id_t ref, const char **every, const char **timeout,
                    const char **masks)
{
    *every = engines[ref].opt_every;
    *timeout = engines[ref].opt_timeout;
    *masks = engines[ref].opt_masks;
}

/* Runs engine r on every Nth selected schema (N counted over the selection
 * of every shard, so that the shards' samples make the whole run's), its
 * output into out; with masks, only on the first of them (as many as its
 * masks option says) that tokbench ran, with their masks (first instance
 * each).  *n: the schemas given.  0, 1 with why when it could not run, -1
 * on memory. */
static int ref_exec(const mb_t *s, mb_ref_id_t r, const xp_env_t *env, int masks,
                    tb_buf_t *out, size_t *n, tb_err_t *why)
{
    const mb_engine_t *e = &engines[r];
    const mb_ref_opts_t *o = &s->ref[r];
    size_t *pick = malloc(sizeof *pick * (s->n ? s->n : 1));
    if (!pick)
        return tb_fail(why, "out of memory"), -1;
    *n = 0;
    for (size_t i = 0; i < s->n && (!masks || *n < o->masks); i++) {
        const char *base = strrchr(s->files[i], '/');
        if ((s->pos[i] + 1) % o->every)
            continue;
        if (!masks || ran_here(env, base ? base + 1 : s->files[i]))
            pick[(*n)++] = i;
    }
    mb_cmd_t c = {0};
    snprintf(c.secs, sizeof c.secs, "%u", o->timeout);
    int failed = *n ? e->prepare(s, pick, *n, masks, &c, why) : 0;
    double wall;
    fprintf(stderr, masks ? "maskbench: masks against %s's on %zu schemas\n"
                          : "maskbench: %s on %zu schemas\n", e->name, *n);
    if (!failed && *n)
        failed = xp_run_capture(c.argv, c.in, out, &wall, why) ? 1 : 0;
    if (strcmp(c.in, "/dev/null"))
        unlink(c.in);
    if (c.jobs[0])
        unlink(c.jobs);
    if (c.tokens[0])
        unlink(c.tokens);
    free(pick);
    return failed;
}

/* The next line of the NUL-terminated text at *p, cut at its '\n' (*p then
 * points past it); NULL at the end.  The reference engines print one JSON
 * line per schema. */
static char *next_line(char **p)
{
    if (!*p || !**p)
        return NULL;
    char *line = *p, *end = line + strcspn(line, "\n");
    *p = end + (*end != 0);
    *end = 0;
    return line;
}

/* Runs engine r on its sample and stores what it printed.  -1 only on
 * memory; an engine that could not run, or stopped early, is in env's
 * note. */
static int run_engine(mb_t *s, mb_ref_id_t r, xp_env_t *env, tb_err_t *err)
{
    const mb_engine_t *e = &engines[r];
    tb_err_t why = {{0}};
    tb_buf_t out = {0};
    size_t n;
    int failed = ref_exec(s, r, env, 0, &out, &n, &why);
    if (failed < 0)
        return tb_fail(err, "%s", why.msg);
    mb_sum_t sum = {0};
    size_t lines = 0;
    int rc = 0;
    char *p = (char *)out.data, *line;
    while (rc >= 0 && (line = next_line(&p))) {
        rc = ref_line(&sum, e->impl, line, env, err);
        lines += rc == 0;
    }
    rc = rc < 0 ? -1 : 0;
    mb_progress(n, &sum, 1);
    if (!rc)
        rc = mb_record_sum(env, e->impl, &sum, err);
    if (!rc && (failed || lines < n)) {
        size_t used = strlen(env->note);
        snprintf(env->note + used, sizeof env->note - used, "%s%s: %zu of %zu schemas "
                 "measured: %.300s%s%s", used ? "; " : "", e->impl, lines, n,
                 failed ? why.msg : "", failed ? " (" : "", failed ? e->by_hand : "");
        if (failed)
            append(env->note, sizeof env->note, "", ")");
    }
    tb_buf_free(&out);
    mb_sum_free(&sum);
    return rc;
}

/* ---- masks against the reference's ----------------------------------------------- */

/* One schema's comparison: masks compared, and differing tokens by cause. */
typedef struct {
    size_t points, differing, counts[XP_XG_CAUSES];
    char first[200]; /* the first unexplained token, in words */
    TB_VEC(char *) names; /* the property names the schema defines, sorted */
    gr_gram_t *json;      /* RFC 8259 JSON, for xgdiff's "not JSON"; may be NULL */
} mb_cmp_t;

/* Every name under a "properties" keyword anywhere in v into names. */
static int collect_names(json_t *v, mb_cmp_t *c)
{
    const char *key;
    json_t *x;
    size_t i;
    if (json_is_array(v))
        json_array_foreach(v, i, x)
            if (collect_names(x, c))
                return -1;
    if (!json_is_object(v))
        return 0;
    json_t *props = json_object_get(v, "properties");
    json_object_foreach(json_is_object(props) ? props : NULL, key, x) {
        char *copy = strdup(key);
        if (!copy || tb_vec_push(&c->names, copy))
            return free(copy), -1;
    }
    json_object_foreach(v, key, x)
        if (collect_names(x, c))
            return -1;
    return 0;
}


/* Lists one point where the masks differ on stderr and keeps the first
 * unexplained token in c->first. */
static void list_point(const mb_t *s, const mb_engine_t *e, const char *item, size_t inst,
                       size_t at,
                       const tb_buf_t *text, size_t off, const size_t counts[XP_XG_CAUSES],
                       uint32_t unexplained, int ours, mb_cmp_t *c)
{
    size_t from = off > 40 ? off - 40 : 0;
    char tok[64] = "";
    if (unexplained != UINT32_MAX) {
        size_t n;
        const uint8_t *b = tok_vocab_token(tok_vocab(s->tok), unexplained, &n);
        tb_utf8_escape(b, n, tok, sizeof tok);
    }
    fprintf(stderr, "%s: %s instance %zu token %zu after '...%.*s'%s:", e->opt_masks, item,
            inst, at,
            (int)(off - from), (const char *)text->data + from,
            xp_xg_at_name(text->data, off) ? " (at a property name)" : "");
    for (int k = 0; k < XP_XG_CAUSES; k++)
        if (counts[k])
            fprintf(stderr, " %s %zu;", xp_xg_cause_names[k], counts[k]);
    const char *whose = xp_xg_cause_names[ours ? XP_XG_OURS : XP_XG_THEIRS];
    if (tok[0])
        fprintf(stderr, " e.g. '%s' (%s)", tok, whose);
    fputc('\n', stderr);
    if (tok[0] && !c->first[0])
        snprintf(c->first, sizeof c->first, "instance %zu token %zu: '%s' (%s)", inst, at, tok,
                 whose);
}

/* The reference's hex mask i of list into set; 0 if there is none. */
static int hex_mask(json_t *list, size_t i, tb_bitset_t *set, tb_err_t *err)
{
    const char *hex = json_string_value(json_array_get(list, i));
    if (!hex)
        return 0;
    return xp_xg_read_hex(hex, set, err) ? -1 : 1;
}

/* Instance `in` of the reference's line (its ids, masks and XGrammar's strict masks)
 * against tokbench's masks through m, from the start; theirs[1]: room for
 * the strict masks. */
static int compare_instance(const mb_t *s, const mb_engine_t *e, gr_matcher_t *m,
                            json_t *tests, json_t *in,
                            const char *item, tb_bitset_t *ours, tb_bitset_t theirs[2],
                            mb_cmp_t *c, tb_err_t *err)
{
    size_t k = (size_t)json_integer_value(json_object_get(in, "index"));
    json_t *masks = json_object_get(in, "masks"), *xids = json_object_get(in, "ids");
    json_t *strict = json_object_get(in, "strict_masks");
    tb_buf_t text = {0};
    tok_ids_t ids = {0};
    int rc = xp_py_dumps(json_object_get(json_array_get(tests, k), "data"), &text) ||
                     tok_encode(s->tok, text.data, text.len, &ids, err) ? -1 : 0;
    for (size_t i = 0; !rc && i < json_array_size(xids); i++)
        if (i >= ids.len || (json_int_t)ids.data[i] != json_integer_value(json_array_get(xids, i)))
            rc = tb_fail(err, "instance %zu: token %zu differs from the one %s was fed", k, i,
                         e->name);
    if (!rc)
        gr_matcher_rollback(m, gr_matcher_tokens(m));
    xp_xg_ctx_t ctx = {.vocab = tok_vocab(s->tok), .trie = s->trie, .g = m->g, .schema = 1,
                       .llguidance = e == &engines[MB_LLGUIDANCE],
                       .names = c->names.data, .n_names = c->names.len, .json = c->json};
    size_t off = 0;
    for (size_t i = 0; !rc && i < json_array_size(masks) && i < ids.len; i++) {
        size_t counts[XP_XG_CAUSES] = {0}, len, at;
        uint32_t unexplained;
        int has_strict = hex_mask(strict, i, &theirs[1], err), has = 0;
        if (has_strict < 0 || gr_matcher_mask(m, s->trie, ours, NULL, err) ||
            (has = hex_mask(masks, i, &theirs[0], err)) < 0) {
            char why[256];
            snprintf(why, sizeof why, "%.200s", err->msg);
            rc = tb_fail(err, "instance %zu, before token %zu: %s", k, i, why);
            break;
        }
        if (!has) {
            rc = tb_fail(err, "instance %zu: %s's mask %zu is not a string", k, e->name, i);
            break;
        }
        ctx.strict = has_strict ? &theirs[1] : NULL;
        size_t d = xp_xg_diff(&ctx, ours, &theirs[0], text.data, off, gr_matcher_state(m),
                              counts, &unexplained);
        c->points++;
        c->differing += d > 0;
        for (int j = 0; j < XP_XG_CAUSES; j++)
            c->counts[j] += counts[j];
        if (d)
            list_point(s, e, item, k, i, &text, off, counts, unexplained,
                       unexplained != UINT32_MAX && tb_bitset_get(ours, unexplained), c);
        const uint8_t *b = tok_vocab_token(tok_vocab(s->tok), ids.data[i], &len);
        int r = gr_matcher_consume(m, b, len, &at, err);
        if (r) { /* refused (both engines' masks up to it compared) or an error */
            rc = r < 0 ? -1 : 0;
            break;
        }
        off += len;
    }
    tb_buf_free(&text);
    free(ids.data);
    return rc;
}

/* The comparison of one line of xgrammar.js maskbench --masks as an
 * outcome row of impl "xgrammar masks" or "llguidance masks"; its schema
 * compiled here again. */
static int compare_schema(const mb_t *s, const mb_engine_t *e, const char *path, json_t *line,
                          gr_gram_t *json, xp_outcome_t *o, tb_err_t *err)
{
    json_error_t je;
    json_t *file = xp_py_load_file(path, &je);
    int empty;
    gr_gram_t *g = file ? mb_compile(s, json_object_get(file, "schema"), &empty, err) : NULL;
    gr_matcher_t m = {0};
    tb_bitset_t ours = {0}, theirs[2] = {{0}};
    mb_cmp_t c = {.json = json};
    int rc = g ? 0 : -1;
    if (!file)
        tb_fail(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    if (!rc && collect_names(json_object_get(file, "schema"), &c))
        rc = tb_fail(err, "out of memory");
    if (c.names.len)
        qsort(c.names.data, c.names.len, sizeof *c.names.data, tb_cmp_strs);
    if (!rc && (gr_matcher_init(&m, g, s->keys.max_len, err) ||
                (s->slicer && gr_matcher_use_slicer(&m, s->slicer, err)) ||
                tb_bitset_init(&ours, trie_mask_bits(s->trie)) ||
                tb_bitset_init(&theirs[0], tok_vocab(s->tok)->size) ||
                tb_bitset_init(&theirs[1], tok_vocab(s->tok)->size)))
        rc = -1;
    size_t k;
    json_t *in;
    json_array_foreach(json_object_get(line, "instances"), k, in) {
        if (!rc)
            rc = compare_instance(s, e, &m, json_object_get(file, "tests"), in, o->item, &ours,
                                  theirs, &c, err);
    }
    size_t unexplained = c.counts[XP_XG_OURS] + c.counts[XP_XG_THEIRS];
    const char *xg = json_string_value(json_object_get(line, "outcome"));
    snprintf(o->outcome, sizeof o->outcome, "%s", rc ? "crash" : !c.points ? "not compared"
             : !c.differing ? "same" : unexplained ? "unexplained differences"
             : "explained differences");
    o->masks = c.points;
    if (rc)
        snprintf(o->detail, sizeof o->detail, "%.400s", err->msg);
    else if (!c.points)
        snprintf(o->detail, sizeof o->detail, "no mask to compare: %s's outcome %s, "
                 "%zu instances", e->name, xg ? xg : "none",
                 json_array_size(json_object_get(line, "instances")));
    else
        snprintf(o->detail, sizeof o->detail, "%zu of %zu masks differ", c.differing, c.points);
    for (int j = 0; !rc && j < XP_XG_CAUSES; j++) {
        char part[96];
        snprintf(part, sizeof part, "%s: %zu tokens", xp_xg_cause_names[j], c.counts[j]);
        if (c.counts[j])
            append(o->detail, sizeof o->detail, "; ", part);
    }
    if (c.first[0])
        append(o->detail, sizeof o->detail, "; first unexplained: ", c.first);
    for (size_t i = 0; i < c.names.len; i++)
        free(c.names.data[i]);
    free(c.names.data);
    tb_bitset_free(&ours);
    tb_bitset_free(&theirs[0]);
    tb_bitset_free(&theirs[1]);
    gr_matcher_free(&m);
    gr_gram_free(g);
    json_decref(file);
    return 0;
}

/* Compares masks with engine r's on the first schemas of its sample that
 * both engines compile (as many as its masks option says), first instance
 * of each (a mask is 32 KB of hex for Llama 3): one outcome row per
 * schema, every point where they differ listed on stderr.  -1 only on
 * memory. */
static int run_masks(mb_t *s, mb_ref_id_t r, xp_env_t *env, tb_err_t *err)
{
    const mb_engine_t *e = &engines[r];
    tb_err_t why = {{0}};
    tb_buf_t out = {0};
    size_t n;
    int failed = ref_exec(s, r, env, 1, &out, &n, &why);
    if (failed < 0)
        return tb_fail(err, "%s", why.msg);
    const char *root = xp_data_root(&why);
    char grammar[4200];
    gr_cfg_t cfg;
    gr_gram_t *json = NULL;
    snprintf(grammar, sizeof grammar, "%s/experiments/grammars/json.lark", root ? root : ".");
    if (!failed && (gr_cfg_load(&cfg, grammar, "lark", &why) ||
                    !(json = gr_gram_new(&cfg, NULL, &why))))
        failed = 1;
    size_t compared = 0, same = 0, none = 0;
    int rc = 0;
    char *p = (char *)out.data, *line;
    while (!rc && (line = next_line(&p))) {
        json_t *j = json_loads(line, 0, NULL);
        const char *item = json_string_value(json_object_get(j, "file"));
        const char *outcome = json_string_value(json_object_get(j, "outcome"));
        for (size_t i = 0; item && outcome && strcmp(outcome, "compile_error") && i < s->n; i++) {
            const char *base = strrchr(s->files[i], '/');
            if (strcmp(base ? base + 1 : s->files[i], item))
                continue;
            xp_outcome_t o = {0};
            snprintf(o.impl, sizeof o.impl, "%s masks", e->impl);
            snprintf(o.item, sizeof o.item, "%s", item);
            rc = compare_schema(s, e, s->files[i], j, json, &o, err) ||
                 xp_env_outcome(env, &o, err);
            compared++;
            same += !strcmp(o.outcome, "same") || !strcmp(o.outcome, "explained differences");
            none += !strcmp(o.outcome, "not compared");
            break;
        }
        json_decref(j);
    }
    fprintf(stderr, "maskbench: masks against %s's: %zu schemas compared, %zu without an "
            "unexplained difference; %zu with no mask to compare\n", e->name, compared - none,
            same, none);
    if (!rc && (failed || compared < n)) {
        size_t used = strlen(env->note);
        snprintf(env->note + used, sizeof env->note - used, "%s%s masks: %zu of %zu "
                 "schemas compared%s%.300s", used ? "; " : "", e->impl, compared, n,
                 failed ? ": " : "", failed ? why.msg : "");
    }
    tb_buf_free(&out);
    gr_gram_free(json);
    return rc;
}

int mb_run_ref(mb_t *s, mb_ref_id_t r, xp_env_t *env, tb_err_t *err)
{
    int rc = run_engine(s, r, env, err);
    if (!rc && s->ref[r].masks && !(env->stop && *env->stop))
        rc = run_masks(s, r, env, err);
    return rc;
}
