"""Kernels of the HF ``tokenizer.json`` normalizers (``normalizers.components``): character maps,
Prepend, Replace, Strip and ``Precompiled`` (a SentencePiece charsmap applied HF's way, per
grapheme cluster), each rewriting the aligned strings of ``pipeline.unit_kernels`` through
``apply_transforms`` (HF's ``NormalizedString::transform_range``)."""
import numpy as np

from .._jit import kernel
from ..kernels.hashmap import intmap_get
from ..pipeline.unit_kernels import C_WS, DOC, END, START, TOK, _utf8_put, utf8_len


# ------------------------------------------------------------------ normalizers
@kernel
def text_size(U):
    total = 0
    for u in range(U.shape[0]):
        if U[u, TOK] < 0:
            total += U[u, END] - U[u, START]
    return total


@kernel
def map_chars(U, cps, a_s, a_e, mkeys, mvals, repl, repl_off, max_repl):
    """Per-char replacement: ``cp -> repl[repl_off[r]:repl_off[r+1]]`` (r from the map; chars not in
    the map are kept). The first produced char replaces the old one, the others are inserted; an
    empty replacement deletes the char. All produced chars share the old char's alignment."""
    cap = text_size(U) * max(max_repl, 1)
    ncps = np.empty(cap, np.int32)
    ns = np.empty(cap, np.int64)
    ne = np.empty(cap, np.int64)
    V = U.copy()
    m = 0
    for u in range(U.shape[0]):
        if U[u, TOK] >= 0:
            continue
        V[u, START] = m
        for i in range(U[u, START], U[u, END]):
            r = intmap_get(mkeys, mvals, np.int64(cps[i]), np.int64(-1))
            if r < 0:
                ncps[m] = cps[i]
                ns[m] = a_s[i]
                ne[m] = a_e[i]
                m += 1
            else:
                for k in range(repl_off[r], repl_off[r + 1]):
                    ncps[m] = repl[k]
                    ns[m] = a_s[i]
                    ne[m] = a_e[i]
                    m += 1
        V[u, END] = m
    return V, ncps[:m].copy(), ns[:m].copy(), ne[:m].copy()


@kernel
def prepend(U, cps, a_s, a_e, pre, mode, check_cp, doc_start):
    """Prepend ``pre`` to text units. mode 0: every non-empty unit (Prepend normalizer);
    1: unless it starts with ``check_cp`` (Metaspace always, ByteLevel add_prefix_space);
    2: as 1, and only if the unit starts at its document's first char (Metaspace "first").
    All prepended chars share the first char's alignment (``NormalizedString::prepend``)."""
    k = pre.shape[0]
    cap = text_size(U) + k * U.shape[0]
    ncps = np.empty(cap, np.int32)
    ns = np.empty(cap, np.int64)
    ne = np.empty(cap, np.int64)
    V = U.copy()
    m = 0
    for u in range(U.shape[0]):
        if U[u, TOK] >= 0:
            continue
        s = U[u, START]
        e = U[u, END]
        V[u, START] = m
        if e > s:
            do = True
            if mode >= 1 and cps[s] == check_cp:
                do = False
            if mode == 2 and a_s[s] != doc_start[U[u, DOC]]:
                do = False
            if do:
                for j in range(k):
                    ncps[m] = pre[j]
                    ns[m] = a_s[s]
                    ne[m] = a_e[s]
                    m += 1
        for i in range(s, e):
            ncps[m] = cps[i]
            ns[m] = a_s[i]
            ne[m] = a_e[i]
            m += 1
        V[u, END] = m
    return V, ncps[:m].copy(), ns[:m].copy(), ne[:m].copy()


@kernel
def replace_string(U, cps, a_s, a_e, pat, content):
    """``NormalizedString::replace`` with a literal pattern: non-overlapping leftmost matches;
    every content char shares the alignment of the last replaced char."""
    p = pat.shape[0]
    k = content.shape[0]
    total = text_size(U)
    cap = total + (total // max(p, 1) + 1) * k
    ncps = np.empty(cap, np.int32)
    ns = np.empty(cap, np.int64)
    ne = np.empty(cap, np.int64)
    V = U.copy()
    m = 0
    for u in range(U.shape[0]):
        if U[u, TOK] >= 0:
            continue
        s = U[u, START]
        e = U[u, END]
        V[u, START] = m
        i = s
        while i < e:
            hit = p > 0 and i + p <= e
            if hit:
                for j in range(p):
                    if cps[i + j] != pat[j]:
                        hit = False
                        break
            if hit:
                last = i + p - 1
                for j in range(k):
                    ncps[m] = content[j]
                    ns[m] = a_s[last]
                    ne[m] = a_e[last]
                    m += 1
                i += p
            else:
                ncps[m] = cps[i]
                ns[m] = a_s[i]
                ne[m] = a_e[i]
                m += 1
                i += 1
        V[u, END] = m
    return V, ncps[:m].copy(), ns[:m].copy(), ne[:m].copy()


@kernel
def replace_matches(U, cps, a_s, a_e, ms, me, m_off, content):
    """``NormalizedString::replace`` with precomputed matches (regex patterns): every content
    char shares the alignment of the last replaced char; an empty content deletes."""
    k = content.shape[0]
    cap = text_size(U) + ms.shape[0] * k
    ncps = np.empty(cap, np.int32)
    ns = np.empty(cap, np.int64)
    ne = np.empty(cap, np.int64)
    V = U.copy()
    m = 0
    for u in range(U.shape[0]):
        if U[u, TOK] >= 0:
            continue
        s = U[u, START]
        e = U[u, END]
        V[u, START] = m
        i = s
        for t in range(m_off[u], m_off[u + 1]):
            while i < ms[t]:
                ncps[m] = cps[i]
                ns[m] = a_s[i]
                ne[m] = a_e[i]
                m += 1
                i += 1
            last = me[t] - 1
            for j in range(k):
                ncps[m] = content[j]
                ns[m] = a_s[last]
                ne[m] = a_e[last]
                m += 1
            i = me[t]
        while i < e:
            ncps[m] = cps[i]
            ns[m] = a_s[i]
            ne[m] = a_e[i]
            m += 1
            i += 1
        V[u, END] = m
    return V, ncps[:m].copy(), ns[:m].copy(), ne[:m].copy()


@kernel
def strip_units(U, cps, cls, left, right):
    """Strip normalizer: drop leading / trailing whitespace chars of text units (in place)."""
    for u in range(U.shape[0]):
        if U[u, TOK] >= 0:
            continue
        s = U[u, START]
        e = U[u, END]
        if left:
            while s < e and (cls[cps[s]] & C_WS):
                s += 1
        if right:
            while e > s and (cls[cps[e - 1]] & C_WS):
                e -= 1
        U[u, START] = s
        U[u, END] = e


@kernel
def apply_transforms(U, a_s, a_e, t_cps, t_chg, t_off, init_off, seg_start):
    """Generic ``transform``: text unit u (the j-th text unit) gets the produced chars
    ``t_cps[t_off[j]:t_off[j+1]]`` with changes ``t_chg``; ``init_off[j]`` old chars are skipped first.
    Alignments follow the cursor rule of ``transform_range``."""
    total = t_cps.shape[0]
    ncps = np.empty(total, np.int32)
    ns = np.empty(total, np.int64)
    ne = np.empty(total, np.int64)
    V = U.copy()
    j = 0
    for u in range(U.shape[0]):
        if U[u, TOK] >= 0:
            continue
        s = U[u, START]
        e = U[u, END]
        V[u, START] = t_off[j]
        V[u, END] = t_off[j + 1]
        cur = s + init_off[j]
        for k in range(t_off[j], t_off[j + 1]):
            ncps[k] = t_cps[k]
            c = t_chg[k]
            if c > 0:
                if cur - 1 >= s and cur - 1 < e:
                    ns[k] = a_s[cur - 1]
                    ne[k] = a_e[cur - 1]
                elif cur - 1 >= e and e > s:
                    ns[k] = a_s[e - 1]
                    ne[k] = a_e[e - 1]
                else:
                    ns[k] = seg_start[j]
                    ne[k] = seg_start[j]
            else:
                if cur < e:
                    ns[k] = a_s[cur]
                    ne[k] = a_e[cur]
                elif e > s:
                    ns[k] = a_s[e - 1]
                    ne[k] = a_e[e - 1]
                else:
                    ns[k] = seg_start[j]
                    ne[k] = seg_start[j]
                cur += 1 - c
        j += 1
    return V, ncps, ns, ne


# ------------------------------------------------------------------ precompiled charsmap (HF rules)
@kernel
def _darts_offset(u):
    u = np.int64(u)
    return (u >> 10) << ((u & 0x200) >> 6)


@kernel
def darts_first(units, text, start, end):
    """FIRST (shortest) charsmap rule matching a prefix of ``text[start:end]``: pool offset or -1
    (``spm_precompiled::Precompiled::transform`` takes ``common_prefix_search(..)[0]``)."""
    n_units = units.shape[0]
    if n_units == 0:
        return np.int64(-1)
    pos = _darts_offset(units[0])
    for i in range(start, end):
        c = np.int64(text[i])
        pos = pos ^ c
        if pos < 0 or pos >= n_units:
            return np.int64(-1)
        u = np.int64(units[pos])
        if (u & 0x800000FF) != c:
            return np.int64(-1)
        pos = pos ^ _darts_offset(u)
        if pos < 0 or pos >= n_units:
            return np.int64(-1)
        if (u >> 8) & 1:
            return np.int64(units[pos]) & 0x7FFFFFFF
    return np.int64(-1)


@kernel
def _pool_chars(pool, off, out_cps, m):
    """Decode the NUL-terminated UTF-8 string at ``pool[off:]`` into ``out_cps[m:]``; returns the new m."""
    i = off
    n = pool.shape[0]
    while i < n and pool[i] != 0:
        b = np.int64(pool[i])
        if b < 0x80:
            cp = b
            i += 1
        elif b < 0xE0:
            cp = ((b & 0x1F) << 6) | (np.int64(pool[i + 1]) & 0x3F)
            i += 2
        elif b < 0xF0:
            cp = ((b & 0x0F) << 12) | ((np.int64(pool[i + 1]) & 0x3F) << 6) | (np.int64(pool[i + 2]) & 0x3F)
            i += 3
        else:
            cp = (((b & 0x07) << 18) | ((np.int64(pool[i + 1]) & 0x3F) << 12)
                  | ((np.int64(pool[i + 2]) & 0x3F) << 6) | (np.int64(pool[i + 3]) & 0x3F))
            i += 4
        out_cps[m] = cp
        m += 1
    return m


@kernel
def _pool_max(pool):
    """Longest replacement string in chars (bound for the output size)."""
    best = 0
    cur = 0
    for i in range(pool.shape[0]):
        if pool[i] == 0:
            best = max(best, cur)
            cur = 0
        elif (pool[i] & 0xC0) != 0x80:
            cur += 1
    return max(best, cur)


@kernel
def precompiled(U, cps, a_s, a_e, gb, units, pool, pool_max, seg_start):
    """HF's ``Precompiled`` normalizer. ``gb[i]`` is True when a grapheme cluster starts at char i.
    A cluster shorter than 6 UTF-8 bytes is looked up whole; otherwise (or with no rule) each char
    is looked up alone. Replacements follow ``precompiled.rs::replace`` (including its change
    bookkeeping), then ``transform`` computes the alignments."""
    total = text_size(U)
    cap = total * max(pool_max, 1) + 1
    t_cps = np.empty(cap, np.int32)
    t_chg = np.empty(cap, np.int64)
    n_text = 0
    for u in range(U.shape[0]):
        if U[u, TOK] < 0:
            n_text += 1
    t_off = np.zeros(n_text + 1, np.int64)
    init = np.zeros(n_text, np.int64)
    buf = np.empty(64, np.uint8)
    j = 0
    m = 0
    for u in range(U.shape[0]):
        if U[u, TOK] >= 0:
            continue
        s = U[u, START]
        e = U[u, END]
        i = s
        while i < e:
            g = i + 1
            while g < e and not gb[g]:
                g += 1
            # grapheme [i, g)
            nb = 0
            for k in range(i, g):
                nb += utf8_len(cps[k])
            done = False
            if nb < 6:
                n = 0
                for k in range(i, g):
                    n = _utf8_put(cps[k], buf, n)
                v = darts_first(units, buf, 0, n)
                if v >= 0:
                    m = _replace(t_cps, t_chg, t_off[j], m, pool, v, g - i)
                    done = True
            if not done:
                for k in range(i, g):
                    n = _utf8_put(cps[k], buf, 0)
                    v = darts_first(units, buf, 0, n)
                    if v >= 0:
                        m = _replace(t_cps, t_chg, t_off[j], m, pool, v, 1)
                    else:
                        t_cps[m] = cps[k]
                        t_chg[m] = 0
                        m += 1
            i = g
        j += 1
        t_off[j] = m
    return apply_transforms(U, a_s, a_e, t_cps[:m], t_chg[:m], t_off, init, seg_start)


@kernel
def _replace(t_cps, t_chg, seg_begin, m, pool, v, old_count):
    m0 = m
    m = _pool_chars(pool, v, t_cps, m)
    new_count = m - m0
    for k in range(m0, m):
        t_chg[k] = 0
    diff = new_count - old_count
    if diff > 0:
        for k in range(m - diff, m):
            t_chg[k] = 1
    elif diff < 0:
        if m > seg_begin:
            t_chg[m - 1] += diff
    return m
