#!/usr/bin/env python3
"""mkdict.py: the libFuzzer dictionaries of the fuzz harnesses, made from
the sources so that they follow the language and the IR.

    mkdict.py SRCROOT tlx   programs: the lexer's keywords, scalar types,
                            operators and number suffixes (lexer/lex.re),
                            the builtins (parser/builtins.c) and kernel
                            attributes (parser/sema.c)
    mkdict.py SRCROOT tir   textual IR: the op names (ir/ops.def), the
                            words the IR reader knows (ir/read.c), type
                            names (ir/type.c), attribute names (those
                            the code reads) and compare predicates

Prints the dictionary; exits 1 when a source yields too few words (its
layout changed).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "driver"))
import syntax_check  # noqa: E402  (the lexer's words, one extractor)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def quote(w):
    out = ""
    for c in w:
        if c in '"\\':
            out += "\\" + c
        elif " " <= c <= "~":
            out += c
        else:
            out += "\\x%02x" % ord(c)
    return '"%s"' % out


def tlx_words(root):
    lang = syntax_check.Language(root)
    if syntax_check.problems:
        sys.exit(1)
    words = {}
    for what in ("keywords", "types", "operators", "builtins", "attributes"):
        for w in getattr(lang, what):
            words.setdefault(w, what)
    for s in lang.isuf + lang.fsuf:
        words.setdefault("1" + s, "suffix")
    words.setdefault("tma<", "type")
    for w in ("inf", "nan", "true", "false", "axis:", "mask:", "other:"):
        words.setdefault(w, "word")
    return words


def tir_words(root):
    words = {}
    ops = re.findall(r'^OP\(\s*\w+,\s*"([\w.]+)"', read(root, "ir/ops.def"), re.M)
    types = re.findall(r'\[TY_\w+\] = "(\w+)"', read(root, "ir/type.c"))
    rd = read(root, "ir/read.c")
    known = re.findall(r'"([a-z][a-z_]+)"', rd)
    attrs = set()
    for d in ("ir", "passes", "sim", "codegen", "runtime", "parser"):
        for f in os.listdir(os.path.join(root, d)):
            if f.endswith(".c"):
                attrs.update(re.findall(r'attr_\w+\([^;]*?"([a-z_][\w.]*)"',
                                        read(root, os.path.join(d, f))))
    if len(ops) < 50 or len(types) < 10 or len(attrs) < 20:
        print("mkdict.py: only %d ops, %d types, %d attributes: has the "
              "layout of ir/ops.def, ir/type.c or the attr_ calls changed?"
              % (len(ops), len(types), len(attrs)), file=sys.stderr)
        sys.exit(1)
    for w in ops:
        words.setdefault(w, "op")
    for w in types:
        words.setdefault(w, "type")
    for w in known:
        words.setdefault(w, "reader")
    for w in sorted(attrs):
        words.setdefault(w + " = ", "attribute")
    for w in ("tile<", "ptr<", "tma<", "smem<", "mbar<", "pipe<", "x",
              "kernel @", "func @", "%", "^", "@", ": ", " = ", "{", "}",
              "(", ")", "[", "]", "<", ">", ", ", "\n", "// -----"):
        words.setdefault(w, "syntax")
    return words


def main(argv):
    if len(argv) != 2 or argv[1] not in ("tlx", "tir"):
        print(__doc__, file=sys.stderr)
        return 2
    words = tlx_words(argv[0]) if argv[1] == "tlx" else tir_words(argv[0])
    print("# made by testsuite/fuzz/mkdict.py %s: do not edit" % argv[1])
    for w, what in words.items():
        print("# %s\n%s" % (what, quote(w)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
