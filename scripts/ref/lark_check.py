#!/usr/bin/python3
"""Lark (Debian's python3-lark) as the live reference of Lark grammars.

usage: lark_check.py GRAMMAR START < STRINGS > VERDICTS

Reads GRAMMAR with Lark's Earley parser and its dynamic_complete lexer,
which tries every length at which a terminal's regex matches (Python's
re.match on the text and on each of its truncations), the reading closest
to tokbench's, where a lexeme may end wherever its regex matches in full
(docs/grammars.md says where the two still differ).  STRINGS holds one
string a line, its UTF-8 bytes in hex; each gets a line "1" (a sentence)
or "0" (refused, or not UTF-8).  A grammar Lark refuses: "E message" on
the first line and exit status 2.
"""
import sys

import lark


def main():
    path, start = sys.argv[1], sys.argv[2]
    try:
        parser = lark.Lark.open(path, start=start, parser="earley",
                                lexer="dynamic_complete")
    except Exception as e:  # Lark's grammar errors have no common base
        print("E %s: %s" % (type(e).__name__, str(e).splitlines()[0]))
        return 2
    for line in sys.stdin:
        try:
            text = bytes.fromhex(line.strip()).decode("utf-8")
            parser.parse(text)
            print(1)
        except (UnicodeDecodeError, lark.exceptions.LarkError):
            print(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
