"""Predicate for `smtmma query custom`: D (fp16) is never subnormal.

A witness (verdict "fails") is an input whose fp16 output is subnormal:
the unit produces subnormal outputs (the SMT paper's "subnormal FP16
outputs" query, Table 4).
"""


def predicate(alg, inputs, outputs):  # type: ignore[no-untyped-def]
    """True when D's magnitude bits are zero or at least the smallest normal (0x0400)."""
    (d,) = outputs.values()
    mag = alg.low_bits(d, 15)
    return alg.not_(alg.and_(alg.lt(0, mag), alg.lt(mag, 1 << 10)))
