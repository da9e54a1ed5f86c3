"""Run one function over shard specs: in this process, in a process pool, or on Dask.

Workers get the pickled tokenizer once (pool initializer; on Dask a scattered blob, unpickled
once per worker process) and run with one Numba thread each, so memory per worker is bounded
by one shard, and ``num_workers`` processes use ``num_workers`` cores.
"""
import multiprocessing
import pickle
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

_STATE = {}


def _unpickled(blob):
    key = hash(blob)
    if _STATE.get("key") != key:
        _STATE["obj"] = pickle.loads(blob)
        _STATE["key"] = key
    return _STATE["obj"]


def _init_worker(blob):
    import numba
    numba.set_num_threads(1)
    _unpickled(blob)


def _call(fn, spec, opts):
    return fn(_STATE["obj"], spec, opts)


def _dask_call(fn, spec, opts, blob):
    import numba
    numba.set_num_threads(1)
    return fn(_unpickled(blob), spec, opts)


def run_local(fn, obj_blob, specs, opts, num_workers):
    """Yield ``fn(obj, spec, opts)`` for each spec as they finish (any order).

    ``num_workers`` cores work: this process and ``num_workers - 1`` spawned ones. This process
    takes shards from the back of the list while the others start (about a second each: Python,
    Numba and the tokenizer's kernels from the cache) and take them from the front, so the start
    costs one worker's second, not the run's."""
    import numba
    obj, old = pickle.loads(obj_blob), numba.get_num_threads()
    numba.set_num_threads(1)     # one worker = one core
    pending = deque(specs)
    try:
        if num_workers == 1:
            while pending:
                yield fn(obj, pending.popleft(), opts)
            return
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(num_workers - 1, mp_context=ctx, initializer=_init_worker,
                                 initargs=(obj_blob,)) as ex:
            running = set()
            while pending or running:
                while pending and len(running) < 2 * (num_workers - 1):
                    running.add(ex.submit(_call, fn, pending.popleft(), opts))
                finished = {f for f in running if f.done()}
                if not finished and not pending:
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in finished:
                    running.remove(f)
                    yield f.result()
                if pending:
                    yield fn(obj, pending.pop(), opts)
    finally:
        numba.set_num_threads(old)


def get_client(client):
    """A ``dask.distributed.Client`` from a client or a scheduler address."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ImportError("the Dask runner needs dask.distributed: pip install 'nbtok[dask]'") from None
    if isinstance(client, str):
        return Client(client)
    if not isinstance(client, Client):
        raise TypeError(f"client must be a dask.distributed.Client or a scheduler address, not {type(client).__name__}")
    return client


def run_dask(client, fn, obj_blob, specs, opts):
    """Yield results of one Dask task per spec as they finish."""
    from dask.distributed import as_completed as dask_completed
    blob = client.scatter(obj_blob, broadcast=True)
    futs = client.map(_dask_call, [fn] * len(specs), specs, [opts] * len(specs), [blob] * len(specs),
                      pure=False)
    for f in dask_completed(futs):
        yield f.result()


def run(fn, obj_blob, specs, opts, num_workers=1, client=None):
    if client is not None:
        return run_dask(get_client(client), fn, obj_blob, specs, opts)
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise ValueError(f"num_workers must be a positive int, not {num_workers!r}")
    return run_local(fn, obj_blob, specs, opts, num_workers)
