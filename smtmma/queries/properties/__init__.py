"""Properties of one model, proved or refuted by a solver: symmetry, monotonicity, carry bits, error bounds, ...

Every property is a function ``prop(model, *, name, K, domain, solver,
timeout, seed, **options) -> QueryResult`` (listed in :data:`PROPERTIES`;
:func:`check_property` dispatches by name).  Verdicts:

* ``"holds"`` -- the solver proved the property for every input of the
  domain (dot products of length ``K``);
* ``"fails"`` -- a witness: inputs on which it fails.  Every witness is
  replayed through the simulator and re-checked in exact Python arithmetic
  before it is returned; a disagreement raises :class:`ReplayError` (a bug,
  never a result);
* ``"unknown"`` -- a solver gave up (``reason`` says which query and why).

``timeout`` is per solver call, in seconds; ``seconds`` of the result is the
wall time of the whole check.  The domain defaults to finite inputs.

Properties (the claims of the SMT paper 001 and the MMA-Sim paper 000):

``symmetry``
    ``Phi(-A, B, -C) = -Phi(A, B, C)`` as values (+0 equals -0, all NaNs
    are equal).  Negating a pattern flips its sign bit; an FNUZ zero (and
    its NaN 0x80) is its own negation.  Holds for NVIDIA T-FDPA; fails for
    the round-down sums of CDNA3 (MMA-Sim §6.2.4).
``monotonicity``
    With finite non-negative inputs, ``a' >= a``, ``b' >= b``, ``c' >= c``
    elementwise (as values) never give ``Phi(a', b', c') < Phi(a, b, c)``.
    Fails for truncated, unnormalized fused sums (Fasi et al. §3.1.4: raise
    c to a power of two and the products lose their low bits).  By
    transitivity it suffices to raise one input to its next value at a
    time; both the witness search and the proof do that.
``carry-bits``
    The smallest N such that the model with ``carry_bits=N`` equals the
    unbounded model on every input: a witness that N - 1 bits lose a carry
    and a proof that N bits never do (``extra["carry_bits"]``; ``witness``
    is the input on which N - 1 bits fail).  One T-FDPA or ST-FDPA (K <= L).
``error-bound``
    ``|Phi - exact| <= scale * ((L+1) 2**(e_max - F) + u ulp(Phi))`` (Table
    9 of MMA-Sim; u = 1 for RZ, 1/2 for RNE; e_max the alignment exponent of
    the summands), with the exact ``c + sum a_k b_k``; infinite outputs are
    out of scope.  ``tight=True`` bisects for the smallest scale that holds.
``order-independence``
    Whether permuting the products (the pairs ``a_k, b_k``) can change the
    output bits: each adjacent transposition (they generate every
    permutation) is proved harmless, or a witness shows one that is not.
    Holds for one fused sum (T-, TR-FDPA, K <= L); fails for chained FDPAs
    (K > L), pairwise FTZ-AddMul and the even/odd groups of GTR-FDPA.
``custom``
    ``predicate``: a Python file defining ``predicate(alg, inputs, outputs)
    -> Bool`` (or the function itself).  ``alg`` is the algebra of the
    formula (:class:`~smtmma.encodings.algebra.Algebra`: ``alg.eq``,
    ``alg.lt``, ``alg.add``, ``alg.ite``, ``alg.and_``, ... and
    :func:`smtmma.encodings.fields.unpack` to decode a pattern);
    ``inputs`` maps ``a0.., b0.., c`` (and ``sa0.., sb0..``) to the input
    bit patterns (Int terms); ``outputs`` maps each model's name to its D
    bit pattern (Int term).  The query asks for inputs where the predicate
    is false.  The same function is evaluated again on the concrete
    witness (NumPy interpretation) before a failure is reported.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ...errors import InputError, UnknownNameError, choices, unknown_name
from ...models import Model
from .carry_bits import carry_bits
from .common import QueryResult
from .custom import custom, load_predicate
from .error_bound import error_bound
from .monotonicity import monotonicity
from .order import order_independence
from .symmetry import symmetry

__all__ = [
    "QueryResult",
    "PROPERTIES",
    "check_property",
    "symmetry",
    "monotonicity",
    "carry_bits",
    "error_bound",
    "order_independence",
    "custom",
    "load_predicate",
]

# -- registry ---------------------------------------------------------------------------------------

#: Property name -> function(model, *, name, K, domain, solver, timeout, seed, **options) -> QueryResult.
PROPERTIES: dict[str, Callable[..., QueryResult]] = {
    "symmetry": symmetry,
    "monotonicity": monotonicity,
    "carry-bits": carry_bits,
    "error-bound": error_bound,
    "order-independence": order_independence,
    "custom": custom,
}

_COMMON = ("name", "K", "domain", "solver", "timeout", "seed")


def check_property(prop: str, model: Model, **kw: Any) -> QueryResult:
    """Run property ``prop`` (a key of :data:`PROPERTIES`, ``_`` or ``-``, any case) on ``model``.

    Unknown properties raise :class:`UnknownNameError`; options a property
    does not take raise :class:`InputError` naming the ones it does.
    """
    key = str(prop).strip().lower().replace("_", "-")
    fn = PROPERTIES.get(key)
    if fn is None:
        raise UnknownNameError(unknown_name("property", prop, PROPERTIES))
    params = [p for p in inspect.signature(fn).parameters if p != "model"]
    bad = [k for k in kw if k not in params]
    if bad:
        own = [p for p in params if p not in _COMMON]
        raise InputError(f"{key} has no option {bad[0]!r}; its options: {choices(own) or 'none'} (and {choices(_COMMON)})")
    return fn(model, **kw)
