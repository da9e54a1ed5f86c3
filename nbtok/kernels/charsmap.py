"""A SentencePiece charsmap read back per character, and a per-text check against per-character flags.

A precompiled charsmap (``normalize.decode_charsmap``) is a darts-clone double-array trie over
the UTF-8 bytes of each rule's source, whose leaf values point into a pool of NUL-terminated
replacements. ``charsmap_chars`` walks the trie depth first and says, per character, what its
own rule is and whether it continues a longer rule; loaders that must know that
(``models.hf_fused_spm``) read it once.
``flagged_rows`` marks the texts of a packed batch that hold a flagged character or string.
"""
import numpy as np

from .._jit import kernel
from .normalize import _offset

MAX_KEY = 64        # longest rule source read back, in bytes
MAX_VISITS = 64     # trie positions visited per unit at most (a damaged file stops there)
# ``charsmap_chars`` roles, and the flags of ``flagged_rows`` (one uint8 per code point)
FOLLOWS, STARTS = 1, 2
ANYWHERE, AT_START, BEFORE_JOINER, JOINER = 1, 2, 4, 8


@kernel
def _code_point(buf, i, e):
    """(code point, length) of the UTF-8 character at ``buf[i]``, or (-1, -1) when the bytes up
    to ``e`` are not one (a bad lead or continuation byte, a cut character, an overlong form, a
    surrogate or a value above U+10FFFF)."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xC2:
        return -1, -1
    ln = 2 if b0 < 0xE0 else 3 if b0 < 0xF0 else 4
    if b0 >= 0xF5 or i + ln > e:
        return -1, -1
    cp = b0 & (0x1F if ln == 2 else 0x0F if ln == 3 else 0x07)
    for k in range(1, ln):
        b = np.int64(buf[i + k])
        if (b & 0xC0) != 0x80:
            return -1, -1
        cp = (cp << 6) | (b & 0x3F)
    if (ln == 3 and (cp < 0x800 or 0xD800 <= cp < 0xE000)) or (ln == 4 and (cp < 0x10000 or cp > 0x10FFFF)):
        return -1, -1
    return cp, ln


@kernel
def charsmap_chars(units):
    """What the rules of the charsmap trie ``units`` say per character: ``(value int64[0x110000],
    role uint8[0x110000], ok)``. ``value[c]`` is the pool offset of the replacement of the
    one-character rule ``c`` (-1: none); ``role[c]`` has ``FOLLOWS`` when ``c`` is at a later
    position of a longer rule, ``STARTS`` when a longer rule begins with it. A string is a rule when the darts lookup accepts it
    (``normalize.darts_longest``): a node's children are tried label by label, which can also
    reach units that another node placed there, exactly as a lookup would. ``ok`` is False when
    the walk stops early: a rule source is longer than ``MAX_KEY`` bytes or not UTF-8, or the
    walk visits more than ``MAX_VISITS`` positions per unit. Any ``units`` array is read in bounds."""
    n_units = units.shape[0]
    value = np.full(0x110000, -1, np.int64)
    role = np.zeros(0x110000, np.uint8)
    if n_units == 0:
        return value, role, True
    base = np.empty(MAX_KEY + 1, np.int64)
    label = np.empty(MAX_KEY + 1, np.int64)
    path = np.empty(MAX_KEY + 1, np.uint8)
    visits = 0
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
        visits += 1
        u = np.int64(units[p])
        q = p ^ _offset(u)
        if visits > MAX_VISITS * n_units or q < 0 or q >= n_units or depth + 1 >= MAX_KEY:
            return value, role, False
        path[depth] = c
        if (u >> 8) & 1:   # a rule ends here: its leaf is the child labelled 0
            i = 0
            k = 0
            while i <= depth:
                cp, ln = _code_point(path, i, depth + 1)
                if ln < 0:
                    return value, role, False
                if k > 0:
                    role[cp] |= FOLLOWS
                i += ln
                k += 1
            first = _code_point(path, 0, depth + 1)[0]
            if k == 1:
                value[first] = np.int64(units[q]) & 0x7FFFFFFF
            else:
                role[first] |= STARTS
        depth += 1
        base[depth] = q
        label[depth] = 1
    return value, role, True


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
def flagged_rows(buf, offsets, flags, strings, string_offsets):
    """``bool[n]``: whether text i (``buf[offsets[i]:offsets[i + 1]]``, valid UTF-8) holds a
    code point c with ``flags[c] & ANYWHERE``, starts with one with ``AT_START``, holds a
    ``BEFORE_JOINER`` character followed by a ``JOINER`` one, or holds one of the byte strings
    ``strings[string_offsets[j]:string_offsets[j + 1]]`` (each non-empty). ``flags`` is
    ``uint8[0x110000]``, or empty for none."""
    n = offsets.shape[0] - 1
    out = np.zeros(n, np.bool_)
    first = np.zeros(256, np.bool_)
    for j in range(string_offsets.shape[0] - 1):
        first[strings[string_offsets[j]]] = True
    chars = flags.shape[0] > 0
    for d in range(n):
        s = offsets[d]
        e = offsets[d + 1]
        i = s
        prev = np.uint8(0)
        while i < e:
            b0 = buf[i]
            if first[b0] and _holds_string(buf, i, e, strings, string_offsets):
                out[d] = True
                break
            if chars:
                cp, ln = _code_point(buf, i, e)
                if ln < 0:   # (not reached: the batch is packed from str)
                    cp, ln = 0xFFFD, 1
                f = flags[cp]
                if (f & ANYWHERE) or (i == s and (f & AT_START)) or ((f & JOINER) and (prev & BEFORE_JOINER)):
                    out[d] = True
                    break
                prev = f
                i += ln
            else:
                i += 1
    return out
