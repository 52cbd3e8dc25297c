"""``smtmma compare``: two models (or a model and recorded outputs) on the same inputs, differences in ulps of D."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import IO, Any, Optional

import numpy as np

from ..catalogue import entries, lookup, resolve_instr, is_arch_name, split_arch_op
from ..check import iter_vectors_any_arch
from ..compare import (DRAW_KINDS, NONFINITE, Comparison, Inputs, bucket_label, compare_models, compare_outputs,
                       draw_inputs, ulp_distance)
from ..discriminators.candidates import explicit_space
from ..errors import InputError, UnknownNameError
from ..gemm import instruction_k
from ..models import Model, canonical_kind
from ..simulate import simulate_dot
from ..vectors import LineError, TestVector, dump_vector, vector_formats
from .common import EXIT_MISMATCH, EXIT_OK, k_length_arg, load_npy, positive_draws_arg, seed_arg
from .progress import Status

_EPILOG = f"""\
SIDE is a model -- ARCH (its catalogue model of --instr), ARCH/OP (another op
family: sm90/wgmma) or a model spec (t-fdpa:L=16,F=26,rho=rz-fp32, read against
--like or the other side's architecture) -- or recorded outputs:
  LOG.jsonl   a test-vector file (smtmma run, your own program): the model runs on
              every line with a "d" (its arch and op are ignored) and its D is
              compared with d; -n, --dist and --seed do not apply
  D.npy       D for the inputs this command draws with the same -n, --k, --dist and
              --seed (write them with --save-inputs first): bit patterns (unsigned
              integers) or values (float32 for fp32 D, float16 for fp16)
At least one SIDE is a model.  Two models run on N inputs drawn as 'smtmma
validate' draws them (MMA-Sim §3.1.4): --dist {', '.join(DRAW_KINDS)}
(mixed: normal, uniform, dnn, ill-conditioned and bits in turn).

ulps: the number of representable values of D's format between the two outputs
(the ordered bit patterns: exact across zero and the subnormals; +0 and -0 are
0 apart).  Both NaN, or the same infinity: 0.  NaN against anything else, or an
infinity against a finite value or the other infinity: a non-finite mismatch,
counted apart.  E8M13 results (FP8 -> fp32 rows) are counted in fp32 ulps.

output: how many outputs differ, a histogram of |ulp difference| (0, 1, 2, 3-4,
5-8, ...), the non-finite mismatches, and the largest difference with the input
that gives it as a test-vector line ("expect": both sides' D; "d": the recorded
one when a side is a log).
--json prints {{"sides": [{{"name", "model"|"file"}}, ...], "instr", "k", "n", "dist",
"seed", "format", "differ", "nonfinite", "max_ulps", "histogram": [{{"ulps", "lo",
"hi", "count"}}], "worst": LINE | null}}.

exit status: 0 the outputs are identical, 1 some output differs, 2 bad input.

examples:
  smtmma compare sm80 sm90 --instr f16f32 -n 100000
  smtmma compare sm90 t-fdpa:F=26 --instr f16f32 --dist ill-conditioned --json
  smtmma compare gfx942 tr-fdpa:sum_rz --instr f16f32 --dist mixed   CDNA3 against its RZ twin
  smtmma compare sm90 hw-samples/H100-fp16-fp32.jsonl
  smtmma compare sm90 --save-inputs in.npz --instr f16f32 -n 4096 ... then: smtmma compare sm90 D.npy --instr f16f32 -n 4096"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``compare`` subcommand to ``sub``."""
    p = sub.add_parser("compare", help="run two models (or a model and recorded outputs) on the same inputs; "
                       "differences in ulps of D",
                       description="Run two models, or a model and recorded outputs, on the same inputs and count "
                       "how far apart their D are, in units in the last place of D's format.",
                       epilog=_EPILOG, formatter_class=fmt)
    p.add_argument("sides", nargs="+", metavar="SIDE", help="ARCH, ARCH/OP, a model spec, LOG.jsonl or D.npy (two; "
                   "one with --save-inputs)")
    p.add_argument("--instr", help="instruction type (f16f32, bf16f32, e4m3f32, ...); default: a log side's")
    p.add_argument("--like", metavar="ARCH", help="architecture whose formats and parameters a model spec takes")
    p.add_argument("-n", type=positive_draws_arg, default=100_000, metavar="N", help="inputs to draw (default 100000)")
    p.add_argument("--k", type=k_length_arg, metavar="K", help="dot-product length (default: the longest instruction k "
                   "and L of the models)")
    p.add_argument("--dist", choices=DRAW_KINDS, default="normal", help="how inputs are drawn (default normal)")
    p.add_argument("--seed", type=seed_arg, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--save-inputs", metavar="FILE.npz", help="write the drawn inputs (a, b, c[, scale_a, scale_b] "
                   "bit patterns) to FILE.npz")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_compare)


@dataclass
class _Side:
    """One side of the comparison: a model (``model``), a log (``vectors``) or a D array (``d``)."""

    name: str
    model: Optional[Model] = None
    arch: Optional[str] = None
    op: Optional[str] = None
    vectors: Optional[list[TestVector]] = None
    d: Optional[np.ndarray] = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model.describe()} if self.model is not None else \
            {"name": self.name, "file": self.name}


def _is_log(token: str) -> bool:
    return token == "-" or token.lower().endswith((".jsonl", ".json"))


def _read_log(path: str) -> list[TestVector]:
    """Lines with d of a log; InputError at the first bad line or when none has d."""
    out = []
    for item in iter_vectors_any_arch(path):
        if isinstance(item, LineError):
            raise InputError(f"{path}: {item.message}")
        if item.d is not None:
            out.append(item)
    if not out:
        raise InputError(f"{path}: no line has a recorded d")
    return out


def _read_d(path: str, model: Model) -> np.ndarray:
    """D patterns of an .npy file: unsigned patterns, or values of D's dtype viewed as patterns."""
    arr = load_npy(path).reshape(-1)
    fmt = vector_formats(model).d
    native = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}.get(fmt.name)
    if arr.dtype.kind == "f":
        if native is None or arr.dtype != np.dtype(native):
            raise InputError(f"{path}: D values of dtype {arr.dtype}; {fmt.name} D is read as "
                             f"{np.dtype(native).name if native else 'bit patterns'} (or as unsigned bit patterns)")
        return arr.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.itemsize]).astype(np.uint64)
    if arr.dtype.kind not in "ui" or (arr.size and (int(arr.min()) < 0 or int(arr.max()) >> fmt.bits)):
        raise InputError(f"{path}: expected {fmt.name} bit patterns (unsigned integers of {fmt.bits} bits) or "
                         f"{fmt.name} values, got dtype {arr.dtype}")
    return arr.astype(np.uint64)


def _instr(args: argparse.Namespace) -> str:
    if args.instr:
        return resolve_instr(args.instr)
    logs = [t for t in args.sides if _is_log(t)]
    if logs:
        instrs = {v.instr for v in _read_log(logs[0])}
        if len(instrs) == 1:
            return instrs.pop()
        raise InputError(f"{logs[0]} holds several instruction types ({', '.join(sorted(instrs))}): choose one with --instr")
    raise InputError("--instr is required (f16f32, bf16f32, e4m3f32, ...) unless a side is a log")


def _sides(args: argparse.Namespace, instr: str) -> list[_Side]:
    n_sides = 1 if args.save_inputs else 2
    if len(args.sides) != n_sides:
        raise InputError(f"compare takes {n_sides} SIDE{'s' if n_sides > 1 else ''} (models, a LOG.jsonl or a D.npy), "
                         f"got {len(args.sides)}" + (" (with --save-inputs: one model)" if args.save_inputs else ""))
    arch_tokens = [split_arch_op(t)[0] for t in args.sides if not _is_log(t) and not t.lower().endswith(".npy") and is_arch_name(t)]
    like = args.like or next((a for a in arch_tokens if any(e.arch == a for e in entries(instr=instr))), None)
    out: list[_Side] = []
    for t in args.sides:
        if _is_log(t):
            vs = [v for v in _read_log(t) if v.instr == instr]
            if not vs:
                raise InputError(f"{t}: no line of instruction type {instr} has a recorded d")
            out.append(_Side(t, vectors=vs))
        elif t.lower().endswith(".npy"):
            out.append(_Side(t))  # read once the model is known
        else:
            if not is_arch_name(t) and canonical_kind(t) is None:
                raise UnknownNameError(f"SIDE {t!r}: neither an architecture (ARCH or ARCH/OP: sm90, sm90/wgmma), a model "
                                       "spec (KIND:PARAM=V,...: t-fdpa:F=26), a LOG.jsonl nor a D.npy")
            c = explicit_space([t], instr, like=like).candidates[0]
            out.append(_Side(c.name, model=c.model, arch=c.arch, op=c.op))
    models = [s for s in out if s.model is not None]
    if not models:
        raise InputError("at least one SIDE must be a model: ARCH, ARCH/OP or a model spec (t-fdpa:F=26)")
    for s in out:
        if s.model is None and s.vectors is None:
            s.d = _read_d(s.name, models[0].model)  # type: ignore[arg-type]
    return out


def _length(args: argparse.Namespace, instr: str, sides: list[_Side]) -> int:
    """--k, else the longest instruction k and L (P, block) of the model sides, at least 4."""
    if args.k:
        return int(args.k)
    ks = [4]
    for s in sides:
        m = s.model
        if m is None:
            continue
        ks += [m.L or 0, m.P or 0, m.block or 0]
        if s.arch is not None:
            ks.append(instruction_k(s.arch, instr, s.op))
    return max(ks)


def _base_arch(instr: str, sides: list[_Side]) -> str:
    return next((s.arch for s in sides if s.arch is not None), None) or entries(instr=instr)[0].arch


def _line(instr: str, sides: list[_Side], a: Any, b: Any, c: int, sa: Any, sb: Any, d1: int, d2: int, ulps: int,
          recorded: Optional[TestVector] = None) -> dict[str, Any]:
    """The worst input as a test-vector record: both sides' D in ``expect`` (a log side's D as ``d``)."""
    names = [s.name for s in sides]
    expect = {n: d for n, d, s in zip(names, (d1, d2), sides) if s.model is not None}
    d = next((x for x, s in zip((d1, d2), sides) if s.model is None), None)
    arch = _base_arch(instr, sides)
    note = "compare: largest |ulp difference|" + (f" ({ulps} ulps)" if ulps != NONFINITE else " (non-finite mismatch)")
    text = dump_vector(arch, instr, [int(x) for x in a], [int(x) for x in b], int(c), d,
                       scale_a=None if sa is None else [int(x) for x in sa],
                       scale_b=None if sb is None else [int(x) for x in sb], expect=expect,
                       gpu=None if recorded is None else recorded.raw.get("gpu"),
                       note=note if recorded is None else f"{note}; line {recorded.line} of {names[[s.vectors is not None for s in sides].index(True)]}")
    return json.loads(text)


def _run_log(instr: str, sides: list[_Side]) -> tuple[Comparison, Optional[dict[str, Any]], int]:
    """Model vs log: the model on every recorded line, grouped by K."""
    mi = 0 if sides[0].model is not None else 1
    model, vs = sides[mi].model, sides[1 - mi].vectors
    assert model is not None and vs is not None
    fmt = vector_formats(model).d
    groups: dict[int, list[TestVector]] = {}
    for v in vs:
        groups.setdefault(v.K, []).append(v)
    got_all, rec_all, order = [], [], []
    for g in groups.values():
        scaled = model.scale_fmt is not None
        got = simulate_dot(model, None, np.array([v.a for v in g], dtype=np.uint64), np.array([v.b for v in g], dtype=np.uint64),
                           np.array([v.c for v in g], dtype=np.uint64),
                           scale_a=np.array([v.scale_a for v in g], dtype=np.uint64) if scaled else None,
                           scale_b=np.array([v.scale_b for v in g], dtype=np.uint64) if scaled else None)
        got_all.append(got.astype(np.uint64))
        rec_all.append(np.array([v.d for v in g], dtype=np.uint64))
        order += g
    got, rec = np.concatenate(got_all), np.concatenate(rec_all)
    d1, d2 = (got, rec) if mi == 0 else (rec, got)
    cmp = compare_outputs(fmt, d1, d2)
    i = cmp.worst if cmp.worst is not None else cmp.first_nonfinite
    worst = None
    if i is not None:
        v = order[i]
        ulps = ulp_distance(fmt, int(d1[i]), int(d2[i]))
        assert isinstance(ulps, int)
        worst = _line(instr, sides, v.a, v.b, v.c, v.scale_a, v.scale_b, int(d1[i]), int(d2[i]), ulps, recorded=v)
    return cmp, worst, len(vs)


def _run_draws(args: argparse.Namespace, instr: str, sides: list[_Side], K: int) -> tuple[Comparison, Optional[dict[str, Any]]]:
    """Model vs model, or model vs an .npy D, on drawn inputs."""
    models = [s.model for s in sides if s.model is not None]
    fmt = vector_formats(models[0]).d
    with Status() as status:
        progress = (lambda done, total: status.bar(done, total, " inputs")) if not args.json else None
        if len(models) == 2:
            cmp, found = compare_models(models[0], models[1], n=args.n, K=K, kind=args.dist, seed=args.seed,
                                        progress=progress)
        else:
            cmp, found = _model_vs_array(sides, args, K, fmt)
    worst = None
    if found is not None:
        batch, i, d1, d2 = found
        sa = None if batch.scale_a is None else batch.scale_a[i]
        sb = None if batch.scale_b is None else batch.scale_b[i]
        ulps = ulp_distance(fmt, d1, d2)
        assert isinstance(ulps, int)
        worst = _line(instr, sides, batch.a[i], batch.b[i], int(batch.c[i]), sa, sb, d1, d2, ulps)
    return cmp, worst


def _model_vs_array(sides: list[_Side], args: argparse.Namespace, K: int, fmt: Any
                    ) -> tuple[Comparison, Optional[tuple[Inputs, int, int, int]]]:
    mi = 0 if sides[0].model is not None else 1
    model, D = sides[mi].model, sides[1 - mi].d
    assert model is not None and D is not None
    if len(D) != args.n:
        raise InputError(f"{sides[1 - mi].name} holds {len(D)} outputs, but -n is {args.n}: D must be for the inputs "
                         "drawn with the same -n, --k, --dist and --seed (see --save-inputs)")
    batches = draw_inputs(model, args.n, K, args.dist, args.seed)
    got = np.concatenate([simulate_dot(model, None, x.a, x.b, x.c, scale_a=x.scale_a, scale_b=x.scale_b).astype(np.uint64)
                          for x in batches])
    d1, d2 = (got, D) if mi == 0 else (D, got)
    cmp = compare_outputs(fmt, d1, d2)
    idx = cmp.worst if cmp.worst is not None else cmp.first_nonfinite
    if idx is None:
        return cmp, None
    row = idx
    for x in batches:
        if row < len(x.c):
            return cmp, (x, row, int(d1[idx]), int(d2[idx]))
        row -= len(x.c)
    raise AssertionError("index beyond the drawn inputs")


def _save_inputs(args: argparse.Namespace, sides: list[_Side], K: int) -> dict[str, Any]:
    model = sides[0].model
    if model is None:
        raise InputError("--save-inputs draws inputs for a model: give one ARCH, ARCH/OP or model spec")
    batches = draw_inputs(model, args.n, K, args.dist, args.seed)
    arrays = {"a": np.concatenate([x.a for x in batches]), "b": np.concatenate([x.b for x in batches]),
              "c": np.concatenate([x.c for x in batches])}
    if batches[0].scale_a is not None:
        arrays["scale_a"] = np.concatenate([x.scale_a for x in batches])  # type: ignore[misc]
        arrays["scale_b"] = np.concatenate([x.scale_b for x in batches])  # type: ignore[misc]
    try:
        np.savez(args.save_inputs, **arrays)
    except OSError as e:
        raise InputError(f"cannot write {args.save_inputs}: {e.strerror or e}") from None
    return {"saved": args.save_inputs, "n": args.n, "k": K, "dist": args.dist, "seed": args.seed,
            "arrays": {k: list(v.shape) for k, v in arrays.items()}}


def _print_text(rec: dict[str, Any], cmp: Comparison, out: IO[str]) -> None:
    names = " and ".join(f"{s['name']}" + (f" ({s['model']})" if "model" in s and s["model"] != s["name"] else "")
                         for s in rec["sides"])
    how = (f"{rec['n']} {rec['dist']} inputs (seed {rec['seed']}), K={rec['k']}" if rec.get("dist") else
           f"{rec['n']} recorded lines")
    print(f"compare {names}: {rec['instr']}, {how}", file=out)
    pct = 100.0 * cmp.differ / cmp.n if cmp.n else 0.0
    print(f"differ: {cmp.differ} of {cmp.n} ({pct:.2f}%)", file=out)
    print(f"|ulp difference| in {cmp.fmt.name} (units in the last place of D's format):", file=out)
    width = max([len(bucket_label(lo, hi)) for lo, hi, _ in cmp.histogram] + [len("non-finite mismatch")])
    cw = len(str(cmp.n))
    for lo, hi, count in cmp.histogram:
        if count or hi <= 2:  # 0, 1 and 2 always; wider buckets when they hold something (--json has them all)
            print(f"  {bucket_label(lo, hi).ljust(width)}  {str(count).rjust(cw)}", file=out)
    print(f"  {'non-finite mismatch'.ljust(width)}  {str(cmp.nonfinite).rjust(cw)}", file=out)
    if rec["worst"] is not None:
        what = f"max: {cmp.max_ulps} ulps" if cmp.max_ulps else "no finite difference; first non-finite mismatch"
        print(f"{what}, on this input:", file=out)
        print(json.dumps(rec["worst"], separators=(", ", ": ")), file=out)


def _cmd_compare(args: argparse.Namespace) -> int:
    instr = _instr(args)
    sides = _sides(args, instr)
    lookup(_base_arch(instr, sides), instr)  # the base row exists (vectors are written with it)
    if args.save_inputs:
        K = _length(args, instr, sides)
        rec = _save_inputs(args, sides, K)
        if args.json:
            print(json.dumps(rec))
        else:
            print(f"{args.n} {args.dist} inputs (seed {args.seed}), K={K}: {args.save_inputs}")
        return EXIT_OK
    if any(s.vectors is not None for s in sides):
        if all(s.vectors is not None for s in sides):
            raise InputError("at least one SIDE must be a model: ARCH, ARCH/OP or a model spec")
        cmp, worst, n = _run_log(instr, sides)
        rec: dict[str, Any] = {"sides": [s.to_dict() for s in sides], "instr": instr, "k": None, "n": n}
    else:
        K = _length(args, instr, sides)
        cmp, worst = _run_draws(args, instr, sides, K)
        rec = {"sides": [s.to_dict() for s in sides], "instr": instr, "k": K, "n": cmp.n, "dist": args.dist,
               "seed": args.seed}
    rec.update({k: v for k, v in cmp.to_dict().items() if k != "n"})
    rec["worst"] = worst
    if args.json:
        print(json.dumps(rec))
    else:
        _print_text(rec, cmp, sys.stdout)
    return EXIT_MISMATCH if cmp.differ else EXIT_OK
