"""Character offsets for SentencePiece models (``encode_batch_offsets``), n-best sampling.

Offsets follow sentencepiece's ``SentencePieceText`` pieces (``begin`` / ``end``), which come
from ``Normalizer::Normalize``'s ``norm_to_orig``: every byte a normalizer step emits maps to
the input byte where that step started (``consumed``), the dummy prefix maps to where the text
starts after the stripped leading spaces, and the final entry (``norm_to_orig[n]``) is the end
of the input, or the first stripped trailing space. A token covering normalized bytes
``[p, q)`` spans ``[norm_to_orig[p], norm_to_orig[q])`` of the input. So a piece that ends
inside one step's output (``ﬁ`` -> ``f`` + ``i``) gets an empty span at that step's start,
and the dummy prefix alone is an empty span, or part of the span of the piece it begins.

``normalize_aligned`` is ``normalizers.sentencepiece.normalize`` that also writes ``norm_to_orig``
(the output bytes are the same; the tests check it). Then the model runs on the normalized
bytes (Unigram ``viterbi`` / SentencePiece BPE initial split + merges), and ``_emit`` turns
the symbols into ids (``finish_ids``: byte fallback, merged runs of unknowns, bos / eos) with
character spans (one forward cursor over the input: the spans never go backwards).

Deliberate differences from sentencepiece's proto:
* byte-fallback ``<0xXX>`` tokens of one character all get that character's span
  (sentencepiece gives all but the last an empty span at the character's start);
* bos / eos get ``(0, 0)`` (sentencepiece's C++ ``ApplyExtraOptions`` leaves them unset,
  i.e. 0; its Python proto API refuses add_bos / add_eos).
"""
import numpy as np
from numba import prange

from .._jit import batch_kernel, kernel
from ..models.bpe import sentencepiece as kbpe
from ..models.unigram import viterbi as kuni
from ..models.symbols import INVALID_BASE, _emit_symbol_bytes
from .sentencepiece import SPACE0, SPACE1, SPACE2, _src_byte, normalize_prefix, plain_class


# ------------------------------------------------------------------ normalizer with alignment
@kernel
def _grow(out, n2o, n, need):
    if n + need <= out.shape[0]:
        return out, n2o
    cap = max(2 * out.shape[0], n + need + 16)
    o2 = np.empty(cap, np.uint8)
    o2[:n] = out[:n]
    m2 = np.empty(cap + 1, np.int32)
    m2[:n] = n2o[:n]
    return o2, m2


@kernel
def _space(out, n2o, n, escape, at):
    if escape:
        out[n] = SPACE0
        out[n + 1] = SPACE1
        out[n + 2] = SPACE2
        n2o[n] = at
        n2o[n + 1] = at
        n2o[n + 2] = at
        return n + 3
    out[n] = 0x20
    n2o[n] = at
    return n + 1


@kernel
def normalize_aligned(text, start, end, units, pool, root_ok, ud_bc, ud_value, flags, cls, out, n2o):
    """``normalizers.sentencepiece.normalize`` plus ``norm_to_orig``: returns (out, n2o, n) with
    ``n2o[:n + 1]`` the input byte offset (relative to ``start``) of each output byte, and of
    the end. ``out`` / ``n2o`` (int32: documents under 2 GiB) are grown if needed (``n2o`` has
    one more slot than ``out``)."""
    add_dummy = flags[0] != 0
    remove_extra = flags[1] != 0
    escape = flags[2] != 0
    ws_suffix = flags[3] != 0
    n = 0
    pos = start
    if pos >= end:
        n2o[0] = 0
        return out, n2o, 0
    if remove_extra:
        while pos < end:
            kind, a, b, consumed = normalize_prefix(text, pos, end, units, pool, root_ok, ud_bc, ud_value)
            if b - a == 1 and _src_byte(kind, text, pool, a) == 0x20:
                pos += consumed
            else:
                break
    if pos >= end:
        n2o[0] = pos - start
        return out, n2o, 0
    out, n2o = _grow(out, n2o, 0, 3 * (end - pos) + 8)
    if add_dummy and not ws_suffix:
        n = _space(out, n2o, n, escape, pos - start)
    is_prev_space = remove_extra
    while pos < end:
        c = text[pos]
        k = plain_class(text, pos, end, cls)
        if k == 1:
            out[n] = c
            n2o[n] = pos - start
            n += 1
            pos += 1
            is_prev_space = False
            continue
        if k == 2:
            if not is_prev_space:
                n = _space(out, n2o, n, escape, pos - start)
            is_prev_space = remove_extra
            pos += 1
            continue
        kind, a, b, consumed = normalize_prefix(text, pos, end, units, pool, root_ok, ud_bc, ud_value)
        if is_prev_space:
            while a < b and _src_byte(kind, text, pool, a) == 0x20:
                a += 1
        if a < b:
            out, n2o = _grow(out, n2o, n, 3 * (b - a) + 3 * (end - pos - consumed) + 8)
            at = pos - start
            for q in range(a, b):
                ch = _src_byte(kind, text, pool, q)
                if escape and ch == 0x20:
                    n = _space(out, n2o, n, True, at)
                else:
                    out[n] = ch
                    n2o[n] = at
                    n += 1
            is_prev_space = _src_byte(kind, text, pool, b - 1) == 0x20
        pos += consumed
        if not remove_extra:
            is_prev_space = False
    consumed_at = end - start
    if remove_extra:
        if escape:
            while n >= 3 and out[n - 3] == SPACE0 and out[n - 2] == SPACE1 and out[n - 1] == SPACE2:
                n -= 3
                consumed_at = n2o[n]
        else:
            while n >= 1 and out[n - 1] == 0x20:
                n -= 1
                consumed_at = n2o[n]
    if add_dummy and ws_suffix:
        out, n2o = _grow(out, n2o, n, 3)
        n = _space(out, n2o, n, escape, consumed_at)
    n2o[n] = consumed_at
    return out, n2o, n


@kernel
def new_norm_scratch(n):
    return np.empty(n + 16, np.uint8), np.empty(n + 17, np.int32)


# ------------------------------------------------------------------ symbols -> ids + spans
@kernel
def _symbol_len(s, V, piece_offsets):
    """Normalized bytes covered by symbol ``s`` (a piece, or one unknown character)."""
    if s < V:
        return piece_offsets[s + 1] - piece_offsets[s]
    cp = s - V
    if cp >= INVALID_BASE or cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        return 3
    return 4


@kernel
def _emit(syms, m, n2o, piece_offsets, F, text, start, ids, st, en, lo, hi):
    """Ids (as ``finish_ids``) and character spans of ``syms[:m]`` into ``ids/st/en[lo:hi]``.

    Returns the count, or -1 if it does not fit. Symbol t covers normalized bytes [p, q), so
    input bytes [n2o[p], n2o[q]); the next symbol starts at n2o[q], so one cursor over the
    input (counting UTF-8 lead bytes) turns the byte spans into character spans."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    if hi - lo < (bos >= 0) + (eos >= 0):
        return -1
    o = lo
    if bos >= 0:
        ids[o] = bos
        st[o] = 0
        en[o] = 0
        o += 1
    hi_body = hi - (eos >= 0)
    prev_unk = False
    pos = 0
    b = 0  # input byte cursor (relative to start) and its character index
    c = 0
    for t in range(m):
        s = syms[t]
        x = n2o[pos]
        while b < x:
            c += (text[start + b] & 0xC0) != 0x80
            b += 1
        c0 = c
        pos += _symbol_len(s, V, piece_offsets)
        x = n2o[pos]
        while b < x:
            c += (text[start + b] & 0xC0) != 0x80
            b += 1
        if s < V:
            if o >= hi_body:
                return -1
            ids[o] = s
            st[o] = c0
            en[o] = c
            o += 1
            prev_unk = False
        elif byte_fallback:
            if o + 4 > hi_body:
                return -1
            o2 = _emit_symbol_bytes(s, V, byte_ids, ids, o)
            for j in range(o, o2):
                st[j] = c0
                en[j] = c
            o = o2
        else:
            if prev_unk:
                en[o - 1] = c
            else:
                if o >= hi_body:
                    return -1
                ids[o] = unk_id
                st[o] = c0
                en[o] = c
                o += 1
            prev_unk = True
    if eos >= 0:
        ids[o] = eos
        st[o] = 0
        en[o] = 0
        o += 1
    return o - lo


# ------------------------------------------------------------------ per-model symbols
@kernel
def unigram_symbols(norm, n, M, scratch):
    """As ``models.unigram.viterbi.encode_symbols`` after its normalizer step."""
    lat, idsc, unk_score, V = M
    scratch = kuni._fit(scratch, scratch[0], n)
    m = kuni.viterbi(norm, n, lat, idsc, unk_score, V, scratch[1], scratch[2], scratch[3], scratch[4])
    return scratch, scratch[4], m


@kernel
def bpe_symbols(norm, n, M, scratch, C, ud_bc, ud_value, W):
    """As ``models.bpe.sentencepiece.encode_symbols`` after its normalizer step (no dropout)."""
    bc, value, map_keys, map_values, kinds, split_left, split_right, V = M
    use_words, space_sym, suffix = W
    scratch = kbpe._fit(scratch, n)
    syms = scratch[8]
    m = kbpe.initial_symbols(norm, n, bc, value, ud_bc, ud_value, V, syms)
    if use_words:
        out = scratch[9]
        k = kbpe.merge_words(syms, m, M, scratch, C, space_sym, suffix, out)
        return scratch, out, k
    res, k = kbpe.merge_symbols(syms, m, M, scratch, 0.0)
    return scratch, res, k


@batch_kernel
def unigram_offsets_batch(buf, offsets, out_offsets, N, M, F, piece_offsets, n_chunks, ids, st, en, counts):
    """Per document ``buf[offsets[d]:offsets[d+1]]``: ids and character spans written at
    ``out_offsets[d]`` (at most ``out_offsets[d+1] - out_offsets[d]``); ``counts[d]`` = the
    number written, or -1 when the room was too small."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    n_docs = offsets.shape[0] - 1
    for ch in prange(n_chunks):
        d0 = n_docs * ch // n_chunks
        d1 = n_docs * (ch + 1) // n_chunks
        scratch = kuni.new_scratch(1024)
        norm, n2o = new_norm_scratch(1024)
        for d in range(d0, d1):
            norm, n2o, n = normalize_aligned(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc,
                                             ud_value, flags, cls, norm, n2o)
            scratch, syms, m = unigram_symbols(norm, n, M, scratch)
            counts[d] = _emit(syms, m, n2o, piece_offsets, F, buf, offsets[d], ids, st, en,
                              out_offsets[d], out_offsets[d + 1])


@batch_kernel
def bpe_offsets_batch(buf, offsets, out_offsets, N, M, F, W, piece_offsets, n_chunks, ids, st, en, counts):
    """``unigram_offsets_batch`` for SentencePiece BPE (each chunk has its own word cache)."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    n_docs = offsets.shape[0] - 1
    for ch in prange(n_chunks):
        d0 = n_docs * ch // n_chunks
        d1 = n_docs * (ch + 1) // n_chunks
        scratch = kbpe.new_scratch(1024)
        C = kbpe.new_cache(1 << 18 if W[0] else 64, 1 << 22 if W[0] else 64)
        norm, n2o = new_norm_scratch(1024)
        for d in range(d0, d1):
            norm, n2o, n = normalize_aligned(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc,
                                             ud_value, flags, cls, norm, n2o)
            scratch, syms, m = bpe_symbols(norm, n, M, scratch, C, ud_bc, ud_value, W)
            counts[d] = _emit(syms, m, n2o, piece_offsets, F, buf, offsets[d], ids, st, en,
                              out_offsets[d], out_offsets[d + 1])


@batch_kernel
def compact3(ids, st, en, out_offsets, counts, res_off, rid, rst, ren):
    """Copy each document's slot (``counts[d] >= 0``) to its place in the compact arrays."""
    for d in prange(counts.shape[0]):
        c = counts[d]
        src = out_offsets[d]
        dst = res_off[d]
        for j in range(c):
            rid[dst + j] = ids[src + j]
            rst[dst + j] = st[src + j]
            ren[dst + j] = en[src + j]


@kernel
def normalized_with_alignment(text, N):
    """(normalized bytes, norm_to_orig) of one document (for tests and debugging)."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    norm, n2o = new_norm_scratch(text.shape[0] + 16)
    norm, n2o, n = normalize_aligned(text, 0, text.shape[0], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                                     norm, n2o)
    return norm[:n].copy(), n2o[:n + 1].copy()


# ------------------------------------------------------------------ n-best sampling
@kernel
def sample_nbest_index(scores, alpha):
    """Index j drawn with probability exp(alpha * scores[j] - Z), Z = logsumexp (sentencepiece's
    ``SampleEncode`` with nbest_size > 1: ``std::discrete_distribution`` over those weights)."""
    k = scores.shape[0]
    if k <= 1:
        return 0
    mx = -np.inf
    for j in range(k):
        v = alpha * scores[j]
        if v > mx:
            mx = v
    w = np.empty(k)
    total = 0.0
    for j in range(k):
        w[j] = np.exp(alpha * scores[j] - mx)
        total += w[j]
    r = np.random.random() * total
    acc = 0.0
    for j in range(k):
        acc += w[j]
        if r < acc:
            return j
    return k - 1
