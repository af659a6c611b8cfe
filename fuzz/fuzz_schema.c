/*
 * fuzz_schema: JSON Schemas through the compiler (grammar/schema.h); a
 * schema it accepts is set up for masks under small limits and its
 * automaton explored breadth first from the start (fuzz_gram_explore).
 * Seeds: fuzz/corpus/schema/ (small schemas of the tests and of the kinds
 * MaskBench holds).  Dictionary: fuzz/schema.dict.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../grammar/schema.h"
#include "support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_err_t err;
    gr_cfg_t cfg;
    if (gr_cfg_init(&cfg, "fuzz.json", &err))
        abort();
    if (gr_schema_compile(&cfg, (const char *)data, size, NULL, &err)) {
        gr_cfg_free(&cfg);
        return 0;
    }
    fuzz_gram_explore(&cfg, 64);
    return 0;
}
