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

Symbols handed to ``finish_ids`` use one convention shared with SentencePiece BPE:
``id < V`` is a vocabulary piece, ``id >= V`` is the unknown character with code point
``id - V`` (``V + 0x110000 + byte`` for a byte that is not valid UTF-8).
``finish_ids`` then applies byte fallback (one ``<0xXX>`` id per UTF-8 byte) or merges runs
of unknowns into one unk id, and adds bos / eos.

A batch reads the lattice through the trie's Aho-Corasick automaton instead
(``viterbi_automaton``, ``kernels.aho_corasick``): each byte once, each position's candidates
in the order the walk proposes them, so the lattice holds the same values; it hands documents
where sentencepiece rebases, and CJK text, to the walk. A batch worker also caches the best path
of each word (U+2581 to the next U+2581) and replays it where that provably gives the same
lattice values ("word cache" below), while the cache pays for itself (``words_wanted``).

Also here: forward-filtering backward-sampling (``nbest_size < 0`` sampling) over the same
lattice, for ``sample_encode``; n-best (``NBestEncode``) is ``kernels.spm_nbest``.
"""
import numpy as np
from numba import prange

from .._jit import batch_kernel, inline_kernel, kernel, leaf_kernel
from .aho_corasick import automaton_step
from .hashmap import pack_word
from .ragged import compact_ragged
from .normalize import SPACE0, SPACE1, SPACE2, normalize, normalize_into, one_char_len, utf8_char_len
from .swar import load8, lowest_bit
from .trie import BASE_SHIFT, LABEL_MASK, LEAF, unit_child

INVALID_BASE = 0x110000
SCORE_RESET = 100000.0  # kScoreResetThreshold of sentencepiece 0.2.x EncodeOptimized


# ------------------------------------------------------------------ shared symbol helpers
@kernel
def char_symbol(text, pos, mblen, V):
    """The symbol id of an unknown character ``text[pos:pos+mblen]``: V + code point."""
    b0 = np.int64(text[pos])
    if mblen == 1:
        if b0 < 0x80:
            return V + b0
        return V + INVALID_BASE + b0
    if mblen == 2:
        cp = ((b0 & 0x1F) << 6) | (np.int64(text[pos + 1]) & 0x3F)
    elif mblen == 3:
        cp = ((b0 & 0x0F) << 12) | ((np.int64(text[pos + 1]) & 0x3F) << 6) | (np.int64(text[pos + 2]) & 0x3F)
    else:
        cp = (((b0 & 0x07) << 18) | ((np.int64(text[pos + 1]) & 0x3F) << 12)
              | ((np.int64(text[pos + 2]) & 0x3F) << 6) | (np.int64(text[pos + 3]) & 0x3F))
    return V + cp


@kernel
def symbol_bytes(sym, V, buf):
    """UTF-8 bytes of an unknown-character symbol into ``buf``; returns the count."""
    cp = sym - V
    if cp >= INVALID_BASE:
        buf[0] = cp - INVALID_BASE
        return 1
    if cp < 0x80:
        buf[0] = cp
        return 1
    if cp < 0x800:
        buf[0] = 0xC0 | (cp >> 6)
        buf[1] = 0x80 | (cp & 0x3F)
        return 2
    if cp < 0x10000:
        buf[0] = 0xE0 | (cp >> 12)
        buf[1] = 0x80 | ((cp >> 6) & 0x3F)
        buf[2] = 0x80 | (cp & 0x3F)
        return 3
    buf[0] = 0xF0 | (cp >> 18)
    buf[1] = 0x80 | ((cp >> 12) & 0x3F)
    buf[2] = 0x80 | ((cp >> 6) & 0x3F)
    buf[3] = 0x80 | (cp & 0x3F)
    return 4


@kernel
def _emit_symbol_bytes(sym, V, byte_ids, out, o):
    """Byte-fallback ids of an unknown-character symbol (its UTF-8 bytes) into ``out``."""
    cp = sym - V
    if cp >= INVALID_BASE:
        out[o] = byte_ids[cp - INVALID_BASE]
        return o + 1
    if cp < 0x80:
        out[o] = byte_ids[cp]
        return o + 1
    if cp < 0x800:
        out[o] = byte_ids[0xC0 | (cp >> 6)]
        out[o + 1] = byte_ids[0x80 | (cp & 0x3F)]
        return o + 2
    if cp < 0x10000:
        out[o] = byte_ids[0xE0 | (cp >> 12)]
        out[o + 1] = byte_ids[0x80 | ((cp >> 6) & 0x3F)]
        out[o + 2] = byte_ids[0x80 | (cp & 0x3F)]
        return o + 3
    out[o] = byte_ids[0xF0 | (cp >> 18)]
    out[o + 1] = byte_ids[0x80 | ((cp >> 12) & 0x3F)]
    out[o + 2] = byte_ids[0x80 | ((cp >> 6) & 0x3F)]
    out[o + 3] = byte_ids[0x80 | (cp & 0x3F)]
    return o + 4


@kernel
def finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, o):
    """Write the final ids of ``syms[:m]`` into ``out`` from ``o``: returns the new ``o``.

    ``out`` must have room for bos + eos + 4 * m ids. ``bos`` / ``eos`` < 0: not added.
    """
    if bos >= 0:
        out[np.uint64(o)] = bos
        o += 1
    prev_unk = False
    for t in range(m):
        s = syms[np.uint64(t)]
        if s < V:
            out[np.uint64(o)] = s
            o += 1
            prev_unk = False
        elif byte_fallback:
            o = _emit_symbol_bytes(s, V, byte_ids, out, o)
        else:
            if not prev_unk:
                out[np.uint64(o)] = unk_id
                o += 1
            prev_unk = True
    if eos >= 0:
        out[np.uint64(o)] = eos
        o += 1
    return o


@kernel
def place_ids(syms, m, F, out, lo, hi, tmp):
    """``finish_ids`` into ``out[lo:hi]``; returns the count, or -1 if it does not fit."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    if hi - lo >= 4 * m + 2:
        return finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, lo) - lo
    if tmp.shape[0] < 4 * m + 2:
        tmp = np.empty(4 * m + 2, np.int32)
    o = finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, tmp, 0)
    if o > hi - lo:
        return -1
    for j in range(o):
        out[lo + j] = tmp[j]
    return o


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


# ------------------------------------------------------------------ word cache
# When no lattice piece holds U+2581 past its first byte, no lattice edge crosses a position
# where U+2581 starts: the lattice of a document falls apart into words (U+2581 up to the next
# one), and the best path into the best path of each word. Words repeat, so a batch worker keeps
# a cache of word paths and replays them: the scores along a path are added to the running score
# in float32, in the order sentencepiece adds them, so the lattice holds the same values.
#
# What the context changes is rounding: in the document a word's scores are added to a running
# score X, alone they would be added to 0. A float32 addition errs by at most 2^-24 times its
# result, so each candidate score in the word moves by at most L * 2^-24 * (|X| + 2 L max_abs)
# from context to context (L bytes: at most L additions on any path; ``max_abs`` bounds every
# score). A word is cached with the smallest margin by which a position's best candidate beats
# every other candidate, and its path is replayed only where that margin exceeds twice the bound
# (with a factor of 2 to spare) and no score rebasing (``SCORE_RESET``) can happen inside the
# word. Every other word goes through the lattice as usual.
#
# A slot is 32 bytes (two to a cache line): the word's 16 bytes as two int64 whose first three
# bytes, U+2581 in every cached word, hold L | pieces << 6 instead; the margin; a path of up to
# three pieces (sentencepiece's segmentation of 97% of the words of up to 16 bytes in our
# English lines, 93% in the multilingual mix, counting every occurrence).
WORD_MAX = 16  # bytes; a longer word takes the lattice (and is rarely seen twice)
WORD_REC = 8  # int32 a slot: key with L | pieces << 6 (2 x int64), margin (1, float32), path (3)
WORD_PATH = WORD_REC - 5  # pieces a cached path holds
META = 0xFFFFFF  # the key bits that hold L | pieces << 6 (U+2581's bytes)
SEEN_ONCE = 0  # "pieces" of a word met once: the second meeting caches its path
NO_REPLAY = 63  # "pieces" of a word whose path is not replayed (tie, or too many pieces)
WORD_COUNTS = 6  # int32 at the end of a cache: words, replays, fills, bytes left to pause, mean score, windows
WORD_TAIL = 2 * (WORD_MAX + 8) + WORD_COUNTS  # int32 after the slots: two rows for ``lattice_word``, counts
# The cache pays where words come back often and few are new: in English 81% of the words are
# replays and 5% fills; in Spanish, German or Russian paragraphs 46-62% and 5-12%, and there the
# lookups and the fills cost more than the replays save (+7% to +14% on the Viterbi). So
# ``words_wanted`` counts each worker's words by windows of WORD_WINDOW, scores a window by
# (replays - 4 fills) / words and keeps the running mean of the scores (each window half the
# weight; 100% before the first, as a cold cache scores low): when it falls below 30%, the cache
# pauses for WORD_PAUSE bytes, and the window after tests again.
WORD_WINDOW = 4096
WORD_PAUSE = 1 << 19
WORD_SCORE_LIMIT = 99000.0  # |X| + L * max_abs below this: no rebasing inside the word
ROUNDING = 2.0 ** -22  # 2 (two candidates) x 2 (to spare) x the float32 rounding bound 2^-24


def word_slots(n_bytes):
    """Word-cache slots for a batch worker encoding ``n_bytes``: one per 64 bytes, a power of two
    in [1024, 16384], or 0 (no cache) below 64 KB, where filling the cache costs more than it saves."""
    if n_bytes < 64 * 1024:
        return 0
    return 1 << min(14, (n_bytes // 64).bit_length() - 1)


def word_cache_size(slots):
    """int32 units of one worker's word cache of ``slots`` slots (0: none)."""
    return slots * WORD_REC + WORD_TAIL if slots else 0


@inline_kernel
def _word_cache(buf, w, size):
    """Worker w's cache in ``buf`` (``size`` int32 each), emptied: int32, int64 and float32 views
    made once (a view made per word would cost a call)."""
    w32 = buf[w * size:(w + 1) * size]
    w32[:] = 0
    return w32, w32.view(np.int64), w32.view(np.float32)


@kernel
def lattice_utf8_ok(piece_bytes, piece_offsets, lattice_ids, pool):
    """True if the lattice pieces and the charsmap's replacement ``pool`` are valid UTF-8: then so
    is the normalized text, and every piece that matches it starts and ends at a character
    start (the lattice's steps from character to character land on every word start, and the
    automaton's records need no character test)."""
    for k in range(lattice_ids.shape[0]):
        p = lattice_ids[k]
        if not _valid_utf8(piece_bytes, piece_offsets[p], piece_offsets[p + 1]):
            return False
    return _valid_utf8(pool, 0, pool.shape[0])


@kernel
def word_cache_ok(piece_bytes, piece_offsets, lattice_ids):
    """With ``lattice_utf8_ok``: True if words can be cached, as no lattice piece holds U+2581
    past its first byte (such a piece could cross a word start). (Valid UTF-8 pieces: none ends
    inside a U+2581.)"""
    for k in range(lattice_ids.shape[0]):
        p = lattice_ids[k]
        for i in range(piece_offsets[p] + 1, piece_offsets[p + 1] - 2):
            if piece_bytes[i] == SPACE0 and piece_bytes[i + 1] == SPACE1 and piece_bytes[i + 2] == SPACE2:
                return False
    return True


@kernel
def _valid_utf8(buf, a, b):
    """Whether ``buf[a:b]`` is valid UTF-8 as the normalizer judges it (``utf8_char_len``)."""
    while a < b:
        k = utf8_char_len(buf, a, b)
        if k == 0:
            return False
        a += k
    return True


@leaf_kernel
def next_space(norm, p, n):
    """The first position >= p where U+2581 starts, or n. Eight bytes a step look for its lead
    byte (the zero-byte test on ``x ^ 0xE2..E2``, whose lowest flag is exact)."""
    leads = np.uint64(0xE2E2E2E2E2E2E2E2)
    ones = np.uint64(0x0101010101010101)
    highs = np.uint64(0x8080808080808080)
    end8 = min(n, norm.shape[0] - 8)
    while p < end8:
        x = load8(norm, p) ^ leads
        t = (x - ones) & ~x & highs
        if t == 0:
            p += 8
            continue
        j = p + np.int64(lowest_bit(t) >> np.uint64(3))
        if j + 2 >= n:
            return n
        if norm[np.uint64(j + 1)] == SPACE1 and norm[np.uint64(j + 2)] == SPACE2:
            return j
        p = j + 1
    while p + 2 < n:
        if norm[np.uint64(p)] == SPACE0 and norm[np.uint64(p + 1)] == SPACE1 and norm[np.uint64(p + 2)] == SPACE2:
            return p
        p += 1
    return n


@inline_kernel
def cached_word(norm, a, b, units, idsc, sc, unk_score, best, start_at, node_id, words, max_abs):
    """Replay the cached path of the word ``norm[a:b]`` into the lattice, or, the second time
    the word is met, fill its lattice and cache it. False: the word must go through the lattice."""
    w32, w64, wf = words
    count = w32.shape[0] - WORD_COUNTS  # (``words_wanted``)
    w32[np.uint64(count)] += 1
    L = b - a
    X = best[np.uint64(a)]
    if L > WORD_MAX or abs(np.float64(X)) + L * max_abs >= WORD_SCORE_LIMIT:
        return False
    k0 = pack_word(norm, a, min(b, a + 8))
    k1 = pack_word(norm, a + 8, b)
    slots = (w32.shape[0] - WORD_TAIL) // WORD_REC
    # a full mix, not ``short_key_hash``: its slot bits come from a key's first bytes, and every
    # word starts with U+2581's three
    h = (np.uint64(k0) * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(k1) * np.uint64(0xC2B2AE3D27D4EB4F)) ^ np.uint64(L)
    h ^= h >> np.uint64(29)
    h *= np.uint64(0x94D049BB133111EB)
    r = np.int64((h >> np.uint64(32)) & np.uint64(slots - 1)) * WORD_REC
    q = r >> 1  # the slot's key in int64 units
    x = w64[np.uint64(q)]
    if not ((x & 63) == L and ((x ^ k0) & ~META) == 0 and w64[np.uint64(q + 1)] == k1):
        w64[np.uint64(q)] = (k0 & ~META) | L | (SEEN_ONCE << 6)
        w64[np.uint64(q + 1)] = k1
        return False
    pieces = (x >> 6) & 63
    if pieces == SEEN_ONCE:
        lattice_word(norm, a, b, units, idsc, sc, unk_score, best, start_at, node_id, words, r, max_abs)
        w32[np.uint64(count + 2)] += 1
        return True
    if pieces == NO_REPLAY or np.float64(wf[np.uint64(r + 4)]) <= L * ROUNDING * (abs(np.float64(X)) + 2 * L * max_abs):
        return False
    e = a
    for t in range(pieces):
        v = w32[np.uint64(r + 5 + t)]
        node = v >> 6
        s = e
        e += v & 63
        X = X + (sc[np.uint64(2 * node + 1)] if node >= 0 else unk_score)
        best[np.uint64(e)] = X
        start_at[np.uint64(e)] = s
        node_id[np.uint64(e)] = idsc[np.uint64(2 * node)] if node >= 0 else -1
    w32[np.uint64(count + 1)] += 1
    return True


@inline_kernel
def words_wanted(w32, n):
    """Whether a worker with the word cache ``w32`` caches words in its next document, of n
    bytes (see WORD_WINDOW)."""
    if w32.shape[0] == 0:
        return False
    count = w32.shape[0] - WORD_COUNTS
    if w32[count + 3] > 0:
        w32[count + 3] = max(0, w32[count + 3] - n)
        return False
    if w32[count] >= WORD_WINDOW:
        words, replays, fills = w32[count], w32[count + 1], w32[count + 2]
        w32[count] = 0
        w32[count + 1] = 0
        w32[count + 2] = 0
        mean = w32[count + 4] if w32[count + 5] > 0 else 1000  # (per mille)
        mean = (mean + 1000 * (replays - 4 * fills) // words) // 2
        w32[count + 4] = mean
        w32[count + 5] = 1
        if mean < 300:
            w32[count + 3] = WORD_PAUSE
            return False
    return True


@leaf_kernel
def mostly_han(norm, n):
    """Whether most characters in the first 48 bytes of ``norm[:n]`` are CJK ideographs
    (U+4000-U+9FFF), the first (after U+2581) one of three bytes or more. On such text, where
    most pieces are one or two characters, the lattice walk from each character runs in
    parallel where the automaton's steps wait for each other: the walk is faster (-20% on
    classical Chinese; the automaton is 4% faster on Japanese)."""
    first = 3 if n >= 3 and norm[0] == SPACE0 and norm[1] == SPACE1 and norm[2] == SPACE2 else 0
    if first >= n or norm[first] < 0xE0:
        return False  # (most documents: one test)
    chars = 0
    han = 0
    for i in range(min(n, 48)):
        c = norm[i]
        if (c & 0xC0) != 0x80:
            chars += 1
            if c >= 0xE4 and c <= 0xE9:
                han += 1
    return 2 * han > chars


@inline_kernel
def _segment(norm, s, n, units, idsc, sc, unk_score, best, start_at, node_id, words, max_abs):
    """At the start s of a segment (from one U+2581 to the next; the first may start with none):
    (whether the word cache filled its lattice, where the segment ends)."""
    at_space = s + 3 <= n and norm[s] == SPACE0 and norm[s + 1] == SPACE1 and norm[s + 2] == SPACE2
    seg_end = next_space(norm, s + 1, n)
    return (at_space and cached_word(norm, s, seg_end, units, idsc, sc, unk_score, best, start_at, node_id, words,
                                     max_abs)), seg_end


@leaf_kernel
def lattice_word(norm, a, b, units, idsc, sc, unk_score, best, start_at, node_id, words, r, max_abs):
    """The lattice of the word ``norm[a:b]`` filled in context from ``best[a]``, as the main loop
    fills it, keeping at each position also the best of the other candidates; then caches the
    word in slot ``r``: its path (``node << 6 | length``, node -1 for an unknown character) and
    the margin it has alone at the least (the smallest margin here less the rounding bound of
    this context), or NO_REPLAY."""
    L = b - a
    w32, _, fw = words
    t0 = w32.shape[0] - WORD_TAIL
    row = WORD_MAX + 8
    for k in range(L + 1):
        fw[np.uint64(t0 + k)] = -np.inf  # the best of the other candidates
        if k > 0:
            best[np.uint64(a + k)] = -np.inf  # (``viterbi_automaton`` leaves them unset)
    shift = np.uint64(BASE_SHIFT)
    label = np.uint64(LABEL_MASK)
    leaf = np.uint64(LEAF)
    s = a
    while s < b:
        till = best[np.uint64(s)]
        mblen = one_char_len(norm[np.uint64(s)], b - s)
        single = False
        u = units[np.uint64(0)]
        e = s
        while e < b:
            c = np.uint64(norm[np.uint64(e)])
            node = (np.uint64(u) >> shift) + c
            u = units[np.uint64(node)]
            if (np.uint64(u) & label) != c:
                break
            e += 1
            if np.uint64(u) & leaf:
                _propose(best, start_at, node_id, fw, w32, t0, row, e, e - a, sc[np.uint64(2 * node + 1)] + till, s,
                         np.int32(node), idsc[np.uint64(2 * node)])
                if e == s + mblen:
                    single = True
        if not single:
            _propose(best, start_at, node_id, fw, w32, t0, row, s + mblen, s + mblen - a, unk_score + till, s, -1, -1)
        s += mblen
    margin = np.inf
    for k in range(1, L + 1):
        if best[np.uint64(a + k)] > -np.inf:
            margin = min(margin, np.float64(best[np.uint64(a + k)]) - np.float64(fw[np.uint64(t0 + k)]))
    margin -= L * ROUNDING * (abs(np.float64(best[np.uint64(a)])) + 2 * L * max_abs)
    pieces = 0
    e = b
    while e > a:
        pieces += 1
        e = start_at[np.uint64(e)]
    if pieces > WORD_PATH or not margin > 0:
        w32[np.uint64(r)] = (w32[np.uint64(r)] & ~META) | L | (NO_REPLAY << 6)
        return
    w32[np.uint64(r)] = (w32[np.uint64(r)] & ~META) | L | (pieces << 6)
    fw[np.uint64(r + 4)] = np.float32(margin)
    e = b
    for t in range(pieces - 1, -1, -1):
        st = start_at[np.uint64(e)]
        w32[np.uint64(r + 5 + t)] = (w32[np.uint64(t0 + row + e - a)] << 6) | (e - st)
        e = st


@inline_kernel
def _propose(best, start_at, node_id, fw, w32, t0, row, e, k, cand, s, node, piece):
    """``lattice_word``'s update of position e (k in the word) with a candidate from s."""
    if cand > best[np.uint64(e)]:
        fw[np.uint64(t0 + k)] = best[np.uint64(e)]
        best[np.uint64(e)] = cand
        start_at[np.uint64(e)] = s
        node_id[np.uint64(e)] = piece
        w32[np.uint64(t0 + row + k)] = node
    elif cand > fw[np.uint64(t0 + k)]:
        fw[np.uint64(t0 + k)] = cand


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
    (au, outs, rec, rec as float32) of ``kernels.aho_corasick``: position by position, each
    position's candidates (the pieces ending there, longest first, then the unknown character)
    taken in the order sentencepiece proposes them, so the first of the best wins as there.
    Needs valid UTF-8 pieces and text (the automaton's records assume it). Returns the number
    of symbols, or -1 where sentencepiece would rebase the scores (|score| > SCORE_RESET, a
    document of many thousand bytes): the caller then takes ``viterbi_words``.

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
    while s < n:
        till = best[np.uint64(s)]
        if till < -reset or till > reset:
            return -1
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
def count_ids(syms, m, V, byte_fallback, bos, eos):
    """The number of ids ``finish_ids`` writes for ``syms[:m]``."""
    k = (1 if bos >= 0 else 0) + (1 if eos >= 0 else 0)
    prev_unk = False
    for t in range(m):
        s = syms[t]
        if s < V:
            k += 1
            prev_unk = False
        elif byte_fallback:
            cp = s - V
            k += 1 if (cp >= INVALID_BASE or cp < 0x80) else (2 if cp < 0x800 else (3 if cp < 0x10000 else 4))
        else:
            if not prev_unk:
                k += 1
            prev_unk = True
    return k


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
    Aho-Corasick automaton (``kernels.aho_corasick``; empty arrays: none), which
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


# ------------------------------------------------------------------ sampling (FFBS)
@kernel
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@kernel
def full_lattice(norm, n, lat, idsc, unk_score):
    """Every node of the lattice of ``norm[:n]``, grouped by end position through linked lists:
    ``(start, id, score, next, head)`` where the nodes ending at e are ``head[e]``,
    ``next[head[e]]``, ... (-1 ends a list), and id -1 is an unknown character (score
    ``unk_score``, added where no one-character piece starts)."""
    cap = 4 * n + 16
    ns = np.empty(cap, np.int64)
    nid = np.empty(cap, np.int64)
    nsc = np.empty(cap, np.float64)
    nnext = np.empty(cap, np.int64)
    head = np.full(n + 1, -1, np.int64)
    sc = idsc.view(np.float32)
    k_nodes = 0
    s = 0
    while s < n:
        mblen = one_char_len(norm[s], n - s)
        has_single = False
        node = 0
        for k in range(s, n):
            node = unit_child(lat, node, norm[k])
            if node < 0:
                break
            v = idsc[2 * node]
            if v >= 0:
                ns, nid, nsc, nnext = _add_node((ns, nid, nsc, nnext), head, k_nodes, s, k + 1, v,
                                                sc[2 * node + 1])
                k_nodes += 1
                has_single = has_single or k + 1 - s == mblen
        if not has_single:
            ns, nid, nsc, nnext = _add_node((ns, nid, nsc, nnext), head, k_nodes, s, s + mblen, -1, unk_score)
            k_nodes += 1
        s += mblen
    return ns, nid, nsc, nnext, head


@kernel
def _add_node(nodes, head, k, start, end, v, score):
    """Set node k (start -> end, id v) of ``full_lattice``'s lists ``nodes = (start, id, score,
    next)``, grown first when full; returns the lists."""
    ns, nid, nsc, nnext = nodes
    if k >= ns.shape[0]:
        ns, nid, nsc, nnext = _grown(ns, k), _grown(nid, k), _grown(nsc, k), _grown(nnext, k)
    ns[k] = start
    nid[k] = v
    nsc[k] = score
    nnext[k] = head[end]
    head[end] = k
    return ns, nid, nsc, nnext


@kernel
def _grown(a, used):
    b = np.empty(2 * a.shape[0], a.dtype)
    b[:used] = a[:used]
    return b


@kernel
def lattice_forward(ns, nsc, nnext, head, n, theta):
    """``alpha[e]``: log of the summed ``exp(theta * score)`` of every segmentation of the first
    e characters' positions."""
    alpha = np.full(n + 1, -np.inf)
    alpha[0] = 0.0
    for e in range(1, n + 1):
        acc = -np.inf
        j = head[e]
        while j >= 0:
            acc = _logaddexp(acc, alpha[ns[j]] + theta * nsc[j])
            j = nnext[j]
        alpha[e] = acc
    return alpha


@kernel
def lattice_entropy(norm, n, lat, idsc, unk_score, theta):
    """Entropy of the distribution p ~ exp(theta * score) over the segmentations of ``norm[:n]``
    (sentencepiece's ``CalculateEntropy``): ``H[e] = sum over nodes j ending at e of
    p_j (H[start_j] + log p_j)``, with ``p_j`` the probability that j ends the prefix, and the
    entropy ``-H[n]``."""
    ns, nid, nsc, nnext, head = full_lattice(norm, n, lat, idsc, unk_score)
    alpha = lattice_forward(ns, nsc, nnext, head, n, theta)
    h = np.zeros(n + 1)
    for e in range(1, n + 1):
        j = head[e]
        while j >= 0:
            logp = theta * nsc[j] + alpha[ns[j]] - alpha[e]
            h[e] += np.exp(logp) * (h[ns[j]] + logp)
            j = nnext[j]
    return -h[n]


@kernel
def ffbs_sample(norm, n, lat, idsc, unk_score, V, theta, syms):
    """Forward-filtering backward-sampling over the full lattice of ``norm[:n]`` (sentencepiece's
    ``SampleEncode`` with nbest_size < 0): a segmentation drawn with probability proportional to
    exp(theta * score). Writes symbols into ``syms``; returns their count."""
    ns, nid, nsc, nnext, head = full_lattice(norm, n, lat, idsc, unk_score)
    alpha = lattice_forward(ns, nsc, nnext, head, n, theta)
    # backward sampling from the end
    m = 0
    e = n
    while e > 0:
        z = alpha[e]
        r = np.random.random()
        acc = 0.0
        pick = -1
        j = head[e]
        while j >= 0:
            p = np.exp(alpha[ns[j]] + theta * nsc[j] - z)
            acc += p
            pick = j
            if r < acc:
                break
            j = nnext[j]
        s = ns[pick]
        v = nid[pick]
        syms[m] = char_symbol(norm, s, e - s, V) if v < 0 else v
        m += 1
        e = s
    for i in range(m // 2):
        t = syms[i]
        syms[i] = syms[m - 1 - i]
        syms[m - 1 - i] = t
    return m


@kernel
def sample_one(text, N, M, F, theta):
    """FFBS-sampled ids of one document."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V2 = M
    normbuf, n = normalize(text, 0, text.shape[0], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                           np.empty(text.shape[0] + 16, np.uint8))
    syms = np.empty(n + 1, np.int64)
    m = ffbs_sample(normbuf, n, lat, idsc, unk_score, V2, theta, syms)
    out = np.empty(4 * m + 2, np.int32)
    o = finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, 0)
    return out[:o].copy()


@batch_kernel
def sample_batch(buf, offsets, N, M, F, theta, seeds):
    """FFBS-sampled ids of every document ``buf[offsets[d]:offsets[d + 1]]``, document d drawn
    right after ``np.random.seed(seeds[d])``: what ``sample_one`` gives after
    ``seed_rng(seeds[d])``, whichever thread draws it. Returns ``(ids, id_offsets)``.
    Two passes: the normalized length of each document bounds its ids (4 a character with byte
    fallback, plus BOS and EOS), then each is sampled into its place and the whole packed."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V2 = M
    n_docs = offsets.shape[0] - 1
    room = np.zeros(n_docs + 1, np.int64)
    for d in prange(n_docs):
        a, b = offsets[d], offsets[d + 1]
        _, n = normalize(buf, a, b, units, pool, root_ok, ud_bc, ud_value, flags, cls, np.empty(b - a + 16, np.uint8))
        room[d + 1] = 4 * n + 2
    for d in range(n_docs):
        room[d + 1] += room[d]
    out = np.empty(room[n_docs], np.int32)
    counts = np.zeros(n_docs, np.int64)
    for d in prange(n_docs):
        a, b = offsets[d], offsets[d + 1]
        normbuf, n = normalize(buf, a, b, units, pool, root_ok, ud_bc, ud_value, flags, cls,
                               np.empty(b - a + 16, np.uint8))
        syms = np.empty(n + 1, np.int64)
        np.random.seed(seeds[d])
        m = ffbs_sample(normbuf, n, lat, idsc, unk_score, V2, theta, syms)
        counts[d] = finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, room[d]) - room[d]
    return compact_ragged(out, room, counts)


@kernel
def entropy_one(text, N, M, theta):
    """``lattice_entropy`` of one document after normalization."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V2 = M
    normbuf, n = normalize(text, 0, text.shape[0], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                           np.empty(text.shape[0] + 16, np.uint8))
    return lattice_entropy(normbuf, n, lat, idsc, unk_score, theta)


@kernel
def seed_rng(seed):
    np.random.seed(seed)


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
