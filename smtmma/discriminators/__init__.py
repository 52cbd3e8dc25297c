"""Witnesses turned into instruction-shaped test vectors and minimal test suites (later issue)."""
