"""The one place that decides how kernels are compiled.

Every kernel is ``@kernel`` (single document, releases the GIL, cached on disk) or
``@batch_kernel`` (adds ``parallel=True`` so ``prange`` loops run on all cores; called from
Python only, see "Fork safety" below). A kernel called from another kernel is compiled once per
argument type, whatever constants its callers pass (``_one_specialisation_per_type``).

Two decorators are for small helpers called in inner loops, where an ordinary call that takes
arrays costs an atomic increment and decrement of each array's reference count (more than
the work of a merge step):

* ``@leaf_kernel`` compiles without Numba's reference counting (``_nrt=False``): for helpers
  that only read and write the arrays they are given and allocate nothing (hash-map probes,
  the heaps, the pre-tokenizer scanner, the merge loop). Calling one costs a plain call. Its
  compilations have no wrapper for calls from Python (``_KernelOnlyDispatcher``); a call from
  Python compiles and runs a twin that has one.
* ``@inline_kernel`` inlines the helper into its caller's Numba IR (``inline="always"``).

Fork safety
-----------
Numba's threading layer here is GNU OpenMP (``omp``: ``tbb`` is not installed, and Numba picks
``tbb``, then ``omp``, then ``workqueue``). GNU OpenMP cannot run in a child forked after it
started: the first ``prange`` call in such a child prints ``Terminating: fork() called from a
process already using GNU OpenMP`` and the child dies of SIGTERM (a PyTorch ``DataLoader``
worker, a gunicorn worker, a ``multiprocessing`` pool on Linux). The choices were:

* the ``workqueue`` layer is fork-safe but not thread-safe: two Python threads calling batch
  kernels at once terminate the process, and nbtok supports concurrent calls;
* ``tbb`` is fork- and thread-safe but would make the ``tbb`` wheel a dependency;
* **chosen:** every ``@batch_kernel`` has a *serial twin*, the same function compiled without
  ``parallel=True`` (``prange`` runs as ``range``, same results). An ``os.register_at_fork``
  hook marks a child forked after the OpenMP layer started, and from then on batch calls in
  that child go to the twin, which never enters the OpenMP runtime. The parent keeps the
  parallel kernels at full speed; a forked child runs its batches on one thread (a
  ``DataLoader`` parallelises over worker processes anyway). The twin compiles on its first
  call in a child (its own entry in Numba's on-disk cache, so once per machine); a ``spawn``
  or ``forkserver`` child starts a fresh OpenMP runtime and keeps the parallel kernels.

Measured (GPT-2 ``encode_batch`` of the 504,908 lines of ``en_gutenberg.txt``, 2 threads on
a 2-core machine shared with other jobs, so 2 threads ran about as fast as 1): parent
18.9-25.7 MB/s with this, 21.1-33.9 MB/s before, within the noise of the shared machine; the
``BatchKernel`` call adds 0.1 us per batch. A forked child: 11-23.7 MB/s on one thread; its
first batch 3.0 s when the serial twin is not yet cached, 0.02-0.05 s when it is.
"""
import contextlib
import os

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
_parallel_kernel = _one_specialisation_per_type(numba.njit(cache=True, nogil=True, parallel=True))


# ---------------------------------------------------------------------------------------------
# batch kernels and fork safety (module docstring, "Fork safety")

_serial_batches = False  # True in a child forked after the OpenMP threading layer started


def _openmp_started():
    """Has this process started Numba's GNU OpenMP threading layer? (``threading_layer()``
    raises ``ValueError`` until a parallel kernel or ``get_num_threads`` starts one.)"""
    try:
        return numba.threading_layer() == "omp"
    except ValueError:
        return False


def _after_fork_in_child():
    global _serial_batches
    if _openmp_started():
        _serial_batches = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def _renamed_copy(func, suffix):
    """``func`` as a new function object whose ``__qualname__`` ends with ``suffix``: Numba's
    on-disk cache names its entries by qualname and keys them by bytecode and signature, not
    by compile flags, so a serial compilation of the same code needs its own name (else it would
    load the parallel compilation from the cache)."""
    import types as pytypes
    copy = pytypes.FunctionType(func.__code__, func.__globals__, func.__name__ + suffix,
                                func.__defaults__, func.__closure__)
    copy.__qualname__ = func.__qualname__ + suffix
    copy.__module__ = func.__module__
    copy.__doc__ = func.__doc__
    copy.__kwdefaults__ = func.__kwdefaults__
    return copy


class BatchKernel:
    """A ``parallel=True`` kernel called from Python, with a serial twin for forked children.

    Calls go to the parallel compilation, or, in a child forked after OpenMP started, to the
    serial one (compiled on first such call). Other attributes are the parallel dispatcher's."""

    def __init__(self, func):
        self.parallel = _parallel_kernel(func)
        self._func = func
        self._serial = None
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__module__ = func.__module__

    @property
    def serial(self):
        """The same kernel compiled without ``parallel=True`` (``prange`` runs as ``range``)."""
        if self._serial is None:
            self._serial = kernel(_renamed_copy(self._func, "__serial"))
        return self._serial

    def __call__(self, *args):
        if _serial_batches:
            return self.serial(*args)
        try:
            return self.parallel(*args)
        except SystemError as e:
            # an allocation that fails inside a ``prange`` loop reaches Python as "returned a
            # result with an exception set", the MemoryError attached: raise that
            cause = e.__cause__ or e.__context__
            if isinstance(cause, MemoryError):
                raise MemoryError(f"{self.__name__}: {cause}") from None
            raise

    def __getattr__(self, name):
        return getattr(self.parallel, name)


@contextlib.contextmanager
def serial_batches():
    """Run the block as a forked child would: every batch call goes to its serial twin
    (compiling it, or loading it from Numba's cache). ``nbtok warmup`` uses it."""
    global _serial_batches
    saved = _serial_batches
    _serial_batches = True
    try:
        yield
    finally:
        _serial_batches = saved


def batch_kernel(func):
    """``@batch_kernel``: ``parallel=True`` so ``prange`` loops run on all cores; called from
    Python only (a ``BatchKernel``, safe in a forked child)."""
    return BatchKernel(func)


# ---------------------------------------------------------------------------------------------
# leaf kernels: no reference counting, and no wrappers for calls from Python

_leaf_options = dict(boundscheck=None, nogil=True, _nrt=False)  # njit sets nopython itself


class _KernelOnlyDispatcher(numba.core.registry.CPUDispatcher):
    """A dispatcher whose compilations have neither the CPython wrapper (unboxing each argument
    from a Python object, boxing the result) nor the C-callable one, so only kernels can call
    them. Those wrappers were a large part of compiling a small helper: each of the ~30 leaf
    kernels of a first GPT-2 ``encode`` compiled one, and the README's first command from empty
    caches took 12.7 s with them, 10.8 s without (2026-12-04, quiet 2-core VM; docs/benchmarks.md,
    "First run and short calls").

    Calling a wrapper-less compilation from Python would crash the interpreter, so a call from
    Python goes to ``python_twin``: the same function compiled with the wrappers (its own entry in
    Numba's cache, compiled on the first such call: tests, and the few Python callers)."""

    _python_twin = None

    @property
    def python_twin(self):
        if self._python_twin is None:
            func = self.py_func
            twin = _renamed_copy(func, "__py")
            twin.__name__ = func.__name__  # the qualname keys the cache; the name stays
            self._python_twin = _one_specialisation_per_type(numba.njit(cache=True, **_leaf_options))(twin)
        return self._python_twin

    def __call__(self, *args, **kws):
        return self.python_twin(*args, **kws)


def _kernel_only(func):
    if numba.config.DISABLE_JIT:
        return func
    dispatcher = _KernelOnlyDispatcher(py_func=func, locals={}, targetoptions=dict(
        _leaf_options, nopython=True, no_cpython_wrapper=True, no_cfunc_wrapper=True))
    dispatcher.enable_caching()
    return dispatcher


leaf_kernel = _one_specialisation_per_type(_kernel_only)


def entry_point(dispatcher, args):
    """The compiled function that Python may call directly with ``args`` (the types they have)
    once ``dispatcher(*args)`` has compiled or loaded it, or None: the overload of a leaf
    kernel's ``python_twin``, since its own compilations have no wrapper for Python."""
    dispatcher = getattr(dispatcher, "python_twin", dispatcher)
    cres = dispatcher.overloads.get(tuple(numba.typeof(a) for a in args))
    return None if cres is None else cres.entry_point
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


@contextlib.contextmanager
def thread_limit(n):
    """Run the block with Numba's thread count set to ``n`` (clipped to 1 .. NUMBA_NUM_THREADS);
    ``None`` leaves it as it is. The batch methods' ``num_threads`` argument."""
    if n is None:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(old)


class EntryPoints:
    """The compiled entry points of the kernels one model calls from Python.

    Numba's dispatcher type-checks every array of every tuple argument on each call: several
    microseconds for a model's tuples, more than the work of encoding a short sentence. A model
    whose arguments always have the same types (its own arrays, and a text buffer from
    ``np.frombuffer``, read-only and C-contiguous) calls the overload's entry point directly
    once the dispatcher has compiled or loaded it for them. ``call`` is the dispatcher until
    then; an argument that is not C-contiguous keeps the dispatcher for that kernel."""

    enabled = True

    def __init__(self):
        self._eps = {}

    def get(self, dispatcher):
        """The entry point resolved for ``dispatcher``, or None."""
        return self._eps.get(dispatcher)

    def call(self, dispatcher, *args):
        ep = self._eps.get(dispatcher)
        if ep is not None:
            return ep(*args)
        res = dispatcher(*args)
        if self.enabled and all(a.flags.c_contiguous for a in args if hasattr(a, "flags")):
            ep = entry_point(dispatcher, args)
            if ep is not None:
                self._eps[dispatcher] = ep
        return res
