/*
 * larklook: the look-arounds of Lark's own grammar files, rewritten into
 * regexes the lexer reads (it takes no look-around in a user's regex:
 * lexer/regex.h).  Lark matches a terminal with Python's re.match, so a
 * look-around there may see past the token; each rewrite below gives the
 * tokens Lark's lexer reads, and says where that is not exact:
 *
 *  - an escaped string's body, `.*?(?<!\\)(\\\\)*?` then the closing
 *    quote Q (" or ', or """ or '''): the string ends at the first Q after
 *    an even run of backslashes, so the body is units that are not Q nor
 *    a backslash, or a backslash and any character (for Q of three
 *    quotes: up to two quotes before each unit).  An opening `Q(?!QQ)`
 *    before it (Python's strings) is Q: inside the token the body cannot
 *    start with a quote; only "" followed by a third quote differs, which
 *    Lark leaves to the long string.  Exact as Lark reads it; the regex's
 *    whole language would also hold strings with bare quotes inside.
 *  - a C comment's body, a star not followed by a slash or another
 *    character, then the closing star and slash: every run of stars
 *    followed by a character that is neither (or ending the body).
 *    Exact either way.
 *  - `\/(?!\/)(...)*?\/` (lark.lark's REGEXP, whose units cannot start
 *    with '/'): a body of at least one unit, `(...)+?`.  Exact for the
 *    regex's whole language.
 *  - a negative look-ahead of one class or character ending the regex
 *    (`[?](?![a-z])`, `/(?![1-9])/`): dropped; within the token it always
 *    holds.  Not exact: Lark refuses the token where the text after it
 *    starts with that class.
 *
 * Any other look-around stays refused by the lexer.
 */
#ifndef GR_LARKLOOK_H
#define GR_LARKLOOK_H

#include <stddef.h>

#include "../base/buf.h"

/* body[0..n) with the idioms above rewritten into out (dotall: '.'
 * matches a newline, so the string bodies may hold one).  1 if anything
 * was rewritten, 0 if not (out untouched), -1 out of memory. */
int gr_larklook_rewrite(const char *body, size_t n, int dotall, tb_buf_t *out);

#endif
