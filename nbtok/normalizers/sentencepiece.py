"""SentencePiece normalizer: the model's precompiled charsmap plus the whitespace rules.

The charsmap blob of a ``.model`` is ``<uint32 LE trie size><darts-clone units><pool>``:
a darts-clone double array over UTF-8 bytes whose leaf values are offsets of
NUL-terminated replacement strings in the pool. It is used as is (``units`` uint32[],
``pool`` uint8[] with a NUL appended). Unit decoding follows darts.h:

    has_leaf = (u >> 8) & 1      value = u & 0x7FFFFFFF
    label    = u & 0x800000FF    offset = (u >> 10) << ((u & 0x200) >> 6)

``normalize_into`` (``normalize``: the same, growing its buffer) reproduces
``Normalizer::Normalize``: at each position a user-defined symbol
(longest match) is copied unchanged; otherwise the longest charsmap rule applies; otherwise
one valid UTF-8 character is copied, or one invalid byte becomes U+FFFD. Then
``remove_extra_whitespaces`` (leading / repeated / trailing spaces), ``escape_whitespaces``
(' ' -> U+2581) and ``add_dummy_prefix`` (prefix, or suffix with
``treat_whitespace_as_suffix``). Every unit / pool read is range checked, so a corrupt
charsmap cannot make the kernel read out of bounds.

``flags`` (int64[4]): add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces,
treat_whitespace_as_suffix. ``cls`` (``byte_classes``) lets plain ASCII, plain spaces and the
BMP characters whose rules are known ahead (``_plain_chars``) skip the rule lookup; every other
byte takes the full step. A character that starts a user-defined symbol takes the full step
(``byte_classes`` clears its flags); the others keep the fast paths of a model without them.
"""
import numpy as np

from .._jit import inline_kernel, kernel, leaf_kernel
from ..kernels.trie import longest_prefix
from ..kernels.swar import load8, lowest_bit, store8

SPACE0, SPACE1, SPACE2 = 0xE2, 0x96, 0x81  # U+2581 in UTF-8
PLAIN_OFF = 256 + 128 * 256  # start of the per-code-point "no rule starts here" table in ``cls``
ASCII_WORDS = PLAIN_OFF + 0x10000  # flag in ``cls``: printable ASCII words take the 8-byte step
REPLACED_OFF = ASCII_WORDS + 1  # per code point: the length and bytes of its own rule (``_plain_chars``)
UD_FIRST = REPLACED_OFF + 4 * 0x10000  # per byte: 1 if some user-defined symbol starts with it
UD_ASCII = UD_FIRST + 256  # the number (0 to UD_ASCII_MAX) of printable ASCII bytes that start one, then they
UD_ASCII_MAX = 8
CLS_SIZE = UD_ASCII + 1 + UD_ASCII_MAX
_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_BANGS = np.uint64(0x2121212121212121)  # '!' (0x21), the first printable byte after the space


@kernel
def _offset(u):
    u = np.int64(u)
    return (u >> 10) << ((u & 0x200) >> 6)


@leaf_kernel
def darts_longest(units, text, start, end):
    """Longest charsmap rule matching a prefix of ``text[start:end]``: (pool offset, length)."""
    n_units = units.shape[0]
    best_v = np.int64(-1)
    best_len = 0
    if n_units == 0:
        return best_v, best_len
    pos = _offset(units[0])
    for i in range(start, end):
        c = np.int64(text[i])
        pos = pos ^ c
        if pos < 0 or pos >= n_units:
            break
        u = np.int64(units[pos])
        if (u & 0x800000FF) != c:
            break
        pos = pos ^ _offset(u)
        if pos < 0 or pos >= n_units:
            break
        if (u >> 8) & 1:
            best_v = np.int64(units[pos]) & 0x7FFFFFFF
            best_len = i + 1 - start
    return best_v, best_len


@kernel
def root_filter(units):
    """``ok[c]``: whether some charsmap rule starts with byte c (fast path for plain text)."""
    ok = np.zeros(256, np.bool_)
    n_units = units.shape[0]
    if n_units == 0:
        return ok
    base = _offset(units[0])
    for c in range(256):
        pos = base ^ c
        if 0 <= pos < n_units and (np.int64(units[pos]) & 0x800000FF) == c:
            ok[c] = True
    return ok


@kernel
def max_leaf_value(units):
    """Largest value among leaf units (bit 31 set), to validate pool offsets at load."""
    m = np.int64(-1)
    for i in range(units.shape[0]):
        u = np.int64(units[i])
        if (u >> 31) & 1:
            v = u & 0x7FFFFFFF
            if v > m:
                m = v
    return m


@leaf_kernel
def utf8_char_len(text, pos, end):
    """Length of the valid UTF-8 character at ``pos`` (sentencepiece's IsValidDecodeUTF8), 0 if invalid.

    A literal U+FFFD counts as valid.
    """
    b0 = np.int64(text[pos])
    n = end - pos
    if b0 < 0x80:
        return 1
    if n >= 2 and (b0 & 0xE0) == 0xC0:
        b1 = np.int64(text[pos + 1])
        cp = ((b0 & 0x1F) << 6) | (b1 & 0x3F)
        if (b1 & 0xC0) == 0x80 and cp >= 0x80:
            return 2
    elif n >= 3 and (b0 & 0xF0) == 0xE0:
        b1 = np.int64(text[pos + 1])
        b2 = np.int64(text[pos + 2])
        cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
        if (b1 & 0xC0) == 0x80 and (b2 & 0xC0) == 0x80 and cp >= 0x800 and not (0xD800 <= cp < 0xE000):
            return 3
    elif n >= 4 and (b0 & 0xF8) == 0xF0:
        b1 = np.int64(text[pos + 1])
        b2 = np.int64(text[pos + 2])
        b3 = np.int64(text[pos + 3])
        cp = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
        if ((b1 & 0xC0) == 0x80 and (b2 & 0xC0) == 0x80 and (b3 & 0xC0) == 0x80
                and 0x10000 <= cp <= 0x10FFFF):
            return 4
    return 0


@kernel
def one_char_len(b, remaining):
    """sentencepiece's OneCharLen (from the lead byte only), clipped to what remains."""
    c = np.int64(b)
    n = 1
    if c >= 0xF0:
        n = 4
    elif c >= 0xE0:
        n = 3
    elif c >= 0xC0:
        n = 2
    return n if n < remaining else remaining


@leaf_kernel
def normalize_prefix(text, pos, end, units, pool, root_ok, ud_bc, ud_value):
    """One step of the normalizer at ``pos``: (kind, a, b, consumed).

    kind 0: the output is ``text[a:b]``; kind 1: ``pool[a:b]``; kind 2: U+FFFD.
    """
    if ud_bc.shape[0] > 0:
        _, ln = longest_prefix(ud_bc, ud_value, text, pos, end)
        if ln > 0:
            return 0, pos, pos + ln, ln
    if root_ok[text[pos]]:
        v, ln = darts_longest(units, text, pos, end)
        if ln > 0 and 0 <= v < pool.shape[0]:
            b = v
            while pool[b] != 0:
                b += 1
            return 1, v, b, ln
    ln = utf8_char_len(text, pos, end)
    if ln == 0:
        return 2, 0, 3, 1
    return 0, pos, pos + ln, ln


@leaf_kernel
def _src_byte(kind, text, pool, k):
    if kind == 0:
        return text[k]
    if kind == 1:
        return pool[k]
    return np.uint8(0xEF) if k == 0 else (np.uint8(0xBF) if k == 1 else np.uint8(0xBD))


@inline_kernel
def _emit_space(out, n, escape):
    if escape:
        out[np.uint64(n)] = SPACE0
        out[np.uint64(n + 1)] = SPACE1
        out[np.uint64(n + 2)] = SPACE2
        return n + 3
    out[np.uint64(n)] = 0x20
    return n + 1


@inline_kernel
def plain_class(text, pos, end, cls):
    """The fast-path class of the byte at ``pos`` (``byte_classes``): 1 = copied as is, 2 = a
    plain space, 0 = full step."""
    c = text[np.uint64(pos)]
    k = cls[np.uint64(c)]
    if k < 3:
        return k
    if pos + 1 < end:
        c2 = text[np.uint64(pos + 1)]
        plain = (k == 3 and c2 < 0x80) or cls[np.uint64(256 + 256 * np.int64(c) + c2)] == 1
    else:
        plain = k == 3
    if not plain:
        return 0
    return 2 if c == 0x20 else 1


@inline_kernel
def _copied_as_is(flags, text, q, end, cls):
    """Whether a BMP character with ``_plain_chars`` flags ``flags``, followed by ``text[q:end]``,
    is copied as is: no rule starts with it, or only rules that continue with a follower and
    the character at q is none."""
    if flags & 1:
        return True
    if not flags & 2:
        return False
    if q >= end:
        return True
    b0 = np.int64(text[np.uint64(q)])
    if b0 < 0x80:
        return not cls[np.uint64(PLAIN_OFF + b0)] & 4
    if b0 < 0xC2 or b0 >= 0xF0 or q + 1 >= end:
        return False
    b1 = np.int64(text[np.uint64(q + 1)])
    if (b1 & 0xC0) != 0x80:
        return False
    if b0 < 0xE0:
        return not cls[np.uint64(PLAIN_OFF + (((b0 & 0x1F) << 6) | (b1 & 0x3F)))] & 4
    if q + 2 >= end:
        return False
    b2 = np.int64(text[np.uint64(q + 2)])
    cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
    if (b2 & 0xC0) != 0x80 or cp < 0x800:
        return False
    return not cls[np.uint64(PLAIN_OFF + cp)] & 4


@leaf_kernel
def _own_rule(cls, cp, out, n):
    """Write the bytes of cp's own rule (flag 8 of ``_plain_chars``) at ``out[n]``: the new n."""
    r = REPLACED_OFF + 4 * cp
    k = np.int64(cls[np.uint64(r)])
    for j in range(k):
        out[np.uint64(n + j)] = cls[np.uint64(r + 1 + j)]
    return n + k


@inline_kernel
def _quiet(cls, cp):
    return np.uint64(cls[PLAIN_OFF + cp] & 16)


@inline_kernel
def _quiet_block(text, pos, cls):
    """Bytes that can be copied as is from ``pos``, a whole block or 0: three 2-byte characters
    (6), or two 3-byte ones (6), each quiet (``_plain_chars`` flag 16) as is the character after
    them, found from one 8-byte load (and one byte more for 3-byte characters) without a
    branch per character. The caller makes sure ``text[pos:pos + 9]`` lies in the document."""
    x = load8(text, pos)
    m6 = np.uint64(0x3F)
    if (x & np.uint64(0xC0E0C0E0C0E0C0E0)) == np.uint64(0x80C080C080C080C0):  # four 2-byte characters
        q = np.uint64(16)
        for i in range(4):
            w = x >> np.uint64(16 * i)
            q &= _quiet(cls, np.int64(((w & np.uint64(0x1F)) << np.uint64(6)) | ((w >> np.uint64(8)) & m6)))
        return 6 if q != 0 else 0
    b8 = np.uint64(text[np.uint64(pos + 8)])
    three = (x & np.uint64(0xC0F0C0C0F0C0C0F0)) == np.uint64(0x80E08080E08080E0)  # two 3-byte characters
    if three and (b8 & np.uint64(0xC0)) == np.uint64(0x80):  # and a third
        q = np.uint64(16)
        for i in range(3):
            w = (x >> np.uint64(24 * i)) | (b8 << np.uint64(16)) if i == 2 else x >> np.uint64(24 * i)
            cp = (((w & np.uint64(0x0F)) << np.uint64(12)) | (((w >> np.uint64(8)) & m6) << np.uint64(6))
                  | ((w >> np.uint64(16)) & m6))
            q &= _quiet(cls, np.int64(cp)) if cp >= np.uint64(0x800) else np.uint64(0)
        return 6 if q != 0 else 0
    return 0


@inline_kernel
def _ascii_word(text, pos, end, out, n, cls):
    """Copy the printable ASCII bytes (no space) from ``pos``, up to eight, with one 8-byte load
    and store: returns (pos, n, count). Needs ``pos + 8 <= end`` and ``n + 8 <= out.shape[0]``.

    A byte is out of the run if its high bit is set, it is below '!' or it is DEL (the three
    SWAR tests; each may also flag bytes above a flagged one, never below, so the lowest flag
    is exact), or it starts a user-defined symbol (``cls[UD_ASCII]``: a zero-byte test per such
    byte, as exact). A letter that starts compositions (class 3) is copied as is only before an
    ASCII byte, so the byte before a non-ASCII one is left to the byte step."""
    x = load8(text, pos)
    stop = (x | ((x - _BANGS) & ~x) | (x + _ONES)) & _HIGHS
    for j in range(cls[np.uint64(UD_ASCII)]):
        t = x ^ (np.uint64(cls[np.uint64(UD_ASCII + 1 + j)]) * _ONES)
        stop |= (t - _ONES) & ~t & _HIGHS
    k = np.int64(lowest_bit(stop) >> np.uint64(3)) if stop != 0 else 8
    if pos + k < end and text[np.uint64(pos + k)] >= 0x80:
        k -= 1
    if k > 0:
        store8(out, n, x)
    return pos + k, n + k, k


@inline_kernel
def plain_run(text, pos, end, cls, escape, remove_extra, is_prev_space, out, n):
    """The normalizer's fast path: from ``pos``, copy into ``out`` at ``n`` every byte that needs
    no rule lookup (plain ASCII, plain spaces, BMP characters that no rule starts with: see
    ``byte_classes``), up to the first byte that needs the full step or ``end``. ``out`` has
    room for 3 bytes per input byte. Returns (pos, n, is_prev_space).

    Inlined into ``normalize_into``, which counts no references.
    """
    words = cls[ASCII_WORDS] != 0
    while pos < end:
        c = text[np.uint64(pos)]
        if words and c > 0x20 and c < 0x7F and pos + 8 <= end and n + 8 <= out.shape[0]:
            pos, n, k8 = _ascii_word(text, pos, end, out, n, cls)
            if k8 > 0:
                is_prev_space = False
                if pos < end and text[np.uint64(pos)] == 0x20:  # the space after a word, the common case
                    n = _emit_space(out, n, escape)
                    is_prev_space = remove_extra
                    pos += 1
                continue
        k = plain_class(text, pos, end, cls)
        if k == 1:
            out[np.uint64(n)] = c
            n += 1
            pos += 1
            is_prev_space = False
            continue
        if k == 2:
            if not is_prev_space:
                n = _emit_space(out, n, escape)
            is_prev_space = remove_extra
            pos += 1
            continue
        if not (c >= 0xC0 and c < 0xF0 and pos + 1 < end):
            break
        if pos + 9 <= end and n + 8 <= out.shape[0]:
            k6 = _quiet_block(text, pos, cls)
            if k6 > 0:
                store8(out, n, load8(text, pos))
                pos += k6
                n += k6
                is_prev_space = False
                continue
        # a BMP character that no rule starts with (``_plain_chars``) is copied as is, one whose
        # only rule is itself is replaced
        c1 = np.int64(text[np.uint64(pos + 1)])
        c2 = np.int64(0)
        if c < 0xE0:
            ln = 2
            cp = ((np.int64(c) & 0x1F) << 6) | (c1 & 0x3F)
            valid = (c1 & 0xC0) == 0x80 and c >= 0xC2
        else:
            if pos + 2 >= end:
                break
            ln = 3
            c2 = np.int64(text[np.uint64(pos + 2)])
            cp = ((np.int64(c) & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F)
            valid = (c1 & 0xC0) == 0x80 and (c2 & 0xC0) == 0x80 and cp >= 0x800
        flags = cls[np.uint64(PLAIN_OFF + cp)]
        if valid and _copied_as_is(flags, text, pos + ln, end, cls):
            out[np.uint64(n)] = c
            out[np.uint64(n + 1)] = c1
            if ln == 3:
                out[np.uint64(n + 2)] = c2
            n += ln
        elif valid and flags & 8:
            n = _own_rule(cls, cp, out, n)
        else:
            break
        pos += ln
        is_prev_space = False
    return pos, n, is_prev_space


@leaf_kernel
def normalize_into(text, start, end, units, pool, root_ok, ud_bc, ud_value, flags, cls, out):
    """Normalize ``text[start:end]`` into ``out``: the length, or -k where ``out`` holds fewer
    than the k bytes it needs (the caller gives a larger one and calls again). Without reference
    counting, a call costs a batch nothing per document but the call itself."""
    add_dummy = flags[0] != 0
    remove_extra = flags[1] != 0
    escape = flags[2] != 0
    ws_suffix = flags[3] != 0
    n = 0
    pos = start
    if pos >= end:
        return 0
    if remove_extra:
        while pos < end:
            if plain_class(text, pos, end, cls) == 1:
                break  # plain ASCII other than a space: no leading space left to drop
            kind, a, b, consumed = normalize_prefix(text, pos, end, units, pool, root_ok, ud_bc, ud_value)
            if b - a == 1 and _src_byte(kind, text, pool, a) == 0x20:
                pos += consumed
            else:
                break
    if pos >= end:
        return 0
    # room for the rest of the input at 3 output bytes per input byte (+ dummy prefix/suffix);
    # only the general step can produce more, and it asks for that room
    if 3 * (end - pos) + 8 > out.shape[0]:
        return -(3 * (end - pos) + 8)
    if add_dummy and not ws_suffix:
        n = _emit_space(out, n, escape)
    is_prev_space = remove_extra
    while pos < end:
        pos, n, is_prev_space = plain_run(text, pos, end, cls, escape, remove_extra, is_prev_space, out, n)
        if pos >= end:
            break
        c = text[pos]
        if c >= 0x80 and not root_ok[c] and cls[np.uint64(UD_FIRST + c)] == 0:
            # no rule and no user-defined symbol starts here: one valid character is copied
            # (the output bytes never exceed the input bytes, so the room invariant holds)
            ln = utf8_char_len(text, pos, end)
            if ln > 0:
                for q in range(ln):
                    out[n + q] = text[pos + q]
                n += ln
                pos += ln
                is_prev_space = False
                continue
        kind, a, b, consumed = normalize_prefix(text, pos, end, units, pool, root_ok, ud_bc, ud_value)
        if is_prev_space:
            while a < b and _src_byte(kind, text, pool, a) == 0x20:
                a += 1
        if a < b:
            need = n + 3 * (b - a) + 3 * (end - pos - consumed) + 8
            if need > out.shape[0]:
                return -need
            for q in range(a, b):
                ch = _src_byte(kind, text, pool, q)
                if escape and ch == 0x20:
                    n = _emit_space(out, n, True)
                else:
                    out[n] = ch
                    n += 1
            is_prev_space = _src_byte(kind, text, pool, b - 1) == 0x20
        pos += consumed
        if not remove_extra:
            is_prev_space = False
    if remove_extra:
        if escape:
            while n >= 3 and out[n - 3] == SPACE0 and out[n - 2] == SPACE1 and out[n - 1] == SPACE2:
                n -= 3
        else:
            while n >= 1 and out[n - 1] == 0x20:
                n -= 1
    if add_dummy and ws_suffix:
        if n + 3 > out.shape[0]:
            return -(n + 3)
        n = _emit_space(out, n, escape)
    return n


@kernel
def normalize(text, start, end, units, pool, root_ok, ud_bc, ud_value, flags, cls, out):
    """Normalize ``text[start:end]`` into ``out`` (replaced by a larger one if needed): returns
    (out, length)."""
    n = normalize_into(text, start, end, units, pool, root_ok, ud_bc, ud_value, flags, cls, out)
    while n < 0:
        out = np.empty(max(2 * out.shape[0], -n + 16), np.uint8)
        n = normalize_into(text, start, end, units, pool, root_ok, ud_bc, ud_value, flags, cls, out)
    return out, n


def decode_charsmap(blob):
    """Split a precompiled charsmap into (units uint32[], pool uint8[] NUL-terminated).

    ValueError when the header or the pool offsets are inconsistent; empty blob -> empty arrays.
    """
    blob = bytes(blob)
    if not blob:
        return np.zeros(0, np.uint32), np.zeros(1, np.uint8)
    if len(blob) <= 4:
        raise ValueError("corrupt sentencepiece model: normalization charsmap is too short")
    size = int.from_bytes(blob[:4], "little")
    if size >= len(blob) or size % 4 != 0 or size + 4 > len(blob):
        raise ValueError("corrupt sentencepiece model: charsmap trie size exceeds the blob")
    units = np.frombuffer(blob, "<u4", size // 4, 4).astype(np.uint32)
    pool = np.frombuffer(blob[4 + size:] + b"\x00", np.uint8).copy()
    if units.size and max_leaf_value(units) >= pool.size:
        raise ValueError("corrupt sentencepiece model: charsmap value points outside the pool")
    return units, pool


@kernel
def normalize_many(buf, offsets, N):
    """Each text ``buf[offsets[i]:offsets[i + 1]]`` normalized (``N`` as ``normalize_into``), back
    to back: returns (bytes, per text its end byte and its end character in them)."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    n_texts = offsets.shape[0] - 1
    out = np.empty(max(16, 2 * (offsets[n_texts] - offsets[0]) + 8 * n_texts), np.uint8)
    scratch = np.empty(1024, np.uint8)
    byte_ends = np.empty(n_texts, np.int64)
    char_ends = np.empty(n_texts, np.int64)
    o = 0
    chars = 0
    for i in range(n_texts):
        scratch, n = normalize(buf, offsets[i], offsets[i + 1], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                               scratch)
        if o + n > out.shape[0]:
            grown = np.empty(2 * (o + n), np.uint8)
            grown[:o] = out[:o]
            out = grown
        for k in range(n):
            out[o + k] = scratch[k]
            chars += (scratch[k] & 0xC0) != 0x80
        o += n
        byte_ends[i] = o
        char_ends[i] = chars
    return out[:o], byte_ends, char_ends
