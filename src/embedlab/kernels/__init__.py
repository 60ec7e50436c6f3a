"""Numba kernels: the hot loops (pairwise neighbour-embedding objectives, triplet objectives)."""
