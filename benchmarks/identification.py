"""False identifications: every variant of the structural grid identified against the catalogue alone.

Run: python benchmarks/identification.py [--json] [--instr I ...] [--solver S] [--check-rows N]

For each instruction type the variants are the points of ``--grid structural`` (each model kind of
the MMA-Sim paper once per plausible shape, read against the instruction's first catalogue
architecture) and every structural neighbour (one parameter step, :func:`smtmma.discriminators.
confirmation.neighbours`) of every distinct catalogue model of the instruction, each once.  Each
variant becomes a simulated device and is identified against the catalogue-only space
(``smtmma identify --device sim:SPEC --instr I``, default confirmation: rate 1 %, confidence 99.9 %).
The truth is checked apart from the identification: an identified variant is "right" when it is a
member of the class or equivalent to it -- no difference on N fresh random inputs (another seed,
the confirmation's kinds) and the solver's unsat -- and "WRONG" when either finds an input on which
they differ.  A variant named "none" is "missed" when it is a catalogue model.  Prints one row per
instruction type: variants, right, none, WRONG, missed, undecided, unverified (identified, no
difference found, the solver gave up), seconds.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, Optional, Sequence

import numpy as np

from smtmma.check import simulate_with
from smtmma.discriminators.candidates import Space, catalogue_space, grid_space, spec_name
from smtmma.discriminators.classes import evaluate_pool
from smtmma.discriminators.confirmation import CONFIRM_KINDS, ask_solver, neighbours
from smtmma.discriminators.identify import identify
from smtmma.models import Model
from smtmma.queries.formula import Domain
from smtmma.queries.pool import OperandFormats, draw_pool, model_outputs
from smtmma.vectors import TestVector

INSTRS = ("f16f32", "f16f16", "bf16f32", "tf32f32", "e4m3f32", "e5m2f32", "e4m3f16", "mxe4m3f32", "f64f64")


class ModelDevice:
    """A simulated device computing ``model`` for every vector (the variant under test)."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def run(self, vectors: Sequence[TestVector]) -> list[int]:
        return [int(x) for x in simulate_with(self.model, list(vectors))]


def variants(space: Space) -> list[Model]:
    """The structural grid of the instruction and every neighbour of every catalogue model, each once."""
    found = [c.model for c in grid_space("structural", space.instr, like=space.base_arch).candidates]
    for m in dict.fromkeys(c.model for c in space.candidates):
        found += neighbours(m, space.instr)
    return list(dict.fromkeys(found))


def differ(a: Model, b: Model, K: int, rows: int, solver: Optional[str], timeout: float) -> Optional[bool]:
    """True when some input of length K tells ``a`` and ``b`` apart, False when the solver proves none does, None when
    neither was found (random rows agree, the solver gave up).  The solver is asked as the confirmation asks it
    (``confirmation.ask_solver``): chains of one FDPA structure first as one FDPA with C free, then the whole chain."""
    pool = draw_pool(OperandFormats.of(a), K, rows, np.random.default_rng(20261126), kinds=CONFIRM_KINDS)
    if not np.array_equal(model_outputs(a, pool, "numpy"), model_outputs(b, pool, "numpy")):
        return True
    status = ask_solver(a, b, K, Domain(), solver, timeout)[0]
    return {"split": True, "equivalent": False}.get(status)


def measure(instr: str, rows: int, solver: Optional[str], timeout: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    space = catalogue_space(instr)
    ev = evaluate_pool(space)
    counts = dict(variants=0, right=0, none=0, wrong=0, missed=0, undecided=0, unverified=0)
    wrong: list[str] = []
    unverified: list[str] = []
    catalogue = set(ev.models)
    for v in variants(space):
        counts["variants"] += 1
        r = identify(ModelDevice(v), space, evaluated=ev, solver=solver)
        if r.verdict == "undecided":
            counts["undecided"] += 1
        elif r.verdict == "none":
            counts["missed" if v in catalogue else "none"] += 1
        else:
            cls = [m for m in ev.models if ev.names[m][0] in r.models]
            if v in cls:
                counts["right"] += 1
                continue
            d = differ(cls[0], v, ev.K, rows, solver, timeout)
            if d is None:
                counts["unverified"] += 1
                unverified.append(f"{spec_name(v, cls[0])} named {r.models[0]}")
            elif d:
                counts["wrong"] += 1
                wrong.append(f"{spec_name(v, cls[0])} named {r.models[0]}")
            else:
                counts["right"] += 1
    return {"instr": instr, **counts, "wrong_cases": wrong, "unverified_cases": unverified,
            "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--instr", nargs="*", default=list(INSTRS), help=f"instruction types (default: {' '.join(INSTRS)})")
    ap.add_argument("--solver", help="backend (default: the first installed)")
    ap.add_argument("--check-rows", type=int, default=20000, help="fresh random inputs of the truth check (default 20000)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per solver call of the truth check (default 60)")
    args = ap.parse_args()
    rows = []
    if not args.json:
        print(f"{'instr':10} {'variants':>8} {'right':>6} {'none':>5} {'WRONG':>6} {'missed':>6} {'undecided':>9} "
              f"{'unverified':>10} {'seconds':>8}", flush=True)
    for instr in args.instr:
        r = measure(instr, args.check_rows, args.solver, args.timeout)
        rows.append(r)
        if not args.json:
            print(f"{r['instr']:10} {r['variants']:>8} {r['right']:>6} {r['none']:>5} {r['wrong']:>6} {r['missed']:>6} "
                  f"{r['undecided']:>9} {r['unverified']:>10} {r['seconds']:>8.1f}", flush=True)
            for case in r["wrong_cases"]:
                print(f"  WRONG: {case}", flush=True)
            for case in r["unverified_cases"]:
                print(f"  unverified: {case}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
