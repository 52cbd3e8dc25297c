"""Solver questions about models: distinguish, symmetry, monotonicity, carry bits, error bounds (next issue)."""

from .properties import PROPERTIES, QueryResult, check_property

__all__ = ["PROPERTIES", "QueryResult", "check_property"]
