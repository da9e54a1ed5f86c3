"""Counting unique pre-tokens: special-token splitting, safe chunk cuts, parallel counting.

Pipeline for one block of UTF-8 bytes ``buf`` (a piece of a file, or many documents joined):

1. ``split_segments``: documents are cut at every special-token occurrence (leftmost,
   longest first); what lies between is a *segment*. Segments longer than ``target`` are
   cut further at *safe cuts* (below), so that the pieces can be counted in parallel.
2. ``count_tasks`` (parallel over tasks = runs of segments of about ``target`` bytes):
   each task pre-tokenizes its segments with the scanner (``pretokenize.next_end``) and
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
from .hashmap import hash_bytes
from .pretokenize import next_end


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
def split_segments(buf, doc_off, sp_bytes, sp_off, sp_first, target, allow_line_cuts):
    """Segments (int64 starts, ends) of the documents ``buf[doc_off[d]:doc_off[d+1]]``:
    cut out every special token, then cut segments longer than ``target`` at safe cuts."""
    n_docs = doc_off.shape[0] - 1
    cap = 16 + 2 * n_docs
    starts = np.empty(cap, np.int64)
    ends = np.empty(cap, np.int64)
    n = 0
    nsp = sp_off.shape[0] - 1
    for d in range(n_docs):
        lo = doc_off[d]
        hi = doc_off[d + 1]
        seg = lo
        i = lo
        while i <= hi:
            cut = i == hi
            skip = 0
            if not cut and nsp > 0 and sp_first[buf[i]]:
                skip = _special_at(buf, i, hi, sp_bytes, sp_off)
                cut = skip > 0
            if not cut and allow_line_cuts and i - seg >= target and is_safe_cut(buf, i, seg, hi):
                cut = True
            if cut and i > seg:
                if n == cap:
                    cap *= 2
                    ns = np.empty(cap, np.int64)
                    ne = np.empty(cap, np.int64)
                    ns[:n] = starts[:n]
                    ne[:n] = ends[:n]
                    starts = ns
                    ends = ne
                starts[n] = seg
                ends[n] = i
                n += 1
            if skip > 0:
                i += skip
                seg = i
                continue
            if cut:
                seg = i
            i += 1
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
@kernel
def _local_find(slots, shash, starts, lens, buf, s, n, h):
    mask = slots.shape[0] - 1
    i = h & mask
    while True:
        e = slots[i]
        if e == -1:
            return i
        if shash[i] == h and lens[e] == n:
            o = starts[e]
            same = True
            for k in range(n):
                if buf[o + k] != buf[s + k]:
                    same = False
                    break
            if same:
                return i
        i = (i + 1) & mask


@kernel
def count_task(buf, seg_s, seg_e, lo, hi, table, cfg, out_start, out_len, out_hash, out_count, base, cap):
    """Count the pre-tokens of segments lo..hi-1 into out_*[base:base+cap]; returns the
    number of unique pre-tokens written, or -1 if more than ``cap``."""
    nbytes = 0
    for g in range(lo, hi):
        nbytes += seg_e[g] - seg_s[g]
    tcap = 64
    while tcap < 2 * min(cap, nbytes // 4 + 16):
        tcap *= 2
    slots = np.full(tcap, -1, np.int32)
    shash = np.empty(tcap, np.int64)
    n = 0
    for g in range(lo, hi):
        i = seg_s[g]
        e = seg_e[g]
        while i < e:
            j = next_end(buf, i, e, table, cfg)
            h = hash_bytes(buf, i, j)
            slot = _local_find(slots, shash, out_start[base:], out_len[base:], buf, i, j - i, h)
            k = slots[slot]
            if k != -1:
                out_count[base + k] += 1
            else:
                if n == cap:
                    return -1
                slots[slot] = n
                shash[slot] = h
                out_start[base + n] = i
                out_len[base + n] = j - i
                out_hash[base + n] = h
                out_count[base + n] = 1
                n += 1
                if 2 * n > tcap:
                    tcap *= 2
                    ns = np.full(tcap, -1, np.int32)
                    nh = np.empty(tcap, np.int64)
                    mask = tcap - 1
                    for q in range(slots.shape[0]):
                        if slots[q] != -1:
                            t = shash[q] & mask
                            while ns[t] != -1:
                                t = (t + 1) & mask
                            ns[t] = slots[q]
                            nh[t] = shash[q]
                    slots = ns
                    shash = nh
            i = j
    return n


@batch_kernel
def count_tasks(buf, seg_s, seg_e, task_lo, task_hi, table, cfg, out_start, out_len, out_hash,
                out_count, task_base, task_cap, task_n):
    """``count_task`` for every task, in parallel (``task_n[t]`` = its result)."""
    for t in prange(task_lo.shape[0]):
        task_n[t] = count_task(buf, seg_s, seg_e, task_lo[t], task_hi[t], table, cfg, out_start,
                               out_len, out_hash, out_count, task_base[t], task_cap[t])


# ---------------------------------------------------------------- the global table
@kernel
def _table_find(slots, shash, wbytes, woff, src, s, n, h):
    mask = slots.shape[0] - 1
    i = h & mask
    while True:
        w = slots[i]
        if w == -1:
            return i
        if shash[i] == h and woff[w + 1] - woff[w] == n:
            o = woff[w]
            same = True
            for k in range(n):
                if wbytes[o + k] != src[s + k]:
                    same = False
                    break
            if same:
                return i
        i = (i + 1) & mask


@kernel
def merge_counts(slots, shash, wbytes, woff, wcount, state, src, e_start, e_len, e_hash, e_count,
                 task_base, task_n):
    """Add the entries of every task into the global table. ``state = [n_words, n_bytes]``.
    The caller has made room (slots load <= 1/2, arena and word arrays large enough)."""
    nw = state[0]
    nb = state[1]
    for t in range(task_base.shape[0]):
        b = task_base[t]
        for j in range(b, b + task_n[t]):
            s = e_start[j]
            n = e_len[j]
            h = e_hash[j]
            slot = _table_find(slots, shash, wbytes, woff, src, s, n, h)
            w = slots[slot]
            if w != -1:
                wcount[w] += e_count[j]
            else:
                slots[slot] = nw
                shash[slot] = h
                for k in range(n):
                    wbytes[nb + k] = src[s + k]
                nb += n
                wcount[nw] = e_count[j]
                nw += 1
                woff[nw] = nb
    state[0] = nw
    state[1] = nb


@kernel
def rehash_table(slots, shash, cap):
    ns = np.full(cap, -1, np.int32)
    nh = np.empty(cap, np.int64)
    mask = cap - 1
    for q in range(slots.shape[0]):
        if slots[q] != -1:
            t = shash[q] & mask
            while ns[t] != -1:
                t = (t + 1) & mask
            ns[t] = slots[q]
            nh[t] = shash[q]
    return ns, nh


@kernel
def words_to_symbols(wbytes, woff, n_words):
    """Initial symbols (int32 byte values) of the first n_words words."""
    total = woff[n_words]
    syms = np.empty(total, np.int32)
    for i in range(total):
        syms[i] = wbytes[i]
    return syms


@kernel
def count_task_spans(buf, ps, pe, out_start, out_len, out_hash, out_count, cap):
    """Count the given pre-token spans ``buf[ps[k]:pe[k]]`` (regex fallback path); the output
    is like ``count_task``'s (base 0). ``cap`` must bound the unique count."""
    tcap = 64
    while tcap < 2 * min(cap, ps.shape[0] + 16):
        tcap *= 2
    slots = np.full(tcap, -1, np.int32)
    shash = np.empty(tcap, np.int64)
    n = 0
    for q in range(ps.shape[0]):
        i = ps[q]
        j = pe[q]
        h = hash_bytes(buf, i, j)
        slot = _local_find(slots, shash, out_start, out_len, buf, i, j - i, h)
        k = slots[slot]
        if k != -1:
            out_count[k] += 1
        else:
            slots[slot] = n
            shash[slot] = h
            out_start[n] = i
            out_len[n] = j - i
            out_hash[n] = h
            out_count[n] = 1
            n += 1
    return n
