"""The proof kernel: lemmas as functions of their arguments, lemma chains, certificate blocks.

* :mod:`~smtmma.proof_kernel.lemma`: :class:`Lemma`, a statement written
  once as an SMT-LIB ``define-fun``, proved on fresh constants, applied to a
  run's terms;
* :mod:`~smtmma.proof_kernel.chain`: :class:`LemmaChain`, facts about a
  run's own terms proved in turn, and the certificate text of a chain;
* :mod:`~smtmma.proof_kernel.blocks`: :class:`Block`, one check with the
  answer it must give.
* :mod:`~smtmma.proof_kernel.parts`: proofs by parts, each part a check on
  its own fresh variables;
* :mod:`~smtmma.proof_kernel.pieces`: :class:`~smtmma.proof_kernel.pieces.Pieces`,
  fresh variables for the pieces a composition names, and
  :class:`~smtmma.proof_kernel.pieces.Composed`, the composition's check.

The facts about each op built from these live in :mod:`smtmma.op_proofs`.

Queries (:mod:`smtmma.queries.properties`) and claims (:mod:`smtmma.proofs`)
build their certificates from these; ``proofs/check_certificate.py`` checks
the discipline they follow without importing smtmma.
"""

from .blocks import Block, chain_block, pin_block
from .chain import LemmaChain, chain_text
from .lemma import Arg, Lemma, Param, lemma

__all__ = ["Arg", "Block", "Lemma", "LemmaChain", "Param", "chain_block", "chain_text", "lemma", "pin_block"]
