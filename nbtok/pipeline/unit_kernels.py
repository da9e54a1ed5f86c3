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
from ..kernels.hashmap import intmap_get
from ..pre_tokenizers.scanner import pretokenize

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


# ------------------------------------------------------------------ UTF-8
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


@kernel
def script_runs(U, cps, script):
    """HF's ``UnicodeScripts`` for every text unit: a run starts at each character whose script
    (``script[c]``; -1 is Any, which never starts a run) differs from the last script before it
    that was not Any; the runs are (start, next start or the unit's end), and text before the
    first run is not in any (HF drops it). Returns (m_start, m_end, m_off) as ``class_matches``."""
    n = U.shape[0]
    m_off = np.zeros(n + 1, np.int64)
    ms = np.empty(cps.shape[0], np.int64)
    me = np.empty(cps.shape[0], np.int64)
    k = 0
    for u in range(n):
        if U[u, TOK] < 0:
            last = -2
            for i in range(U[u, START], U[u, END]):
                s = script[cps[i]]
                if s != -1 and s != last:
                    if k > m_off[u]:
                        me[k - 1] = i
                    ms[k] = i
                    k += 1
                if s != -1:
                    last = s
            if k > m_off[u]:
                me[k - 1] = U[u, END]
        m_off[u + 1] = k
    return ms[:k].copy(), me[:k].copy(), m_off


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
def unit_slots(U, cps, per_char, extra):
    """Output slot of each text unit: room for ``utf8 + per_char * len + extra`` tokens, utf8
    the unit's UTF-8 bytes (a model's token covers at least one character, or with byte
    fallback one byte of it) and len its characters. Sized by bytes, not 4 per character:
    the three output arrays take 20 bytes a slot, and the kernels write in every unit's slot,
    so all of it is touched (4 per character made the tokenizer.json path 120-145 B/byte)."""
    n = U.shape[0]
    slot = np.zeros(n + 1, np.int64)
    for u in range(n):
        size = 0
        if U[u, TOK] < 0:
            s = U[u, START]
            e = U[u, END]
            size = (per_char + 1) * (e - s) + extra
            for i in range(s, e):
                c = cps[i]
                size += (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
        slot[u + 1] = slot[u] + size
    return slot


@kernel
def pretokenize_range(U, lo, hi, buf, offs, table, cfg, out, counts):
    """Run the byte-level scanner over the text units ``U[lo:hi]`` (UTF-8 from ``units_utf8``)."""
    for u in range(lo, hi):
        if U[u, TOK] < 0 and offs[u + 1] > offs[u]:
            counts[u] = pretokenize(buf, offs[u], offs[u + 1], table, cfg, out[offs[u]:])
