"""Figures from result objects (matplotlib is imported inside each function)."""
