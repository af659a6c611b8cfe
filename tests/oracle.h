/*
 * oracle: token masks computed by means that share nothing with the
 * derivative DFA (lexer/deriv.c), for the lexer tests and the differential
 * fuzz target (fuzz/fuzz_mask.c):
 *   - a Thompson NFA built from the parsed terms and simulated over each
 *     token's bytes from the NFA state set after a prefix (a token is
 *     allowed iff a state that can still reach the end survives);
 *   - PCRE2 partial matching (PCRE2_PARTIAL_HARD: is prefix + token the
 *     prefix of some match?), for texts that are valid UTF-8.
 * No cmocka here, so that programs other than the tests can link it; an
 * allocation failure aborts.
 */
#ifndef TESTS_ORACLE_H
#define TESTS_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "../base/bitset.h"
#include "../base/err.h"
#include "../trie/trie.h"

enum { NFA_BYTES, NFA_SPLIT, NFA_MATCH, NFA_DEAD };

typedef struct {
    int kind;
    uint64_t set[4]; /* NFA_BYTES */
    uint32_t e1, e2; /* BYTES: next = e1; SPLIT: both */
} nfa_state_t;

typedef struct {
    nfa_state_t *s;
    uint32_t n, cap;
    uint32_t match;
    uint8_t *live; /* can reach the match state */
    uint32_t *stamp, gen;
    uint32_t *work;
} nfa_t;

/* A state set: the live consuming states (and the match state) reached;
 * v has room for every state of the NFA. */
typedef struct {
    uint32_t *v;
    uint32_t n;
} nset_t;

/* The NFA of pattern (parsed by lexer/regex.c) and its start state; -1
 * with the parser's message in err if the pattern is refused. */
int nfa_build(nfa_t *a, const char *pattern, uint32_t *start, tb_err_t *err);
void nfa_free(nfa_t *a);

/* The state set after text[0..n) from start, into a fresh out->v (the
 * caller frees it); out->n is 0 when text is not a prefix of a match. */
void nfa_after(nfa_t *a, uint32_t start, const uint8_t *text, size_t n, nset_t *out);

/* The oracle's mask: bit id of every key whose bytes keep a live state
 * from `from` (aliases follow their primary id). */
void nfa_mask(nfa_t *a, const nset_t *from, const trie_keys_t *k, tb_bitset_t *mask);

/* PCRE2: is s[0..n) a prefix of some match of re?  re must be anchored
 * at both ends (compile "(?:P)\z" with PCRE2_ANCHORED | PCRE2_UTF). */
int pcre_viable(pcre2_code *re, pcre2_match_data *md, const uint8_t *s, size_t n);

#endif
