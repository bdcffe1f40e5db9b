"""Checkpoints and data loading."""
