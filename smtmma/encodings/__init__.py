"""Elementary ops defined once over a bit-vector algebra (concrete: NumPy; symbolic: solver terms)."""
