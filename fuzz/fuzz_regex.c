/*
 * fuzz_regex: the regex parser (lexer/regex.h) on the input as a pattern,
 * then, for a pattern it accepts, a bounded exploration of its lazy DFA
 * (lexer/deriv.h) under small limits: every byte from the first states,
 * the allowed-bytes sets checked against the steps.
 * Seeds: fuzz/corpus/regex/ (real-world and JSON-schema style patterns).
 * Dictionary: fuzz/regex.dict.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lexer/deriv.h"
#include "../lexer/regex.h"
#include "support.h"

/* States explored per pattern: each costs 256 steps, and a step from a
 * Unicode class's state derives a term of thousands of ranges (about 12 ms
 * under the sanitizers), so a few states keep the target fast enough. */
#define EXPLORE_STATES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_err_t err;
    if (memchr(data, 0, size)) { /* lex_dfa_new takes C strings: the parser alone */
        lex_terms_t t;
        lex_term_t root;
        if (lex_terms_init(&t, fuzz_dfa_opts.max_terms, &err))
            abort();
        lex_regex_parse(&t, (const char *)data, size, &root, &err);
        lex_terms_free(&t);
        return 0;
    }
    char *pattern = fuzz_strndup(data, size);
    lex_dfa_t *d = lex_dfa_new(pattern, &fuzz_dfa_opts, &err);
    if (d) {
        fuzz_dfa_explore(d, EXPLORE_STATES, NULL, NULL);
        lex_dfa_free(d);
    }
    free(pattern);
    return 0;
}
