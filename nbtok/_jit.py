"""The one place that decides how kernels are compiled.

Every kernel is ``@kernel`` (single document, releases the GIL, cached on disk) or
``@batch_kernel`` (adds ``parallel=True`` so ``prange`` loops run on all cores). A kernel called
from another kernel is compiled once per argument type, whatever constants its callers pass
(``_one_specialisation_per_type``).

Two decorators are for small helpers called in inner loops, where an ordinary call that takes
arrays costs an atomic increment and decrement of each array's reference count (more than
the work of a merge step):

* ``@leaf_kernel`` compiles without Numba's reference counting (``_nrt=False``): for helpers
  that only read and write the arrays they are given and allocate nothing (hash-map probes,
  the heaps, the pre-tokenizer scanner, the merge loop). Calling one costs a plain call.
* ``@inline_kernel`` inlines the helper into its caller's Numba IR (``inline="always"``).
"""
import numba
from numba.core import types


def _one_specialisation_per_type(jit):
    """``jit`` whose kernels, called from another kernel, compile once per argument *type*.

    Numba types a constant argument as a literal (``f(text, 0, n)`` passes ``Literal[int](0)``)
    and compiles the callee, and everything it calls, again for that literal. nbtok calls the
    same kernels with ``0`` from one caller and with a variable from another, so without this
    the byte-level encoder compiled twice over: the first GPT-2 encode from empty caches took
    47.8 s instead of 31.1 s (docs/benchmarks.md, "First run and short calls").
    No nbtok kernel relies on a literal argument (none uses ``numba.literally``), so the call
    is typed with plain types: one specialisation serves every caller.
    """
    def decorate(func):
        dispatcher = jit(func)
        plain = dispatcher.get_call_template

        def get_call_template(args, kws):
            return plain(tuple(types.unliteral(a) for a in args),
                         {k: types.unliteral(v) for k, v in kws.items()})

        dispatcher.get_call_template = get_call_template
        return dispatcher
    return decorate


kernel = _one_specialisation_per_type(numba.njit(cache=True, nogil=True))
batch_kernel = _one_specialisation_per_type(numba.njit(cache=True, nogil=True, parallel=True))
leaf_kernel = _one_specialisation_per_type(numba.njit(cache=True, nogil=True, _nrt=False))
inline_kernel = numba.njit(cache=True, nogil=True, inline="always")


# ---------------------------------------------------------------------------------------------
# The first use of a feature compiles its kernels (then Numba's on-disk cache serves every later
# process). Numba fires "numba:compile" only for a real compilation, never for a cache load, so a
# listener on it tells the user once, on stderr, that the wait is compilation and where the
# cache lives. Quiet when stderr is not a terminal or NBTOK_QUIET=1.

def _notice_enabled():
    import os
    import sys
    if os.environ.get("NBTOK_QUIET", "") not in ("", "0"):
        return False
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def cache_dir():
    """Where Numba keeps the compiled kernels (``NUMBA_CACHE_DIR`` or beside the sources)."""
    import os
    return numba.config.CACHE_DIR or os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")


class _CompileNotice(numba.core.event.Listener):
    said = False

    def on_start(self, event):
        func = getattr((event.data or {}).get("dispatcher"), "py_func", None)
        if not getattr(func, "__module__", "").startswith("nbtok"):
            return
        if not _CompileNotice.said and _notice_enabled():
            _CompileNotice.said = True
            import sys
            print(f"nbtok: compiling kernels for first use (once; cached in {cache_dir()}); "
                  f"`nbtok warmup` does this ahead of time", file=sys.stderr, flush=True)

    def on_end(self, event):
        pass


numba.core.event.register("numba:compile", _CompileNotice())
