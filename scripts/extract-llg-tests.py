#!/usr/bin/env python3
"""Extracts llguidance's own grammar tests as cases for tests/test_llg_cases.c.

usage: scripts/extract-llg-tests.py LLGUIDANCE_DIR OUT_FILE

Reads llguidance/parser/tests/test_lark.rs and the test_json_*.rs beside it
(another project's files: read at test time, never committed here) and
writes every case whose arguments are literals to OUT_FILE:

    case FILE:LINE HELPER
    grammar N          followed by N bytes and a newline; always a Lark
                       grammar (a JSON case is `start: %json SCHEMA`, as
                       llguidance's own helper writes it)
    load               the grammar must load (lark_ok)
    refuse N           llguidance refuses it, its message containing these
                       N bytes
    pass N             the string must be accepted
    fail N             the string must be refused before its end
    final N            the whole string is a prefix, but not accepted
    reject N           refused somewhere, or not accepted at the end
    end

The Rust helpers read (llg_test_utils/src/acceptance.rs): lark_ok,
lark_err_test, json_err_test, lark_str_test, lark_str_test_many[_quiet],
json_test_many, json_schema_check.  Arguments may be string literals (raw
or not), json!(...) values, slices &[...] of them, booleans, names bound by
`let NAME = <literal>;` in the same function or by lazy_static, rstest
#[case(...)] parameters (one case per attribute), items of `for NAME in
&[...]`, and format! of those with {} and {name}.  A call whose arguments
are anything else (computed values, generated grammars) is skipped and
counted on stderr with its line, so the test's report says what was not
extracted.
"""
import json
import os
import re
import sys

HELPERS = {
    "lark_ok", "lark_err_test", "json_err_test", "lark_str_test", "lark_str_test_many",
    "lark_str_test_many_quiet", "json_test_many", "json_schema_check",
}


class Skip(Exception):
    pass


# ---- Rust tokens ----

TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<raw>r(?P<hashes>\#*)")
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<char>'(?:[^'\\]|\\.)')
  | (?P<num>-?[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9]+)?(?:[iuf](?:8|16|32|64|size))?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*!?)
  | (?P<punct>::|=>|->|&&|\|\||==|!=|<=|>=|\.\.|[^\s])
""", re.S | re.X)

ESC = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def unescape(body):
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in ESC:
            out.append(ESC[d])
            i += 2
        elif d == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif d == "u":
            j = body.index("}", i)
            out.append(chr(int(body[i + 3:j], 16)))
            i = j + 1
        elif d == "\n":  # a line continuation skips the next line's indent
            i += 2
            while i < len(body) and body[i] in " \t\n\r":
                i += 1
        else:
            raise Skip("escape \\" + d)
    return "".join(out)


def tokenize(src):
    """(kind, value, line, start offset, end offset) for every token."""
    toks, i, line = [], 0, 1
    while i < len(src):
        m = TOKEN.match(src, i)
        kind = m.lastgroup if m.lastgroup != "hashes" else "raw"
        end = m.end()
        if kind == "raw":
            close = '"' + m.group("hashes")
            end = src.index(close, end) + len(close)
            toks.append(("str", src[m.end():end - len(close)], line, i, end))
        elif kind == "str":
            toks.append(("str", unescape(m.group()[1:-1]), line, i, end))
        elif kind != "ws":
            toks.append((kind, m.group(), line, i, end))
        line += src.count("\n", i, end)
        i = end
    return toks


def group_end(toks, i):
    """Index past the bracketed group opening at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j][0] == "punct" and toks[j][1] in "([{":
            depth += 1
        elif toks[j][0] == "punct" and toks[j][1] in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
    raise Skip("unbalanced brackets")


def split_args(toks, i, j):
    """The comma-separated token ranges of toks[i:j] (top level only)."""
    args, start, k = [], i, i
    while k < j:
        if toks[k][0] == "punct" and toks[k][1] in "([{":
            k = group_end(toks, k)
            continue
        if toks[k][0] == "punct" and toks[k][1] == ",":
            args.append((start, k))
            start = k + 1
        k += 1
    if start < j:
        args.append((start, j))
    return args


# ---- values ----

def json_value(toks, i, j, env):
    """json!(...)'s tokens toks[i:j) as a Python value (Rust literals and
    names bound in env turned into JSON, trailing commas dropped)."""
    parts = []
    for k in range(i, j):
        kind, v = toks[k][0], toks[k][1]
        if kind == "str":
            parts.append(json.dumps(v))
        elif kind == "num":
            parts.append(v.replace("_", "").rstrip("iuf0123456789") if
                         re.search(r"[iuf](8|16|32|64|size)$", v) else v.replace("_", ""))
        elif kind == "name" and v in ("true", "false", "null"):
            parts.append(v)
        elif kind == "name" and v in env and isinstance(env[v], (str, Json)):
            parts.append(env[v].text() if isinstance(env[v], Json) else json.dumps(env[v]))
        elif kind == "punct" and v in "{}[]:,":
            if v in "}]" and parts and parts[-1] == ",":
                parts.pop()
            parts.append(v)
        else:
            raise Skip("json! with a Rust expression")
    text = "".join(parts)
    if text.endswith(","):
        text = text[:-1]
    return json.loads(text)


def evaluate(toks, i, j, env):
    """The value of toks[i:j): str, bool, a Json wrapper, or a list."""
    while i < j and toks[i][1] == "&":
        i += 1
    if i >= j:
        raise Skip("empty argument")
    kind, v = toks[i][0], toks[i][1]
    if kind == "str" and j == i + 1:
        return v
    if kind == "str" and toks[i + 1][1] == "." and toks[i + 2][1] in ("to_string", "into"):
        return v
    if kind == "name" and v in ("true", "false") and j == i + 1:
        return v == "true"
    if kind == "name" and v == "json!":
        end = group_end(toks, i + 1)
        return Json(json_value(toks, i + 2, end - 1, env))
    if kind == "punct" and v == "[":
        end = group_end(toks, i)
        return [evaluate(toks, a, b, env) for a, b in split_args(toks, i + 1, end - 1)]
    if kind == "name" and v == "format!":
        end = group_end(toks, i + 1)
        parts = split_args(toks, i + 2, end - 1)
        fmt = evaluate(toks, parts[0][0], parts[0][1], env)
        return format_string(fmt, [evaluate(toks, a, b, env) for a, b in parts[1:]], env)
    if kind == "name" and v == "vec!":
        end = group_end(toks, i + 1)
        return [evaluate(toks, a, b, env) for a, b in split_args(toks, i + 2, end - 1)]
    if kind == "name" and j == i + 1 and v in env:
        return env[v]
    raise Skip("argument %r" % v)


def format_string(fmt, args, env):
    """format!(fmt, args...) for {} and {name} of strings and JSON values
    (serde_json's Display is its compact text), {{ and }}."""
    def show(x):
        if isinstance(x, Json):
            return x.text()
        if isinstance(x, str):
            return x
        raise Skip("format! of a value that is not a string or JSON")
    out, pos = [], iter(args)
    for m in re.finditer(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)?\}|[{}]|[^{}]+", fmt):
        t = m.group()
        if t in ("{{", "}}"):
            out.append(t[0])
        elif t == "{}":
            out.append(show(next(pos)))
        elif t.startswith("{") and len(t) > 1:
            if m.group(1) not in env:
                raise Skip("format! of an unknown name")
            out.append(show(env[m.group(1)]))
        elif t in ("{", "}"):
            raise Skip("format! with a format spec")
        else:
            out.append(t)
    return "".join(out)


class Json:
    def __init__(self, v):
        self.v = v

    def text(self):
        """As serde_json::to_string writes it (order kept, compact)."""
        return json.dumps(self.v, separators=(",", ":"), ensure_ascii=False)


# ---- cases ----

def as_str(x):
    if isinstance(x, Json):
        if not isinstance(x.v, str):
            raise Skip("a JSON value where a string was expected")
        return x.v
    if not isinstance(x, str):
        raise Skip("not a string")
    return x


def as_json(x):
    if not isinstance(x, Json):
        raise Skip("not a json! value")
    return x


def lark_strings(s, ok):
    if ok:
        return [("pass", s)]
    if s.startswith("FINAL_REJECT:"):
        return [("final", s[len("FINAL_REJECT:"):])]
    return [("fail", s)]


def make_case(helper, args):
    """(grammar, [(verdict, text)]) of one helper call's values."""
    if helper == "lark_ok":
        return as_str(args[0]), [("load", None)]
    if helper == "lark_err_test":
        return as_str(args[0]), [("refuse", as_str(args[1]))]
    if helper == "json_err_test":
        return "start: %json " + as_json(args[0]).text(), [("refuse", as_str(args[1]))]
    if helper == "lark_str_test":
        if not isinstance(args[1], bool):
            raise Skip("verdict not a literal")
        return as_str(args[0]), lark_strings(as_str(args[2]), args[1])
    if helper.startswith("lark_str_test_many"):
        out = [v for s in args[1] for v in lark_strings(as_str(s), True)]
        out += [v for s in args[2] for v in lark_strings(as_str(s), False)]
        return as_str(args[0]), out
    grammar = "start: %json " + as_json(args[0]).text()
    if helper == "json_schema_check":
        if not isinstance(args[2], bool):
            raise Skip("verdict not a literal")
        return grammar, [("pass" if args[2] else "reject", as_json(args[1]).text())]
    return grammar, ([("pass", as_json(x).text()) for x in args[1]] +
                     [("reject", as_json(x).text()) for x in args[2]])


def bindings(toks, i, j, env):
    """`let NAME = VALUE;` and `static ref NAME: T = VALUE;` in toks[i:j)."""
    k = i
    while k < j:
        if toks[k][1] in ("let", "ref") and toks[k + 1][0] == "name":
            name, m = toks[k + 1][1], k + 2
            while m < j and toks[m][1] not in ("=", ";"):
                m += 1
            if m < j and toks[m][1] == "=":
                end = m + 1
                while end < j and toks[end][1] != ";":
                    end = group_end(toks, end) if toks[end][1] in "([{" else end + 1
                try:
                    env[name] = evaluate(toks, m + 1, end, env)
                except Skip:
                    env.pop(name, None)
                k = end
                continue
        k += 1


def functions(toks):
    """(attribute case lists, parameter names, body start, body end) of
    every fn."""
    k = 0
    while k < len(toks):
        if toks[k][1] != "fn":
            k += 1
            continue
        cases, a = [], k - 1
        while a > 0 and toks[a][1] in ("pub", "async"):
            a -= 1
        while a > 0 and toks[a][1] == "]":  # attributes above, bottom up
            o = a
            while toks[o][1] != "#":
                o -= 1
            if toks[o + 2][1] == "case":
                p = o + 3
                while toks[p][1] != "(":
                    p += 1
                cases.insert(0, (p, group_end(toks, p)))
            a = o - 1
        po = k + 2
        pe = group_end(toks, po)
        params = []
        for s, e in split_args(toks, po + 1, pe - 1):
            colon = next((m for m in range(s, e) if toks[m][1] == ":"), None)
            params.append(toks[colon - 1][1] if colon else None)
        body = pe
        while toks[body][1] != "{":
            body += 1
        end = group_end(toks, body)
        yield cases, params, body, end
        k = end


def extract(path, out, skipped):
    src = open(path, encoding="utf-8").read()
    toks = tokenize(src)
    base = os.path.basename(path)
    glob = {}
    bindings(toks, 0, len(toks), glob)
    n = 0
    for cases, params, body, end in functions(toks):
        calls = [k for k in range(body, end - 1)
                 if toks[k][1] in HELPERS and toks[k + 1][1] == "(" and toks[k - 1][1] != "fn"]
        for case_env in case_envs(toks, cases, params, glob):
            env = dict(case_env)
            bindings(toks, body + 1, end - 1, env)
            for k in calls:
                helper, line = toks[k][1], toks[k][2]
                for loop_env in loop_envs(toks, body, k, env):
                    try:
                        ce = group_end(toks, k + 1)
                        args = [evaluate(toks, a, b, loop_env)
                                for a, b in split_args(toks, k + 2, ce - 1)]
                        grammar, verdicts = make_case(helper, args)
                    except (Skip, ValueError, IndexError) as e:
                        skipped.append("%s:%d %s: %s" % (base, line, helper, e))
                        continue
                    write_case(out, "%s:%d" % (base, line), helper, grammar, verdicts)
                    n += 1
    return n


def loop_envs(toks, body, k, env):
    """One environment per item of the innermost `for NAME in &[...] {`
    around toks[k] (env itself if there is none)."""
    for f in range(k - 1, body, -1):
        if toks[f][1] != "for" or toks[f + 2][1] != "in":
            continue
        open_ = f + 3
        while toks[open_][1] != "{":
            open_ = group_end(toks, open_) if toks[open_][1] in "([" else open_ + 1
        if group_end(toks, open_) <= k:
            continue
        try:
            items = evaluate(toks, f + 3, open_, env)
        except Skip:
            break
        if isinstance(items, list):
            return [dict(env, **{toks[f + 1][1]: x}) for x in items]
        break
    return [env]


def case_envs(toks, cases, params, glob):
    """One environment per #[case(...)] (the globals alone if none)."""
    if not cases:
        yield glob
        return
    for o, e in cases:
        env = dict(glob)
        for name, (a, b) in zip(params, split_args(toks, o + 1, e - 1)):
            try:
                env[name] = evaluate(toks, a, b, glob)
            except Skip:
                pass
        yield env


def put(out, word, text):
    data = text.encode("utf-8")
    out.write(b"%s %d\n" % (word.encode(), len(data)) + data + b"\n")


def write_case(out, where, helper, grammar, verdicts):
    out.write(("case %s %s\n" % (where, helper)).encode())
    put(out, "grammar", grammar)
    for verdict, text in verdicts:
        if text is None:
            out.write(b"%s\n" % verdict.encode())
        else:
            put(out, verdict, text)
    out.write(b"end\n")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: extract-llg-tests.py LLGUIDANCE_DIR OUT_FILE")
    tests = os.path.join(sys.argv[1], "llguidance", "parser", "tests")
    if not os.path.isdir(tests):
        tests = os.path.join(sys.argv[1], "parser", "tests")
    files = sorted(f for f in os.listdir(tests)
                   if f == "test_lark.rs" or re.match(r"test_json_.*\.rs$", f))
    skipped, n = [], 0
    with open(sys.argv[2], "wb") as out:
        for f in files:
            n += extract(os.path.join(tests, f), out, skipped)
    for s in skipped:
        print("not extracted: " + s, file=sys.stderr)
    print("%d cases from %d files, %d calls not extracted" % (n, len(files), len(skipped)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
