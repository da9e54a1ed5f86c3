"""Numba kernels: @njit code over flat NumPy arrays, no I/O, no Python objects."""
