"""Analyses of trained or fitted networks."""
