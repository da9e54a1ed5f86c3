"""SentencePiece's CHAR and WORD models (``char_model.cc`` / ``word_model.cc`` of 0.2.3).

After the normalizer, a CHAR model cuts the text into characters -- or into the longest
user-defined symbol that starts there (the model's ``PrefixMatcher``) -- and a WORD model into
words, each starting at the text's start or at a U+2581 (``SplitIntoWords`` with its defaults).
Each cut is one piece if a NORMAL or USER_DEFINED piece is equal to it, else unknown (UNUSED
pieces count as unknown). An unknown cut becomes the symbols of its characters
(``models.symbols``), so ``finish_ids`` gives what sentencepiece's processor does with it:
byte pieces with byte fallback, else one unknown id for a run of unknowns.

The model travels as ``D = (bc, value, kinds, ud_bc, ud_value, V, is_word)``: the trie of the
NORMAL / USER_DEFINED / UNUSED pieces, the piece kinds, the user-defined symbols' trie, the
vocabulary size and the model kind.
"""
import numpy as np
from numba import prange

from .._jit import batch_kernel, kernel, leaf_kernel
from ..formats.sentencepiece_model import UNUSED
from ..kernels.trie import exact_match, longest_prefix
from ..normalizers import sentencepiece_offsets as koff
from ..normalizers.sentencepiece import SPACE0, SPACE1, SPACE2, normalize, normalize_into, one_char_len
from .symbols import char_symbol, count_ids, finish_ids, place_ids




@leaf_kernel
def _is_space(norm, i, n):
    return i + 2 < n and norm[i] == SPACE0 and norm[i + 1] == SPACE1 and norm[i + 2] == SPACE2


@leaf_kernel
def _emit_cut(norm, a, b, D, syms, m):
    """The symbols of the cut ``norm[a:b]`` into ``syms`` from ``m``; returns the new ``m``."""
    bc, value, kinds, _, _, V, _ = D
    i = exact_match(bc, value, norm, a, b)
    if i >= 0 and kinds[i] != UNUSED:
        syms[m] = i
        return m + 1
    while a < b:
        k = one_char_len(norm[a], b - a)
        syms[m] = char_symbol(norm, a, k, V)
        m += 1
        a += k
    return m


@leaf_kernel
def segment(norm, n, D, syms):
    """The symbols of normalized text ``norm[:n]`` into ``syms`` (room for ``n``); their count."""
    ud_bc, ud_value, is_word = D[3], D[4], D[6]
    m = 0
    a = 0
    while a < n:
        b = a + one_char_len(norm[a], n - a)
        if is_word:   # up to the next U+2581
            while b < n and not _is_space(norm, b, n):
                b += one_char_len(norm[b], n - b)
        elif ud_bc.shape[0] > 0:
            _, k = longest_prefix(ud_bc, ud_value, norm, a, n)
            if k > 0:
                b = a + k
        m = _emit_cut(norm, a, b, D, syms, m)
        a = b
    return m


@kernel
def symbols_one(text, N, D):
    """Raw symbols and the normalized bytes of one document."""
    size = text.shape[0]
    normbuf, n = normalize(text, 0, size, N[0], N[1], N[2], N[3], N[4], N[5], N[6], np.empty(3 * size + 8, np.uint8))
    syms = np.empty(n + 1, np.int64)
    m = segment(normbuf, n, D, syms)
    return syms[:m].copy(), normbuf[:n].copy()


@kernel
def encode_one(text, N, D, F):
    """All ids of one document (``F`` = (V, unk_id, byte_fallback, byte_ids, bos, eos))."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    syms, _ = symbols_one(text, N, D)
    m = syms.shape[0]
    out = np.empty(count_ids(syms, m, V, byte_fallback, bos, eos), np.int32)
    finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, 0)
    return out


@batch_kernel
def encode_batch(buf, offsets, N, D, F, chunks, R):
    """Encode documents ``buf[offsets[i]:offsets[i+1]]`` in parallel, as
    ``models.unigram.viterbi.encode_batch`` lays them out: ``chunks = (bounds, n_workers)``,
    ``R = (out_offsets, out, counts, used)`` (``kernels.ragged.BatchLayout``)."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    bounds, n_workers = chunks
    out_offsets, out, counts, used = R
    n_chunks = bounds.shape[0] - 1
    for w in prange(n_workers):
        normbuf = np.empty(1024, np.uint8)
        syms = np.empty(1024, np.int64)
        tmp = np.empty(64, np.int32)
        for c in range(w, n_chunks, n_workers):
            o = out_offsets[bounds[c]]
            hi = out_offsets[bounds[c + 1]]
            for d in range(bounds[c], bounds[c + 1]):
                n = normalize_into(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                                   normbuf)
                if n < 0:
                    normbuf, n = normalize(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc, ud_value,
                                           flags, cls, normbuf)
                if syms.shape[0] < n + 1:
                    syms = np.empty(max(n + 1, 2 * syms.shape[0]), np.int64)
                m = segment(normbuf, n, D, syms)
                k = place_ids(syms, m, F, out, o, hi, tmp)
                counts[d] = k
                o += max(k, 0)
            used[c] = o - out_offsets[bounds[c]]


@batch_kernel
def offsets_batch(buf, offsets, N, D, F, piece_offsets, R):
    """``normalizers.sentencepiece_offsets.unigram_offsets_batch`` for CHAR / WORD models:
    ``R = (out_offsets, n_chunks, ids, st, en, counts)``."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    out_offsets, n_chunks, ids, st, en, counts = R
    n_docs = offsets.shape[0] - 1
    for ch in prange(n_chunks):
        norm, n2o = koff.new_norm_scratch(1024)
        syms = np.empty(1024, np.int64)
        for d in range(n_docs * ch // n_chunks, n_docs * (ch + 1) // n_chunks):
            norm, n2o, n = koff.normalize_aligned(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc,
                                                  ud_value, flags, cls, norm, n2o)
            if syms.shape[0] < n + 1:
                syms = np.empty(max(n + 1, 2 * syms.shape[0]), np.int64)
            m = segment(norm, n, D, syms)
            counts[d] = koff._emit(syms, m, n2o, piece_offsets, F, buf, offsets[d], ids, st, en,
                                   out_offsets[d], out_offsets[d + 1])
