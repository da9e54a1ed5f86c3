"""The one place that decides how kernels are compiled.

Every kernel is ``@kernel`` (single document, releases the GIL, cached on disk) or
``@batch_kernel`` (adds ``parallel=True`` so ``prange`` loops run on all cores).

Two decorators are for small helpers called in inner loops, where an ordinary call that takes
arrays costs an atomic increment and decrement of each array's reference count (more than
the work of a merge step):

* ``@leaf_kernel`` compiles without Numba's reference counting (``_nrt=False``): for helpers
  that only read and write the arrays they are given and allocate nothing (hash-map probes,
  the heaps, the pre-tokenizer scanner, the merge loop). Calling one costs a plain call.
* ``@inline_kernel`` inlines the helper into its caller's Numba IR (``inline="always"``).
"""
import numba

kernel = numba.njit(cache=True, nogil=True)
batch_kernel = numba.njit(cache=True, nogil=True, parallel=True)
leaf_kernel = numba.njit(cache=True, nogil=True, _nrt=False)
inline_kernel = numba.njit(cache=True, nogil=True, inline="always")
