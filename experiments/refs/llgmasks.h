/*
 * llgmasks: tokbench's grammar masks against llguidance's, live, on the
 * grammars of llguidance's own test suite (the cases file that
 * scripts/extract-llg-tests.py writes; tests/test_llg_cases.c reads the
 * same for verdicts).  Each grammar is loaded here and its strings'
 * verdicts taken over bytes; each one that llguidance's tests load and
 * that loads here is then run on its passing strings, tokenized by
 * tokbench's tokenizer: llguidance (tb-llguidance maskbench --masks, one
 * job {"name", "lark", "instances"} per grammar) gives its mask before
 * every token, tokbench computes its own after the same text, and every
 * token one allows and the other refuses is put down to a cause
 * (xgdiff.h, its llguidance causes; on these grammars the end-of-text
 * token, bytes that are not UTF-8, and greedy lexing) or counted as
 * unexplained.  Used by tests/test_llg_masks.c (which fails on an
 * unexplained difference) and the suites driver (drv_suites.c, which
 * stores a row per grammar).
 */
#ifndef XP_LLGMASKS_H
#define XP_LLGMASKS_H

#include <stddef.h>
#include <stdint.h>

#include "../../base/err.h"
#include "../../tok/tokenizer.h"
#include "../../trie/trie.h"
#include "xgdiff.h"

/* The vocabulary as tb-llguidance reads it (its --tokens): line i the
 * bytes of token i in hex, a control or special token with toktrie's 0xFF
 * mark first (the keys' TRIE_SPECIALS_MARKED spelling), an id without
 * bytes an empty line.  1 with why on a file error, -1 on memory. */
int xp_llg_write_tokens(const tok_vocab_t *v, const char *path, tb_err_t *why);

/* What became of one grammar of the suite. */
typedef enum {
    XP_LLG_SAME,        /* every mask equal */
    XP_LLG_EXPLAINED,   /* masks differ, every token for a known cause */
    XP_LLG_UNEXPLAINED, /* some token differs for no known cause */
    XP_LLG_NOT_RUN,     /* loaded by both, but no passing string to run */
    XP_LLG_REFUSED_HERE, /* llguidance's tests load it, tokbench refuses it */
    XP_LLG_REFUSED,     /* llguidance refuses it on purpose (a test of its errors) */
    XP_LLG_REF_FAILED,  /* llguidance failed on it here: compile error, crash, timeout */
    XP_LLG_N
} xp_llg_verdict_t;

/* Short names, for listings and the results store. */
extern const char *const xp_llg_verdicts[XP_LLG_N];

typedef struct {
    char where[128];          /* FILE:LINE of the test's call */
    xp_llg_verdict_t verdict;
    int loaded;               /* loaded here */
    int json;                 /* a JSON Schema: `start: %json {...}` */
    size_t strings, agree;    /* strings; with llguidance's verdict here */
    size_t steps, equal;      /* masks compared; equal */
    size_t counts[XP_XG_CAUSES]; /* differing tokens by cause */
    char detail[512];         /* a refusal's message, the first unexplained token */
} xp_llg_grammar_t;

typedef struct {
    const char *cases;        /* scripts/extract-llg-tests.py's output */
    const char *prog;         /* tb-llguidance */
    const char *dir;          /* scratch folder for its input and output */
    const tok_tokenizer_t *tok;
    const trie_t *trie;       /* over tok's vocabulary, control tokens left out */
    size_t max_len;           /* its longest key */
    unsigned timeout;         /* seconds per grammar for llguidance */
    gr_gram_t *json;          /* RFC 8259 JSON (experiments/grammars/json.lark), for the
                               * causes of %json grammars; or NULL */
} xp_llg_run_t;

/* Runs the suite; on_grammar is called once per grammar, in the file's
 * order.  -1 with err when the cases cannot be read or llguidance cannot
 * be run at all, or as on_grammar returns. */
int xp_llg_masks(const xp_llg_run_t *r,
                 int (*on_grammar)(void *ctx, const xp_llg_grammar_t *g, tb_err_t *err),
                 void *ctx, tb_err_t *err);

#endif
