/*
 * probe-pcre2: prints the General_Category that the installed PCRE2 gives
 * every code point, for scripts/gen-uprops.pl (built and run by the
 * Makefile; nothing of it goes into the library).
 *
 *   probe-pcre2 Cc Cf Cn ...   (the leaf categories' short names)
 *
 * Output: "unicode V" (PCRE2_CONFIG_UNICODE_VERSION), then one line
 * "LO HI NAME" (hex) per maximal run of code points in one category.  A
 * code point is classified by matching it, alone, against
 * (\p{Cc})|(\p{Cf})|...: the group that takes it names its category.
 * Surrogates, which UTF-8 cannot hold, are reported as Cs.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <string.h>

#include "../base/utf8.h"

int main(int argc, char **argv)
{
    char pat[2048] = "";
    int cs = -1;
    for (int i = 1; i < argc; i++) {
        if (strlen(pat) + strlen(argv[i]) + 12 >= sizeof pat)
            return fprintf(stderr, "probe-pcre2: too many names\n"), 2;
        strcat(pat, i > 1 ? "|(\\p{" : "(\\p{");
        strcat(pat, argv[i]);
        strcat(pat, "})");
        if (!strcmp(argv[i], "Cs"))
            cs = i - 1;
    }
    int code;
    PCRE2_SIZE at;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_ANCHORED, &code, &at, NULL);
    if (argc < 2 || cs < 0 || !re)
        return fprintf(stderr, "probe-pcre2: want the leaf categories, Cs "
                               "among them\n"), 2;
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    char version[64];
    pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, version);
    printf("unicode %s\n", version);
    int run = -2;
    unsigned lo = 0;
    for (unsigned cp = 0; cp <= 0x110000; cp++) {
        int leaf = -1;
        if (cp == 0x110000)
            leaf = -3;
        else if (cp >= 0xD800 && cp <= 0xDFFF)
            leaf = cs;
        else {
            uint8_t u[4];
            size_t n = tb_utf8_encode(cp, u);
            if (pcre2_match(re, u, n, 0, 0, md, NULL) > 0) {
                PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
                for (int g = 1; g < argc && leaf < 0; g++)
                    if (ov[2 * g] != PCRE2_UNSET)
                        leaf = g - 1;
            }
            if (leaf < 0)
                return fprintf(stderr, "probe-pcre2: U+%04X is in no category\n",
                                cp), 1;
        }
        if (leaf != run) {
            if (run >= 0)
                printf("%x %x %s\n", lo, cp - 1, argv[run + 1]);
            run = leaf;
            lo = cp;
        }
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return 0;
}
