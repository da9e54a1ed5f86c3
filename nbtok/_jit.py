"""The one place that decides how kernels are compiled.

Every kernel is ``@kernel`` (single document, releases the GIL, cached on disk) or
``@batch_kernel`` (adds ``parallel=True`` so ``prange`` loops run on all cores).
"""
import numba

kernel = numba.njit(cache=True, nogil=True)
batch_kernel = numba.njit(cache=True, nogil=True, parallel=True)

# small helpers called in the innermost loops: inlined at the Numba IR level, so a call costs
# neither the call itself nor the reference counting of the arrays handed to it
inline_kernel = numba.njit(cache=True, nogil=True, inline="always")
