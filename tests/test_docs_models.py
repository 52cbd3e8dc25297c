"""docs/models.md cannot drift from the code.

* Every worked example (a ```sh block running ``smtmma simulate``, followed by a
  ```text block) is run in-process; its output must equal the pasted text verbatim.
* Every model kind of ``smtmma.models.KINDS`` has a section, and the overview
  table covers every kind the catalogue uses.
* The generated tables (between ``<!-- generated: ... -->`` markers) agree with the
  catalogue: the overview (kind -> parameters -> architectures) exactly, so a kind
  gaining or losing an architecture fails; the per-kind "who uses it" tables
  tolerantly: every listed instruction must be a catalogue row with that spec, and
  every (kind, arch, op, spec) group of the catalogue must be listed, but a new
  instruction in an already-listed group (say another mixed fp8/fp6/fp4 pair) does not
  fail.

Regenerate the tables after a catalogue change with::

    PYTHONPATH=$PWD python tests/test_docs_models.py --write
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__":  # run as a script: import the package of this checkout
    sys.path.insert(0, str(ROOT))

from smtmma.catalogue import ARCHS, CATALOGUE, Entry
from smtmma.cli import main
from smtmma.models import KIND_PARAMS, KINDS

DOC = ROOT / "docs" / "models.md"

#: Where each kind is defined in the MMA-Sim paper (000_bd90616f30d82206.txt) and which tables select it.
PAPER = {
    "ftz-addmul": "Alg. 1, 2; Table 6",
    "fma": "Alg. 3, 4; Tables 3, 6",
    "e-fdpa": "Alg. 5, 6; Table 6",
    "t-fdpa": "Alg. 5, 7; Tables 2, 3, 4",
    "st-fdpa": "Alg. 5, 8; Tables 3, 4",
    "gst-fdpa": "Alg. 5, 9; Tables 3, 5",
    "tr-fdpa": "Alg. 5, 10; Tables 6, 7",
    "gtr-fdpa": "Alg. 5, 11; Tables 6, 7",
}
#: Parameters a kind cannot run without (the rest of KIND_PARAMS[kind] are optional: None = unbounded / none).
OPTIONAL = ("carry_bits", "emax_floor")

_BEGIN = re.compile(r"<!-- generated: (?P<name>[a-z0-9 -]+) -->\n")
_END = "<!-- end generated -->"


# ----------------------------------------------------------------- generators


def _kinds_used() -> list[str]:
    used = {e.model.kind for e in CATALOGUE}
    return [k for k in KINDS if k in used]


def _arches(kind: str) -> list[str]:
    return list(dict.fromkeys(e.arch for e in CATALOGUE if e.model.kind == kind))


def _params_cell(kind: str) -> str:
    req = [p for p in KIND_PARAMS[kind] if p not in OPTIONAL]
    opt = [p for p in KIND_PARAMS[kind] if p in OPTIONAL]
    cell = " ".join(f"`{p}`" for p in req) or "none"
    return cell + (" (optional: " + " ".join(f"`{p}`" for p in opt) + ")" if opt else "")


def overview() -> str:
    """The overview table: kind, paper, parameters, architectures, one catalogue spec."""
    lines = ["| kind | MMA-Sim paper | parameters | architectures (catalogue) | example catalogue row |",
             "|---|---|---|---|---|"]
    for kind in KINDS:
        rows = [e for e in CATALOGUE if e.model.kind == kind]
        arches = ", ".join(f"{a} ({ARCHS[a].family})" for a in _arches(kind)) or "none (a hypothesis only)"
        example = f"`{rows[0].model.describe()}` ({rows[0].arch} {rows[0].instr} {rows[0].op})" if rows else ""
        lines.append(f"| [`{kind}`](#{_anchor(kind)}) | {PAPER[kind]} | {_params_cell(kind)} | {arches} | {example} |")
    return "\n".join(lines)


#: Options of a row beside its kind's parameters, as (label, predicate on a model).
OPTIONS = (
    ("`nan=nvidia`", lambda m: m.nan == "nvidia"),
    ("`ftz_inputs`", lambda m: m.ftz_inputs),
    ("`emax_floor=-133`", lambda m: m.emax_floor == -133),
    ("`emax_floor=-15`", lambda m: m.emax_floor == -15),
    ("`via=fp16,interleave=2,c_after`", lambda m: (m.via, m.interleave, m.c_after) == ("fp16", 2, True)),
)


def options() -> str:
    """Which architectures (and op families) use each option of OPTIONS; every option in use must be listed."""
    lines = ["| option | rows using it (arch: op families; instruction types) |", "|---|---|"]
    for label, pred in OPTIONS:
        by_arch: dict[str, dict[str, list[str]]] = {}
        for e in CATALOGUE:
            if pred(e.model):
                by_arch.setdefault(e.arch, {}).setdefault(e.op, []).append(e.instr)
        if label == "`nan=nvidia`":  # every NVIDIA T/ST/GST-FDPA row: the architectures say enough
            kinds = sorted({e.model.kind for e in CATALOGUE if pred(e.model)}, key=KINDS.index)
            lines.append(f"| {label} | every {'/'.join(kinds)} row of {', '.join(by_arch)} |")
            continue
        cells = []
        for arch, ops in by_arch.items():
            kinds = sorted({_instr_class(i) for v in ops.values() for i in v})
            cells.append(f"{arch}: {'/'.join(ops)}; {', '.join(kinds)}")
        lines.append(f"| {label} | {' — '.join(cells) or 'none'} |")
    return "\n".join(lines)


def _instr_class(instr: str) -> str:
    """A coarse name of an instruction type's inputs (fp16, bf16, tf32, fp8, fp6/fp4, mx...), stable under new pairs."""
    from smtmma.catalogue import INSTRS

    i = INSTRS[instr]
    cls = {"e4m3": "fp8", "e5m2": "fp8", "e4m3fnuz": "fp8", "e5m2fnuz": "fp8", "e2m3": "fp6/fp4", "e3m2": "fp6/fp4",
           "e2m1": "fp6/fp4"}
    name = cls.get(i.a_fmt, i.a_fmt)
    if i.scale_fmt:
        name = "block-scaled " + name
    return f"{name}->{i.d_fmt}"


def _group_key(e: Entry) -> tuple[str, str, str]:
    return (e.arch, e.op + (" *" if e.default else ""), e.model.describe())


def rows_table(kind: str) -> str:
    """The catalogue rows of ``kind``, grouped by (arch, op, spec), each with its instruction types."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for e in CATALOGUE:
        if e.model.kind == kind:
            groups.setdefault(_group_key(e), []).append(e.instr)
    lines = ["| arch | op | model spec | instructions |", "|---|---|---|---|"]
    order = list(ARCHS)
    for (arch, op, spec), instrs in sorted(groups.items(), key=lambda kv: order.index(kv[0][0])):
        lines.append(f"| {arch} ({ARCHS[arch].family}) | {op} | `{spec}` | {', '.join(instrs)} |")
    return "\n".join(lines)


def _anchor(kind: str) -> str:
    return f"kind-{kind}"


def generated(name: str) -> str:
    if name == "overview":
        return overview()
    if name == "options":
        return options()
    if name.startswith("rows "):
        return rows_table(name[len("rows "):])
    raise KeyError(name)


def blocks(text: str) -> dict[str, tuple[int, int]]:
    """Each generated block's name -> (start, end) offsets of its body in ``text``."""
    out = {}
    for m in _BEGIN.finditer(text):
        end = text.index(_END, m.end())
        out[m.group("name")] = (m.end(), end)
    return out


def regenerate(text: str) -> str:
    for name, (start, end) in sorted(blocks(text).items(), key=lambda kv: -kv[1][0]):
        text = text[:start] + generated(name) + "\n" + text[end:]
    return text


# ----------------------------------------------------------------- parsing the page


def examples(text: str) -> list[tuple[str, str]]:
    """(command, expected output) of every ```sh block that runs ``smtmma simulate``, with the ```text block after it."""
    out = []
    for m in re.finditer(r"```sh\n(.*?)```\n+```text\n(.*?)```", text, re.DOTALL):
        cmd = m.group(1).replace("\\\n", " ").strip()
        if cmd.startswith("smtmma simulate"):
            out.append((cmd, m.group(2)))
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


# ----------------------------------------------------------------- tests


TEXT = DOC.read_text()
EXAMPLES = examples(TEXT)


def test_every_simulate_block_is_followed_by_its_output():
    n_sh = len([m for m in re.finditer(r"```sh\n(.*?)```", TEXT, re.DOTALL) if m.group(1).lstrip().startswith("smtmma simulate")])
    assert n_sh == len(EXAMPLES) and n_sh >= len(KINDS)


@pytest.mark.parametrize("cmd,expected", EXAMPLES, ids=[f"ex{i}" for i in range(len(EXAMPLES))])
def test_worked_example_output_is_verbatim(capsys, cmd, expected):
    argv = shlex.split(cmd)
    assert argv[:2] == ["smtmma", "simulate"]
    code = main(argv[1:])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert out == expected, f"docs/models.md is out of date for:\n{cmd}\nactual output:\n{out}"


def test_every_kind_has_a_section_with_an_example():
    sections = re.split(r"^## ", TEXT, flags=re.MULTILINE)
    for kind in KINDS:
        found = [s for s in sections if re.match(rf"[^\n]*`{re.escape(kind)}`", s)]
        assert len(found) == 1, f"docs/models.md needs one '## ... `{kind}`' section"
        body = found[0]
        assert re.search(rf'<a id="{_anchor(kind)}"></a>\n## [^\n]*`{re.escape(kind)}`', TEXT), f"no anchor before {kind}"
        assert "Alg. " in body, f"section {kind} cites no algorithm of the paper"
        assert f"<!-- generated: rows {kind} -->" in body, f"section {kind} has no table of catalogue rows"
        assert "```sh\nsmtmma simulate" in body, f"section {kind} has no worked example"


def test_overview_covers_every_catalogue_kind_with_its_architectures():
    start, end = blocks(TEXT)["overview"]
    table = TEXT[start:end].strip().splitlines()[2:]
    doc = {}
    for line in table:
        cells = _cells(line)
        kind = re.search(r"`([a-z-]+)`", cells[0]).group(1)  # type: ignore[union-attr]
        doc[kind] = set(re.findall(r"\b(sm\d+|gfx[0-9a-f]+)\b", cells[3]))
    assert set(doc) == set(KINDS)
    for kind in KINDS:  # a kind gaining or losing an architecture fails here
        assert doc[kind] == set(_arches(kind)), (kind, "run tests/test_docs_models.py --write")
    assert TEXT[start:end].strip() == overview(), "overview out of date: run tests/test_docs_models.py --write"


@pytest.mark.parametrize("kind", KINDS)
def test_rows_table_agrees_with_the_catalogue(kind):
    name = f"rows {kind}"
    start, end = blocks(TEXT)[name]
    listed: set[tuple[str, str, str]] = set()
    by_key = {}
    for e in CATALOGUE:
        if e.model.kind == kind:
            by_key.setdefault(_group_key(e), set()).add(e.instr)
    for line in TEXT[start:end].strip().splitlines()[2:]:
        arch_cell, op, spec, instrs = _cells(line)
        key = (arch_cell.split()[0], op, spec.strip("`"))
        assert key in by_key, f"docs/models.md lists {key}, which the catalogue no longer has"
        stale = set(instrs.split(", ")) - by_key[key]
        assert not stale, f"docs/models.md lists {sorted(stale)} under {key}; the catalogue does not"
        listed.add(key)
    missing = set(by_key) - listed
    assert not missing, f"catalogue rows of {kind} missing from docs/models.md: {sorted(missing)} (run --write)"


def test_options_table_is_current():
    start, end = blocks(TEXT)["options"]
    assert TEXT[start:end].strip() == options(), "options table out of date: run tests/test_docs_models.py --write"
    used = {(m.nan, m.ftz_inputs, m.emax_floor, m.via, m.interleave, m.c_after) for m in (e.model for e in CATALOGUE)}
    for nan, ftz, floor, via, inter, c_after in used:  # every option a row uses is one the table lists
        assert floor in (None, -133, -15) and (via, inter, c_after) in ((None, None, False), ("fp16", 2, True)), \
            "a catalogue row uses an option docs/models.md does not list: add it to OPTIONS"


def test_hypothesis_examples_parse():
    """The page shows --model overrides: each must be accepted (they run above as worked examples)."""
    assert any("--model " in c for c, _ in EXAMPLES)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        DOC.write_text(regenerate(TEXT))
        print(f"rewrote the generated tables of {DOC}")
    else:
        print(regenerate(TEXT), end="")
