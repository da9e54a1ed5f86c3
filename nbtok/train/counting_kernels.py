"""Counting unique pre-tokens: special-token splitting, safe chunk cuts, parallel counting.

Pipeline for one block of UTF-8 bytes ``buf`` (a piece of a file, or many documents joined):

1. ``split_segments``: documents are cut at every special-token occurrence (leftmost,
   longest first); what lies between is a *segment*. Segments longer than ``target`` are
   cut further at *safe cuts* (below), so that the pieces can be counted in parallel.
2. ``count_tasks`` (parallel over tasks = runs of segments of about ``target`` bytes):
   each task pre-tokenizes its segments with the scanner (``pre_tokenizers.scanner.next_end``) and
   counts its pre-tokens in a task-local hash table, then writes its unique pre-tokens
   ``(start, length, hash, count)`` to its own region of the output arrays.
3. ``merge_counts`` (serial): adds the per-task entries into the global table of unique
   pre-tokens (``WordTable``: hash slots + a byte arena + int64 counts).

Safe cut: a position p with ``buf[p-1] == '\\n'``, the character before that newline not
whitespace, and the character at p neither whitespace nor '/'. There the whitespace run is
exactly "\\n", which every built-in pattern (GPT-2, cl100k, o200k and their variants) ends a
pre-token with, and no pattern looks behind, so pre-tokenizing ``[a, p)`` and ``[p, b)``
separately gives exactly the pre-tokens of ``[a, b)``. (The test is byte-level and
conservative: U+001C..U+001F count as whitespace too.)
"""
import numpy as np
from numba import prange

from .._jit import batch_kernel, kernel
from ..kernels.hashmap import hash_bytes, mix64
from ..pre_tokenizers.scanner import next_end


# ---------------------------------------------------------------- whitespace tests
@kernel
def _ws_starting_at(buf, i, end):
    """True if a (conservatively) whitespace character starts at buf[i]."""
    b = buf[i]
    if b < 0x80:
        return (9 <= b <= 13) or b == 32 or (28 <= b <= 31)
    if b == 0xC2:
        return i + 1 < end and (buf[i + 1] == 0x85 or buf[i + 1] == 0xA0)
    if i + 2 >= end:
        return b == 0xE1 or b == 0xE2 or b == 0xE3
    b1 = buf[i + 1]
    b2 = buf[i + 2]
    if b == 0xE1:
        return b1 == 0x9A and b2 == 0x80
    if b == 0xE2:
        if b1 == 0x80:
            return b2 <= 0x8A or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF
        return b1 == 0x81 and b2 == 0x9F
    if b == 0xE3:
        return b1 == 0x80 and b2 == 0x80
    return False


@kernel
def _ws_ending_at(buf, j, lo):
    """True if a (conservatively) whitespace character ends at buf[j] (inclusive)."""
    b = buf[j]
    if b < 0x80:
        return (9 <= b <= 13) or b == 32 or (28 <= b <= 31)
    if j - 1 >= lo and buf[j - 1] == 0xC2:
        return b == 0x85 or b == 0xA0
    if j - 2 >= lo:
        return _ws_starting_at(buf, j - 2, j + 1)
    return True  # cannot tell: be conservative


@kernel
def is_safe_cut(buf, p, lo, hi):
    """May ``[lo, hi)`` be pre-tokenized as ``[lo, p)`` + ``[p, hi)`` (see module doc)?"""
    if p - 2 < lo or p >= hi:
        return False
    if buf[p - 1] != 10 or buf[p] == 47:
        return False
    if _ws_starting_at(buf, p, hi):
        return False
    return not _ws_ending_at(buf, p - 2, lo)


# ---------------------------------------------------------------- special tokens
@kernel
def _special_at(buf, i, end, sp_bytes, sp_off):
    """Length of the longest special token at buf[i] (specials sorted longest first), or 0."""
    for k in range(sp_off.shape[0] - 1):
        s = sp_off[k]
        n = sp_off[k + 1] - s
        if i + n > end:
            continue
        ok = True
        for j in range(n):
            if buf[i + j] != sp_bytes[s + j]:
                ok = False
                break
        if ok:
            return n
    return 0


@kernel
def _next_mark(buf, i, hi, mark):
    while i < hi and not mark[buf[i]]:
        i += 1
    return i


@kernel
def split_segments(buf, doc_off, sp_bytes, sp_off, sp_first, target, allow_line_cuts):
    """Segments (int64 starts, ends) of the documents ``buf[doc_off[d]:doc_off[d+1]]``:
    cut out every special token, then cut segments longer than ``target`` at safe cuts."""
    n_docs = doc_off.shape[0] - 1
    mark = sp_first.copy()
    if allow_line_cuts:
        mark[10] = True
    nsp = sp_off.shape[0] - 1
    cap = 16 + 2 * n_docs
    starts = np.empty(cap, np.int64)
    ends = np.empty(cap, np.int64)
    n = 0
    for d in range(n_docs):
        lo = doc_off[d]
        hi = doc_off[d + 1]
        seg = lo
        i = lo
        while True:
            i = _next_mark(buf, i, hi, mark)
            cut_s = -1
            cut_e = -1
            nxt = hi
            if i >= hi:
                cut_s = hi
                cut_e = hi
            else:
                b = buf[i]
                nxt = i + 1
                if nsp > 0 and sp_first[b]:
                    k = _special_at(buf, i, hi, sp_bytes, sp_off)
                    if k > 0:
                        cut_s = i
                        cut_e = i + k
                        nxt = i + k
                if cut_s < 0 and b == 10 and allow_line_cuts and i + 1 - seg >= target \
                        and is_safe_cut(buf, i + 1, seg, hi):
                    cut_s = i + 1
                    cut_e = i + 1
            if cut_s >= 0:
                if cut_s > seg:
                    if n + 1 > cap:
                        cap *= 2
                        ns = np.empty(cap, np.int64)
                        ne = np.empty(cap, np.int64)
                        ns[:n] = starts[:n]
                        ne[:n] = ends[:n]
                        starts = ns
                        ends = ne
                    starts[n] = seg
                    ends[n] = cut_s
                    n += 1
                seg = cut_e
            if i >= hi:
                break
            i = nxt
    return starts[:n].copy(), ends[:n].copy()


@kernel
def last_safe_cut(buf, lo, hi, sp_bytes, sp_off, sp_first, allow_line_cuts):
    """The largest p in (lo, hi) at which a block may end (the end of a special token or a
    safe line cut), or -1. Specials are matched leftmost-first from ``lo``."""
    best = -1
    nsp = sp_off.shape[0] - 1
    if nsp > 0:
        i = lo
        while i < hi:
            if sp_first[buf[i]]:
                k = _special_at(buf, i, hi, sp_bytes, sp_off)
                if k > 0:
                    if i + k < hi:
                        best = i + k
                    i += k
                    continue
            i += 1
    if allow_line_cuts:
        p = hi - 1
        while p > max(lo + 1, best):
            if buf[p - 1] == 10 and is_safe_cut(buf, p, lo, hi):
                return p
            p -= 1
    return best


# ---------------------------------------------------------------- counting
# Tables are int64[cap, 4] rows, one cache line per probe. A pre-token of n <= 16 bytes is
# keyed exactly by its bytes packed into two words (k0, k1); a longer one by (hash, n) and
# its bytes are compared on a hash match.
#   task table / task output row: (k0, k1, n, count); long pre-tokens: k0 = hash, k1 = start
#   global table row:             (k0, k1, n, word id); long: k0 = hash, k1 = 0
SHORT = 16


@kernel
def piece_key(buf, i, j):
    n = j - i
    if n > SHORT:
        return hash_bytes(buf, i, j), np.int64(i)
    k0 = np.uint64(0)
    k1 = np.uint64(0)
    for k in range(min(n, 8)):
        k0 |= np.uint64(buf[i + k]) << np.uint64(8 * k)
    for k in range(8, n):
        k1 |= np.uint64(buf[i + k]) << np.uint64(8 * (k - 8))
    return np.int64(k0), np.int64(k1)


@kernel
def _slot_hash(k0, k1, n):
    if n > SHORT:
        return mix64(k0 ^ n)
    return mix64(k0 ^ (k1 * 0x9E3779B97F4A7C1 + n))


@kernel
def _same(a, ai, b, bi, n):
    for k in range(n):
        if a[ai + k] != b[bi + k]:
            return False
    return True


@kernel
def _task_slot(tab, buf, k0, k1, n):
    """Slot of (k0, k1, n) in a task table (an empty slot if absent)."""
    mask = tab.shape[0] - 1
    i = _slot_hash(k0, k1, n) & mask
    while True:
        m = tab[i, 2]
        if m == 0:
            return i
        if m == n and tab[i, 0] == k0:
            if n <= SHORT:
                if tab[i, 1] == k1:
                    return i
            elif _same(buf, tab[i, 1], buf, k1, n):
                return i
        i = (i + 1) & mask


@kernel
def _task_grow(tab):
    cap = 2 * tab.shape[0]
    new = np.zeros((cap, 4), np.int64)
    mask = cap - 1
    for q in range(tab.shape[0]):
        n = tab[q, 2]
        if n != 0:
            i = _slot_hash(tab[q, 0], tab[q, 1], n) & mask
            while new[i, 2] != 0:
                i = (i + 1) & mask
            for c in range(4):
                new[i, c] = tab[q, c]
    return new


@kernel
def _task_add(tab, used, buf, i, j):
    n = j - i
    k0, k1 = piece_key(buf, i, j)
    slot = _task_slot(tab, buf, k0, k1, n)
    if tab[slot, 2] != 0:
        tab[slot, 3] += 1
        return tab, used
    tab[slot, 0] = k0
    tab[slot, 1] = k1
    tab[slot, 2] = n
    tab[slot, 3] = 1
    used += 1
    if 2 * used > tab.shape[0]:
        tab = _task_grow(tab)
    return tab, used


@kernel
def _task_emit(tab, out, base, cap):
    n = 0
    for q in range(tab.shape[0]):
        if tab[q, 2] != 0:
            if n == cap:
                return -1
            for c in range(4):
                out[base + n, c] = tab[q, c]
            n += 1
    return n


@kernel
def count_task(buf, seg_s, seg_e, lo, hi, table, cfg, out, base, cap):
    """Count the pre-tokens of segments lo..hi-1 and write the unique ones as rows
    (k0, k1, n, count) to out[base:base+cap]; returns how many, or -1 if more than cap."""
    tab = np.zeros((1024, 4), np.int64)
    used = 0
    for g in range(lo, hi):
        i = seg_s[g]
        e = seg_e[g]
        while i < e:
            j = next_end(buf, i, e, table, cfg)
            tab, used = _task_add(tab, used, buf, i, j)
            i = j
    return _task_emit(tab, out, base, cap)


@batch_kernel
def count_tasks(buf, seg_s, seg_e, task_lo, task_hi, table, cfg, out, task_base, task_cap, task_n):
    """``count_task`` for every task, in parallel (``task_n[t]`` = its result)."""
    for t in prange(task_lo.shape[0]):
        task_n[t] = count_task(buf, seg_s, seg_e, task_lo[t], task_hi[t], table, cfg, out,
                               task_base[t], task_cap[t])


@kernel
def count_task_spans(buf, ps, pe, out, cap):
    """Count the given pre-token spans ``buf[ps[k]:pe[k]]`` (regex fallback path); output
    rows as ``count_task`` (base 0)."""
    tab = np.zeros((1024, 4), np.int64)
    used = 0
    for q in range(ps.shape[0]):
        tab, used = _task_add(tab, used, buf, ps[q], pe[q])
    return _task_emit(tab, out, 0, cap)


# ---------------------------------------------------------------- the global table
@kernel
def _global_slot(gtab, wbytes, woff, src, k0, k1, n):
    mask = gtab.shape[0] - 1
    i = _slot_hash(k0, k1, n) & mask
    while True:
        m = gtab[i, 2]
        if m == 0:
            return i
        if m == n and gtab[i, 0] == k0:
            if n <= SHORT:
                if gtab[i, 1] == k1:
                    return i
            elif _same(wbytes, woff[gtab[i, 3]], src, k1, n):
                return i
        i = (i + 1) & mask


@kernel
def entries_bytes(out, task_base, task_n):
    """Total length of the task outputs' pre-tokens."""
    total = 0
    for t in range(task_base.shape[0]):
        for r in range(task_base[t], task_base[t] + task_n[t]):
            total += out[r, 2]
    return total


@kernel
def merge_counts(gtab, wbytes, woff, wcount, state, src, out, task_base, task_n):
    """Add the task outputs into the global table. ``state = [n_words, n_bytes]``.
    The caller has made room (load <= 1/2, arena and word arrays large enough)."""
    nw = state[0]
    nb = state[1]
    for t in range(task_base.shape[0]):
        for r in range(task_base[t], task_base[t] + task_n[t]):
            k0 = out[r, 0]
            k1 = out[r, 1]
            n = out[r, 2]
            slot = _global_slot(gtab, wbytes, woff, src, k0, k1, n)
            if gtab[slot, 2] != 0:
                wcount[gtab[slot, 3]] += out[r, 3]
                continue
            gtab[slot, 0] = k0
            gtab[slot, 1] = k1 if n <= SHORT else 0
            gtab[slot, 2] = n
            gtab[slot, 3] = nw
            if n <= SHORT:
                for k in range(min(n, 8)):
                    wbytes[nb + k] = (np.uint64(k0) >> np.uint64(8 * k)) & np.uint64(255)
                for k in range(8, n):
                    wbytes[nb + k] = (np.uint64(k1) >> np.uint64(8 * (k - 8))) & np.uint64(255)
            else:
                for k in range(n):
                    wbytes[nb + k] = src[k1 + k]
            nb += n
            wcount[nw] = out[r, 3]
            nw += 1
            woff[nw] = nb
    state[0] = nw
    state[1] = nb


@kernel
def rehash_global(gtab, cap):
    new = np.zeros((cap, 4), np.int64)
    mask = cap - 1
    for q in range(gtab.shape[0]):
        n = gtab[q, 2]
        if n != 0:
            i = _slot_hash(gtab[q, 0], gtab[q, 1], n) & mask
            while new[i, 2] != 0:
                i = (i + 1) & mask
            for c in range(4):
                new[i, c] = gtab[q, c]
    return new


@kernel
def words_to_symbols(wbytes, woff, n_words):
    """Initial symbols (int32 byte values) of the first n_words words."""
    total = woff[n_words]
    syms = np.empty(total, np.int32)
    for i in range(total):
        syms[i] = wbytes[i]
    return syms
