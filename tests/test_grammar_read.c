/*
 * Tests of the grammar file readers (grammar/lark.h, grammar/gbnf.h,
 * grammar/load.h): every construct of both formats read into the expected
 * CFG, checked through gr_cfg_print's dump; what merged lexemes match,
 * checked with PCRE2 (full, anchored matches) as the reference for the
 * regex syntax; random grammars whose read CFG must accept exactly the
 * short strings a direct interpretation of the grammar derives (merging
 * into lexemes is exact); the JSON grammars against jansson; every error
 * with its exact FILE:LINE:COL; the committed example grammars; and
 * truncated or mutated grammars, which must give a grammar or an error,
 * never a crash (run it under make SANITIZE=1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <jansson.h>

#include "../base/file.h"
#include "../grammar/load.h"
#include "support.h"

#define GRAMMARS "experiments/grammars/"

static const char *const EXAMPLES[] = {
    GRAMMARS "json.lark",    GRAMMARS "json.gbnf",     GRAMMARS "arith.lark",
    GRAMMARS "arith.gbnf",   GRAMMARS "nullable.lark", GRAMMARS "nullable.gbnf",
    GRAMMARS "rightrec.gbnf", GRAMMARS "keywords.lark", GRAMMARS "llguidance.lark",
};

/* text read as `format` from a source named "g.<format>"; fails the test
 * with the reader's message when it is refused. */
static void read_ok(gr_cfg_t *g, const char *format, const char *text)
{
    char source[32];
    tb_err_t err;
    snprintf(source, sizeof source, "g.%s", format);
    if (gr_cfg_parse(g, text, strlen(text), source, NULL, &err))
        fail_msg("refused: %s\n%s", err.msg, text);
}

/* The dump of g (malloc'd). */
static char *dump(const gr_cfg_t *g)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gr_cfg_print(g, f);
    fclose(f);
    return buf;
}

static void expect_dump(const char *format, const char *text, const char *want)
{
    gr_cfg_t g;
    read_ok(&g, format, text);
    char *got = dump(&g);
    if (strcmp(got, want))
        fail_msg("grammar:\n%s\ngot:\n%s\nwant:\n%s", text, got, want);
    free(got);
    gr_cfg_free(&g);
}

/* The reader refuses text with exactly the message want. */
static void expect_error(const char *format, const char *text, const char *want)
{
    char source[32];
    gr_cfg_t g;
    tb_err_t err;
    snprintf(source, sizeof source, "g.%s", format);
    if (gr_cfg_parse(&g, text, strlen(text), source, NULL, &err) == 0) {
        gr_cfg_free(&g);
        fail_msg("accepted:\n%s", text);
    }
    if (strcmp(err.msg, want))
        fail_msg("grammar:\n%s\ngot:  %s\nwant: %s", text, err.msg, want);
}

/* The regex of the lexeme called name (NULL if none); name NULL: of the
 * grammar's only lexeme. */
static const char *lexeme_regex(const gr_cfg_t *g, const char *name)
{
    if (!name)
        return g->lex.len == 1 ? g->lex.data[0].regex : NULL;
    for (size_t i = 0; i < g->lex.len; i++)
        if (strcmp(g->lex.data[i].name, name) == 0)
            return g->lex.data[i].regex;
    return NULL;
}

static pcre2_code *compile(const char *regex)
{
    int code;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)regex, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code,
                                   &off, NULL);
    if (!re)
        fail_msg("PCRE2 refuses regex %s (offset %zu)", regex, (size_t)off);
    return re;
}

/* Whether re matches all of s[0..n). */
static int full_match(const pcre2_code *re, const char *s, size_t n)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    assert_non_null(md);
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, md, NULL);
    pcre2_match_data_free(md);
    return rc > 0;
}

/* Whether PCRE2 (UTF mode) matches all of s with regex. */
static int matches(const char *regex, const char *s)
{
    pcre2_code *re = compile(regex);
    int ok = full_match(re, s, strlen(s));
    pcre2_code_free(re);
    return ok;
}

/* The lexeme `name` (NULL: the only one) of the grammar matches each string of yes (NULL
 * ended) and none of no. */
static void expect_lexeme(const char *format, const char *text, const char *name,
                          const char *const *yes, const char *const *no)
{
    gr_cfg_t g;
    read_ok(&g, format, text);
    const char *re = lexeme_regex(&g, name);
    if (!re) {
        char *d = dump(&g);
        fail_msg("no lexeme %s in\n%s", name ? name : "(the only one)", d);
    }
    for (; yes && *yes; yes++)
        if (!matches(re, *yes))
            fail_msg("lexeme %s does not match '%s'", re, *yes);
    for (; no && *no; no++)
        if (matches(re, *no))
            fail_msg("lexeme %s matches '%s'", re, *no);
    gr_cfg_free(&g);
}

#define STRS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- GBNF ---- */

static void test_gbnf_rules(void **state)
{
    (void)state;
    /* rules over lines, comments, alternatives, recursion kept as rules */
    expect_dump("gbnf",
                "# a comment\n"
                "root ::= item (\",\" item)*   # trailing comment\n"
                "item ::= \"(\" root \")\"\n"
                "       | \"x\"\n",
                "root#1 -> \",\" item\n"
                "root#2 -> root#2 root#1\n"
                "root#2 -> (empty)\n"
                "root -> item root#2\n"
                "item -> \"(\" root \")\"\n"
                "item -> \"x\"\n"
                "lexeme \",\" = ,\n"
                "lexeme \"(\" = \\(\n"
                "lexeme \")\" = \\)\n"
                "lexeme \"x\" = x\n");
    /* a regular rule referenced from a sequence merges into its run */
    expect_dump("gbnf", "root ::= \"a\" mid \"c\" root | \"z\"\nmid ::= [0-9]+ \"b\"\n",
                "root -> \"a\" mid \"c\" root\n"
                "root -> \"z\"\n"
                "lexeme \"a\" mid \"c\" = a[0-9]+bc\n"
                "lexeme \"z\" = z\n");
    /* right recursion */
    expect_dump("gbnf", "root ::= [a-z] \",\" root | [a-z]\n",
                "root -> [a-z] \",\" root\n"
                "root -> [a-z]\n"
                "lexeme [a-z] \",\" = [a-z],\n"
                "lexeme [a-z] = [a-z]\n");
}

static void test_gbnf_literals(void **state)
{
    (void)state;
    expect_lexeme("gbnf", "root ::= \"a\\n\\t\\r\\\\\\\"\\[\\]\\x41\\u00e9\\U0001F600.*\"\n",
                  NULL,
                  STRS("a\n\t\r\\\"[]A\xc3\xa9\xf0\x9f\x98\x80.*"), STRS("a", "a\n\t\r\\\"[]A"));
    /* UTF-8 in a literal is code points, kept as bytes */
    expect_lexeme("gbnf", "root ::= \"\xc3\xa9t\xc3\xa9\"\n", NULL,
                  STRS("\xc3\xa9t\xc3\xa9"), STRS("ete"));
    /* an empty literal is the empty string */
    expect_dump("gbnf", "root ::= \"\" | \"a\"\n", "root -> (empty)\nroot -> \"a\"\nlexeme \"a\" = a\n");
}

static void test_gbnf_classes(void **state)
{
    (void)state;
    expect_lexeme("gbnf", "root ::= [a-cx]\n", NULL, STRS("a", "b", "c", "x"),
                  STRS("d", "w", "", "ab"));
    expect_lexeme("gbnf", "root ::= [^\"\\\\\\x00-\\x1F]\n", NULL,
                  STRS("a", "\xc3\xa9", "\x7f", "\xf0\x9f\x98\x80"), STRS("\"", "\\", "\n", "\x01"));
    /* '-' first or last is a member; escapes of brackets */
    expect_lexeme("gbnf", "root ::= [-+] [a-] [\\]\\[]\n", NULL,
                  STRS("-a]", "+-["), STRS("*a]", "-b]"));
    expect_lexeme("gbnf", "root ::= [\\u00e0-\\u00ff\\U0001F600]\n", NULL, STRS("\xc3\xa0", "\xc3\xbf", "\xf0\x9f\x98\x80"),
                  STRS("\xc3\x9f", "a"));
    /* . and [^] are any code point, newline included */
    expect_lexeme("gbnf", "root ::= . [^]\n", NULL, STRS("ab", "\n\xc3\xa9", "\xf0\x9f\x98\x80x"),
                  STRS("a", "abc"));
}

static void test_gbnf_repetition(void **state)
{
    (void)state;
    expect_lexeme("gbnf", "root ::= \"a\"? \"b\"* \"c\"+ \"d\"{2} \"e\"{1,3} \"f\"{2,}\n",
                  "\"a\"? \"b\"* \"c\"+ \"d\"{2} \"e\"{1,3} \"f\"{2,}",
                  STRS("cddeff", "abbbcccddeeefffff"),
                  STRS("ddeff", "cdeff", "cddeeeeff", "cddef", "aacddeff"));
    /* a group repeated, nested postfix operators, blanks before them */
    expect_lexeme("gbnf", "root ::= (\"ab\" | [0-9]) {2,3} \"x\"+ ?\n",
                  "(\"ab\" | [0-9]){2,3} \"x\"+?", STRS("ab1", "12ab", "abab1xx", "11"),
                  STRS("1", "ab", "1111", "ab1y"));
    /* large bounds stay in the lexeme (one bounded-repetition term) */
    gr_cfg_t g;
    read_ok(&g, "gbnf", "root ::= \"ab\"{1500}\n");
    assert_int_equal(g.lex.len, 1);
    assert_string_equal(g.lex.data[0].regex, "(?:ab){1500}");
    gr_cfg_free(&g);
}

static void test_gbnf_nullable_runs(void **state)
{
    (void)state;
    /* a nullable run is an optional lexeme that needs a byte */
    expect_dump("gbnf", "root ::= \"a\" ws | ws\nws ::= [ ]*\n",
                "root -> \"a\" ws\n"
                "root#1 -> ws\n"
                "root#1 -> (empty)\n"
                "root -> root#1\n"
                "lexeme \"a\" ws = a[ ]*\n"
                "lexeme ws = [ ]+\n");
    /* several nullable items: every non-empty way through them */
    expect_lexeme("gbnf", "root ::= \"a\"? \"b\"*\n", "\"a\"? \"b\"*", STRS("a", "b", "abb", "bb"),
                  STRS("", "ba", "aa"));
    /* a rule that only derives the empty string vanishes */
    expect_dump("gbnf", "root ::= e \"x\" e\ne ::= \"\"{3} | \"\"\n",
                "root -> e \"x\" e\nlexeme e \"x\" e = x\n");
}

static void test_gbnf_json(void **state)
{
    (void)state;
    gr_cfg_t g;
    tb_err_t err;
    if (gr_cfg_load(&g, GRAMMARS "json.gbnf", NULL, &err))
        fail_msg("%s", err.msg);
    /* string and number are single lexemes, not a lexeme per character */
    const char *s = lexeme_regex(&g, "string"), *n = lexeme_regex(&g, "number");
    assert_non_null(s);
    assert_non_null(n);
    assert_null(lexeme_regex(&g, "char"));
    assert_true(matches(s, "\"a\\\"b\\u00e9\xc3\xa9\\n\""));
    assert_false(matches(s, "\"a\nb\""));
    assert_false(matches(s, "\"\\x\""));
    assert_true(matches(n, "-0.5e+10"));
    assert_false(matches(n, "01"));
    assert_false(matches(n, "1."));
    /* no rule is left for the regular parts */
    for (size_t i = 0; i < g.nt.len; i++) {
        assert_string_not_equal(g.nt.data[i].name, "char");
        assert_string_not_equal(g.nt.data[i].name, "int");
    }
    gr_cfg_free(&g);
}

static void test_gbnf_errors(void **state)
{
    (void)state;
    expect_error("gbnf", "root ::= \"a\" b\n", "g.gbnf:1:14: undefined rule 'b'");
    expect_error("gbnf", "root ::= \"a\"\nx ::= y\n", "g.gbnf:2:7: undefined rule 'y'");
    expect_error("gbnf", "root ::= x \"a\" | \"b\"\nx ::= x \"c\"\n",
                 "g.gbnf:2:1: rule 'x' derives no finite string (every alternative recurses "
                 "into itself)");
    expect_error("gbnf", "root ::= x\nx ::= x \"c\"\n",
                 "g.gbnf: the grammar's language is empty (rule 'root' derives no string)");
    expect_error("gbnf", "foo ::= \"a\"\n", "g.gbnf: no rule 'root' (the start rule)");
    expect_error("gbnf", "root ::= \"a\"\nroot ::= \"b\"\n",
                 "g.gbnf:2:1: 'root' is defined twice (first at 1:1)");
    expect_error("gbnf", "root \"a\"\n", "g.gbnf:1:6: expected '::=', found '\"'");
    expect_error("gbnf", "root ::= (\"a\"\n", "g.gbnf:2:1: expected ')', found the end of the file");
    expect_error("gbnf", "root ::= \"a\")\n",
                 "g.gbnf:1:13: unbalanced parenthesis: expected a rule or the end, found ')'");
    expect_error("gbnf", "root ::= \"a\" \"b\n",
                 "g.gbnf:1:14: unterminated literal (a literal ends on its line)");
    expect_error("gbnf", "root ::= [a-z\n", "g.gbnf:1:10: unterminated character class");
    expect_error("gbnf", "root ::= [b-a]\n",
                 "g.gbnf:1:11: range out of order in a character class");
    expect_error("gbnf", "root ::= []\n", "g.gbnf:1:10: empty character class [] (it matches nothing)");
    expect_error("gbnf", "root ::= \"\\q\"\n", "g.gbnf:1:11: unknown escape \\q");
    expect_error("gbnf", "root ::= \"\\", "g.gbnf:1:11: a backslash ends the file");
    expect_error("gbnf", "root ::= \"\\x4\"\n", "g.gbnf:1:11: escape \\x needs 2 hex digits");
    expect_error("gbnf", "root ::= \"\\UFFFFFFFF\"\n",
                 "g.gbnf:1:11: escape \\U: code point U+FFFFFFFF out of range (or a surrogate)");
    expect_error("gbnf", "root ::= [\\ud800]\n",
                 "g.gbnf:1:11: escape \\u: code point U+D800 out of range (or a surrogate)");
    expect_error("gbnf", "root ::= \"a\xff\"\n", "g.gbnf:1:12: invalid UTF-8 at byte offset 11");
    expect_error("gbnf", "root ::= [\xc3]\n", "g.gbnf:1:11: invalid UTF-8 at byte offset 10");
    expect_error("gbnf", "root ::= \"a\"{3,2}\n",
                 "g.gbnf:1:13: repetition {3,2} out of range (0 <= m <= n <= 100000)");
    expect_error("gbnf", "root ::= \"a\"{200000}\n", "g.gbnf:1:14: repetition bound above 100000");
    expect_error("gbnf", "root ::= \"a\"{x}\n", "g.gbnf:1:14: expected a number, found 'x'");
    expect_error("gbnf", "root ::= \"a\"{2\n", "g.gbnf:2:1: expected '}' closing a repetition, "
                 "found the end of the file");
    expect_error("gbnf", "root ::= <tok>\n", "g.gbnf:1:10: special tokens (<...>) are not supported");
    expect_error("gbnf", "root ::= \"a\" ; \n", "g.gbnf:1:14: expected a literal, a class, '.', "
                 "'(' or a rule name, found ';'");
    expect_error("gbnf", "root ::= \"a\"\n\x01\n", "g.gbnf:2:1: expected a literal, a class, '.', '(' or a "
                 "rule name, found byte 0x01");
}

/* ---- Lark ---- */

static void test_lark_rules(void **state)
{
    (void)state;
    /* ?rule, !rule, priorities, aliases, continuation lines, comments */
    expect_dump("lark",
                "// comment\n"
                "?start.2: a   # another\n"
                "    | b -> alias\n"
                "\n"
                "!a: \"a\" a | \"z\"\n"
                "b: A\n"
                "A.-1: \"b\"\n"
                "%ignore \" \"\n",
                "start -> a\n"
                "start -> b\n"
                "a -> \"a\" a\n"
                "a -> \"z\"\n"
                "b -> A\n"
                "lexeme \" \" (ignored) =  \n"
                "lexeme \"a\" = a\n"
                "lexeme \"z\" = z\n"
                "lexeme A = b\n");
    /* with %ignore, operators are rules over single lexemes */
    expect_dump("lark", "start: \"a\"? \"b\"* (\"c\" | \"d\")+ [\"e\"] \"f\"~2 \"g\"{1,2}\n%ignore \" \"\n",
                "start#1 -> \"a\"\n"
                "start#1 -> (empty)\n"
                "start#2 -> start#2 \"b\"\n"
                "start#2 -> (empty)\n"
                "start#3 -> \"c\"\n"
                "start#3 -> \"d\"\n"
                "start#4 -> start#4 start#3\n"
                "start#4 -> start#3\n"
                "start#5 -> \"e\"\n"
                "start#5 -> (empty)\n"
                "start#6 -> (empty)\n"
                "start#7 -> \"f\" \"f\" start#6\n"
                "start#8 -> \"g\"\n"
                "start#8 -> (empty)\n"
                "start#9 -> \"g\" start#8\n"
                "start -> start#1 start#2 start#4 start#5 start#7 start#9\n"
                "lexeme \" \" (ignored) =  \n"
                "lexeme \"a\" = a\n"
                "lexeme \"b\" = b\n"
                "lexeme \"c\" = c\n"
                "lexeme \"d\" = d\n"
                "lexeme \"e\" = e\n"
                "lexeme \"f\" = f\n"
                "lexeme \"g\" = g\n");
    /* without %ignore the same sequence is one lexeme */
    expect_lexeme("lark", "start: \"a\"? \"b\"* (\"c\" | \"d\")+ [\"e\"] \"f\"~2 \"g\"{1,2}\n",
                  NULL,
                  STRS("cffg", "abbcdcdeffgg"), STRS("ffg", "cfg", "cffggg", "cff"));
    /* a rule's terminals keep ignored text between them; a terminal not */
    expect_dump("lark", "start: pair\npair: NAME \"=\" NAME\nNAME: LETTER+\n"
                "%import common.LETTER\n%ignore \" \"\n",
                "start -> pair\n"
                "pair -> NAME \"=\" NAME\n"
                "lexeme \" \" (ignored) =  \n"
                "lexeme NAME = [A-Za-z]+\n"
                "lexeme \"=\" = =\n");
}

static void test_lark_terminals(void **state)
{
    (void)state;
    /* literals with escapes and the i flag, ranges, regexes with flags */
    expect_lexeme("lark", "start: T\nT: \"if\"i \"\\n\\t\\\"\\\\\\x41\\u00e9\" \"a\"..\"c\"\n", "T",
                  STRS("IF\n\t\"\\A\xc3\xa9" "b", "iF\n\t\"\\A\xc3\xa9" "c"),
                  STRS("IF\n\t\"\\A\xc3\xa9" "d", "IF"));
    expect_lexeme("lark", "start: T\nT: /a.b/s /x+/i /[\\/.]/\n", "T",
                  STRS("a\nbX/", "aZbxX.", "a\xc3\xa9" "bx/"), STRS("abx", "a\nbXa"));
    /* a nullable terminal is made optional around its non-empty part */
    expect_dump("lark", "start: A \"b\"\nA: \"a\"*\n%ignore \" \"\n",
                "start#1 -> A\n"
                "start#1 -> (empty)\n"
                "start -> start#1 \"b\"\n"
                "lexeme \" \" (ignored) =  \n"
                "lexeme A = a+\n"
                "lexeme \"b\" = b\n");
    /* a nullable /regex/ next to a non-empty item merges with it */
    expect_lexeme("lark", "start: /a*/ \"b\"\n", "/a*/ \"b\"", STRS("b", "aab"), STRS("a"));
    /* a nullable /regex/ alone, as llguidance reads it: its non-empty
     * strings through a look-ahead asking for a byte, made optional */
    expect_dump("lark", "start: foo\nfoo[stop=\"\"]: /a*/\n",
                "start#1 -> foo\n"
                "start#1 -> (empty)\n"
                "start -> start#1\n"
                "lexeme foo = (?=[\\s\\S])(?:a*)\n");
    /* keywords and identifiers overlap */
    gr_cfg_t g;
    tb_err_t err;
    if (gr_cfg_load(&g, GRAMMARS "keywords.lark", NULL, &err))
        fail_msg("%s", err.msg);
    assert_true(matches(lexeme_regex(&g, "NAME"), "if"));
    assert_true(matches(lexeme_regex(&g, "\"if\""), "if"));
    gr_cfg_free(&g);
}

static void test_lark_imports(void **state)
{
    (void)state;
    expect_dump("lark",
                "%import common.SIGNED_NUMBER -> NUM\n"
                "%import common (WS, CNAME)\n"
                "start: NUM CNAME ESCAPED_STRING\n"
                "%import common.ESCAPED_STRING\n"
                "%ignore WS\n",
                "start -> NUM CNAME ESCAPED_STRING\n"
                "lexeme WS (ignored) = [ \\t\\f\\r\\n]+\n"
                "lexeme NUM = [+-]?(?:[0-9]+|[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)"
                "(?:[eE][+-]?[0-9]+)?)\n"
                "lexeme CNAME = [_A-Za-z][_A-Za-z0-9]*\n"
                "lexeme ESCAPED_STRING = \"(?:[^\"\\\\\\n]|\\\\.)*\"\n");
    const char *const common[] = {"INT", "SIGNED_INT", "DECIMAL", "FLOAT", "NUMBER",
                                  "NEWLINE", "WS_INLINE", "HEXDIGIT", "C_COMMENT"};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "%%import common.%s\nstart: %s\n", common[i], common[i]);
        gr_cfg_t g;
        read_ok(&g, "lark", text);
        gr_cfg_free(&g);
    }
    expect_lexeme("lark", "%import common.FLOAT\nstart: FLOAT\n", "FLOAT",
                  STRS("1.5", "1.", ".5", "1e5", "1.5E-3"), STRS("1", "e5", "."));
    expect_lexeme("lark", "%import common.ESCAPED_STRING\nstart: ESCAPED_STRING\n",
                  "ESCAPED_STRING", STRS("\"\"", "\"a\\\"b\"", "\"\\\\\""),
                  STRS("\"a\\\"", "\"a\nb\""));
}

/* Lark's templates, %declare, %override, %extend and {,n} */
static void test_lark_templates(void **state)
{
    (void)state;
    expect_dump("lark",
                "start: sep{\"a\", \",\"} x{,2}\n"
                "sep{item, s}: item (s item)*\n"
                "x: \"x\"\n"
                "%extend x: \"y\"\n"
                "%declare _INDENT\n"
                "%ignore \" \"\n",
                "start#1 -> x\n"
                "start#1 -> (empty)\n"
                "start#2 -> x start#1\n"
                "start#2 -> (empty)\n"
                "start#3 -> start#2\n"
                "start -> sep{\"a\", \",\"} start#3\n"
                "sep{\"a\", \",\"}#4 -> \",\" \"a\"\n"
                "sep{\"a\", \",\"}#5 -> sep{\"a\", \",\"}#5 sep{\"a\", \",\"}#4\n"
                "sep{\"a\", \",\"}#5 -> (empty)\n"
                "sep{\"a\", \",\"} -> \"a\" sep{\"a\", \",\"}#5\n"
                "x -> \"x\"\n"
                "x -> \"y\"\n"
                "lexeme \" \" (ignored) =  \n"
                "lexeme \"a\" = a\n"
                "lexeme \",\" = ,\n"
                "lexeme \"x\" = x\n"
                "lexeme \"y\" = y\n");
}

static void test_lark_errors(void **state)
{
    (void)state;
    gr_cfg_t g;
    expect_error("lark", "start: A\nA: A \"x\"\n",
                 "g.lark:2:1: terminal 'A' is recursive (terminals are regular expressions: use "
                 "a lower-case rule)");
    expect_error("lark", "start: A\nA: \"x\" b\nb: \"y\"\n",
                 "g.lark:2:8: rule 'b' used inside a terminal (a terminal is one regex: it may "
                 "only use literals, regexes and terminals)");
    expect_error("lark", "start: /a(?=b)/\n",
                 "g.lark:1:10: regex 'a(?=b)': look-around assertions are not supported at "
                 "offset 1");
    expect_error("lark", "start: \"x\"\n  | /ab\\1/\n",
                 "g.lark:2:8: regex 'ab\\1': back-references are not supported at offset 2");
    expect_error("lark", "start: /a*/ /b*/\n",
                 "g.lark:1:8: regex /a*/ matches the empty string, and a lexeme must read at "
                 "least one byte (make it non-empty and optional: /x+/? for /x*/)");
    expect_error("lark", "start: \"a\"\n%ignore /a*/\n",
                 "g.lark:2:9: regex /a*/ matches the empty string, and a lexeme must read at "
                 "least one byte (make it non-empty and optional: /x+/? for /x*/)");
    expect_error("lark", "start: \"a\"\n%ignore \"\"\n",
                 "g.lark:2:9: %ignore matches only the empty string");
    expect_error("lark", "start: \"x\" /[/\n",
                 "g.lark:1:13: regex '[': unterminated character class at offset 0");
    expect_error("lark", "start: /a/x\n", "g.lark:1:11: regex flag 'x' is not supported (i, s "
                 "and u are)");
    expect_error("lark", "start: x\n%frob x\n",
                 "g.lark:2:1: %frob is not supported (supported: %ignore, %import, %declare, "
                 "%override, %extend, %llguidance {})");
    expect_error("lark", "start: x\nx: \"a\"\n%override y: \"b\"\n",
                 "g.lark:3:11: %override 'y': no such rule or terminal");
    expect_error("lark", "start: x{\"a\"}\n", "g.lark:1:8: no template 'x'");
    expect_error("lark", "start: t{\"a\"}\nt{p, q}: p q\n",
                 "g.lark:1:8: template 't' takes 2 arguments, given 1");
    expect_error("lark", "start: t{\"a\"}\nt{x}: x | t{(x x)}\n",
                 "g.lark:2:11: templates made more than 10000 rules or one with arguments "
                 "over 4096 bytes (a use that nests without end?)");
    expect_error("lark", "start: \"a\"{2,1}\n",
                 "g.lark:1:11: repetition {2,1} out of range (0 <= m <= n <= 100000)");
    expect_error("lark", "start[lazy, foo=1]: /a/\n",
                 "g.lark:1:13: unknown rule attribute 'foo' (llguidance's are capture, lazy, "
                 "max_tokens, temperature, stop, suffix, stop_capture)");
    expect_error("lark", "start[max_tokens=\"a\"]: /a/\n",
                 "g.lark:1:18: expected a number, found '\"a\"'");
    expect_error("lark", "start[stop=\"a\"=\"b\"]: /a/\n",
                 "g.lark:1:15: expected ',' or ']' after a rule attribute, found '='");
    expect_error("lark", "start: <|eos|>\n",
                 "g.lark:1:8: special token <|eos|>: token ids need a vocabulary, and the "
                 "grammar was read without one");
    expect_error("lark", "start: @sub\n", "g.lark:1:8: grammar references (@name) are not supported");
    expect_error("lark", "start: \"a\" %json {}\n",
                 "g.lark:1:12: an inline JSON schema (%json) is supported as a whole grammar "
                 "only (start: %json {...})");
    expect_error("lark", "start: %json {\"type\": 1}\n",
                 "g.lark:1:8: %json: #: 'type' must be a string or an array");
    expect_error("lark", "start: \"a\"\n  | %ignore \"b\"\n",
                 "g.lark:2:5: %ignore inside a rule is not supported (%json and %regex are)");
    /* nested %lark grammars (their language: test_llg_cases) */
    expect_error("lark", "start: %lark {\nstart: \"a\"\n}\n%ignore \" \"\n",
                 "g.lark:1:8: a nested %lark grammar in a grammar with %ignore is not "
                 "supported (the %ignore would hold inside it)");
    expect_error("lark", "start: %lark {\nstart: \"a\"\n%ignore \" \"\n}\n",
                 "g.lark:3:1: %ignore in a nested %lark grammar is not supported (it would "
                 "hold in the whole grammar)");
    expect_error("lark", "start: %lark {\nfoo: \"}\"\n}\n",
                 "g.lark:1:8: %lark: the nested grammar has no rule 'start'");
    expect_error("lark", "start: %lark {\nstart: b\n}\n",
                 "g.lark:2:8: undefined rule '%lark1.b'");
    expect_error("lark", "start: %lark {\nstart: \"a\"\n", "g.lark:1:8: %lark: no '}' closes "
                 "the nested grammar");
    /* parametric rules (their languages: test_llg_cases) */
    expect_error("lark", "start: p::0\np:: \"a\"\n",
                 "g.lark:2:5: expected '_' after a parametric rule's '::', found '\"a\"'");
    expect_error("lark", "start: p::_\np::_: \"a\"\n",
                 "g.lark:1:8: 'p::' takes a number outside a parametric rule");
    expect_error("lark", "start: q::1\np::_: \"a\"\n", "g.lark:1:8: no parametric rule 'q::_'");
    expect_error("lark", "start: p::0\np::_: \"a\" p::set_bit(64)\n",
                 "g.lark:2:22: bit 64 out of range (0 to 63)");
    expect_error("lark", "start: p::0\np::_: \"a\" %if lt([3:3], 2)\n",
                 "g.lark:2:18: empty bit range [3:3]");
    expect_error("lark", "start: p::0\np::_: \"a\" %if frob(1)\n",
                 "g.lark:2:15: unknown condition 'frob' (docs/grammars.md lists them)");
    expect_error("lark", "start: p::0x10000000000000000\np::_: \"a\"\n",
                 "g.lark:1:11: number above 64 bits");
    expect_error("lark", "start: \"a\" %if true\n",
                 "g.lark:1:12: %if ends an alternative of a parametric rule (name::_: ...)");
    expect_error("lark", "start: p::0\np::_: (\"a\" %if true)\n",
                 "g.lark:2:12: %if ends an alternative of a parametric rule (name::_: ...)");
    expect_error("lark", "start: P::0\nP::_: \"a\"\n",
                 "g.lark:2:1: a terminal cannot be parametric (name::_ is a rule's)");
    /* a use that counts without end stops at the limit */
    expect_error("lark", "start: p::0\np::_: \"a\" p::incr(_)\n",
                 "g.lark:2:11: parametric rules made more than 10000 rules");
    expect_error("lark", "start: %regex {\"substring_words\": \"a\", \"substring_chars\": \"b\"}\n",
                 "g.lark:1:8: only one field can be set on %regex");
    expect_error("lark", "start: %regex {\"substring_words\": true}\n",
                 "g.lark:1:8: %regex: expected one field substring_words or substring_chars (a "
                 "string) or substring_chunks (an array of strings), found 'substring_words'");
    expect_error("lark", "start: A & B\nA: \"a\"\nB: \"b\"\n",
                 "g.lark:1:8: & and ~ (lexeme intersection and complement) are supported inside "
                 "terminals only, not in rules");
    /* ~ of a recursive rule in a rule (a fuzzer's find: its lowering
     * called itself without end) */
    expect_error("lark", "start: s\ns: \"a\"~s\n  | \"b\"\n%ignore \" \"\n",
                 "g.lark:2:7: & and ~ (lexeme intersection and complement) take operands a "
                 "terminal can hold: no rule that refers to rules without end");
    expect_error("lark", "start: T\nT: \"x\" (/a/ & /[ab]/)\n",
                 "g.lark:2:9: a terminal with & or ~ must stand alone: not repeated, and not in a "
                 "sequence with other items (it becomes a look-ahead at the top of its lexeme)");
    expect_error("lark", "%import python.NAME\n",
                 "g.lark:1:9: %import python: only common's terminals and grammar files "
                 "relative to this one (%import .FILE.NAME) can be imported");
    expect_error("lark", "%import common.FOO\n",
                 "g.lark:1:16: common has no terminal 'FOO' (it has WS, WS_INLINE, NEWLINE, "
                 "NUMBER, SIGNED_NUMBER, INT, SIGNED_INT, DECIMAL, FLOAT, ESCAPED_STRING, CNAME, "
                 "WORD, LETTER, DIGIT, HEXDIGIT, ...)");
    /* llguidance's options: read, refused by name where they would change
     * the language */
    read_ok(&g, "lark", "%llguidance {\"no_forcing\": true}\n%llguidance {\"allow_initial_skip\": "
            "true, \"ignore_once\": false}\nstart: \"a\"\n");
    gr_cfg_free(&g);
    expect_error("lark", "%llguidance {\"frob\": true}\nstart: \"a\"\n",
                 "g.lark:1:13: %llguidance option 'frob' is unknown (llguidance's are "
                 "no_forcing, allow_initial_skip, allow_invalid_utf8, ignore_once)");
    expect_error("lark", "%llguidance {\"ignore_once\": \"yes\"}\nstart: \"a\"\n",
                 "g.lark:1:13: %llguidance option 'ignore_once' must be true or false");
    expect_error("lark", "%llguidance {\"allow_invalid_utf8\": true}\nstart: \"a\"\n",
                 "g.lark:1:13: %llguidance option 'allow_invalid_utf8' is not supported");
    expect_error("lark", "%llguidance [1]\nstart: \"a\"\n",
                 "g.lark:1:13: expected a JSON object after %llguidance, found '['");
    expect_error("lark", "start: \"a\" \n\"b\"\n",
                 "g.lark:2:1: expected a rule, a terminal or a directive, found '\"b\"'");
    expect_error("lark", "start \"a\"\n", "g.lark:1:7: expected ':' after the rule name, found '\"a\"'");
    expect_error("lark", "start: (\"a\" | \"b\"\n", "g.lark:2:1: expected ')', found the end of the file");
    expect_error("lark", "start: \"a\" ]\n", "g.lark:1:12: expected the end of the line, found ']'");
    expect_error("lark", "start: \"a\nb\"\n", "g.lark:1:8: unterminated literal");
    expect_error("lark", "start: \"a\\d\"\n", "g.lark:1:10: unknown escape \\d");
    expect_error("lark", "start: \"a\xc3\"\n", "g.lark:1:10: invalid UTF-8 at byte offset 9");
    expect_error("lark", "start: \"ab\"..\"c\"\n",
                 "g.lark:1:8: a range \"a\"..\"z\" needs one character at each end (no flag)");
    expect_error("lark", "start: \"c\"..\"a\"\n", "g.lark:1:13: range out of order");
    expect_error("lark", "start: A\nA: \"a\"{2000000}\n",
                 "g.lark:2:8: repetition bound above 100000");
    expect_error("lark", "start: \"a\"~5..2\n",
                 "g.lark:1:11: repetition {5,2} out of range (0 <= m <= n <= 100000)");
    expect_error("lark", "start: a\n", "g.lark:1:8: undefined rule 'a'");
    expect_error("lark", "start: \"a\"\nstart: \"b\"\n",
                 "g.lark:2:1: 'start' is defined twice (first at 1:1)");
    expect_error("lark", "value: \"a\"\n", "g.lark: no rule 'start' (the start rule)");
    expect_error("lark", "start: \"a\" $\n", "g.lark:1:12: unexpected '$'");
}

/* ---- random grammars against a direct interpretation ----
 *
 * Random grammars over the letters a and b (literals, classes, groups,
 * alternatives, repetitions, references to rules, recursion included) are
 * printed as GBNF and Lark (merged runs) and as Lark with %ignore " " (no
 * merging; the test strings hold no blank, so the language is the same).  Every
 * string of a and b up to MAX_LEN letters must be in the read CFG (checked
 * by a fixpoint over spans, lexemes by PCRE2) iff the expression trees
 * derive it (checked by the same kind of fixpoint over the trees, which
 * shares nothing with the readers). */

#define MAX_LEN 6
#define MAX_RULES 3

typedef struct rex {
    enum { R_LIT, R_CLASS, R_REF, R_SEQ, R_ALT, R_REP } kind;
    char text[4]; /* R_LIT: up to 2 letters; R_CLASS: the letters in it */
    int neg;      /* R_CLASS: [^...] */
    int rule, m, n; /* R_REF; R_REP (n < 0: unbounded) */
    struct rex *kid[3];
    int nkid;
} rex_t;

static rex_t *rex_new(int depth)
{
    rex_t *x = calloc(1, sizeof *x);
    assert_non_null(x);
    int k = depth >= 3 ? (int)test_rnd(3) : (int)test_rnd(6);
    x->kind = k;
    if (k == R_LIT) {
        int n = (int)test_rnd(3);
        for (int i = 0; i < n; i++)
            x->text[i] = (char)('a' + test_rnd(2));
    } else if (k == R_CLASS) {
        x->neg = (int)test_rnd(2);
        strcpy(x->text, test_rnd(2) ? "a" : "ab");
        if (x->neg && x->text[1])
            x->text[1] = 0; /* [^ab] holds no test letter: keep it useful */
    } else if (k == R_REF) {
        x->rule = (int)test_rnd(MAX_RULES);
    } else if (k == R_REP) {
        x->m = (int)test_rnd(3);
        x->n = test_rnd(3) ? x->m + (int)test_rnd(3) : -1;
        x->kid[x->nkid++] = rex_new(depth + 1);
    } else {
        x->nkid = 1 + (int)test_rnd(3);
        for (int i = 0; i < x->nkid; i++)
            x->kid[i] = rex_new(depth + 1);
    }
    return x;
}

static void rex_free(rex_t *x)
{
    for (int i = 0; i < x->nkid; i++)
        rex_free(x->kid[i]);
    free(x);
}

static void rex_print(const rex_t *x, int lark, FILE *f)
{
    switch (x->kind) {
    case R_LIT:
        fprintf(f, "\"%s\"", x->text);
        break;
    case R_CLASS:
        fprintf(f, lark ? "/[%s%s]/" : "[%s%s]", x->neg ? "^" : "", x->text);
        break;
    case R_REF:
        if (x->rule)
            fprintf(f, "r%d", x->rule);
        else
            fputs(lark ? "start" : "root", f);
        break;
    case R_REP:
        rex_print(x->kid[0], lark, f);
        if (x->n < 0)
            fprintf(f, x->m == 0 ? "*" : x->m == 1 ? "+" : "{%d,}", x->m);
        else
            fprintf(f, "{%d,%d}", x->m, x->n);
        break;
    case R_SEQ:
    case R_ALT:
        fputc('(', f);
        for (int i = 0; i < x->nkid; i++) {
            fputs(i ? (x->kind == R_ALT ? " | " : " ") : "", f);
            rex_print(x->kid[i], lark, f);
        }
        fputc(')', f);
        break;
    }
}

/* The spans [i, j) of s that each rule derives, as a least fixpoint. */
typedef struct {
    const char *s;
    size_t len;
    uint8_t span[MAX_RULES][MAX_LEN + 1][MAX_LEN + 1];
} oracle_t;

static int rex_match(oracle_t *o, const rex_t *x, size_t i, size_t j);

static int seq_match(oracle_t *o, rex_t *const *kid, int n, size_t i, size_t j)
{
    if (n == 0)
        return i == j;
    for (size_t mid = i; mid <= j; mid++)
        if (rex_match(o, kid[0], i, mid) && seq_match(o, kid + 1, n - 1, mid, j))
            return 1;
    return 0;
}

/* lo to hi (hi < 0: any number) copies of x over [i, j). */
static int rep_match(oracle_t *o, const rex_t *x, int lo, int hi, size_t i, size_t j)
{
    if (i == j && lo == 0)
        return 1;
    if (hi == 0)
        return 0;
    for (size_t mid = i; mid <= j; mid++) {
        if (mid == i && lo == 0)
            continue; /* an empty copy adds nothing */
        if (rex_match(o, x, i, mid) &&
            rep_match(o, x, lo ? lo - 1 : 0, hi < 0 ? hi : hi - 1, mid, j))
            return 1;
    }
    return 0;
}

static int rex_match(oracle_t *o, const rex_t *x, size_t i, size_t j)
{
    switch (x->kind) {
    case R_LIT:
        return j - i == strlen(x->text) && memcmp(o->s + i, x->text, j - i) == 0;
    case R_CLASS:
        return j - i == 1 && (strchr(x->text, o->s[i]) != NULL) != x->neg;
    case R_REF:
        return o->span[x->rule][i][j];
    case R_SEQ:
        return seq_match(o, x->kid, x->nkid, i, j);
    case R_ALT:
        for (int k = 0; k < x->nkid; k++)
            if (rex_match(o, x->kid[k], i, j))
                return 1;
        return 0;
    case R_REP:
        return rep_match(o, x->kid[0], x->m, x->n, i, j);
    }
    return 0;
}

static int oracle_accepts(rex_t *const *rules, const char *s)
{
    oracle_t o = {.s = s, .len = strlen(s)};
    for (int changed = 1; changed;) {
        changed = 0;
        for (int r = 0; r < MAX_RULES; r++)
            for (size_t i = 0; i <= o.len; i++)
                for (size_t j = i; j <= o.len; j++)
                    if (!o.span[r][i][j] && rex_match(&o, rules[r], i, j))
                        o.span[r][i][j] = changed = 1;
    }
    return o.span[0][0][o.len];
}

/* A recognizer of the read CFG by the same kind of fixpoint:
 * span[(A * (n+1) + i) * (n+1) + j] says nonterminal A derives s[i..j);
 * lex[...] the same for lexeme k (by PCRE2); skip[i * (n+1) + j] that
 * s[i..j) is a string of ignored lexemes (empty included), which may
 * stand before every lexeme and at the end. */
typedef struct {
    const gr_cfg_t *g;
    const char *s;
    size_t n;
    uint8_t *span, *lex, *skip;
} rec_t;

#define AT(r, a, i, j) (((size_t)(a) * ((r)->n + 1) + (i)) * ((r)->n + 1) + (j))

static int seq_derives(const rec_t *r, const gr_sym_t *sym, uint32_t n, size_t i, size_t j)
{
    if (n == 0)
        return i == j;
    for (size_t mid = i; mid <= j; mid++) {
        int first = 0;
        if (!gr_is_lex(sym[0]))
            first = r->span[AT(r, sym[0], i, mid)];
        for (size_t k = i; k < mid && gr_is_lex(sym[0]) && !first; k++)
            first = r->skip[AT(r, 0, i, k)] && r->lex[AT(r, gr_index(sym[0]), k, mid)];
        if (first && seq_derives(r, sym + 1, n - 1, mid, j))
            return 1;
    }
    return 0;
}

static int cfg_accepts(const gr_cfg_t *g, pcre2_code *const *re, const char *s, size_t n)
{
    rec_t r = {.g = g, .s = s, .n = n};
    size_t sq = (n + 1) * (n + 1);
    r.span = calloc(g->nt.len ? g->nt.len * sq : 1, 1);
    r.lex = calloc(g->lex.len * sq, 1);
    r.skip = calloc(sq, 1);
    assert_true(r.span && r.lex && r.skip);
    for (size_t k = 0; k < g->lex.len; k++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j <= n; j++)
                r.lex[AT(&r, k, i, j)] = (uint8_t)full_match(re[k], s + i, j - i);
    for (size_t i = n + 1; i-- > 0;) { /* skip: ignored pieces, right to left */
        r.skip[AT(&r, 0, i, i)] = 1;
        for (size_t j = i + 1; j <= n; j++)
            for (size_t k = 0; k < g->lex.len && !r.skip[AT(&r, 0, i, j)]; k++)
                for (size_t mid = i + 1; g->lex.data[k].ignore && mid <= j; mid++)
                    if (r.lex[AT(&r, k, i, mid)] && r.skip[AT(&r, 0, mid, j)])
                        r.skip[AT(&r, 0, i, j)] = 1;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t k = 0; k < g->rule.len; k++) {
            const gr_rule_t *ru = &g->rule.data[k];
            for (size_t i = 0; i <= n; i++)
                for (size_t j = i; j <= n; j++)
                    if (!r.span[AT(&r, ru->lhs, i, j)] &&
                        seq_derives(&r, g->sym.data + ru->off, ru->n, i, j))
                        r.span[AT(&r, ru->lhs, i, j)] = changed = 1;
        }
    }
    int ok = 0;
    for (size_t e = 0; e <= n && !ok; e++)
        ok = r.span[AT(&r, g->start, 0, e)] && r.skip[AT(&r, 0, e, n)];
    free(r.span);
    free(r.lex);
    free(r.skip);
    return ok;
}

/* Every lexeme of g compiled by PCRE2 (free with free_all). */
static pcre2_code **compile_all(const gr_cfg_t *g)
{
    pcre2_code **re = calloc(g->lex.len ? g->lex.len : 1, sizeof *re);
    assert_non_null(re);
    for (size_t k = 0; k < g->lex.len; k++)
        re[k] = compile(g->lex.data[k].regex);
    return re;
}

static void free_all(const gr_cfg_t *g, pcre2_code **re)
{
    for (size_t k = 0; k < g->lex.len; k++)
        pcre2_code_free(re[k]);
    free(re);
}

/* lark: 0 GBNF, 1 Lark, 2 Lark with %ignore. */
static void check_random(rex_t *const *rules, int lark)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    assert_non_null(f);
    for (int r = 0; r < MAX_RULES; r++) {
        if (r)
            fprintf(f, "r%d", r);
        else
            fputs(lark ? "start" : "root", f);
        fputs(lark ? ": " : " ::= ", f);
        rex_print(rules[r], lark, f);
        fputc('\n', f);
    }
    if (lark == 2)
        fputs("%ignore \" \"\n", f);
    fclose(f);
    gr_cfg_t g;
    tb_err_t err;
    if (gr_cfg_parse(&g, text, tlen, lark ? "r.lark" : "r.gbnf", NULL, &err)) {
        /* unproductive rules: refused, as they must be */
        if (!strstr(err.msg, "derives no"))
            fail_msg("%s\n%s", err.msg, text);
        free(text);
        return;
    }
    pcre2_code **re = compile_all(&g);
    char s[MAX_LEN + 1];
    for (size_t len = 0; len <= MAX_LEN; len++) {
        for (uint32_t bits = 0; bits < (1u << len); bits++) {
            for (size_t i = 0; i < len; i++)
                s[i] = (char)('a' + ((bits >> i) & 1));
            s[len] = 0;
            int want = oracle_accepts(rules, s), got = cfg_accepts(&g, re, s, len);
            if (want != got) {
                char *d = dump(&g);
                fail_msg("'%s': grammar %s, read CFG %s\n%s\n%s", s,
                         want ? "accepts" : "refuses", got ? "accepts" : "refuses", text, d);
            }
        }
    }
    free_all(&g, re);
    gr_cfg_free(&g);
    free(text);
}

static void test_random_grammars(void **state)
{
    (void)state;
    for (int t = 0; t < 150; t++) {
        rex_t *rules[MAX_RULES];
        for (int r = 0; r < MAX_RULES; r++)
            rules[r] = rex_new(0);
        for (int format = 0; format < 3; format++) /* GBNF, Lark, Lark with %ignore */
            check_random(rules, format);
        for (int r = 0; r < MAX_RULES; r++)
            rex_free(rules[r]);
    }
}

/* json.lark and json.gbnf accept exactly what jansson (a JSON parser, as
 * RFC 8259 reads it, with JSON_DECODE_ANY for scalar texts) accepts, on
 * hand-picked documents and one-character mutations of them.  Left out:
 * what jansson refuses beyond the grammar of RFC 8259 (\u0000, lone
 * surrogates, numbers too large), which these inputs never contain. */
static void test_json_grammars(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{}", "[]", "0", "-0", "1E5", "-12.5e+3", "\"\"", "true", "null", " [1 , 2]\n",
        "{\"a\":1}", "{\"a\" : {\"b\": [true, false, null]}, \"c\": \"x\\n\\u00e9\"}",
        "\t[\r\n]", "\"\xc3\xa9\\/\\\\\\\"\"", "[[[]],{}]", "[-0.0e-0]", "\"\x7f\"",
        "01", "1.", ".5", "+1", "[1,]", "{\"a\"}", "{a:1}", "\"\x01\"", "\"\\x\"", "[1 2]",
        "tru", "{\"a\":1,}", "\"abc", "--1", "1e", "[", "", " ", "\"\t\"", "[1]]", "\"\\u12\"",
    };
    static const char alphabet[] = "{}[]\",:01.eE+- \\nut";
    const char *const files[] = {GRAMMARS "json.lark", GRAMMARS "json.gbnf"};
    for (size_t f = 0; f < 2; f++) {
        gr_cfg_t g;
        tb_err_t err;
        if (gr_cfg_load(&g, files[f], NULL, &err))
            fail_msg("%s", err.msg);
        pcre2_code **re = compile_all(&g);
        for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++) {
            for (int t = 0; t < 12; t++) {
                char s[64];
                size_t n = strlen(docs[d]);
                memcpy(s, docs[d], n + 1);
                if (t > 0 && n > 0) { /* replace, delete or insert one character */
                    size_t at = test_rnd((uint32_t)n), op = test_rnd(3);
                    char c = alphabet[test_rnd(sizeof alphabet - 1)];
                    if (op == 0)
                        s[at] = c;
                    else if (op == 1)
                        memmove(s + at, s + at + 1, n-- - at);
                    else {
                        memmove(s + at + 1, s + at, ++n - at);
                        s[at] = c;
                    }
                }
                json_error_t jerr;
                json_t *j = json_loadb(s, n, JSON_DECODE_ANY, &jerr);
                int want = j != NULL, got = cfg_accepts(&g, re, s, n);
                json_decref(j);
                if (want != got)
                    fail_msg("%s: '%s': jansson %s, the grammar %s", files[f], s,
                             want ? "accepts" : "refuses", got ? "accepts" : "refuses");
            }
        }
        free_all(&g, re);
        gr_cfg_free(&g);
    }
}

/* ---- loading ---- */

static void test_load_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof EXAMPLES / sizeof EXAMPLES[0]; i++) {
        gr_cfg_t g;
        tb_err_t err;
        if (gr_cfg_load(&g, EXAMPLES[i], NULL, &err))
            fail_msg("%s", err.msg);
        assert_true(g.finished);
        gr_cfg_free(&g);
    }
    /* the ambiguous, left-recursive expression grammar as written */
    expect_dump("lark", "start: expr\nexpr: expr \"+\" expr | expr \"*\" expr | \"(\" expr \")\" "
                "| NUMBER\nNUMBER: /[0-9]+/\n%ignore \" \"\n",
                "start -> expr\n"
                "expr -> expr \"+\" expr\n"
                "expr -> expr \"*\" expr\n"
                "expr -> \"(\" expr \")\"\n"
                "expr -> NUMBER\n"
                "lexeme \" \" (ignored) =  \n"
                "lexeme \"+\" = \\+\n"
                "lexeme \"*\" = \\*\n"
                "lexeme \"(\" = \\(\n"
                "lexeme \")\" = \\)\n"
                "lexeme NUMBER = [0-9]+\n");
    gr_cfg_t g;
    tb_err_t err;
    assert_int_equal(gr_cfg_load(&g, GRAMMARS "json.lark", "gbnf", &err), -1);
    assert_string_equal(err.msg, GRAMMARS "json.lark:1:1: expected a rule name, found '/'");
    assert_int_equal(gr_cfg_load(&g, "data/fixtures/conform-sample.txt", NULL, &err), -1);
    assert_string_equal(err.msg, "data/fixtures/conform-sample.txt: cannot tell the grammar "
                        "format from the name (.lark, .gbnf or .json; or name the format: "
                        "lark, gbnf, schema)");
    assert_int_equal(gr_cfg_load(&g, GRAMMARS "json.lark", "ebnf", &err), -1);
    assert_string_equal(err.msg, GRAMMARS "json.lark: unknown grammar format 'ebnf' (lark, gbnf "
                        "or schema)");
    assert_int_equal(gr_cfg_load(&g, GRAMMARS "missing.gbnf", NULL, &err), -1);
    assert_non_null(strstr(err.msg, "missing.gbnf"));
    read_ok(&g, "gbnf", "root ::= \"a\"\n");
    gr_cfg_free(&g);
    assert_int_equal(gr_cfg_parse(&g, "start: \"a\"\n", 11, "inline", "lark", &err), 0);
    gr_cfg_free(&g);
}

/* Every prefix and many one-byte mutations of every example grammar give
 * a grammar or a message naming the file, never a crash. */
static void test_robustness(void **state)
{
    (void)state;
    static const uint8_t bytes[] = "\"[]()|*+?{},.:-/\\#%~\n \x00\xc3\xff";
    for (size_t f = 0; f < sizeof EXAMPLES / sizeof EXAMPLES[0]; f++) {
        uint8_t *text;
        size_t len;
        tb_err_t err;
        if (tb_read_file(EXAMPLES[f], &text, &len, &err))
            fail_msg("%s", err.msg);
        for (size_t cut = 0; cut <= len + 300; cut++) {
            size_t n = cut <= len ? cut : len;
            if (cut > len) { /* past the cuts, mutations of one byte */
                text[test_rnd((uint32_t)len)] = bytes[test_rnd(sizeof bytes - 1)];
            }
            /* an exact-size copy, so that reading past the end is caught */
            char *copy = malloc(n ? n : 1);
            assert_non_null(copy);
            memcpy(copy, text, n);
            gr_cfg_t g;
            int rc = gr_cfg_parse(&g, copy, n, EXAMPLES[f], NULL, &err);
            free(copy);
            if (rc == 0) {
                gr_cfg_free(&g);
                continue;
            }
            if (strncmp(err.msg, EXAMPLES[f], strlen(EXAMPLES[f])))
                fail_msg("cut %zu of %s: message without the file: %s", cut, EXAMPLES[f],
                         err.msg);
        }
        free(text);
    }
}

/* Inputs that would take deep recursion or exponential regexes: nesting
 * past the limit is an error; long chains of rules and doubling rules
 * load, merged into lexemes up to the regex size limit. */
static void test_limits(void **state)
{
    (void)state;
    tb_buf_t b = {0};
    const char *open_g[] = {"gbnf", "lark"};
    for (int f = 0; f < 2; f++) {
        b.len = 0;
        const char *head = f ? "start: " : "root ::= ";
        assert_int_equal(tb_buf_put(&b, head, strlen(head)), 0);
        for (int i = 0; i < 5000; i++)
            assert_int_equal(tb_buf_putc(&b, '('), 0);
        assert_int_equal(tb_buf_putc(&b, 0), 0);
        char want[64];
        snprintf(want, sizeof want, "g.%s:1:%d: groups nested more than 200 deep", open_g[f],
                 f ? 208 : 209); /* at a '(' */
        expect_error(open_g[f], (char *)b.data, want);
    }
    /* r0 ::= "a" r1, r1 ::= "a" r2, ...: one lexeme of 3000 a's, built
     * without recursing 3000 rules deep */
    b.len = 0;
    for (int i = 0; i < 3000; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "%s ::= \"a\" r%d\n", i ? "" : "root", i + 1);
        if (i)
            n = snprintf(line, sizeof line, "r%d ::= \"a\" r%d\n", i, i + 1);
        assert_int_equal(tb_buf_put(&b, line, (size_t)n), 0);
    }
    const char *last = "r3000 ::= \"b\"\n";
    assert_int_equal(tb_buf_put(&b, last, strlen(last) + 1), 0);
    gr_cfg_t g;
    read_ok(&g, "gbnf", (char *)b.data);
    assert_true(g.lex.len >= 1);
    gr_cfg_free(&g);
    /* d0 ::= d1 d1, d1 ::= d2 d2, ...: 2^30 bytes if all merged */
    b.len = 0;
    for (int i = 0; i < 30; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "%s ::= d%d d%d\n", i ? "" : "root", i + 1, i + 1);
        if (i)
            n = snprintf(line, sizeof line, "d%d ::= d%d d%d\n", i, i + 1, i + 1);
        assert_int_equal(tb_buf_put(&b, line, (size_t)n), 0);
    }
    last = "d30 ::= \"ab\" | \"c\"\n";
    assert_int_equal(tb_buf_put(&b, last, strlen(last) + 1), 0);
    read_ok(&g, "gbnf", (char *)b.data);
    for (size_t i = 0; i < g.lex.len; i++)
        assert_true(strlen(g.lex.data[i].regex) <= 64 * 1024);
    gr_cfg_free(&g);
    tb_buf_free(&b);
}

/* text read as Lark over v: 0 and *g, or -1 and the message in err. */
static int read_with(const tok_vocab_t *v, const char *text, gr_cfg_t *g, tb_err_t *err)
{
    gr_load_opts_t o = {.format = "lark", .vocab = v};
    return gr_cfg_parse_opts(g, text, strlen(text), "g.lark", &o, err);
}

/* Special tokens (llguidance's <|name|>, <[ids]>) as token-id lexemes of
 * Llama 3's vocabulary: their ids as the vocabulary has them, and each
 * refusal llguidance's tests name (test_lark.rs) with where it is. */
static void test_lark_special_tokens(void **state)
{
    (void)state;
    tok_tokenizer_t *tok = test_load("data/cache/llama3/tokenizer.json");
    const tok_vocab_t *v = tok_vocab(tok);
    gr_cfg_t g;
    tb_err_t err;
    const char *ok = "start: hd \"x\" <[^5-9,0-2]>\nhd: <|start_header_id|> | <[7,3-4]> | <[*]>\n";
    if (read_with(v, ok, &g, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(g.ntoken_lexemes, 4);
    const char *sh = "<|start_header_id|>";
    uint32_t tag = test_special_id(v, sh, strlen(sh));
    for (size_t i = 0; i < g.lex.len; i++) {
        const gr_lexeme_t *lx = &g.lex.data[i];
        if (!strcmp(lx->name, sh)) {
            assert_int_equal(lx->nids, 1);
            assert_true(lx->ids[0].lo == tag && lx->ids[0].hi == tag);
        } else if (!strcmp(lx->name, "<[7,3-4]>")) { /* sorted */
            assert_int_equal(lx->nids, 2);
            assert_true(lx->ids[0].lo == 3 && lx->ids[0].hi == 4 && lx->ids[1].lo == 7);
        } else if (!strcmp(lx->name, "<[*]>")) {
            assert_true(lx->nids == 1 && lx->ids[0].lo == 0 && lx->ids[0].hi == v->size - 1);
        } else if (!strcmp(lx->name, "<[^5-9,0-2]>")) { /* 3-4 and 10 on */
            assert_int_equal(lx->nids, 2);
            assert_true(lx->ids[0].lo == 3 && lx->ids[0].hi == 4 && lx->ids[1].lo == 10 &&
                        lx->ids[1].hi == v->size - 1);
        } else {
            assert_null(lx->ids);
        }
    }
    gr_cfg_free(&g);
    static const struct {
        const char *text, *want;
    } BAD[] = {
        {"start: FOO\nFOO: <[1234]>\n", "g.lark:2:6: special tokens (like <[1234]>) cannot be "
         "used in terminals: they are token ids, a terminal is bytes"},
        {"start: FOO\nFOO: <|eot_id|>\n", "g.lark:2:6: special tokens (like <|eot_id|>) "
         "cannot be used in terminals: they are token ids, a terminal is bytes"},
        {"start: \"A\" | <|foobarbaz|>\n", "g.lark:1:14: special token <|foobarbaz|>: unknown "
         "special token: the vocabulary has no special token with this text"},
        {"start: <[100-200-300]>\n", "g.lark:1:8: special token <[100-200-300]>: invalid token "
         "range '100-200-300' (an id, or ids a-b with a <= b)"},
        {"start: <[,]>\n", "g.lark:1:8: special token <[,]>: empty token range"},
        {"start: <[200-100]>\n", "g.lark:1:8: special token <[200-100]>: invalid token range "
         "'200-100' (an id, or ids a-b with a <= b)"},
        {"start: <[200 - 100]>\n", "g.lark:1:8: a special token is <name> or <[ids]>, with no "
         "blank inside"},
        {"start: <[^*]>\n", "g.lark:1:8: special token <[^*]>: negated wildcard token <[^*]> "
         "is not supported"},
        {"start: <[*,100]>\n", "g.lark:1:8: special token <[*,100]>: wildcard token range '*' "
         "must not contain additional tokens"},
        {"start: <[999999]>\n", "g.lark:1:8: special token <[999999]>: token id 999999 is past "
         "the vocabulary's 128256 ids"},
        {"start: \"a\" <x\n", "g.lark:1:12: a special token is <name> or <[ids]>, with no "
         "blank inside"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        if (read_with(v, BAD[i].text, &g, &err) == 0) {
            gr_cfg_free(&g);
            fail_msg("accepted:\n%s", BAD[i].text);
        }
        if (strcmp(err.msg, BAD[i].want))
            fail_msg("grammar:\n%s\ngot:  %s\nwant: %s", BAD[i].text, err.msg, BAD[i].want);
    }
    tok_free(tok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gbnf_rules),       cmocka_unit_test(test_gbnf_literals),
        cmocka_unit_test(test_gbnf_classes),     cmocka_unit_test(test_gbnf_repetition),
        cmocka_unit_test(test_gbnf_nullable_runs), cmocka_unit_test(test_gbnf_json),
        cmocka_unit_test(test_gbnf_errors),      cmocka_unit_test(test_lark_rules),
        cmocka_unit_test(test_lark_terminals),   cmocka_unit_test(test_lark_imports),
        cmocka_unit_test(test_lark_errors),      cmocka_unit_test(test_lark_templates),      cmocka_unit_test(test_load_files),
        cmocka_unit_test(test_lark_special_tokens),
        cmocka_unit_test(test_random_grammars),  cmocka_unit_test(test_json_grammars),
        cmocka_unit_test(test_robustness),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
