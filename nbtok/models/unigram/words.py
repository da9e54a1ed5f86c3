"""The SentencePiece Unigram encoder's word cache (``viterbi.viterbi_words`` / ``viterbi_automaton``).

When no lattice piece holds U+2581 past its first byte, no lattice edge crosses a position
where U+2581 starts: the lattice of a document falls apart into words (U+2581 up to the next
one), and the best path into the best path of each word. Words repeat, so a batch worker keeps
a cache of word paths and replays them: the scores along a path are added to the running score
in float32, in the order sentencepiece adds them, so the lattice holds the same values.

What the context changes is rounding: in the document a word's scores are added to a running
score X, alone they would be added to 0. A float32 addition errs by at most 2^-24 times its
result, so each candidate score in the word moves by at most L * 2^-24 * (|X| + 2 L max_abs)
from context to context (L bytes: at most L additions on any path; ``max_abs`` bounds every
score). A word is cached with the smallest margin by which a position's best candidate beats
every other candidate, and its path is replayed only where that margin exceeds twice the bound
(with a factor of 2 to spare) and no score rebasing (``SCORE_RESET``) can happen inside the
word. Every other word goes through the lattice as usual.

A slot is 32 bytes (two to a cache line): the word's 16 bytes as two int64 whose first three
bytes, U+2581 in every cached word, hold L | pieces << 6 instead; the margin; a path of up to
three pieces (sentencepiece's segmentation of 97% of the words of up to 16 bytes in our
English lines, 93% in the multilingual mix, counting every occurrence).
"""
import numpy as np

from ..._jit import inline_kernel, kernel, leaf_kernel
from ...kernels.hashmap import pack_word
from ...normalizers.sentencepiece import SPACE0, SPACE1, SPACE2, one_char_len, utf8_char_len
from ...kernels.swar import load8, lowest_bit
from ...kernels.trie import BASE_SHIFT, LABEL_MASK, LEAF

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
