#!/usr/bin/env python3
"""syntax_check.py: checks the editor syntax files in editors/ against the
lexer and against every kernel of the tree.

    syntax_check.py SRCROOT          the TextMate grammar and the Vim file
    syntax_check.py --vim SRCROOT    also run Vim on probes and on the kernels

The keywords, scalar type names, number suffixes and operators come from
lexer/lex.re, the builtins from parser/builtins.c and the kernel
attributes from parser/sema.c, so a name added there fails this check
until the syntax files follow.  The TextMate grammar is run by a small
tokenizer (match and begin/end rules, includes, earliest match first, as
TextMate does it), which must leave no character of a kernel unmatched
but whitespace.  Prints one line per problem and exits 1 if there is any.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

problems = []


def problem(msg):
    problems.append(msg)
    print("error: " + msg)


# ---- what the lexer and parser define ----------------------------------------


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Language:
    def __init__(self, root):
        lex = read(os.path.join(root, "lexer", "lex.re"))
        scan = lex[lex.index("\nscan("):]
        self.keywords = re.findall(
            r'^\s*"([A-Za-z_]\w*)"\s*\{\s*return TOK_\w+;', scan, re.M)
        self.types = re.findall(
            r'^\s*"([A-Za-z_]\w*)"\s*\{\s*return scalar\(v, TY_\w+\);', scan, re.M)
        self.operators = re.findall(r'"([^"\w\\\s]+)"\s*\{\s*return TOK_\w+;', scan)

        def suffixes(name):
            m = re.search(r"^\s*%s\s*=(.*);" % name, lex, re.M)
            return re.findall(r'"(\w+)"', m.group(1))
        self.isuf = suffixes("isuf")
        self.fsuf = suffixes("fsuf")
        # the start of each message of the lexer, up to its first quote
        # or conversion: "digit separator ", "unknown escape sequence "...
        self.messages = sorted({re.split(r"['%]", m)[0] for m in re.findall(
            r'diag_error\(lx->diag,[^;]*?"([^"]+)"', lex)})
        bi = read(os.path.join(root, "parser", "builtins.c"))
        self.builtins = re.findall(
            r'\{ "(\w+)", (?:bi_\w+|sema_async_builtin) \}', bi)
        sema = read(os.path.join(root, "parser", "sema.c"))
        self.attributes = re.findall(r'strcmp\(a->name, "(\w+)"\)', sema)
        for what in ("keywords", "types", "operators", "isuf", "fsuf",
                     "builtins", "attributes"):
            if len(getattr(self, what)) < 4:
                problem("found only %r as %s: has the source's layout changed?"
                        % (getattr(self, what), what))
        if len(self.messages) < 4:
            problem("found only %r as the lexer's messages" % self.messages)
        # tma<T, R> is a type constructor: a keyword the type rules know
        self.typewords = self.types + ["tma"]


    def lex_errors(self, text):
        """Whether a kernel expects an error of the lexer: a test of it."""
        return any(m in text for m in self.messages)


# ---- the TextMate grammar --------------------------------------------------------

# Regex syntax that Oniguruma and Python's re do not share.
NONPORTABLE = [r"\h", r"\H", r"\G", r"\A", r"\z", r"\Z", r"\p{", r"\k<",
               r"\g<", "(?i)", "(?x)", "(?m)", "(?<name>", "*+", "++", "?+"]


class Grammar:
    def __init__(self, path):
        self.g = json.loads(read(path))
        self.repo = self.g.get("repository", {})
        if self.g.get("scopeName") != "source.tlx":
            problem("%s: scopeName is %r, not 'source.tlx'"
                    % (path, self.g.get("scopeName")))
        self.res = {}
        self._compile(self.g, path)
        self.top = self.expand(self.g["patterns"])

    def _compile(self, node, where):
        if isinstance(node, list):
            for i, n in enumerate(node):
                self._compile(n, "%s[%d]" % (where, i))
            return
        if not isinstance(node, dict):
            return
        for key in ("match", "begin", "end"):
            if key in node:
                src = node[key]
                for bad in NONPORTABLE:
                    if bad in src:
                        problem("%s.%s: %r is not portable regex syntax"
                                % (where, key, bad))
                try:
                    self.res[id(node), key] = re.compile(src)
                except re.error as e:
                    problem("%s.%s: %s: %r" % (where, key, e, src))
        for k, v in node.items():
            if isinstance(v, (dict, list)):
                self._compile(v, "%s.%s" % (where, k))

    def expand(self, patterns, seen=None):
        """The rules of a patterns list, includes resolved, in order."""
        seen = set() if seen is None else seen
        rules = []
        for p in patterns:
            if "include" in p:
                name = p["include"]
                if name in seen:
                    continue
                seen = seen | {name}
                if name in ("$self", "$base"):
                    rules += self.expand(self.g["patterns"], seen)
                    continue
                target = self.repo.get(name[1:]) if name.startswith("#") else None
                if target is None:
                    problem("include of unknown rule %r" % name)
                elif "match" in target or "begin" in target:
                    rules.append(target)
                else:
                    rules += self.expand(target.get("patterns", []), seen)
            elif "match" in p or "begin" in p:
                rules.append(p)
            else:
                rules += self.expand(p.get("patterns", []), seen)
        return rules

    def tokenize(self, text):
        """[(scope, text)] of the top-level tokens, the unmatched non-blank
        characters as [(line, col, text)] and the tokens of an invalid.*
        scope at any depth as [(line, col, text)]."""
        tokens, unmatched, invalid, stack = [], [], [], []
        for ln, line in enumerate(text.split("\n"), 1):
            line += "\n"
            pos = 0
            while pos < len(line):
                if stack:
                    rule = stack[-1]
                    cands = [("end", self.res[id(rule), "end"], rule)]
                    cands += [(None, None, r)
                              for r in self.expand(rule.get("patterns", []))]
                else:
                    cands = [(None, None, r) for r in self.top]
                best = None
                for kind, rx, r in cands:
                    if rx is None:
                        kind = "match" if "match" in r else "begin"
                        rx = self.res.get((id(r), kind))
                        if rx is None:
                            continue
                    m = rx.search(line, pos)
                    if m and (best is None or m.start() < best[0].start()):
                        best = (m, kind, r)
                stop = best[0].start() if best else len(line)
                gap = line[pos:stop]
                if not stack and gap.strip():
                    col = pos + len(gap) - len(gap.lstrip()) + 1
                    unmatched.append((ln, col, gap.strip()))
                if not best:
                    break
                m, kind, r = best
                if kind == "end":
                    stack.pop()
                elif kind == "begin":
                    if not stack:
                        tokens.append((r.get("name", ""), m.group(0)))
                    stack.append(r)
                else:
                    if m.end() == m.start():
                        problem("rule %r matches the empty string at %d:%d"
                                % (r["match"], ln, pos + 1))
                        pos += 1
                        continue
                    scope = r.get("name")
                    if scope is None:  # the first capture's
                        caps = r.get("captures", {})
                        scope = caps.get("1", caps.get("0", {})).get("name", "")
                    if not stack:
                        tokens.append((scope, m.group(0)))
                    if scope.startswith("invalid."):
                        invalid.append((ln, m.start() + 1, m.group(0)))
                pos = max(m.end(), pos)
        return tokens, unmatched, invalid


def expect_tokens(gr, text, want):
    """The top-level tokens of text have these scope prefixes, in order."""
    toks, unmatched, _ = gr.tokenize(text)
    got = [s for s, _ in toks]
    ok = not unmatched and len(got) == len(want) and all(
        g.startswith(w) for g, w in zip(got, want))
    if not ok:
        problem("textmate: %r gives %r%s, expected %r"
                % (text, toks, " and leaves %r" % unmatched if unmatched else "",
                   want))


def check_textmate(gr, lang, corpus):
    ident = "variable.other"
    scope_of = {"keywords": ("keyword.", "storage.", "constant.language"),
                "typewords": ("storage.type",)}
    for what, prefixes in scope_of.items():
        for w in getattr(lang, what):
            toks = gr.tokenize(w)[0]
            if len(toks) != 1 or not toks[0][0].startswith(prefixes):
                problem("textmate: the lexer's %r gives %r, expected one of %r"
                        % (w, toks, prefixes))
            # names that only begin with a keyword are identifiers
            expect_tokens(gr, w + "x", [ident])
            expect_tokens(gr, "x" + w, [ident])
    for w in lang.builtins:
        expect_tokens(gr, w + "(", ["support.function", "punctuation"])
    for w in lang.attributes:
        expect_tokens(gr, w + "(", ["entity.other.attribute-name", "punctuation"])
    for op in lang.operators:
        toks = gr.tokenize(op)[0]
        if len(toks) != 1 or toks[0][1] != op or not toks[0][0].startswith(
                ("keyword.operator", "punctuation")):
            problem("textmate: the operator %r gives %r" % (op, toks))
    for s in lang.isuf:
        for n in ("1", "0x1f", "0o7", "0b1"):
            expect_tokens(gr, n + s, ["constant.numeric.integer"])
    for s in lang.fsuf:
        for n in ("1", "1.5", "2e-3", "1_0.2_5E+1_0"):
            expect_tokens(gr, n + s, ["constant.numeric.float"])
    for n in ("42", "0xff", "0o17", "0b1010", "1_000_000", "0xffff_ffff", "0x1f32"):
        expect_tokens(gr, n, ["constant.numeric.integer"])
    for n in ("1.5", "0.25", "1e5", "2.5E-3", "1.5e-3", "1_000.5"):
        expect_tokens(gr, n, ["constant.numeric.float"])
    for n in ("123abc", "0o18", "1e5x", "0x1g", "2u7"):
        expect_tokens(gr, n, ["invalid.illegal"])
    expect_tokens(gr, "0..n", ["constant.numeric", "keyword.operator.range", ident])
    expect_tokens(gr, "1.to(f32)", ["constant.numeric", "punctuation.accessor",
                                    "support.function", "punctuation", "storage.type",
                                    "punctuation"])
    expect_tokens(gr, "x: *f32", [ident, "punctuation", "storage.modifier.pointer",
                                  "storage.type"])
    expect_tokens(gr, "a * b", [ident, "keyword.operator.arithmetic", ident])
    expect_tokens(gr, "f(barrier: b)", [ident, "punctuation", "variable.parameter",
                                        "punctuation", ident, "punctuation"])
    expect_tokens(gr, "kernel k(const B: i32)",
                  ["storage.type.function", "punctuation", "storage.modifier",
                   "punctuation", "storage.type", "punctuation"])
    expect_tokens(gr, "a /* b /* c */ d */ e // f\n/* g\nh */ i",
                  [ident, "comment.block", ident, "comment.line", "comment.block",
                   ident])
    expect_tokens(gr, r'"a \" \n \q // b" c', ["string.quoted", ident])
    expect_tokens(gr, '"open\nx', ["string.quoted", ident])

    # the tokenizer itself: a stray byte is left unmatched
    if gr.tokenize("a @ b")[1] != [(1, 3, "@")]:
        problem("textmate: the tokenizer does not see the stray '@' in 'a @ b'")

    for path in corpus:
        text = read(path)
        _, unmatched, invalid = gr.tokenize(text)
        # the lexer's own tests of stray bytes hold characters no rule takes
        if "invalid character" not in text:
            for ln, col, s in unmatched:
                problem("%s:%d:%d: textmate: no rule matches %r" % (path, ln, col, s))
        if not lang.lex_errors(text):
            for ln, col, s in invalid:
                problem("%s:%d:%d: textmate: %r is marked invalid" % (path, ln, col, s))


# ---- the Vim syntax file ---------------------------------------------------------------


def vim_words(vim, groups):
    """The words of the 'syn keyword' and 'syn match' lines of these groups."""
    words = set()
    for m in re.finditer(r"^syn\s+(?:keyword|match)\s+(\w+)\s+(.*)$", vim, re.M):
        if m.group(1) in groups:
            body = re.sub(r"\\[A-Za-z]", " ", m.group(2))
            words |= set(re.findall(r"[A-Za-z_]\w*", body))
    return words


def check_vim_file(vim, lang):
    groups = set(re.findall(r"^syn\s+(?:keyword|match|region)\s+(\w+)", vim, re.M))
    kwgroups = {g for g in groups if re.search(r"^syn\s+keyword\s+%s\b" % g,
                                              vim, re.M)} | {"tlxDecl"}
    for what, gs in (("keywords", kwgroups - {"tlxTodo"}),
                     ("typewords", {"tlxType"}), ("builtins", {"tlxBuiltin"}),
                     ("attributes", {"tlxAttribute"}), ("isuf", {"tlxNumber"}),
                     ("fsuf", {"tlxFloat"})):
        have = vim_words(vim, gs)
        for w in getattr(lang, what):
            if w not in have:
                problem("vim: the lexer's or parser's %r is not in %s"
                        % (w, " or ".join(sorted(gs))))
    for g in groups:
        if not re.search(r"^hi def link %s\s" % g, vim, re.M):
            problem("vim: group %s has no highlight link" % g)


def run_vim(root, vimfile, lang, corpus):
    """Opens probes and the corpus in Vim and reads back the highlight
    groups; what Vim does is the truth the static check only guesses."""
    probes = []  # (line text, column, expected group or None for none)
    for w in lang.keywords:
        probes.append((w, 1, "Keyword" if w in ("let", "var", "shared", "barrier",
                                                  "pipe", "tasks", "task",
                                                  "static_assert") else "*"))
        probes.append((w + "x", 1, ""))
    for w in lang.typewords:
        probes.append((w, 1, "Type"))
        probes.append(("x" + w, 1, ""))
    for w in lang.builtins:
        probes.append((w + "(x)", 1, "Function"))
    for w in lang.attributes:
        probes.append((w + "(4)", 1, "PreProc"))
    for s in lang.isuf:
        probes += [("1" + s, 1, "Number"), ("0x1f" + s, 1, "Number")]
    for s in lang.fsuf:
        probes += [("1" + s, 1, "Float"), ("1.5e-3" + s, 1, "Float")]
    for n in ("42", "0xff", "0o17", "0b1010", "1_000_000", "0x1f32"):
        probes.append((n, 1, "Number"))
    for n in ("1.5", "1e5", "2.5E-3", "1_000.5"):
        probes.append((n, 1, "Float"))
    for n in ("123abc", "0o18", "1e5x"):
        probes.append((n, 1, "Error"))
    probes += [("x: *f32", 4, "Type"), ("a * b", 3, "Operator"),
               ("f(barrier: b)", 3, ""), ("barrier b[2];", 1, "Keyword"),
               ("kernel vadd()", 8, "Function"), ("const BLOCK = 1;", 7, "Constant"),
               ("x.to(f32)", 3, "Function"), ("0..n", 2, "Operator"),
               ("/* a /* b */ c */ d", 14, "Comment"), ("/* a /* b */ c */ d", 19, ""),
               ("// x", 4, "Comment"), (r'"a\n\q"', 1, "String"),
               (r'"a\n\q"', 3, "SpecialChar"), (r'"a\n\q"', 5, "Error")]
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.tlx")
        with open(probe, "w") as f:
            f.write("\n".join(p[0] for p in probes) + "\n")
        out = os.path.join(tmp, "out")
        files = os.path.join(tmp, "files")
        with open(files, "w") as f:
            f.write("\n".join(corpus) + "\n")
        script = os.path.join(tmp, "check.vim")
        with open(script, "w") as f:
            f.write("""
let &rtp = %(rtp)s . ',' . &rtp
filetype plugin on
syntax on
let out = []
execute 'edit ' . fnameescape(%(probe)s)
call add(out, 'filetype ' . &filetype . ' ' . &commentstring)
for l in range(1, line('$'))
  let c = str2nr(%(cols)s[l - 1])
  call add(out, synIDattr(synID(l, c, 1), 'name'))
endfor
for f in readfile(%(files)s)
  if f == '' | continue | endif
  execute 'edit ' . fnameescape(f)
  for l in range(1, line('$'))
    for c in range(1, len(getline(l)))
      if synIDattr(synIDtrans(synID(l, c, 1)), 'name') == 'Error'
        call add(out, f . ':' . l . ':' . c . ': Error')
        break
      endif
    endfor
  endfor
  bwipeout
endfor
call writefile(out, %(out)s)
qall!
""" % {"rtp": json.dumps(os.path.join(root, "editors", "vim")),
                "probe": json.dumps(probe), "out": json.dumps(out),
                "files": json.dumps(files),
                "cols": json.dumps([str(p[1]) for p in probes])})
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)  # the sanitizers' runtimes are for libtlx
        r = subprocess.run(["vim", "-Nu", "NONE", "-i", "NONE", "-n", "-Es",
                            "-S", script], stdin=subprocess.DEVNULL, env=env,
                           capture_output=True, text=True, timeout=600)
        if not os.path.exists(out):
            problem("vim wrote nothing (rc %d): %s" % (r.returncode, r.stdout + r.stderr))
            return
        got = read(out).split("\n")
    links = dict(re.findall(r"^hi def link (\w+)\s+(\w+)", vimfile, re.M))

    def resolve(g):  # to the standard group: tlxNumber -> Number
        while g in links:
            g = links[g]
        return g
    if len(got) < 1 + len(probes):
        problem("vim answered %d probes of %d" % (len(got) - 1, len(probes)))
    head = got[0]
    if head != "filetype tlx // %s":
        problem("vim: a .tlx file gives %r, expected 'filetype tlx // %%s'" % head)
    for (text, col, want), g in zip(probes, got[1:]):
        g = resolve(g)
        if (want == "*" and g in ("", "Error")) or (want != "*" and g != want):
            problem("vim: %r at column %d is %r, expected %r"
                    % (text, col, g, want or "no group"))
    for line in got[1 + len(probes):]:
        if line and not lang.lex_errors(read(line.split(":")[0])):
            problem("vim: " + line)


def main(argv):
    use_vim = "--vim" in argv
    root = [a for a in argv if a != "--vim"][0]
    lang = Language(root)
    corpus = sorted(glob.glob(os.path.join(root, "examples", "*.tlx")) +
                    glob.glob(os.path.join(root, "testsuite", "**", "*.tlx"),
                              recursive=True))
    gr = Grammar(os.path.join(root, "editors", "textmate", "tlx.tmLanguage.json"))
    check_textmate(gr, lang, corpus)
    vimfile = read(os.path.join(root, "editors", "vim", "syntax", "tlx.vim"))
    check_vim_file(vimfile, lang)
    if use_vim:
        run_vim(root, vimfile, lang, corpus)
    print("%d keywords, %d types, %d operators, %d builtins, %d kernel files: "
          "%d problems" % (len(lang.keywords), len(lang.types), len(lang.operators),
                           len(lang.builtins), len(corpus), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
