/* jsontext: number literals of JSON text (see jsontext.h). */
#include "jsontext.h"

#include <string.h>

static int digit(char ch) { return ch >= '0' && ch <= '9'; }

int tb_json_next_number(const char *t, size_t n, size_t *at, size_t *start)
{
    int in = 0; /* inside a string */
    for (size_t i = *at; i < n; i++) {
        char ch = t[i];
        if (in || (ch != '-' && !digit(ch))) {
            i += in && ch == '\\'; /* an escape's next character is no quote */
            in ^= ch == '"';
            continue;
        }
        size_t j = i + (ch == '-');
        int integer = 1;
        for (; j < n && (digit(t[j]) || (t[j] && strchr(".eE+-", t[j]))); j++)
            integer &= digit(t[j]);
        *start = i;
        *at = j;
        return integer;
    }
    *at = n;
    return -1;
}
