"""Kernels for the HF ``tokenizer.json`` pipeline: aligned strings and the unit list.

A batch travels through the pipeline as two structures.

* **Aligned strings** ``S = (cps, a_s, a_e)``: code points (int32) of the current (normalized,
  pre-tokenized) text, and for every code point the ORIGINAL character range it comes from
  (absolute char indices into the batch's original text, end exclusive). This is HF's
  ``NormalizedString`` alignment at character granularity: HF keeps one alignment per byte, but
  every transformation gives all bytes of a produced char the same alignment, so nothing is lost.
* **Units** ``U int64[n, 6]`` in document order: rows ``(doc, tok, start, end, lead, trail)``.
  ``tok < 0``: a piece of text, ``S[start:end]``. ``tok >= 0``: an added token (its id) whose
  original char span is ``[start, end)``; ``lead``/``trail`` count the whitespace chars at its
  ends (used by the ByteLevel / Roberta offset trimming).

Normalizers rewrite S (new compact arrays) and the unit ranges; pre-tokenizers split text units
into more units over the same S; the model turns each text unit into tokens.

Transformations follow ``NormalizedString::transform_range``: each produced char carries a
change: 0 replaces the next old char (and takes its alignment), ``-k`` also swallows k more, +1
is inserted and shares the alignment of the old char just before the cursor.
"""
import numpy as np
from .._jit import kernel
from .hashmap import intmap_get
from .pretokenize import pretokenize

DOC, TOK, START, END, LEAD, TRAIL = 0, 1, 2, 3, 4, 5
NCOL = 6

# class bits of the HF class table (nbtok.models.huggingface.hf_class_table)
C_WS = 1        # Rust char::is_whitespace (Unicode White_Space)
C_WORD = 2      # regex \w: alphabetic, marks, decimal digits, connector punctuation
C_PUNCT = 4     # Unicode P*
C_BERT_PUNCT = 8  # ASCII punctuation or P* (BertPreTokenizer)
C_NUMERIC = 16  # Rust char::is_numeric (N*)
C_CONTROL = 32  # C* (Cc, Cf, Cs, Co, Cn) except \t \n \r (BertNormalizer is_control)
C_MN = 64       # Mn (strip accents)
C_CJK = 128     # BertNormalizer's "chinese char" blocks


# ------------------------------------------------------------------ added tokens
@kernel
def _trie_longest(cps, pos, end, tkeys, tvals, term):
    """Longest added token starting at cps[pos]: (token index, length) or (-1, 0)."""
    node = np.int64(0)
    best = -1
    best_len = 0
    i = pos
    while i < end:
        child = intmap_get(tkeys, tvals, node * 0x110000 + cps[i], np.int64(-1))
        if child < 0:
            break
        node = child
        i += 1
        t = term[node]
        if t >= 0:
            best = t
            best_len = i - pos
    return best, best_len


@kernel
def added_split(U, cps, a_s, a_e, tkeys, tvals, term, tok_ids, tok_flags, skip_special, cls):
    """Split every text unit at added tokens (HF ``AddedVocabulary::find_matches``).

    Matches are leftmost-longest and non-overlapping; ``tok_flags`` bits: 1 single_word,
    2 lstrip, 4 rstrip, 8 special. A token unit's span is the ORIGINAL range of its chars.
    """
    n = U.shape[0]
    cap = n
    for u in range(n):
        if U[u, TOK] < 0:
            cap += 2 * (U[u, END] - U[u, START]) + 1
    out = np.empty((cap, NCOL), np.int64)
    m = 0
    for u in range(n):
        if U[u, TOK] >= 0:
            out[m, :] = U[u, :]
            m += 1
            continue
        s0 = U[u, START]
        e0 = U[u, END]
        doc = U[u, DOC]
        start_offset = s0
        pos = s0
        while pos < e0:
            t, length = _trie_longest(cps, pos, e0, tkeys, tvals, term)
            if t < 0:
                pos += 1
                continue
            start = pos
            stop = pos + length
            pos = stop
            fl = tok_flags[t]
            if skip_special and (fl & 8):
                continue
            if fl & 1:
                start_space = start == s0 or (cls[cps[start - 1]] & C_WORD) == 0
                stop_space = stop == e0 or (cls[cps[stop]] & C_WORD) == 0
                if not (start_space and stop_space):
                    continue
            if fl & 2:
                ns = start
                while ns > s0 and (cls[cps[ns - 1]] & C_WS):
                    ns -= 1
                start = max(ns, start_offset)
            if fl & 4:
                while stop < e0 and (cls[cps[stop]] & C_WS):
                    stop += 1
            if start_offset < start:
                out[m, DOC] = doc
                out[m, TOK] = -1
                out[m, START] = start_offset
                out[m, END] = start
                out[m, LEAD] = 0
                out[m, TRAIL] = 0
                m += 1
            lead = 0
            while start + lead < stop and (cls[cps[start + lead]] & C_WS):
                lead += 1
            trail = 0
            while stop - trail - 1 >= start + lead and (cls[cps[stop - trail - 1]] & C_WS):
                trail += 1
            out[m, DOC] = doc
            out[m, TOK] = tok_ids[t]
            out[m, START] = a_s[start]
            out[m, END] = a_e[stop - 1]
            out[m, LEAD] = lead
            out[m, TRAIL] = trail
            m += 1
            # HF keeps scanning where the trie match ended: a match starting inside an rstrip
            # span gives overlapping units, as in ``find_matches``
            start_offset = stop
        if start_offset < e0 or s0 == e0:
            out[m, DOC] = doc
            out[m, TOK] = -1
            out[m, START] = start_offset
            out[m, END] = e0
            out[m, LEAD] = 0
            out[m, TRAIL] = 0
            m += 1
    return out[:m].copy()


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
def _utf8_put(cp, out, n):
    if cp < 0x80:
        out[n] = cp
        return n + 1
    if cp < 0x800:
        out[n] = 0xC0 | (cp >> 6)
        out[n + 1] = 0x80 | (cp & 0x3F)
        return n + 2
    if cp < 0x10000:
        out[n] = 0xE0 | (cp >> 12)
        out[n + 1] = 0x80 | ((cp >> 6) & 0x3F)
        out[n + 2] = 0x80 | (cp & 0x3F)
        return n + 3
    out[n] = 0xF0 | (cp >> 18)
    out[n + 1] = 0x80 | ((cp >> 12) & 0x3F)
    out[n + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[n + 3] = 0x80 | (cp & 0x3F)
    return n + 4


@kernel
def utf8_len(cp):
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        return 3
    return 4


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


# ------------------------------------------------------------------ splitting (pre-tokenizers)
@kernel
def class_matches(U, cps, cls, mask, eq_cp):
    """Single-char matches: chars with ``cls[c] & mask`` (or ``c == eq_cp`` when mask is 0).
    Returns (m_start, m_end, m_off) with unit u's matches at ``m_off[u]:m_off[u+1]``."""
    n = U.shape[0]
    m_off = np.zeros(n + 1, np.int64)
    cnt = 0
    for u in range(n):
        if U[u, TOK] < 0:
            for i in range(U[u, START], U[u, END]):
                c = cps[i]
                if (mask != 0 and (cls[c] & mask) != 0) or (mask == 0 and c == eq_cp):
                    cnt += 1
        m_off[u + 1] = cnt
    ms = np.empty(cnt, np.int64)
    k = 0
    for u in range(n):
        if U[u, TOK] < 0:
            for i in range(U[u, START], U[u, END]):
                c = cps[i]
                if (mask != 0 and (cls[c] & mask) != 0) or (mask == 0 and c == eq_cp):
                    ms[k] = i
                    k += 1
    return ms, ms + 1, m_off


ISOLATED, REMOVED, MERGED_PREV, MERGED_NEXT, CONTIGUOUS = 0, 1, 2, 3, 4


@kernel
def split_units(U, m_start, m_end, m_off, behavior, invert):
    """``NormalizedString::split`` for every text unit, given its sorted non-overlapping matches.
    Empty pieces are dropped (``PreTokenizedString::split``)."""
    n = U.shape[0]
    cap = n
    for u in range(n):
        if U[u, TOK] < 0:
            cap += 2 * (m_off[u + 1] - m_off[u]) + 1
    out = np.empty((cap, NCOL), np.int64)
    ps = np.empty(cap, np.int64)
    pe = np.empty(cap, np.int64)
    pm = np.empty(cap, np.bool_)
    m = 0
    for u in range(n):
        if U[u, TOK] >= 0:
            out[m, :] = U[u, :]
            m += 1
            continue
        s = U[u, START]
        e = U[u, END]
        # (offsets, is_match) list
        k = 0
        prev = s
        for t in range(m_off[u], m_off[u + 1]):
            a = m_start[t]
            b = m_end[t]
            if prev != a:
                ps[k] = prev
                pe[k] = a
                pm[k] = invert
                k += 1
            ps[k] = a
            pe[k] = b
            pm[k] = not invert
            k += 1
            prev = b
        if prev != e:
            ps[k] = prev
            pe[k] = e
            pm[k] = invert
            k += 1
        # behaviours
        if behavior == MERGED_NEXT:
            # fold from the right
            r = 0
            previous = False
            q = k - 1
            # build in reverse into the tail of the arrays (reuse in place from the end)
            w = k  # write pointer going down from k
            while q >= 0:
                is_m = pm[q]
                if is_m and not previous and w < k:
                    ps[w] = ps[q]
                else:
                    w -= 1
                    ps[w] = ps[q]
                    pe[w] = pe[q]
                    pm[w] = False
                previous = is_m
                q -= 1
                r += 1
            for t in range(w, k):
                if pe[t] > ps[t]:
                    out[m, DOC] = U[u, DOC]
                    out[m, TOK] = -1
                    out[m, START] = ps[t]
                    out[m, END] = pe[t]
                    out[m, LEAD] = 0
                    out[m, TRAIL] = 0
                    m += 1
            continue
        w = 0
        previous = False
        for q in range(k):
            is_m = pm[q]
            if behavior == ISOLATED:
                ps[w] = ps[q]
                pe[w] = pe[q]
                pm[w] = False
                w += 1
            elif behavior == REMOVED:
                ps[w] = ps[q]
                pe[w] = pe[q]
                pm[w] = is_m
                w += 1
            elif behavior == CONTIGUOUS:
                if is_m == previous and w > 0:
                    pe[w - 1] = pe[q]
                else:
                    ps[w] = ps[q]
                    pe[w] = pe[q]
                    pm[w] = False
                    w += 1
            else:  # MERGED_PREV
                if is_m and not previous and w > 0:
                    pe[w - 1] = pe[q]
                else:
                    ps[w] = ps[q]
                    pe[w] = pe[q]
                    pm[w] = False
                    w += 1
            previous = is_m
        for t in range(w):
            if pm[t] or pe[t] <= ps[t]:
                continue
            out[m, DOC] = U[u, DOC]
            out[m, TOK] = -1
            out[m, START] = ps[t]
            out[m, END] = pe[t]
            out[m, LEAD] = 0
            out[m, TRAIL] = 0
            m += 1
    return out[:m].copy()


@kernel
def units_utf8(U, cps):
    """UTF-8 of every text unit back to back: (buf, byte offsets per row of U (text rows only
    meaningful), char index of every byte)."""
    n = U.shape[0]
    total = 0
    for u in range(n):
        if U[u, TOK] < 0:
            for i in range(U[u, START], U[u, END]):
                total += utf8_len(cps[i])
    buf = np.empty(total, np.uint8)
    char_of = np.empty(total + 1, np.int64)
    offs = np.zeros(n + 1, np.int64)
    b = 0
    for u in range(n):
        if U[u, TOK] < 0:
            for i in range(U[u, START], U[u, END]):
                nb = _utf8_put(cps[i], buf, b)
                for k in range(b, nb):
                    char_of[k] = i
                b = nb
        offs[u + 1] = b
    char_of[total] = -1
    return buf, offs, char_of


@kernel
def ends_to_matches(U, offs, ends, counts, char_of):
    """Scanner pre-token ends (absolute byte offsets, contiguous) -> char matches per unit."""
    n = U.shape[0]
    total = 0
    for u in range(n):
        total += counts[u]
    ms = np.empty(total, np.int64)
    me = np.empty(total, np.int64)
    m_off = np.zeros(n + 1, np.int64)
    k = 0
    for u in range(n):
        if U[u, TOK] < 0 and counts[u] > 0:
            b = offs[u]
            for t in range(counts[u]):
                e = ends[offs[u] + t]
                ms[k] = char_of[b]
                me[k] = char_of[e - 1] + 1
                k += 1
                b = e
        m_off[u + 1] = k
    return ms[:k].copy(), me[:k].copy(), m_off


@kernel
def bytelevel_chars(U, cps, a_s, a_e, b2u):
    """ByteLevel pre-tokenizer's transform: every char becomes one char per UTF-8 byte
    (``bytes_to_unicode``), all sharing the old char's alignment."""
    total = 0
    for u in range(U.shape[0]):
        if U[u, TOK] < 0:
            for i in range(U[u, START], U[u, END]):
                total += utf8_len(cps[i])
    ncps = np.empty(total, np.int32)
    ns = np.empty(total, np.int64)
    ne = np.empty(total, np.int64)
    tmp = np.empty(4, np.uint8)
    V = U.copy()
    m = 0
    for u in range(U.shape[0]):
        if U[u, TOK] >= 0:
            continue
        V[u, START] = m
        for i in range(U[u, START], U[u, END]):
            nb = _utf8_put(cps[i], tmp, 0)
            for k in range(nb):
                ncps[m] = b2u[tmp[k]]
                ns[m] = a_s[i]
                ne[m] = a_e[i]
                m += 1
        V[u, END] = m
    return V, ncps, ns, ne


# ------------------------------------------------------------------ assembling the encodings
@kernel
def assemble(U, t_ids, t_s, t_e, t_off, a_s, a_e, n_docs, doc_start):
    """Final ids and original char offsets (relative to each document) in unit order.

    Text unit u produced tokens ``t_ids[t_off[u]:t_off[u+1]]`` whose char spans ``[t_s, t_e)``
    index S; their offsets are ``(a_s[t_s], a_e[t_e - 1])``. Returns (ids, starts, ends, doc_off,
    lead, trail) -- lead/trail only for added-token units (else -1)."""
    n = U.shape[0]
    total = 0
    for u in range(n):
        if U[u, TOK] >= 0:
            total += 1
        else:
            total += t_off[u + 1] - t_off[u]
    ids = np.empty(total, np.int32)
    st = np.empty(total, np.int64)
    en = np.empty(total, np.int64)
    lead = np.full(total, -1, np.int64)
    trail = np.full(total, -1, np.int64)
    doc_off = np.zeros(n_docs + 1, np.int64)
    k = 0
    for u in range(n):
        d = U[u, DOC]
        base = doc_start[d]
        if U[u, TOK] >= 0:
            ids[k] = U[u, TOK]
            st[k] = U[u, START] - base
            en[k] = U[u, END] - base
            lead[k] = U[u, LEAD]
            trail[k] = U[u, TRAIL]
            k += 1
            doc_off[d + 1] += 1
        else:
            for t in range(t_off[u], t_off[u + 1]):
                ids[k] = t_ids[t]
                if t_e[t] > t_s[t]:
                    st[k] = a_s[t_s[t]] - base
                    en[k] = a_e[t_e[t] - 1] - base
                else:
                    st[k] = 0
                    en[k] = 0
                k += 1
            doc_off[d + 1] += t_off[u + 1] - t_off[u]
    for d in range(n_docs):
        doc_off[d + 1] += doc_off[d]
    return ids, st, en, doc_off, lead, trail


@kernel
def unit_chunks(U, n_chunks):
    """Split the rows of U into ``n_chunks`` runs with about equal text."""
    n = U.shape[0]
    total = 0
    for u in range(n):
        if U[u, TOK] < 0:
            total += U[u, END] - U[u, START]
    bounds = np.empty(n_chunks + 1, np.int64)
    bounds[0] = 0
    acc = 0
    c = 1
    for u in range(n):
        if U[u, TOK] < 0:
            acc += U[u, END] - U[u, START]
        while c < n_chunks and acc * n_chunks >= total * c:
            bounds[c] = u + 1
            c += 1
    while c < n_chunks:
        bounds[c] = n
        c += 1
    bounds[n_chunks] = n
    return bounds


@kernel
def compact_tokens(U, out_ids, out_s, out_e, counts, slot, n_slot):
    """Pack per-unit token blocks written at ``slot[u]`` into ragged arrays."""
    n = U.shape[0]
    t_off = np.zeros(n + 1, np.int64)
    for u in range(n):
        t_off[u + 1] = t_off[u] + counts[u]
    total = t_off[n]
    ids = np.empty(total, np.int32)
    ts = np.empty(total, np.int64)
    te = np.empty(total, np.int64)
    for u in range(n):
        src = slot[u]
        dst = t_off[u]
        for k in range(counts[u]):
            ids[dst + k] = out_ids[src + k]
            ts[dst + k] = out_s[src + k]
            te[dst + k] = out_e[src + k]
    return ids, ts, te, t_off


@kernel
def unit_slots(U, per_char, extra):
    """Output slot of each text unit: room for ``per_char * len + extra`` tokens."""
    n = U.shape[0]
    slot = np.zeros(n + 1, np.int64)
    for u in range(n):
        size = 0
        if U[u, TOK] < 0:
            size = per_char * (U[u, END] - U[u, START]) + extra
        slot[u + 1] = slot[u] + size
    return slot


@kernel
def pretokenize_range(U, lo, hi, buf, offs, table, cfg, out, counts):
    """Run the byte-level scanner over the text units ``U[lo:hi]`` (UTF-8 from ``units_utf8``)."""
    for u in range(lo, hi):
        if U[u, TOK] < 0 and offs[u + 1] > offs[u]:
            counts[u] = pretokenize(buf, offs[u], offs[u + 1], table, cfg, out[offs[u]:])
