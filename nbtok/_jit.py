"""The one place that decides how kernels are compiled.

Every kernel is ``@kernel`` (single document, releases the GIL, cached on disk) or
``@batch_kernel`` (adds ``parallel=True`` so ``prange`` loops run on all cores).
``@inline_kernel`` is for small helpers called in inner loops: Numba inlines them into the
caller's IR, so no call is made and the arrays they take are not reference-counted per call
(an out-of-line call that takes arrays costs an atomic increment and decrement of each).
"""
import numba

kernel = numba.njit(cache=True, nogil=True)
batch_kernel = numba.njit(cache=True, nogil=True, parallel=True)
leaf_kernel = numba.njit(cache=True, nogil=True, _nrt=False)
