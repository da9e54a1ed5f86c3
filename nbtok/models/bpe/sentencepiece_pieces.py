"""SentencePiece BPE's hashed piece table, from which the fast path's word loop
(``models.bpe.sentencepiece_words``) takes its symbols and merges.

The trie costs more to build than the whole fast path needs: one hash table over the pieces,
keyed by a polynomial hash H(s) = sum (s_i + 1) * B^(len - 1 - i) mod 2^64, a hit confirmed by
comparing bytes (so a collision cannot match). It gives the initial symbols (``char_sym``,
``word_symbols``) and builds the merge table (``build_merges``); ``build_joins`` and
``build_bigrams`` tell the word loop where words start and which characters never merge.
"""
import numpy as np

from ..._jit import inline_kernel, kernel, leaf_kernel
from ...normalizers.sentencepiece import SPACE0, SPACE1, SPACE2, one_char_len, utf8_char_len
from ..symbols import char_symbol
from .sentencepiece import NORMAL, USER_DEFINED, UNUSED


HASH_B = 0x100000001B3


@inline_kernel
def _slot(h, mask):
    z = np.uint64(h)
    z = (z ^ (z >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    return np.int64(z >> np.uint64(20)) & mask


@inline_kernel
def poly_hash(buf, s, e):
    """(H(buf[s:e]), B^(e-s)) mod 2^64."""
    h = np.uint64(0)
    p = np.uint64(1)
    b = np.uint64(HASH_B)
    for i in range(s, e):
        h = h * b + np.uint64(buf[i]) + np.uint64(1)
        p = p * b
    return h, p


@kernel
def build_piece_table(piece_bytes, piece_offsets, kinds):
    """Hash table over the NORMAL / USER_DEFINED / UNUSED pieces (see above).

    Returns (table, char_syms, dup): char_syms int32[BMP] is the initial symbol of each
    character of the Basic Multilingual Plane (its piece, else ``V + code point``, see
    ``bmp_code``); dup = the id of a piece whose bytes repeat an earlier one (-1 if none).
    Needs V < 2^20, pieces shorter than 4096 bytes and fewer than 2^31 piece bytes
    (``table_fits``)."""
    V = piece_offsets.shape[0] - 1
    cap = 16
    while cap < 2 * V:
        cap *= 2
    mask = cap - 1
    table = np.empty(2 * cap, np.int64)
    for i in range(cap):
        table[2 * i + 1] = -1
    char_syms = np.arange(V, V + BMP).astype(np.int32)
    claimed = np.zeros(BMP, np.bool_)
    dup = -1
    for p in range(V):
        k = kinds[p]
        if k != NORMAL and k != UNUSED and k != USER_DEFINED:
            continue
        s = piece_offsets[p]
        e = piece_offsets[p + 1]
        h, _ = poly_hash(piece_bytes, s, e)
        if dup < 0 and table_find(table, piece_bytes, h, piece_bytes, s, e) >= 0:
            dup = p
        i = _slot(h, mask)
        while table[2 * i + 1] >= 0:
            i = (i + 1) & mask
        table[2 * i] = np.int64(h)
        table[2 * i + 1] = (s << 32) | ((e - s) << 20) | p
        cp = bmp_code(piece_bytes, s, e - s) if e - s == one_char_len(piece_bytes[s], e - s) else -1
        if cp >= 0 and not claimed[cp]:
            claimed[cp] = True
            char_syms[cp] = p
    return table, char_syms, dup


BMP = 0x10000


@inline_kernel
def bmp_code(text, s, mblen):
    """Code point of the character ``text[s:s+mblen]`` if it is the shortest UTF-8 encoding
    of a code point below ``BMP`` (one to three bytes), else -1. Each accepted code point has
    exactly one accepted encoding, so ``char_syms[cp]`` stands for these bytes."""
    b0 = np.int64(text[s])
    if mblen == 1:
        return b0 if b0 < 0x80 else np.int64(-1)
    if mblen == 2:
        b1 = np.int64(text[s + 1])
        cp = ((b0 & 0x1F) << 6) | (b1 & 0x3F)
        return cp if (b1 & 0xC0) == 0x80 and cp >= 0x80 else np.int64(-1)
    if mblen == 3:
        b1 = np.int64(text[s + 1])
        b2 = np.int64(text[s + 2])
        cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
        return cp if (b1 & 0xC0) == 0x80 and (b2 & 0xC0) == 0x80 and cp >= 0x800 else np.int64(-1)
    return np.int64(-1)


@inline_kernel
def table_find(table, piece_bytes, h, text, s, e):
    """Id of the piece equal to ``text[s:e]`` whose hash is ``h``, or -1."""
    mask = (table.shape[0] >> 1) - 1
    i = _slot(h, mask)
    n = e - s
    while True:
        v = table[2 * i + 1]
        if v < 0:
            return np.int64(-1)
        if table[2 * i] == np.int64(h) and ((v >> 20) & 0xFFF) == n:
            qs = v >> 32
            same = True
            for t in range(n):
                if piece_bytes[qs + t] != text[s + t]:
                    same = False
                    break
            if same:
                return v & 0xFFFFF
        i = (i + 1) & mask


@inline_kernel
def char_sym(table, char_syms, piece_bytes, V, text, s, mblen):
    """Initial symbol of the character ``text[s:s+mblen]``: its piece, else ``V + code point``."""
    cp = bmp_code(text, s, mblen)
    if cp >= 0:
        return np.int64(char_syms[cp])
    h, _ = poly_hash(text, s, s + mblen)
    v = table_find(table, piece_bytes, h, text, s, s + mblen)
    return v if v >= 0 else char_symbol(text, s, mblen, V)


@kernel
def _half(table, piece_bytes, kinds, s, e, V):
    """Symbol id of the string ``piece_bytes[s:e]`` if it can be a BPE symbol (a piece that is
    not user-defined, or one character outside the vocabulary), else -1."""
    h, _ = poly_hash(piece_bytes, s, e)
    q = table_find(table, piece_bytes, h, piece_bytes, s, e)
    if q >= 0:
        return -1 if kinds[q] == USER_DEFINED else q
    ln = utf8_char_len(piece_bytes, s, e)
    if ln == e - s and ln > 0:
        return char_symbol(piece_bytes, s, ln, V)
    return -1


@kernel
def build_merges(table, piece_bytes, piece_offsets, kinds, ranks):
    """(keys, values, split_left, split_right): the merge table (as ``build_merge_entries``),
    with the halves looked up in the hashed piece table instead of the trie."""
    V = piece_offsets.shape[0] - 1
    total = piece_offsets[V]
    keys = np.empty(total, np.int64)
    vals = np.empty(total, np.int64)
    split_left = np.full(V, -1, np.int64)
    split_right = np.full(V, -1, np.int64)
    n = 0
    for p in range(V):
        k = kinds[p]
        if k != NORMAL and k != UNUSED:
            continue
        s = piece_offsets[p]
        e = piece_offsets[p + 1]
        cut = s + one_char_len(piece_bytes[s], e - s)
        while cut < e:
            left = _half(table, piece_bytes, kinds, s, cut, V)
            if left >= 0:
                right = _half(table, piece_bytes, kinds, cut, e, V)
                if right >= 0:
                    keys[n] = (left << 32) | right
                    vals[n] = (np.int64(ranks[p]) << 32) | p
                    n += 1
                    if k == UNUSED and split_left[p] < 0:
                        split_left[p] = left
                        split_right[p] = right
            cut += one_char_len(piece_bytes[cut], e - cut)
    return keys[:n].copy(), vals[:n].copy(), split_left, split_right


@leaf_kernel
def word_symbols(table, char_syms, piece_bytes, V, text, a, b, syms):
    """Initial symbols of ``text[a:b]``, one per character; returns their count."""
    m = 0
    p = a
    while p < b:
        mblen = one_char_len(text[p], b - p)
        syms[m] = char_sym(table, char_syms, piece_bytes, V, text, p, mblen)
        m += 1
        p += mblen
    return m


@leaf_kernel
def emit_symbols(syms, m, kinds, split_left, split_right, has_unused, V, stack, out, o):
    """``syms[:m]`` into ``out`` at ``o``, merged UNUSED pieces replaced by their recorded
    halves (recursively); returns the new o."""
    for t in range(m):
        x = syms[t]
        if not has_unused or x >= V or kinds[x] != UNUSED or split_left[x] < 0:
            out[o] = x
            o += 1
            continue
        sp = 1
        stack[0] = x
        while sp > 0:
            sp -= 1
            x = stack[sp]
            if x < V and kinds[x] == UNUSED and split_left[x] >= 0:
                stack[sp] = split_right[x]
                stack[sp + 1] = split_left[x]
                sp += 2
            else:
                out[o] = x
                o += 1
    return o


def build_joins(piece_bytes, piece_offsets, kinds):
    """(ok, joins): ``joins[c]`` = 1 for each ASCII byte c that some NORMAL or UNUSED piece holds
    just before a U+2581 (tabs and newlines before indentation in code models: '\\t▁▁▁'). The
    word loop starts a word at each U+2581 that follows neither U+2581 nor such a byte: no piece
    can span that position, so the words merge independently (``word_split_ok`` is the case of
    no such byte). ok = False if a piece holds U+2581 after a byte >= 0x80 that does not end a
    U+2581 (a character that is not ASCII). NumPy, not a kernel: it runs on every load, and a
    kernel would add its compilation to the first call (issue 18)."""
    joins = np.zeros(256, np.uint8)
    pb = np.asarray(piece_bytes, np.uint8)
    if pb.size < 4:
        return True, joins
    at = np.flatnonzero((pb[1:-2] == SPACE0) & (pb[2:-1] == SPACE1) & (pb[3:] == SPACE2)) + 1
    piece = np.searchsorted(piece_offsets, at, side="right") - 1
    keep = ((kinds[piece] == NORMAL) | (kinds[piece] == UNUSED)) & (at > piece_offsets[piece])
    at, piece = at[keep], piece[keep]
    after_space = (at - 3 >= piece_offsets[piece]) & (pb[np.maximum(at - 3, 0)] == SPACE0) \
        & (pb[np.maximum(at - 2, 0)] == SPACE1) & (pb[at - 1] == SPACE2)
    prev = pb[at[~after_space] - 1]
    if np.any(prev >= 0x80):
        return False, joins
    joins[prev] = 1
    return True, joins


@inline_kernel
def _bigram_bit(bigrams, nbits, c1, c2):
    z = np.uint64(c1 * 0x110101 + c2) * np.uint64(0x9E3779B97F4A7C15)
    h = np.int64(z >> np.uint64(40)) & (nbits - 1)
    return (bigrams[h >> 6] >> np.uint64(h & 63)) & np.uint64(1)


@kernel
def build_bigrams(piece_bytes, piece_offsets, kinds):
    """Bit set (uint64[]) over hashed pairs of code points adjacent inside some NORMAL or
    UNUSED piece. A clear bit proves that no merge result contains the pair (set bits may be
    collisions, which only cost a cut)."""
    V = piece_offsets.shape[0] - 1
    total = 0
    for p in range(V):
        total += piece_offsets[p + 1] - piece_offsets[p]
    nbits = 1 << 16
    while nbits < 8 * total and nbits < (1 << 23):
        nbits *= 2
    bits = np.zeros(nbits // 64, np.uint64)
    for p in range(V):
        k = kinds[p]
        if k != NORMAL and k != UNUSED:
            continue
        s = piece_offsets[p]
        e = piece_offsets[p + 1]
        prev = np.int64(-1)
        q = s
        while q < e:
            mblen = one_char_len(piece_bytes[q], e - q)
            cp = char_symbol(piece_bytes, q, mblen, 0)
            if prev >= 0:
                z = np.uint64(prev * 0x110101 + cp) * np.uint64(0x9E3779B97F4A7C15)
                h = np.int64(z >> np.uint64(40)) & (nbits - 1)
                bits[h >> 6] |= np.uint64(1) << np.uint64(h & 63)
            prev = cp
            q += mblen
    return bits
