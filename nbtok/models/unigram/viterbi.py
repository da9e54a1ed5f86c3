"""SentencePiece Unigram: Viterbi over the normalized UTF-8 bytes, exactly as ``EncodeOptimized``.

Per end position e the lattice keeps (best score float32, start, piece). For each character
start s (in order) the vocabulary trie is walked from s; every piece ending at e proposes
``score + best[s]`` in float32 arithmetic (the source reads as a double expression, but the
shipped sentencepiece 0.2.x binaries round in float32: checked against it on near-ties such as
runs of dots), accepted only if strictly greater (so on a tie the earliest start wins). When the running score leaves [-1e5, 1e5] all live
scores from the current start on are rebased to it (sentencepiece 0.2.1+; this changes
near-ties on long inputs). USER_DEFINED pieces score ``float(0.1 * (len_bytes - 1))``,
UNUSED pieces are skipped, and if no one-character piece starts at s an unknown node with
``min_score - 10`` (float32 arithmetic) covers that character.

The Viterbi's best path is a sequence of symbols (``models.symbols``: a piece, or an unknown
character) that ``finish_ids`` turns into ids.

A batch reads the lattice through the trie's Aho-Corasick automaton instead
(``viterbi_automaton``, ``models.unigram.automaton``): each byte once, each position's candidates
in the order the walk proposes them, so the lattice holds the same values; it hands documents
where sentencepiece rebases, and CJK text, to the walk. A batch worker also caches the best path
of each word (U+2581 to the next U+2581) and replays it where that provably gives the same
lattice values ("word cache" below), while the cache pays for itself (``words_wanted``).

Also here: forward-filtering backward-sampling (``nbest_size < 0`` sampling) over the same
lattice, for ``sample_encode``; n-best (``NBestEncode``) is ``models.unigram.nbest``.
"""
import numpy as np
from numba import prange

from ..._jit import batch_kernel, inline_kernel, kernel, leaf_kernel
from .automaton import MAX_LEN, automaton_step
from ...normalizers.sentencepiece import SPACE0, SPACE1, SPACE2, normalize, normalize_into, one_char_len
from ...kernels.trie import BASE_SHIFT, LABEL_MASK, LEAF, unit_child
from ..symbols import char_symbol, count_ids, finish_ids, place_ids
from .words import _segment, _word_cache, mostly_han, words_wanted

SCORE_RESET = 100000.0  # kScoreResetThreshold of sentencepiece 0.2.x EncodeOptimized


# ------------------------------------------------------------------ Viterbi
@kernel
def pack_lattice_trie(value, lscore):
    """``idsc`` int32[2 * size] = (piece id or -1, float32 score bits) per trie node.

    The walk reads only the trie's labelled units (4 bytes a node, so more of the trie stays
    in cache); the lattice update reads ``idsc`` at a node where a piece ends, a load the walk
    does not wait for. ``lscore`` float32[V] is the lattice score of each piece; a node that
    ends no piece scores -inf, so it never improves the lattice.
    """
    size = value.shape[0]
    idsc = np.empty(2 * size, np.int32)
    bits = lscore.view(np.int32)
    neg_inf = np.array([-np.inf], np.float32).view(np.int32)[0]
    for s in range(size):
        v = value[s]
        idsc[2 * s] = v
        idsc[2 * s + 1] = bits[v] if v >= 0 else neg_inf
    return idsc


@leaf_kernel
def viterbi(norm, n, units, idsc, unk_score, V, best, start_at, node_id, syms):
    """Best segmentation of ``norm[:n]``; writes symbols into ``syms`` and returns their count.

    ``units`` the lattice trie's labelled units (NORMAL and USER_DEFINED pieces only: UNUSED
    pieces are skipped by leaving them out), ``idsc`` from ``pack_lattice_trie``.
    ``best`` float32[n+1], ``start_at`` / ``node_id`` int32[n+1], ``syms`` int64[n] scratch.
    """
    return viterbi_words(norm, n, units, idsc, idsc.view(np.float32), space_node(units), unk_score, V, best,
                         start_at, node_id, syms, (start_at[:0], syms[:0], best[:0]), -1.0)


@leaf_kernel
def space_node(units):
    """The lattice trie's node after the three bytes of U+2581, or -1."""
    sp = 0
    for c in (SPACE0, SPACE1, SPACE2):
        sp = unit_child(units, sp, c) if sp >= 0 else sp
    return sp


@leaf_kernel
def viterbi_words(norm, n, units, idsc, sc, sp, unk_score, V, best, start_at, node_id, syms, words, max_abs):
    """``viterbi`` with a word cache (``_word_cache``; empty: none). ``max_abs`` bounds the
    magnitude of every lattice score (``word_score_bound``; < 0: no cache). ``sc`` is ``idsc``
    as float32 and ``sp`` is ``space_node(units)``: a batch makes them once, not per document
    (a view costs a call)."""
    # best = -inf marks "no candidate yet", which makes the first (finite) candidate win and
    # then only a strictly greater one, exactly as sentencepiece's starts_at == -1 test (scores
    # are finite: a model with a NaN / inf score is rejected at load, as sentencepiece does)
    neg_inf = np.float32(-np.inf)
    for i in range(n + 1):
        start_at[i] = -1
        best[i] = neg_inf
    best[0] = np.float32(0.0)
    reset = np.float32(SCORE_RESET)
    frontier = 0
    s = 0
    sp_ok = sp >= 0
    sp_node = np.uint64(max(sp, 0))
    sp_unit = units[sp_node]
    sp_piece = sp_ok and (np.uint64(sp_unit) & np.uint64(LEAF)) != 0
    root_unit = units[0]
    # the walk indexes with unsigned integers: Numba then emits no negative-index wraparound
    # (a select on every load of the dependent chain)
    nu = np.uint64(n)
    one = np.uint64(1)
    two = np.uint64(2)
    shift = np.uint64(BASE_SHIFT)
    label = np.uint64(LABEL_MASK)
    leaf = np.uint64(LEAF)
    # words: the segment [s, seg_end) from one U+2581 to the next goes through the cache
    seg_end = 0 if (words[0].shape[0] > 0 and max_abs >= 0) else n + 1
    while s < n:
        if s >= seg_end:
            replayed, seg_end = _segment(norm, s, n, units, idsc, sc, unk_score, best, start_at, node_id, words,
                                         max_abs)
            if replayed:
                s = seg_end
                frontier = max(frontier, s)
                continue
        till = best[s]
        if till < -reset or till > reset:
            # sentencepiece >= 0.2.1 rebases the scores so float32 keeps its precision
            for i in range(s, frontier + 1):
                if i == s or start_at[i] != -1:
                    best[i] -= till
            till = np.float32(0.0)
        mblen = one_char_len(norm[s], n - s)
        single = False  # some piece is exactly the character at s
        depth1 = np.uint64(s + mblen)
        u = root_unit
        e = np.uint64(s)
        if mblen == 3 and sp_ok and norm[s] == SPACE0 and norm[s + 1] == SPACE1 and norm[s + 2] == SPACE2:
            # a word start: the three steps of U+2581 in one (tested only after the lead byte
            # said three bytes, so other starts pay nothing)
            u = sp_unit
            e = depth1
            cand = sc[two * sp_node + one] + till
            if cand > best[e]:
                best[e] = cand
                start_at[e] = s
                node_id[e] = idsc[two * sp_node]
            single = sp_piece
        while e < nu:
            c = np.uint64(norm[e])
            node = (np.uint64(u) >> shift) + c
            u = units[node]
            if (np.uint64(u) & label) != c:
                break
            e += one
            if np.uint64(u) & leaf:
                cand = sc[two * node + one] + till
                if cand > best[e]:
                    best[e] = cand
                    start_at[e] = s
                    node_id[e] = idsc[two * node]
                if e == depth1:
                    single = True
        if np.int64(e) > frontier:
            frontier = np.int64(e)
        if not single:
            e1 = s + mblen
            if e1 > frontier:
                frontier = e1
            cand32 = unk_score + till
            if cand32 > best[e1]:
                best[e1] = cand32
                start_at[e1] = s
                node_id[e1] = -1
        s += mblen
    return backtrack(norm, n, start_at, node_id, V, syms)


@leaf_kernel
def backtrack(norm, n, start_at, node_id, V, syms):
    """The best path's symbols into ``syms`` (they come out reversed, then are flipped in
    place): returns their count."""
    m = 0
    e = n
    while e > 0:
        s = start_at[np.uint64(e)]
        v = node_id[np.uint64(e)]
        if v < 0:
            syms[np.uint64(m)] = char_symbol(norm, s, e - s, V)
        else:
            syms[np.uint64(m)] = v
        m += 1
        e = s
    for i in range(m // 2):
        t = syms[np.uint64(i)]
        syms[np.uint64(i)] = syms[np.uint64(m - 1 - i)]
        syms[np.uint64(m - 1 - i)] = t
    return m


@leaf_kernel
def viterbi_automaton(norm, n, A, idsc, sc, sp, unk_score, V, best, start_at, node_id, syms, words, max_abs, units):
    """``viterbi_words`` with the lattice read through the Aho-Corasick automaton ``A`` =
    (au, outs, rec, rec as float32) of ``models.unigram.automaton``: position by position, each
    position's candidates (the pieces ending there, longest first, then the unknown character)
    taken in the order sentencepiece proposes them, so the first of the best wins as there.
    Needs valid UTF-8 pieces and text (the automaton's records assume it). Returns the number
    of symbols, or -1 (the caller then takes ``viterbi_words``) where sentencepiece would rebase
    the scores twice within ``MAX_LEN`` bytes.

    Rebasing (|score| > SCORE_RESET at a start s, every ~10k pieces: a long document): where
    sentencepiece subtracts best[s] from best[s] and from the candidates that the starts before s
    proposed to the positions after s, a position e up to ``MAX_LEN`` bytes after s here takes
    the best of its candidates from before s (its records run by increasing start), subtracts
    best[s], and goes on with the candidates from s on: the same float32 values, compared in
    the same order. (Until 2026-12-04 the whole document went back to ``viterbi_words``: the
    long-document rows of docs/benchmarks.md, issue 26, +25% to +60% on the Unigram models.)

    Where no piece holds U+2581 past its first byte (``max_abs`` >= 0, ``word_cache_ok``), no
    piece crosses a word start: the state after a U+2581 is then that of U+2581 alone (``sp``,
    ``space_node``), set without stepping (the failure steps down from a long word are the
    costliest part of the automaton's walk). ``units`` (the trie) serves the word cache's
    ``lattice_word``, which fills a word's lattice start by start."""
    au, outs, rec, recf = A
    reset = np.float32(SCORE_RESET)
    neg_inf = np.float32(-np.inf)
    best[0] = np.float32(0.0)
    x = np.uint64(0)
    u = au[0]
    words_ok = max_abs >= 0
    sp_state = np.uint64(max(sp, 0))
    sp_unit = au[sp_state]
    one = np.uint64(1)
    two = np.uint64(2)
    three = np.uint64(3)
    eight = np.uint64(8)
    low8 = np.uint64(0xFF)
    low10 = np.uint64(0x3FF)
    s = 0
    seg_end = 0 if (words[0].shape[0] > 0 and words_ok) else n + 1
    r_pos = np.uint64(0)  # the last rebasing: its start, best[start] then, the end of its window
    r_till = np.float32(0.0)
    r_end = np.uint64(0)
    while s < n:
        till = best[np.uint64(s)]
        if till < -reset or till > reset:
            if np.uint64(s) < r_end:
                return -1
            r_pos = np.uint64(s)
            r_till = till
            r_end = r_pos + np.uint64(MAX_LEN)
            till = np.float32(till - till)
            best[np.uint64(s)] = till
        if s >= seg_end:
            replayed, seg_end = _segment(norm, s, n, units, idsc, sc, unk_score, best, start_at, node_id, words,
                                         max_abs)
            if replayed:
                s = seg_end
                continue
        # unsigned indices from here: Numba then emits no negative-index wraparound
        su = np.uint64(s)
        mblen = np.uint64(one_char_len(norm[su], n - s))
        eu = su + mblen
        if mblen == three and words_ok and norm[su] == SPACE0 and norm[su + one] == SPACE1 and norm[su + two] == SPACE2:
            x = sp_state
            u = sp_unit
        else:
            for p in range(su, eu):
                x, u = automaton_step(au, x, u, np.uint64(norm[p]))
        o = np.uint64(outs[x])
        k = o & low8  # the state's records: rec[t:t_end]
        t = (o >> eight) << one
        t_end = t + (k << one)
        bv = neg_inf
        bs = su
        bid = np.int32(-1)
        if eu <= r_end:  # (a window after a rebasing: see the doc)
            bv, bs, bid = _pull_rebased(rec, recf, best, t, t_end, eu, r_pos, r_till)
            t = t_end
        while t < t_end:
            r = rec[t]
            a = eu - (np.uint64(r) & low10)
            cand = best[a] + recf[t + one]
            if cand > bv:
                bv = cand
                bs = a
                bid = r >> 10
            t += two
        if k == np.uint64(0) or (np.uint64(rec[t_end - two]) & low10) != mblen:  # no piece is the character at s
            cand = till + unk_score
            if cand > bv:
                bv = cand
                bs = su
                bid = np.int32(-1)
        best[eu] = bv
        start_at[eu] = bs
        node_id[eu] = bid
        s = np.int64(eu)
    return backtrack(norm, n, start_at, node_id, V, syms)


@leaf_kernel
def _pull_rebased(rec, recf, best, t, t_end, eu, r_pos, r_till):
    """(best, start, piece) of position ``eu`` from its records ``rec[t:t_end]`` in a window after
    a rebasing at ``r_pos`` (``viterbi_automaton``): the best candidate from before ``r_pos``
    less ``r_till``, then the candidates from ``r_pos`` on (the records run by increasing start)."""
    bv = np.float32(-np.inf)
    bs = eu
    bid = np.int32(-1)
    crossed = False
    while t < t_end:
        r = rec[t]
        a = eu - (np.uint64(r) & np.uint64(0x3FF))
        if not crossed and a >= r_pos:
            bv = np.float32(bv - r_till)
            crossed = True
        cand = best[a] + recf[t + np.uint64(1)]
        if cand > bv:
            bv = cand
            bs = a
            bid = r >> 10
        t += np.uint64(2)
    if not crossed:
        bv = np.float32(bv - r_till)
    return bv, bs, bid


# ------------------------------------------------------------------ one document / a batch
@kernel
def new_scratch(n):
    """Per-thread scratch for documents normalizing to at most n bytes (grown on demand)."""
    return (np.empty(n + 16, np.uint8), np.empty(n + 17, np.float32), np.empty(n + 17, np.int32),
            np.empty(n + 17, np.int32), np.empty(n + 16, np.int64))


@inline_kernel
def _fit(scratch, normbuf, n):
    """``scratch`` with ``normbuf`` (from ``normalize``) and lattice room for n normalized
    bytes; inlined, as it runs once a document."""
    best, start_at, node_id, syms = scratch[1], scratch[2], scratch[3], scratch[4]
    if best.shape[0] < n + 1:
        best, start_at, node_id, syms = _lattice_arrays(max(n + 1, 2 * best.shape[0]))
    return normbuf, best, start_at, node_id, syms


@inline_kernel
def _lattice_arrays(cap):
    """Uninitialized ``best``, ``start_at``, ``node_id`` and ``syms`` for ``viterbi``."""
    return np.empty(cap, np.float32), np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.int64)


@kernel
def encode_symbols(text, start, end, N, M, scratch):
    """Normalize + Viterbi for ``text[start:end]``: (scratch, m); symbols in scratch[4][:m]."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V = M
    normbuf, n = normalize(text, start, end, units, pool, root_ok, ud_bc, ud_value, flags, cls, scratch[0])
    scratch = _fit(scratch, normbuf, n)
    m = viterbi(normbuf, n, lat, idsc, unk_score, V, scratch[1], scratch[2], scratch[3], scratch[4])
    return scratch, m


@kernel
def encode_one(text, N, M, F):
    """All ids of one document (``F`` = (V, unk_id, byte_fallback, byte_ids, bos, eos))."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V2 = M
    size = text.shape[0]
    normbuf, n = normalize(text, 0, size, units, pool, root_ok, ud_bc, ud_value, flags, cls,
                           np.empty(3 * size + 8, np.uint8))
    best = np.empty(n + 1, np.float32)
    start_at = np.empty(n + 1, np.int32)
    node_id = np.empty(n + 1, np.int32)
    syms = np.empty(n + 1, np.int64)
    m = viterbi(normbuf, n, lat, idsc, unk_score, V2, best, start_at, node_id, syms)
    out = np.empty(count_ids(syms, m, V, byte_fallback, bos, eos), np.int32)
    finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, 0)
    return out


@kernel
def symbols_one(text, N, M):
    """Raw symbols (see module doc) and the normalized bytes of one document."""
    scratch = new_scratch(text.shape[0] + 16)
    scratch, m = encode_symbols(text, 0, text.shape[0], N, M, scratch)
    normbuf, n = normalize(text, 0, text.shape[0], N[0], N[1], N[2], N[3], N[4], N[5], N[6], scratch[0])
    return scratch[4][:m].copy(), normbuf[:n].copy()


@batch_kernel
def encode_batch(buf, offsets, out_offsets, N, M, F, A, bounds, n_workers, out, counts, used, words_buf, words_size,
                 max_abs):
    """Encode documents ``buf[offsets[i]:offsets[i+1]]`` in parallel: the chunks ``bounds``
    (``kernels.ragged.chunk_bounds``) dealt round-robin to ``n_workers`` workers.

    Chunk c writes its documents' ids one after another from ``out_offsets[bounds[c]]``, within
    the room ``out_offsets`` gives its documents (``kernels.ragged.gather_chunks`` then joins
    the chunks): ``counts[i]`` is the number of ids of document i, or -1 if they did not fit
    (the caller redoes those documents one at a time), ``used[c]`` the ids chunk c wrote.
    Written this way, a chunk's ids fill consecutive cache lines instead of one line or two
    per document spread over the whole room. The model tuples are unpacked once per call (a
    call per document that receives tuples of arrays costs about a microsecond).
    Each worker caches word paths (``viterbi_words``) in ``words_buf``, ``words_size`` int32 a
    worker (``word_cache_size``; 0: no cache); ``max_abs`` as there. ``A``: the lattice's
    Aho-Corasick automaton (``models.unigram.automaton``; empty arrays: none), which
    ``viterbi_automaton`` reads.
    """
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V = M
    Vf, unk_id, byte_fallback, byte_ids, bos, eos = F
    sc = idsc.view(np.float32)
    sp = space_node(lat)
    automaton = (A[0], A[1], A[2], A[2].view(np.float32))
    use_automaton = A[0].shape[0] > 0
    n_chunks = bounds.shape[0] - 1
    for w in prange(n_workers):
        normbuf, best, start_at, node_id, syms = new_scratch(1024)
        tmp = np.empty(64, np.int32)
        words = _word_cache(words_buf, w, words_size)
        no_words = (words[0][:0], words[1][:0], words[2][:0])
        for c in range(w, n_chunks, n_workers):
            o = out_offsets[bounds[c]]
            hi = out_offsets[bounds[c + 1]]
            for d in range(bounds[c], bounds[c + 1]):
                n = normalize_into(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                                   normbuf)
                if n < 0:  # (a buffer too small: the only place where the loop counts references)
                    normbuf, n = normalize(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc, ud_value,
                                           flags, cls, normbuf)
                if best.shape[0] < n + 1:  # (not ``_fit`` per document: rebuilding a tuple costs its counts)
                    best, start_at, node_id, syms = _lattice_arrays(max(n + 1, 2 * best.shape[0]))
                cache = words if words_wanted(words[0], n) else no_words
                m = -1
                if use_automaton and not mostly_han(normbuf, n):
                    m = viterbi_automaton(normbuf, n, automaton, idsc, sc, sp, unk_score, V, best, start_at, node_id,
                                          syms, cache, max_abs, lat)
                if m < 0:
                    m = viterbi_words(normbuf, n, lat, idsc, sc, sp, unk_score, V, best, start_at, node_id, syms,
                                      cache, max_abs)
                if hi - o >= 4 * m + 2:  # place_ids' first case, without a call per document
                    k = finish_ids(syms, m, Vf, unk_id, byte_fallback, byte_ids, bos, eos, out, o) - o
                else:
                    k = place_ids(syms, m, F, out, o, hi, tmp)
                counts[d] = k
                o += max(k, 0)
            used[c] = o - out_offsets[bounds[c]]


# ------------------------------------------------------------------ one short document, few arguments
# Numba unboxes every array of every tuple argument on each call (about 0.1 us per array), which
# is most of the cost of encoding one short sentence. ``pack_blob`` copies the arrays
# ``encode_one`` needs into one uint8 buffer (8-byte aligned, with an int64 header of offsets
# and scalars) and ``encode_one_blob`` rebuilds them as views: two arguments per call.

BLOB_HEADER = 32  # int64 slots


def pack_blob(N, M, F):
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V = M
    _V, unk_id, byte_fallback, byte_ids, bos, eos = F
    parts = [units, pool, root_ok, ud_bc, ud_value, flags, cls, lat, byte_ids, idsc]
    head = np.zeros(BLOB_HEADER, np.int64)
    off = 8 * BLOB_HEADER
    chunks = []
    for k, a in enumerate(parts):
        raw = np.ascontiguousarray(a).view(np.uint8).ravel()
        head[2 * k] = off
        head[2 * k + 1] = off + raw.size
        pad = (-raw.size) % 8
        chunks.append(np.concatenate([raw, np.zeros(pad, np.uint8)]))
        off += raw.size + pad
    head[20] = int(np.array([unk_score], np.float32).view(np.int32)[0])
    head[21] = int(V)
    head[22] = int(unk_id)
    head[23] = int(bool(byte_fallback))
    head[24] = int(bos)
    head[25] = int(eos)
    return np.concatenate([head.view(np.uint8)] + chunks)


@inline_kernel
def unpack_blob(blob):
    """The model arrays and scalars packed by ``pack_blob`` (views into ``blob``)."""
    H = blob[:8 * BLOB_HEADER].view(np.int64)
    units = blob[H[0]:H[1]].view(np.uint32)
    pool = blob[H[2]:H[3]]
    root_ok = blob[H[4]:H[5]].view(np.bool_)
    ud_bc = blob[H[6]:H[7]].view(np.int32)
    ud_value = blob[H[8]:H[9]].view(np.int32)
    flags = blob[H[10]:H[11]].view(np.int64)
    cls = blob[H[12]:H[13]]
    lat = blob[H[14]:H[15]].view(np.uint32)
    idsc = blob[H[18]:H[19]].view(np.int32)
    byte_ids = blob[H[16]:H[17]].view(np.int32)
    unk_score = blob[8 * 20:8 * 20 + 4].view(np.float32)[0]
    V = H[21]
    unk_id = H[22]
    byte_fallback = H[23] != 0
    bos = H[24]
    eos = H[25]
    return (units, pool, root_ok, ud_bc, ud_value, flags, cls, lat, idsc, byte_ids, unk_score, V, unk_id,
            byte_fallback, bos, eos)


@kernel
def encode_one_blob(text, blob):
    """``encode_one`` with the model arrays packed by ``pack_blob``."""
    (units, pool, root_ok, ud_bc, ud_value, flags, cls, lat, idsc, byte_ids, unk_score, V, unk_id,
     byte_fallback, bos, eos) = unpack_blob(blob)
    size = text.shape[0]
    normbuf, n = normalize(text, 0, size, units, pool, root_ok, ud_bc, ud_value, flags, cls,
                           np.empty(3 * size + 8, np.uint8))
    work = np.empty(3 * (n + 1), np.int32)  # one allocation for the three lattice arrays
    start_at = work[:n + 1]
    node_id = work[n + 1:2 * (n + 1)]
    best = work[2 * (n + 1):].view(np.float32)
    syms = np.empty(n + 1, np.int64)
    m = viterbi(normbuf, n, lat, idsc, unk_score, V, best, start_at, node_id, syms)
    out = np.empty(count_ids(syms, m, V, byte_fallback, bos, eos), np.int32)
    finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, 0)
    return out


@kernel
def encode_blob_into(text, blob, out):
    """``encode_one_blob`` writing the ids into ``out`` (allocated by the caller): returns their
    count, or -1 if ``out`` is too small. ``text`` may be ``bytes`` (no ``np.frombuffer`` per
    call). One scratch allocation for the normalized text and the lattice; no array is boxed
    on return (boxing a fresh array costs more than a short sentence's Viterbi)."""
    (units, pool, root_ok, ud_bc, ud_value, flags, cls, lat, idsc, byte_ids, unk_score, V, unk_id,
     byte_fallback, bos, eos) = unpack_blob(blob)
    size = len(text)
    cap = (3 * size + 15) & ~7
    work = np.empty(cap + 16 * (cap + 1), np.uint8)
    normbuf, n = normalize(text, 0, size, units, pool, root_ok, ud_bc, ud_value, flags, cls, work[:cap])
    if n <= cap:
        cells = work[cap:cap + 16 * (n + 1)].view(np.int32)
    else:  # the normalizer grew its buffer (an expanding charsmap rule)
        cells = np.empty(4 * (n + 1), np.int32)
    start_at = cells[:n + 1]
    node_id = cells[n + 1:2 * (n + 1)]
    syms = cells[2 * (n + 1):3 * (n + 1)]
    best = cells[3 * (n + 1):].view(np.float32)
    m = viterbi(normbuf, n, lat, idsc, unk_score, V, best, start_at, node_id, syms)
    if count_ids(syms, m, V, byte_fallback, bos, eos) > out.shape[0]:
        return -1
    return finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, 0)
