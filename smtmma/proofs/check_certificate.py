#!/usr/bin/env python3
"""An independent checker for smtmma certificates: standard library and a solver's own Python package, nothing else.

    python check_certificate.py CERT.smt2[.gz] ... [--solver z3|cvc5|bitwuzla] [--timeout S] [--structure-only]

A certificate (format 2, first line ``; smtmma-certificate 2``) is SMT-LIB2
(QF_BV, optionally with uninterpreted functions) in ``push``/``pop`` scopes;
every ``(check-sat)`` follows a comment ``; expect: sat`` or ``; expect: unsat``.
The checker replays it and enforces one discipline on every check expecting unsat:

* a **lemma** is a Boolean ``define-fun`` ``L``.  It is *proved* by a check whose
  last assertion is ``(not (L c1 ... cn))`` on distinct constants declared in
  that check's own scope, after ``L`` (fresh: so the check covers every
  argument), and whose other assertions are applications of lemmas already
  proved; the answer unsat proves ``L`` for every argument (and every value of
  any constant its body mentions, all of which are unconstrained there);
* any other check expecting unsat (a **statement**) may rest on applications
  ``(L t1 ... tn)`` of proved lemmas to any terms, and on exactly one other
  assertion, its last: the negated claim itself, premises included;
* ``declare-const``, ``declare-fun`` and ``define-fun`` only define; an
  assertion that is neither the check's last nor a proved lemma's application
  is refused, naming the block and the assertion.  Checks expecting sat
  (witnesses: the inputs pinned) may assert anything.

Then each check is handed to the solver with the commands in scope.  Exit 0
when every file passes, 1 when one fails, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
import time

MAGIC = "; smtmma-certificate 2"
EXPECT = re.compile(r"expect(?:ed)?:\s*(sat|unsat)\b")
TOKEN = re.compile(r'\|[^|]*\||"(?:[^"]|"")*"|;[^\n]*|[()]|[^\s()|";]+')
ALLOWED = {"set-logic", "set-info", "declare-const", "declare-fun", "define-fun", "push", "pop", "assert",
           "check-sat", "exit", "get-model", "get-value", "echo"}
OPTIONS = {":produce-models", ":print-success"}


class Rejected(Exception):
    """The file breaks the discipline (the message names the block and the command)."""


def commands(text: str):
    """Yield (command text, parsed command as nested lists of atoms, comments before it)."""
    stack, start, comments = [], -1, []
    for m in TOKEN.finditer(text):
        tok = m.group()
        if tok.startswith(";"):
            if not stack:
                comments.append(tok[1:].strip())
        elif tok == "(":
            if not stack:
                start = m.start()
            stack.append([])
        elif tok == ")":
            if not stack:
                raise Rejected(f"unbalanced ')' at offset {m.start()}")
            done = stack.pop()
            if stack:
                stack[-1].append(done)
            else:
                yield text[start:m.end()], done, "\n".join(comments)
                comments = []
        elif stack:
            stack[-1].append(tok[1:-1] if tok.startswith("|") and tok.endswith("|") else tok)
        else:
            raise Rejected(f"unexpected {tok[:20]!r} at offset {m.start()} (not an SMT-LIB2 command)")
    if stack:
        raise Rejected("unbalanced '(' at the end of the file")


class Scope:
    def __init__(self) -> None:
        self.commands: list[str] = []  # sent to the solver
        self.consts: dict[str, int] = {}  # declared constant -> the order it was declared in
        self.lemmas: dict[str, dict] = {}  # Boolean define-fun -> {"params": [...], "order": n, "proved": bool}
        self.asserts: list[tuple[str, str, object]] = []  # (kind "apply" or "other", text, the asserted term)


def show(term) -> str:
    return term if isinstance(term, str) else "(" + " ".join(show(t) for t in term) + ")"


def check_file(path: str, solver: str, timeout: float, structure_only: bool, log) -> tuple[bool, str]:
    """Replay one certificate file; (passed, one-line summary or the first failure)."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError, EOFError) as e:
        return False, f"cannot read it ({e})"
    return check_text(text, solver, timeout, structure_only, log)


def check_text(text: str, solver: str = "z3", timeout: float = 300.0, structure_only: bool = False,
               log=lambda _: None) -> tuple[bool, str]:
    """Replay a certificate's text; (passed, one-line summary or the first failure)."""
    if not text.startswith(MAGIC):
        return False, f"not a format-2 smtmma certificate (the first line must be {MAGIC!r})"
    scopes, order, logic, label, block = [Scope()], 0, "QF_BV", "the file's start", ""
    counts = {"lemma": 0, "statement": 0, "witness": 0}
    seconds = 0.0
    try:
        for n, (raw, cmd, comments) in enumerate(commands(text), 1):
            for line in comments.splitlines():
                if line.startswith("block "):
                    block, label = line, line
                elif re.match(r"(lemma|statement|the property)\b", line):
                    label = f"{block}, {line}" if block else line
            if not cmd or not isinstance(cmd[0], str):
                raise Rejected(f"command {n} is not a command")
            head, where = cmd[0], f"{label} (command {n})"
            order += 1
            top = scopes[-1]
            if head == "set-option":
                if len(cmd) < 2 or cmd[1] not in OPTIONS:
                    raise Rejected(f"{where}: (set-option {show(cmd[1:2])[1:-1]}) is not allowed")
                continue
            if head not in ALLOWED:
                raise Rejected(f"{where}: ({head} ...) is not allowed in a certificate")
            if head == "set-logic":
                logic = show(cmd[1])
                continue
            if head in ("push", "pop"):
                k = int(cmd[1]) if len(cmd) > 1 and cmd[1].isdigit() else 1
                if head == "push":
                    scopes += [Scope() for _ in range(k)]
                elif k >= len(scopes):
                    raise Rejected(f"{where}: (pop {k}) without as many (push) before it")
                else:
                    del scopes[len(scopes) - k:]
                continue
            elif head == "declare-const":
                top.consts[cmd[1]] = order
            elif head == "define-fun" and cmd[3] == "Bool":
                top.lemmas[cmd[1]] = {"name": cmd[1], "params": [p[0] for p in cmd[2]], "order": order, "proved": False}
            elif head == "assert":
                top.asserts.append(("apply" if applies_proved(scopes, cmd[1]) else "other", raw, cmd[1]))
            elif head == "check-sat":
                found = EXPECT.findall(comments)
                if not found:
                    raise Rejected(f"{where}: a (check-sat) without an 'expect: sat|unsat' comment")
                expect = found[-1]
                proves = None if expect == "sat" else judge(scopes, where)  # the lemma an unsat check proves
                counts["witness" if expect == "sat" else "lemma" if proves else "statement"] += 1
                if not structure_only:
                    script = "\n".join([f"(set-logic {logic})", *(c for s in scopes for c in s.commands)]) + "\n"
                    t0 = time.perf_counter()
                    try:
                        got = solve(solver, script, timeout)
                    except Exception as e:  # the solver refused the text: a failed check, not a crash
                        got = f"error ({str(e).strip()[:200]})"
                    seconds += time.perf_counter() - t0
                    if got != expect:
                        raise Rejected(f"{where}: expected {expect}, {solver} says {got}")
                if proves:
                    proves["proved"] = True
                log(f"  {where}: {expect}" + (f" (proves {proves['name']})" if proves else ""))
                continue
            if head not in ("exit", "get-model", "get-value", "echo"):
                top.commands.append(raw)
    except Rejected as e:
        return False, str(e)
    if not any(counts.values()):
        return False, "no (check-sat) in the file"
    how = "structure only" if structure_only else f"{solver}, {seconds:.1f} s"
    return True, (f"ok: {counts['lemma']} lemmas proved, {counts['statement']} statements, "
                  f"{counts['witness']} witnesses ({how})")


def lookup(scopes: list[Scope], term) -> tuple[int, dict, list]:
    """(scope depth, record, arguments) of the Boolean define-fun ``term`` applies; (-1, {}, []) when none."""
    name = term if isinstance(term, str) else term[0] if term and isinstance(term[0], str) else None
    for depth in range(len(scopes) - 1, -1, -1):
        if name is not None and name in scopes[depth].lemmas:
            return depth, scopes[depth].lemmas[name], [] if isinstance(term, str) else term[1:]
    return -1, {}, []


def applies_proved(scopes: list[Scope], term) -> bool:
    _, lemma, args = lookup(scopes, term)
    return bool(lemma) and lemma["proved"] and len(args) == len(lemma["params"])


def judge(scopes: list[Scope], where: str) -> dict | None:
    """What an unsat check proves: the record of the lemma it proves, or None for a statement; Rejected when it
    rests on an unproved assertion."""
    active = [a for s in scopes for a in s.asserts]
    others = [i for i, (kind, _, _) in enumerate(active) if kind == "other"]
    if not others:
        raise Rejected(f"{where}: a check expecting unsat with no statement (only lemma applications)")
    if len(others) > 1 or others[0] != len(active) - 1:
        bad = active[others[0]][1]
        raise Rejected(f"{where}: the assertion {bad[:160]!r} is neither the check's statement (its last assertion) "
                       f"nor an application of a proved lemma")
    term = active[-1][2]
    if isinstance(term, list) and term[:1] == ["not"] and len(term) == 2:
        depth, lemma, args = lookup(scopes, term[1])
        if lemma and not lemma["proved"] and depth < len(scopes) - 1:  # defined outside this check's scope: a proof
            fresh = scopes[-1].consts
            ok = (len(args) == len(lemma["params"]) and all(isinstance(a, str) and a in fresh for a in args)
                  and len(set(args)) == len(args) and all(fresh[a] > lemma["order"] for a in args))
            if not ok:
                raise Rejected(f"{where}: lemma {lemma['name']} is not proved on distinct fresh constants of its own scope")
            return lemma
    return None


def solve(solver: str, script: str, timeout: float) -> str:
    ms = int(timeout * 1000)
    if solver == "z3":
        import z3

        s = z3.Solver(ctx=z3.Context())  # a context per check: one shared by hundreds of checks slowed z3 past 300 s
        s.set(timeout=ms)
        s.from_string(script)
        return str(s.check())
    if solver == "cvc5":
        import cvc5

        tm = cvc5.TermManager()
        slv, sm = cvc5.Solver(tm), None
        slv.setOption("tlimit-per", str(ms))
        sm = cvc5.SymbolManager(tm)
        parser = cvc5.InputParser(slv, sm)
        parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, script + "(check-sat)\n", "certificate")
        out = ""
        while True:
            cmd = parser.nextCommand()
            if cmd.isNull():
                break
            out = cmd.invoke(slv, sm)
        return out.strip() or "unknown"
    import bitwuzla

    opts = bitwuzla.Options()
    opts.set(bitwuzla.Option.TIME_LIMIT_PER, ms)
    parser = bitwuzla.Parser(bitwuzla.TermManager(), opts)
    err = parser.parse(script, True, False)
    if err:
        return f"error ({err})"
    return str(parser.bitwuzla().check_sat())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("certificates", nargs="+", metavar="CERT")
    ap.add_argument("--solver", choices=("z3", "cvc5", "bitwuzla"), default="z3")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per check (default 300)")
    ap.add_argument("--structure-only", action="store_true", help="check the discipline, run no solver")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per check")
    args = ap.parse_args(argv)
    failed = 0
    for path in args.certificates:
        ok, summary = check_file(path, args.solver, args.timeout, args.structure_only,
                                 print if args.verbose else (lambda _: None))
        print(f"{path}: {summary if ok else 'REJECTED: ' + summary}")
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
