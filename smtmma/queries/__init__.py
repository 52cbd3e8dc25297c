"""Solver questions about models: distinguish, symmetry, monotonicity, carry bits, error bounds (next issue)."""
