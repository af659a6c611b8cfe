/*
 * fuzz_suite: experiment suite CSV files (experiments/drivers/suite.h) through
 * xp_suite_parse, and every option of every row it accepts read back.
 * Seeds: fuzz/corpus/suite/ (the suites of experiments/suites/ and the
 * test fixtures' shapes).  Dictionary: fuzz/suite.dict.
 */
#include <stdint.h>

#include "../experiments/drivers/suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keys[] = {"n", "reference", "warmup", "slicer", "", "="};
    xp_suite_t s;
    tb_err_t err;
    if (xp_suite_parse("fuzz.csv", (const char *)data, size, &s, &err))
        return 0;
    for (size_t i = 0; i < s.n; i++)
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            char buf[64];
            xp_row_option(&s.rows[i], keys[k], buf, sizeof buf);
        }
    xp_suite_free(&s);
    return 0;
}
