"""The literature's claims as named, re-runnable checks, each with a self-contained SMT-LIB2 certificate.

:func:`prove` runs claims by name and returns their records (the JSON of
``smtmma prove --json``); :func:`check_certificates` re-runs saved
certificates with any backend.  Claims live in the ``claims_*`` modules
(one per theme) and register themselves in :data:`~smtmma.proofs.claim.CLAIMS`.
"""

from __future__ import annotations

import importlib
import pkgutil

from .certificate import Certificate, CertificateError, parse_certificate, recheck
from .claim import CLAIMS, Claim, Context, Outcome, claim, get_claim

__all__ = ["CLAIMS", "Claim", "Context", "Outcome", "Certificate", "CertificateError", "claim", "get_claim",
           "load_claims", "parse_certificate", "recheck"]

_loaded = False

#: The order of ``prove --all`` and the report: the SMT paper's claims first, then by theme; other modules after.
_ORDER = ("claims_smt_paper", "claims_carry_bits", "claims_symmetry", "claims_monotonicity", "claims_error_bound",
          "claims_mmasim", "claims_fttn")


def load_claims() -> dict[str, Claim]:
    """Import every ``claims_*`` module once; returns :data:`CLAIMS`."""
    global _loaded
    if not _loaded:
        _loaded = True
        names = [m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("claims_")]
        rank = {n: i for i, n in enumerate(_ORDER)}
        ordered = sorted(names, key=lambda n: (rank.get(n, len(rank)), n))
        for name in ordered:
            importlib.import_module(f"{__name__}.{name}")
        # a module imported earlier (by a test, a user) registered its claims first: put them in document order
        where = {f"{__name__}.{n}": i for i, n in enumerate(ordered)}
        pos = {name: i for i, name in enumerate(CLAIMS)}
        items = sorted(CLAIMS.items(), key=lambda kv: (where.get(kv[1].run.__module__, len(where)), pos[kv[0]]))
        CLAIMS.clear()
        CLAIMS.update(items)
    return CLAIMS
