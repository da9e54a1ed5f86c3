"""HF ``tokenizer.json`` models over text units (see ``pipeline.unit_kernels``): BPE, Unigram, WordLevel.

Every model kernel encodes one text unit ``cps[s:e]`` (one HF "word") and writes its tokens
at ``out[pos:]``: the id and the char span ``[ts, te)`` in ``cps`` coordinates. Spans follow HF:
the model produces byte offsets inside the word, and a byte offset inside a char maps to
that whole char (``convert_offsets`` + ``BytesToCharOffsetConverter``).

The ``*_range`` drivers encode one chunk of units with their own scratch (the model object runs
chunks on a thread pool: the kernels release the GIL) and write unit u's tokens at ``slot[u]``;
``pipeline.unit_kernels.compact_tokens`` packs them.

Vocabulary lookups go through the model's ``BytesMap`` over the UTF-8 of the HF token strings.
BPE merging is ``models/bpe/merge.py::bpe_merge``; the symbol groups are read back from its linked
list (``nxt``), which it leaves intact.
"""
import numpy as np
from .._jit import kernel, leaf_kernel
from .bpe.merge import bpe_merge, new_scratch
from ..kernels.hashmap import bytesmap_get, intmap_get
from ..pipeline.unit_kernels import END, START, TOK, _utf8_put
from ..normalizers.sentencepiece import one_char_len
from ..kernels.trie import common_prefix_search

# BPE params (int64 array)
P_UNK, P_FUSE, P_BYTE_FALLBACK, P_IGNORE_MERGES, P_HAS_PREFIX, P_HAS_SUFFIX = range(6)


@kernel
def unit_bytes(cps, s, e, buf, b2c, cstart):
    """UTF-8 of ``cps[s:e]`` into buf; ``b2c[b]`` = char index (absolute) of byte b, and
    ``cstart[i - s]`` = byte offset of char i. Returns the byte length."""
    n = 0
    for i in range(s, e):
        cstart[i - s] = n
        nb = _utf8_put(cps[i], buf, n)
        for k in range(n, nb):
            b2c[k] = i
        n = nb
    cstart[e - s] = n
    return n


@kernel
def _span(b2c, b0, b1, nbytes):
    """Char span of the byte range [b0, b1) of a word (HF's conversion). Byte-fallback tokens
    of a prefix or suffix (``continuing_subword_prefix``, ``end_of_word_suffix``) are not in
    the text: their bytes run past the word's end, where ``b2c`` holds nothing (reading it
    gave garbage spans and a crash): a range past the end is clamped to it."""
    b1 = min(b1, nbytes)
    if b1 <= b0:
        c = b2c[min(b0, nbytes - 1)] if nbytes > 0 else 0
        return c, c
    return b2c[b0], b2c[b1 - 1] + 1


# ------------------------------------------------------------------ BPE
@kernel
def bpe_word(cps, s, e, V, B, out_ids, out_s, out_e, pos, sc):
    """HF ``BPE::tokenize`` of one word. V = (slot_ids, slot_hashes, piece_bytes, piece_offsets);
    B = (ckeys, cvals, byte_tok, params, prefix_bytes, suffix_bytes, mkeys, mvals)."""
    ckeys, cvals, byte_tok, params, prefix_b, suffix_b, mkeys, mvals = B
    buf, b2c, cstart, ids, lens, heap, prev, nxt, pair_at, tmp = sc
    n = e - s
    if n == 0:
        return pos
    nbytes = unit_bytes(cps, s, e, buf, b2c, cstart)
    if params[P_IGNORE_MERGES]:
        whole = bytesmap_get(V[0], V[1], V[2], V[3], buf, 0, nbytes)
        if whole >= 0:
            out_ids[pos] = whole
            out_s[pos] = s
            out_e[pos] = e
            return pos + 1
    unk_id = params[P_UNK]
    m = 0
    pend_id = -1
    pend_len = 0
    for i in range(s, e):
        key = np.int64(cps[i])
        first = i == s
        last = i == e - 1
        if params[P_HAS_PREFIX] and not first:
            key |= np.int64(1) << 32
        if params[P_HAS_SUFFIX] and last:
            key |= np.int64(1) << 33
        tid = intmap_get(ckeys, cvals, key, np.int64(-1))
        blen = cstart[i - s + 1] - cstart[i - s]
        if tid >= 0:
            if pend_id >= 0:
                ids[m] = pend_id
                lens[m] = pend_len
                m += 1
                pend_id = -1
            ids[m] = tid
            lens[m] = blen
            m += 1
            continue
        if params[P_BYTE_FALLBACK]:
            # the bytes of prefix + char + suffix, as HF formats the looked-up string
            nt = 0
            ok = True
            if params[P_HAS_PREFIX] and not first:
                for k in range(prefix_b.shape[0]):
                    t = byte_tok[prefix_b[k]]
                    if t < 0:
                        ok = False
                    tmp[nt] = t
                    nt += 1
            for k in range(cstart[i - s], cstart[i - s + 1]):
                t = byte_tok[buf[k]]
                if t < 0:
                    ok = False
                tmp[nt] = t
                nt += 1
            if params[P_HAS_SUFFIX] and last:
                for k in range(suffix_b.shape[0]):
                    t = byte_tok[suffix_b[k]]
                    if t < 0:
                        ok = False
                    tmp[nt] = t
                    nt += 1
            if ok:
                # HF adds these without flushing a pending unk (it comes after them)
                for k in range(nt):
                    ids[m] = tmp[k]
                    lens[m] = 1
                    m += 1
                continue
        if unk_id >= 0:
            if pend_id >= 0 and params[P_FUSE]:
                pend_len += blen
            else:
                if pend_id >= 0:
                    ids[m] = pend_id
                    lens[m] = pend_len
                    m += 1
                pend_id = unk_id
                pend_len = blen
    if pend_id >= 0:
        ids[m] = pend_id
        lens[m] = pend_len
        m += 1
    if m == 0:
        return pos
    # byte start of every symbol (cumulative, as Word::add does)
    # merge
    if m >= 2:
        bpe_merge(ids, m, mkeys, mvals, heap, prev, nxt, pair_at, 0.0)
        i = 0
        k = 0
        b = 0
        while i < m:
            j = nxt[i]
            bl = 0
            for q in range(i, j):
                bl += lens[q]
            cs, ce = _span(b2c, b, b + bl, nbytes)
            out_ids[pos] = ids[k]
            out_s[pos] = cs
            out_e[pos] = ce
            pos += 1
            k += 1
            b += bl
            i = j
    else:
        cs, ce = _span(b2c, 0, lens[0], nbytes)
        out_ids[pos] = ids[0]
        out_s[pos] = cs
        out_e[pos] = ce
        pos += 1
    return pos


@kernel
def _bpe_scratch(cap_chars, per_char):
    nb = 4 * cap_chars + 4
    nsym = per_char * cap_chars + 4
    heap, prev, nxt, pair_at = new_scratch(nsym)
    return (np.empty(nb, np.uint8), np.empty(nb + 1, np.int64), np.empty(cap_chars + 1, np.int64),
            np.empty(nsym, np.int32), np.empty(nsym, np.int64), heap, prev, nxt, pair_at,
            np.empty(64 + nb, np.int32))


@kernel
def _max_unit(U, lo, hi):
    m = 1
    for u in range(lo, hi):
        if U[u, TOK] < 0:
            m = max(m, U[u, END] - U[u, START])
    return m


@kernel
def bpe_range(U, lo, hi, cps, V, B, slot, per_char, out_ids, out_s, out_e, counts):
    """Encode the text units ``U[lo:hi]`` (one thread's chunk); unit u's tokens go to ``slot[u]``."""
    sc = _bpe_scratch(_max_unit(U, lo, hi), per_char)
    for u in range(lo, hi):
        if U[u, TOK] >= 0:
            continue
        p = slot[u]
        counts[u] = bpe_word(cps, U[u, START], U[u, END], V, B, out_ids, out_s, out_e, p, sc) - p


# ------------------------------------------------------------------ WordLevel
@kernel
def wordlevel_range(U, lo, hi, cps, V, unk_id, slot, out_ids, out_s, out_e, counts):
    cap = _max_unit(U, lo, hi)
    buf = np.empty(4 * cap + 4, np.uint8)
    b2c = np.empty(4 * cap + 5, np.int64)
    cstart = np.empty(cap + 1, np.int64)
    for u in range(lo, hi):
        if U[u, TOK] >= 0:
            continue
        s = U[u, START]
        e = U[u, END]
        if e == s:
            continue
        nb = unit_bytes(cps, s, e, buf, b2c, cstart)
        tid = bytesmap_get(V[0], V[1], V[2], V[3], buf, 0, nb)
        if tid < 0:
            tid = unk_id
        if tid < 0:
            counts[u] = -1  # error: no unk token
            continue
        p = slot[u]
        out_ids[p] = tid
        out_s[p] = s
        out_e[p] = e
        counts[u] = 1


# ------------------------------------------------------------------ Unigram (HF rules: f64, fuse_unk)
@leaf_kernel
def unigram_best_path(size, G, sc):
    """HF ``Unigram::encode_optimized`` on the UTF-8 word ``sc[0][:size]``: the Viterbi in f64
    (a later candidate wins only if strictly better), then the backtrack with runs of unknown
    characters fused. Writes the pieces' byte spans last to first at ``res_s`` / ``res_e``
    (``sc[6]``, ``sc[7]``) and their ids at ``pids`` (``sc[8]``; -1 for a fused run of unknown
    characters, whose text HF looks up: it may be a piece), and returns their count.
    G = (bc, value, scores f64, params int64[unk_id, fuse_unk, byte_fallback], unk_score f64[1], byte_tok)."""
    bc, value, scores, params, unk_score_a, byte_tok = G
    buf, b2c, cstart, best, starts, node_id, res_s, res_e, pids, plens = sc
    unk_id = params[0]
    unk_score = unk_score_a[0]
    for b in range(size + 1):
        starts[b] = -1
        best[b] = 0.0
        node_id[b] = -1
    sa = 0
    while sa < size:
        mblen = one_char_len(buf[sa], size - sa)
        here = best[sa]
        cnt = common_prefix_search(bc, value, buf, sa, size, pids, plens)
        has_single = False
        for t in range(cnt):
            kp = sa + plens[t]
            cand = scores[pids[t]] + here
            if starts[kp] < 0 or cand > best[kp]:
                best[kp] = cand
                starts[kp] = sa
                node_id[kp] = pids[t]
            if plens[t] == mblen:
                has_single = True
        if not has_single:
            kp = sa + mblen
            cand = unk_score + here
            if starts[kp] < 0 or cand > best[kp]:
                best[kp] = cand
                starts[kp] = sa
                node_id[kp] = unk_id
        sa += mblen
    return unigram_backtrack(size, unk_id, params[1] != 0, sc)


@leaf_kernel
def unigram_backtrack(size, unk_id, fuse, sc):
    """The pieces of the best path of ``unigram_best_path``'s lattice, as it returns them."""
    starts, node_id, res_s, res_e, pids = sc[4], sc[5], sc[6], sc[7], sc[8]
    r = 0
    ends_at = size
    tok_end = -1
    while ends_at > 0:
        st = starts[ends_at]
        nid = node_id[ends_at]
        if fuse and nid == unk_id:
            if tok_end < 0:
                tok_end = ends_at
        else:
            if tok_end >= 0:
                res_s[r] = ends_at
                res_e[r] = tok_end
                pids[r] = -1
                r += 1
                tok_end = -1
            res_s[r] = st
            res_e[r] = ends_at
            pids[r] = nid
            r += 1
        ends_at = st
    if tok_end >= 0:
        res_s[r] = 0
        res_e[r] = tok_end
        pids[r] = -1
        r += 1
    return r


@kernel
def unigram_word(cps, s, e, V, G, out_ids, out_s, out_e, pos, sc):
    """HF ``Unigram::encode_optimized`` + ``tokenize`` on one word (``unigram_best_path``)."""
    params, byte_tok = G[3], G[5]
    buf, b2c, cstart, best, starts, node_id, res_s, res_e, pids, plens = sc
    n = e - s
    if n == 0:
        return pos
    size = unit_bytes(cps, s, e, buf, b2c, cstart)
    unk_id = params[0]
    r = unigram_best_path(size, G, sc)
    # emit in order, looking each string up (an unk string may be a piece)
    for q in range(r - 1, -1, -1):
        b0 = res_s[q]
        b1 = res_e[q]
        tid = bytesmap_get(V[0], V[1], V[2], V[3], buf, b0, b1)
        cs, ce = _span(b2c, b0, b1, size)
        if tid < 0 and params[2]:
            ok = True
            for k in range(b0, b1):
                if byte_tok[buf[k]] < 0:
                    ok = False
            if ok:
                for k in range(b0, b1):
                    out_ids[pos] = byte_tok[buf[k]]
                    out_s[pos] = cs
                    out_e[pos] = ce
                    pos += 1
                continue
        if tid < 0:
            tid = unk_id
        out_ids[pos] = tid
        out_s[pos] = cs
        out_e[pos] = ce
        pos += 1
    return pos


@kernel
def _unigram_scratch(cap_chars):
    nb = 4 * cap_chars + 4
    return (np.empty(nb, np.uint8), np.empty(nb + 1, np.int64), np.empty(cap_chars + 1, np.int64),
            np.empty(nb + 1, np.float64), np.empty(nb + 1, np.int64), np.empty(nb + 1, np.int64),
            np.empty(nb + 1, np.int64), np.empty(nb + 1, np.int64),
            np.empty(nb + 1, np.int32), np.empty(nb + 1, np.int32))


@kernel
def unigram_range(U, lo, hi, cps, V, G, slot, out_ids, out_s, out_e, counts):
    sc = _unigram_scratch(_max_unit(U, lo, hi))
    for u in range(lo, hi):
        if U[u, TOK] >= 0:
            continue
        p = slot[u]
        counts[u] = unigram_word(cps, U[u, START], U[u, END], V, G, out_ids, out_s, out_e, p, sc) - p
