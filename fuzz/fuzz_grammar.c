/*
 * fuzz_grammar: grammar files through the readers (grammar/load.h): the
 * first byte picks the format ('g' GBNF, anything else Lark-style), the
 * rest is the text.  A grammar the readers accept is set up for masks
 * under small limits and its automaton explored breadth first from the
 * start (fuzz_gram_explore): every state's steps over every byte, and
 * whether it accepts.
 * Seeds: fuzz/corpus/grammar/ (experiments/grammars/ and
 * tests/fixtures/lark/features.lark with their format byte, and
 * templates.lark: Lark's templates, %extend, %override, %declare;
 * llg-dialect.lark, nested-lark.lark: parametric rules, a lone nullable
 * regex, nested %lark; lookaround.lark: Lark's look-around idioms).
 * Dictionary: fuzz/grammar.dict.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../grammar/load.h"
#include "support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    tb_err_t err;
    gr_cfg_t cfg;
    const char *format = data[0] == 'g' ? "gbnf" : "lark";
    if (gr_cfg_parse(&cfg, (const char *)data + 1, size - 1, "fuzz", format, &err))
        return 0;
    fuzz_gram_explore(&cfg, 64);
    return 0;
}
