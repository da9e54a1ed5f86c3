"""The batch state every tokenizer.json stage reads and rewrites: the text as code points, the
alignment of each code point to the original text, and the rows of text units (``Batch``);
the thread pool the ``*_range`` kernels run on (re-created in a forked child); small config
readers shared by the stages."""
import os
import re

import numba
import numpy as np

from ..normalizers import component_kernels as KN
from . import unit_kernels as K


MAX_ID = 1 << 30


# ---------------------------------------------------------------------------------------------
# threads: the ``*_range`` kernels release the GIL

_POOL = {}

# A forked child does not inherit the pool's threads: a task submitted to the parent's pool
# would wait forever. The child drops the pools and creates its own on first use.
os.register_at_fork(after_in_child=_POOL.clear)


def run_chunks(fn, U, args, num_threads=None):
    """``fn(U, lo, hi, *args)`` over chunks of the units, on ``num_threads`` threads
    (default: ``numba.get_num_threads()``)."""
    threads = numba.get_num_threads() if num_threads is None else max(1, int(num_threads))
    n = len(U)
    if threads == 1 or n < 64:
        fn(U, 0, n, *args)
        return
    n_chunks = min(n, 4 * threads)
    bounds = K.unit_chunks(U, n_chunks).tolist()
    pool = _POOL.get(threads)
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor
        pool = _POOL[threads] = ThreadPoolExecutor(threads, thread_name_prefix="nbtok-hf")
    futures = [pool.submit(fn, U, bounds[c], bounds[c + 1], *args)
               for c in range(n_chunks) if bounds[c + 1] > bounds[c]]
    for f in futures:
        f.result()


# ---------------------------------------------------------------------------------------------
# batch state

class Batch:
    __slots__ = ("U", "cps", "a_s", "a_e", "doc_start", "n_docs", "threads")

    def text_rows(self):
        return np.nonzero(self.U[:, K.TOK] < 0)[0]

    def unit_cps(self, u):
        return self.cps[int(self.U[u, K.START]):int(self.U[u, K.END])]

    def unit_str(self, u):
        return self.unit_cps(u).tobytes().decode("utf-32-le")

    def set(self, res):
        self.U, self.cps, self.a_s, self.a_e = res

    def seg_starts(self):
        rows = self.text_rows()
        s = self.U[rows, K.START]
        if not len(self.a_s):
            return np.zeros(len(rows), np.int64)
        return np.ascontiguousarray(self.a_s[np.minimum(s, len(self.a_s) - 1)], np.int64)


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf32(text):
    """``text`` as UTF-32-LE, one code point per character of ``text``: each surrogate (a lone
    one, or either half of a pair a ``str`` can hold) becomes U+FFFD, so that offsets into the
    result are offsets into ``text`` (``fix_surrogates`` would join a pair into one character)."""
    try:
        return text.encode("utf-32-le")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-32-le")


def transform_units(b, per_unit):
    """Apply python-computed transformations ``{row: [(char, change), ...]}`` or ``{row: (code
    points, changes)}`` (other text rows unchanged) through the ``apply_transforms`` kernel."""
    rows = b.text_rows()
    t_cps, t_chg, t_off = [], [], [0]
    for u in rows.tolist():
        items = per_unit.get(u)
        if items is None:
            s, e = int(b.U[u, K.START]), int(b.U[u, K.END])
            t_cps.append(b.cps[s:e])
            t_chg.append(np.zeros(e - s, np.int64))
            t_off.append(t_off[-1] + e - s)
        else:
            if isinstance(items, list):
                items = (np.array([ord(c) for c, _ in items], np.int32), np.array([c for _, c in items], np.int64))
            t_cps.append(items[0])
            t_chg.append(items[1])
            t_off.append(t_off[-1] + len(items[0]))
    cat_c = np.concatenate(t_cps).astype(np.int32) if t_cps else np.zeros(0, np.int32)
    cat_g = np.concatenate(t_chg).astype(np.int64) if t_chg else np.zeros(0, np.int64)
    init = np.zeros(len(rows), np.int64)
    b.set(KN.apply_transforms(b.U, b.a_s, b.a_e, cat_c, cat_g, np.array(t_off, np.int64), init, b.seg_starts()))


def flags_per_unit(b, flag_table):
    """bool per text row: does the unit contain a flagged char?"""
    rows = b.text_rows()
    if not len(rows) or not len(b.cps):
        return rows, np.zeros(len(rows), bool)
    f = flag_table[b.cps].astype(np.int64)
    cum = np.concatenate([[0], np.cumsum(f)])
    s = b.U[rows, K.START]
    e = b.U[rows, K.END]
    return rows, (cum[e] - cum[s]) > 0


def cp_array(s):
    return np.array([ord(c) for c in s], np.int32)


def req_str(cfg, key):
    v = cfg.get(key)
    if not isinstance(v, str):
        raise ValueError(f"{cfg.get('type')}: '{key}' must be a string, got {v!r}")
    return v


def int_id(v, where):
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < MAX_ID:
        raise ValueError(f"{where}: token id must be a non-negative integer, got {v!r}")
    return v
