"""Batched rollout kernels."""
