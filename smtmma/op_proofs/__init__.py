"""The facts a proof needs about each elementary op, one module per op, named as in :mod:`smtmma.encodings`.

* :mod:`~smtmma.op_proofs.tfdpa` (T-FDPA, Alg. 7): error parts (Table 9) and
  monotonicity in each argument;
* :mod:`~smtmma.op_proofs.trfdpa` (TR-FDPA, Alg. 10) and
  :mod:`~smtmma.op_proofs.gtrfdpa` (GTR-FDPA, Alg. 11: TR-FDPA's proofs with
  the group merge plugged in): error parts and monotonicity;
* :mod:`~smtmma.op_proofs.tfdpa` also covers ST-FDPA (Alg. 8)'s error parts:
  its block scales only move each product's exponent;
* :mod:`~smtmma.op_proofs.gstfdpa` (GST-FDPA, Alg. 9): error parts (the group
  summand's) and monotonicity, scales included;
* :mod:`~smtmma.op_proofs.efdpa` (E-FDPA, Alg. 6): monotonicity (facts about the
  model's own terms, every move in one formula), symmetry, the error bound;
* :mod:`~smtmma.op_proofs.fma` (FMA, Alg. 3, and its chains, Alg. 4):
  monotonicity, symmetry, one FMA's error bound (in units of its window's
  last place);
* :mod:`~smtmma.op_proofs.addmul` (FTZ-AddMul, Alg. 1-2): monotonicity,
  symmetry;
* :mod:`~smtmma.op_proofs.fused_sum`: what every FDPA's sum shares (the
  plan, summand and accumulation error parts, the sign lemmas of symmetry,
  the two-operand adder's);
* :mod:`~smtmma.op_proofs.rounding`: the final rounding's error and
  monotonicity, and its output negated;
* :mod:`~smtmma.op_proofs.moves`: the monotonicity domain, finite
  non-negative inputs and their single moves.

Each op module that proves a property exposes ``supports_<property>(model,
K)`` and ``prove_<property>(model, K, run, ...)`` (a proof by parts) or a
function of facts in the query's own formula; the property queries pick
them from a table keyed by the model's kind
(:data:`smtmma.queries.properties.monotonicity.MONOTONE_FACTS`,
:data:`smtmma.queries.properties.error_bound.ERROR_PROVERS`,
:data:`smtmma.queries.properties.symmetry.SYMMETRY_FACTS`).  The lemmas are
built over the query algebra (:mod:`smtmma.queries.query_algebra`) and the proof
kernel (:mod:`smtmma.proof_kernel`).
"""

# The op proofs are stated in the query algebra (smtmma.queries.query_algebra), and the property queries import them:
# the queries package loads first, whichever of the two is imported first, so neither meets the other half-initialised.
from .. import queries

del queries
