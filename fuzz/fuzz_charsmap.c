/*
 * fuzz_charsmap: SentencePiece precompiled_charsmap blobs (tok/charsmap.h).
 * The input is the blob: tok_charsmap_open validates it, and a blob it
 * accepts is walked (longest and shortest match, replacement strings) over
 * a few fixed texts and over the blob's own bytes.  The header-only view
 * is walked too, since tok/charsmap.h promises that even an unvalidated
 * blob is never read out of bounds (nor the pool by a bad value).
 * Seeds: fuzz/corpus/charsmap/ (blobs written by trie_charsmap_build).
 */
#include <stdint.h>
#include <string.h>

#include "../tok/charsmap.h"

static void walk(const tok_charsmap_t *cm, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t v;
        size_t len;
        if (tok_charsmap_longest(cm, s + i, n - i, &v))
            tok_charsmap_string(cm, v, &len);
        if (tok_charsmap_shortest(cm, s + i, n - i, &v))
            tok_charsmap_string(cm, v, &len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char text[] = "abc \xef\xbc\xa1\xe2\x85\xa0 \xc3\xa9\xe1\x84\x80\xe1\x85\xa1 "
                               "\xe2\x80\x8b\t\n\x01\x7f\xc2\xa0";
    tok_charsmap_t cm;
    tb_err_t err;
    if (!tok_charsmap_view(&cm, data, size, &err)) {
        walk(&cm, (const uint8_t *)text, sizeof text - 1);
        walk(&cm, data, size < 256 ? size : 256);
    }
    if (!tok_charsmap_open(&cm, data, size, &err)) {
        walk(&cm, (const uint8_t *)text, sizeof text - 1);
        walk(&cm, data, size < 256 ? size : 256);
    }
    return 0;
}
