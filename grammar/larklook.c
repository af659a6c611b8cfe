/*
 * larklook: Lark's look-around idioms rewritten (larklook.h says which
 * and why).  The body is scanned once, escapes and classes copied whole,
 * and each idiom is recognised by its text where it starts.
 */
#include "larklook.h"

#include <string.h>

/* An escaped string's body before its closing quotes. */
static const char BODY[] = ".*?(?<!\\\\)(\\\\\\\\)*?";
/* A C comment's body and end. */
static const char COMMENT[] = "(\\*(?!\\/)|[^*])*\\*\\/";
static const char COMMENT_AS[] = "(?:[^*]|\\*+[^*/])*\\*+\\/";
/* A slash-delimited body that does not start with a slash. */
static const char SLASHED[] = "\\/(?!\\/)(";

static int at(const char *s, size_t n, size_t i, const char *w, size_t wn)
{
    return n - i >= wn && !memcmp(s + i, w, wn);
}

/* The length of the escape or class at s[i] (1 for another byte). */
static size_t unit(const char *s, size_t n, size_t i)
{
    if (s[i] == '\\')
        return i + 1 < n ? 2 : 1;
    if (s[i] != '[')
        return 1;
    size_t k = i + 1 < n && s[i + 1] == '^' ? i + 2 : i + 1;
    if (k < n && s[k] == ']')
        k++;
    while (k < n && s[k] != ']')
        k += s[k] == '\\' ? 2 : 1;
    return (k < n ? k + 1 : n) - i;
}

/* The offset of the ')' closing the group that starts at s[i] == '(', or
 * n. */
static size_t close_of(const char *s, size_t n, size_t i)
{
    int depth = 0;
    for (; i < n; i += unit(s, n, i)) {
        depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
        if (!depth)
            return i;
    }
    return n;
}

/* The body of a string closed by q (1 or 3 quotes): units that are
 * neither the quote nor a backslash, or a backslash and any character;
 * before each, up to two quotes when q has three. */
static int string_body(tb_buf_t *out, char q, int triple, int dotall)
{
    char cls[12] = {'[', '^', q, '\\', '\\', 0};
    if (!dotall)
        strcat(cls, "\\n");
    strcat(cls, "]");
    char qs[4] = {q, q, q, 0};
    return tb_buf_put(out, "(?:", 3) ||
           (triple && (tb_buf_putc(out, (uint8_t)q) || tb_buf_put(out, "{0,2}(?:", 8))) ||
           tb_buf_put(out, cls, strlen(cls)) || tb_buf_put(out, "|\\\\.", 4) ||
           (triple && tb_buf_putc(out, ')')) || tb_buf_put(out, ")*", 2) ||
           tb_buf_put(out, qs, triple ? 3 : 1);
}

/* An escaped string's body at s[i] (after an optional opening Q(?!QQ) of
 * one quote): its rewrite appended and *i moved past it; 0 if there is
 * none at i. */
static int escaped_string(const char *s, size_t n, size_t *i, int dotall, tb_buf_t *out)
{
    for (int triple = 1; triple >= 0; triple--)
        for (const char *q = "\"'"; *q; q++) {
            char qs[4] = {*q, *q, *q, 0}, open[8] = {*q, '(', '?', '!', *q, *q, ')', 0};
            size_t k = *i, ql = triple ? 3 : 1;
            int opened = !triple && at(s, n, k, open, 7);
            k += opened ? 7 : 0;
            if (!at(s, n, k, BODY, sizeof BODY - 1) || !at(s, n, k + sizeof BODY - 1, qs, ql))
                continue;
            *i = k + sizeof BODY - 1 + ql;
            return ((opened && tb_buf_putc(out, (uint8_t)*q)) ||
                    string_body(out, *q, triple, dotall)) ? -1 : 1;
        }
    return 0;
}

/* \/(?!\/)(G)*?\/ at s[i] as \/(G)+?\/ (G's units cannot start with '/'
 * in the files that write it): 0 if the text is not that. */
static int slashed(const char *s, size_t n, size_t *i, tb_buf_t *out)
{
    if (!at(s, n, *i, SLASHED, sizeof SLASHED - 1))
        return 0;
    size_t open = *i + sizeof SLASHED - 2, close = close_of(s, n, open);
    if (close == n || !at(s, n, close + 1, "*?\\/", 4))
        return 0;
    *i = close + 3;
    return tb_buf_put(out, "\\/", 2) || tb_buf_put(out, s + open, close + 1 - open) ||
                   tb_buf_put(out, "+?", 2)
               ? -1
               : 1;
}

/* Whether s[i..n) is a negative look-ahead of one class or escape or
 * character, standing at the end of the regex. */
static int trailing_not(const char *s, size_t n, size_t i, int depth)
{
    if (depth || !at(s, n, i, "(?!", 3) || i + 3 >= n)
        return 0;
    size_t k = i + 3 + unit(s, n, i + 3);
    return k + 1 == n && s[k] == ')';
}

int gr_larklook_rewrite(const char *body, size_t n, int dotall, tb_buf_t *out)
{
    size_t start = out->len;
    int changed = 0, depth = 0;
    for (size_t i = 0; i < n;) {
        int rc = escaped_string(body, n, &i, dotall, out);
        if (!rc)
            rc = slashed(body, n, &i, out);
        if (!rc && at(body, n, i, COMMENT, sizeof COMMENT - 1)) {
            i += sizeof COMMENT - 1;
            rc = tb_buf_put(out, COMMENT_AS, sizeof COMMENT_AS - 1) ? -1 : 1;
        }
        if (!rc && trailing_not(body, n, i, depth)) {
            i = n;
            rc = 1;
        }
        if (rc < 0)
            return -1;
        changed |= rc;
        if (rc)
            continue;
        size_t k = unit(body, n, i);
        depth += body[i] == '(' ? 1 : body[i] == ')' ? -1 : 0;
        if (tb_buf_put(out, body + i, k))
            return -1;
        i += k;
    }
    if (!changed)
        out->len = start;
    return changed;
}
