"""A SentencePiece charsmap read back as its rules, and a per-text check against per-character flags.

A precompiled charsmap (``normalize.decode_charsmap``) is a darts-clone double-array trie over
the UTF-8 bytes of each rule's source, whose leaf values point into a pool of NUL-terminated
replacements. ``charsmap_rules`` walks the trie depth first and lists every rule; loaders that
must know which characters a rule can start or continue (``models.hf_fused_spm``) read it once.
``flagged_rows`` marks the texts of a packed batch that hold a flagged character or string.
"""
import numpy as np

from .._jit import kernel
from .normalize import _offset

MAX_KEY = 256  # longest rule source read back, in bytes; a trie with longer keys is refused


@kernel
def _grow(a, n):
    """``a`` with room for at least ``n`` items (doubled)."""
    if n <= a.shape[0]:
        return a
    b = np.empty(max(n, 2 * a.shape[0]), a.dtype)
    b[:a.shape[0]] = a
    return b


@kernel
def charsmap_rules(units):
    """``(key_bytes uint8[], key_offsets int64[k + 1], values int64[k], ok)`` of every rule of the
    trie ``units``: rule i's source is ``key_bytes[key_offsets[i]:key_offsets[i + 1]]`` and its
    replacement starts at ``pool[values[i]]``. ``ok`` is False when the trie is not a tree of at
    most ``units.size`` nodes with keys of at most ``MAX_KEY`` bytes (a damaged file): the walk
    stops there, so any ``units`` array is read in bounds and in ``O(256 * units.size)`` steps."""
    n_units = units.shape[0]
    key_bytes = np.empty(1024, np.uint8)
    key_offsets = np.zeros(1, np.int64)
    values = np.empty(0, np.int64)
    if n_units == 0:
        return key_bytes[:0], key_offsets, values, True
    base = np.empty(MAX_KEY + 1, np.int64)
    label = np.empty(MAX_KEY + 1, np.int64)
    path = np.empty(MAX_KEY + 1, np.uint8)
    offs = np.zeros(64, np.int64)
    vals = np.empty(64, np.int64)
    k = 0
    nb = 0
    visited = 0
    depth = 0
    base[0] = _offset(units[0])
    label[0] = 1
    while depth >= 0:
        c = label[depth]
        if c > 255:
            depth -= 1
            continue
        label[depth] = c + 1
        p = base[depth] ^ c
        if p < 0 or p >= n_units or (np.int64(units[p]) & 0x800000FF) != c:
            continue
        visited += 1
        if visited > n_units:
            return key_bytes[:nb], offs[:k + 1], vals[:k], False
        u = np.int64(units[p])
        q = p ^ _offset(u)
        if q < 0 or q >= n_units:
            return key_bytes[:nb], offs[:k + 1], vals[:k], False
        path[depth] = c
        if (u >> 8) & 1:   # a rule ends here: its leaf is the child labelled 0
            key_bytes = _grow(key_bytes, nb + depth + 1)
            key_bytes[nb:nb + depth + 1] = path[:depth + 1]
            nb += depth + 1
            offs = _grow(offs, k + 2)
            vals = _grow(vals, k + 1)
            vals[k] = np.int64(units[q]) & 0x7FFFFFFF
            k += 1
            offs[k] = nb
        if depth + 1 >= MAX_KEY:
            return key_bytes[:nb], offs[:k + 1], vals[:k], False
        depth += 1
        base[depth] = q
        label[depth] = 1
    return key_bytes[:nb], offs[:k + 1], vals[:k], True


@kernel
def _code_point(buf, i, e):
    """(code point, length) of the UTF-8 character at ``buf[i]`` (valid UTF-8 up to ``e``)."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(buf[min(i + 1, e - 1)]) & 0x3F), 2
    if b0 < 0xF0:
        return ((b0 & 0x0F) << 12) | ((np.int64(buf[min(i + 1, e - 1)]) & 0x3F) << 6) \
            | (np.int64(buf[min(i + 2, e - 1)]) & 0x3F), 3
    cp = ((b0 & 0x07) << 18) | ((np.int64(buf[min(i + 1, e - 1)]) & 0x3F) << 12) \
        | ((np.int64(buf[min(i + 2, e - 1)]) & 0x3F) << 6) | (np.int64(buf[min(i + 3, e - 1)]) & 0x3F)
    return min(cp, 0x10FFFF), 4


@kernel
def _holds_string(buf, i, e, strings, string_offsets):
    """Whether one of the strings starts at ``buf[i]`` (and ends by ``e``)."""
    for j in range(string_offsets.shape[0] - 1):
        a = string_offsets[j]
        ln = string_offsets[j + 1] - a
        if i + ln <= e:
            same = True
            for t in range(ln):
                if buf[i + t] != strings[a + t]:
                    same = False
                    break
            if same:
                return True
    return False


@kernel
def flagged_rows(buf, offsets, flags, lead_flags, strings, string_offsets):
    """``bool[n]``: whether text i (``buf[offsets[i]:offsets[i + 1]]``, valid UTF-8) holds a
    code point c with ``flags[c]``, starts with one with ``lead_flags[c]``, or holds one of the
    byte strings ``strings[string_offsets[j]:string_offsets[j + 1]]`` (each non-empty).
    ``flags`` and ``lead_flags`` are ``bool[0x110000]``, or empty for none."""
    n = offsets.shape[0] - 1
    out = np.zeros(n, np.bool_)
    first = np.zeros(256, np.bool_)
    for j in range(string_offsets.shape[0] - 1):
        first[strings[string_offsets[j]]] = True
    chars = flags.shape[0] > 0
    for d in range(n):
        s = offsets[d]
        e = offsets[d + 1]
        if s < e and lead_flags.shape[0] > 0 and lead_flags[_code_point(buf, s, e)[0]]:
            out[d] = True
            continue
        i = s
        while i < e:
            b0 = buf[i]
            if first[b0] and _holds_string(buf, i, e, strings, string_offsets):
                out[d] = True
                break
            if chars:
                cp, ln = _code_point(buf, i, e)
                if flags[cp]:
                    out[d] = True
                    break
                i += ln
            else:
                i += 1
    return out
