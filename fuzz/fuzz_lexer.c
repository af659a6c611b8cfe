/*
 * fuzz_lexer: multi-lexeme lexer specs (lexer/lexemes.h) through
 * lex_lexer_parse, then, for a spec it accepts, a bounded exploration of
 * the lexer DFA under small limits, asking every state reached which
 * lexemes are possible, ending and may start there.
 * Seeds: fuzz/corpus/lexer/ (the specs of experiments/lexers/ and small
 * ones).  Dictionary: fuzz/lexer.dict.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../base/bitset.h"
#include "../lexer/lexemes.h"
#include "support.h"

static void visit(lex_dfa_t *d, uint32_t s, void *arg)
{
    tb_bitset_t *set = arg;
    lex_dfa_possible(d, s, set);
    lex_dfa_ending(d, s, set);
    lex_dfa_may_start(d, s, set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_err_t err;
    lex_dfa_t *d = lex_lexer_parse((const char *)data, size, "fuzz.lex", &fuzz_dfa_opts, &err);
    if (!d)
        return 0;
    tb_bitset_t set;
    if (tb_bitset_init(&set, lex_dfa_nlexemes(d)))
        abort();
    fuzz_dfa_explore(d, 16, visit, &set);
    tb_bitset_free(&set);
    lex_dfa_free(d);
    return 0;
}
