"""A SentencePiece charsmap read per byte and per character, once per model, and a per-text check.

A precompiled charsmap (``sentencepiece.decode_charsmap``) is a darts-clone double-array trie over
the UTF-8 bytes of each rule's source, whose leaf values point into a pool of NUL-terminated
replacements. ``byte_classes`` builds the table the normalizer's fast paths read
(``sentencepiece.plain_class`` / ``plain_run``); ``charsmap_chars`` walks the trie depth first and
says, per character, what its own rule is and whether it starts or continues a longer rule,
for loaders that must know that (``models.hf_fused_spm``).
``flagged_rows`` marks the texts of a packed batch that hold a flagged character or string.
"""
import numpy as np

from .._jit import inline_kernel, kernel, leaf_kernel
from ..kernels.trie import bc_child
from .sentencepiece import ASCII_WORDS, CLS_SIZE, PLAIN_OFF, REPLACED_OFF, UD_ASCII, UD_ASCII_MAX, UD_FIRST, _offset

MAX_KEY = 64        # longest rule source read back, in bytes
MAX_VISITS = 64     # trie positions visited per unit at most (a damaged file stops there)
# ``charsmap_chars`` roles, and the flags of ``flagged_rows`` (one uint8 per code point)
FOLLOWS, STARTS = 1, 2
ANYWHERE, AT_START, BEFORE_JOINER, JOINER = 1, 2, 4, 8


# ------------------------------------------------------------------ the normalizer's byte classes
@kernel
def byte_classes(units, pool, root_ok, ud_bc, ud_value):
    """Fast-path table for the normalizer, indexed by ``c`` (first byte) and ``256 + 256 * c + c2``.

    ``cls[c]``: 1 = plain ASCII (copied as is), 2 = plain space, 3 or 4 = ASCII that starts
    some charsmap rule (look at the next byte: ``plain_class``), 0 = full step (non-ASCII, or a
    user-defined symbol may start here). ``cls[256 + 256 * c + c2]`` = 1 when c has no rule of
    its own and no rule continues with byte c2, so c is copied unchanged. Class 3 is the common
    case (an ASCII letter that only starts compositions such as e + U+0301): c has no rule of its
    own and no rule continues with an ASCII byte, so the pair entry is read only before a
    non-ASCII byte; class 4 reads it always.

    ``cls[ASCII_WORDS]`` = 1 when every printable ASCII byte (0x21-0x7E) is class 1 or 3 and the
    space is class 2, but for at most ``UD_ASCII_MAX`` bytes that start a user-defined symbol
    (class 0, listed after ``cls[UD_ASCII]``, their count): ``plain_run`` then copies runs of
    them eight bytes at a time. ``cls[UD_FIRST + c]`` = 1 when a user-defined symbol starts with
    byte c; a BMP character that starts one has its ``_plain_chars`` flags cleared but 4, so
    that it takes the full step (``_ud_chars``).
    """
    cls = np.zeros(CLS_SIZE, np.uint8)
    n_units = units.shape[0]
    for c in range(128):
        if ud_bc.shape[0] > 0:
            nx = ud_bc[0] + c
            if nx < ud_value.shape[0] and ud_bc[2 * nx + 1] == 0:
                continue
        if not root_ok[c]:
            cls[c] = 2 if c == 0x20 else 1
            continue
        cls[c] = 4
        pos = _offset(units[0]) ^ c
        u = np.int64(units[pos])
        if (u >> 8) & 1:  # c alone has a rule
            if _identity_rule(units, pool, pos ^ _offset(u), c):
                cls[c] = 2 if c == 0x20 else 1
            continue
        pos = pos ^ _offset(u)
        ascii_next = False  # some rule continues c with an ASCII byte
        for c2 in range(256):
            p2 = pos ^ c2
            if 0 <= p2 < n_units and (np.int64(units[p2]) & 0x800000FF) == c2:
                ascii_next = ascii_next or c2 < 0x80
                continue
            cls[256 + 256 * c + c2] = 1
        if not ascii_next:
            cls[c] = 3
    _plain_chars(units, pool, cls)
    _ud_chars(ud_bc, ud_value, cls)
    words = cls[0x20] == 2
    n_ud = 0
    for c in range(0x21, 0x7F):
        if cls[UD_FIRST + c] and n_ud < UD_ASCII_MAX:
            cls[UD_ASCII + 1 + n_ud] = c
            n_ud += 1
            continue
        words = words and (cls[c] == 1 or cls[c] == 3)
    cls[UD_ASCII] = n_ud if words else 0
    cls[ASCII_WORDS] = 1 if words else 0
    return cls


@kernel
def _ud_chars(ud_bc, ud_value, cls):
    """``cls[UD_FIRST + c]`` per first byte of a user-defined symbol, and flags 1, 2, 8 and 16
    of ``_plain_chars`` cleared on each BMP character a user-defined symbol starts with (the
    normalizer matches the symbols there)."""
    if ud_bc.shape[0] == 0:
        return
    for c in range(256):
        if bc_child(ud_bc, ud_value, 0, c) >= 0:
            cls[UD_FIRST + c] = 1
    for cp in range(0x80, 0x10000):
        if 0xD800 <= cp < 0xE000:
            continue
        if cp < 0x800:
            node = bc_child(ud_bc, ud_value, 0, 0xC0 | (cp >> 6))
            if node >= 0:
                node = bc_child(ud_bc, ud_value, node, 0x80 | (cp & 0x3F))
        else:
            node = bc_child(ud_bc, ud_value, 0, 0xE0 | (cp >> 12))
            if node >= 0:
                node = bc_child(ud_bc, ud_value, node, 0x80 | ((cp >> 6) & 0x3F))
            if node >= 0:
                node = bc_child(ud_bc, ud_value, node, 0x80 | (cp & 0x3F))
        if node >= 0:
            cls[PLAIN_OFF + cp] &= 4


@kernel
def _plain_chars(units, pool, cls):
    """``cls[PLAIN_OFF + cp]`` flags per code point (bits 1, 2 and 8 for 2- or 3-byte code points):

    1: no charsmap rule starts with cp, so the normalizer copies it without a rule lookup;
    2: rules start with cp but none is cp alone, and each continues with a whole BMP
       character (a *follower*), e.g. Cyrillic letters and kana, which only start compositions
       with a combining mark: cp is copied as is unless the next character is a follower;
    4: cp is a follower (of some code point flagged 2); also for ASCII.
    8: the only rule that starts with cp is cp alone, and it writes 1 to 3 bytes, no space
       (fullwidth punctuation, compatibility characters): ``cls[REPLACED_OFF + 4 * cp]`` holds
       their number, then the bytes;
    16: cp is *quiet*: flagged 1 or 2 and not a follower, so it is copied as is when the next
       character is quiet too (``_quiet_block``).
    A code point whose bytes are a prefix of some rule key in any other way is left 0 and takes
    the full step."""
    n_units = units.shape[0]
    for cp in range(0x80, 0x10000):
        if 0xD800 <= cp < 0xE000:
            continue
        if cp < 0x800:
            k = 2
            b0 = 0xC0 | (cp >> 6)
            b1 = 0x80 | (cp & 0x3F)
            b2 = 0
        else:
            k = 3
            b0 = 0xE0 | (cp >> 12)
            b1 = 0x80 | ((cp >> 6) & 0x3F)
            b2 = 0x80 | (cp & 0x3F)
        if n_units == 0:
            cls[PLAIN_OFF + cp] |= 1
            continue
        pos = _offset(units[0])
        consumed = 0
        for q in range(k):
            c = b0 if q == 0 else (b1 if q == 1 else b2)
            pos = pos ^ c
            if pos < 0 or pos >= n_units:
                break
            u = np.int64(units[pos])
            if (u & 0x800000FF) != c:
                break
            if (u >> 8) & 1:
                if q == k - 1:
                    _single_rule(units, pool, pos ^ _offset(u), cp, cls)
                consumed = -1  # a key ends inside (cannot happen for valid keys): be safe
                break
            pos = pos ^ _offset(u)
            if pos < 0 or pos >= n_units:
                consumed = -1
                break
            consumed += 1
        if consumed >= 0 and consumed < k:
            cls[PLAIN_OFF + cp] |= 1  # (bit 4 may be set already: cp follows an earlier code point)
        elif consumed == k and _mark_followers(units, pos, cls):
            cls[PLAIN_OFF + cp] |= 2
    for cp in range(0x80, 0x10000):
        f = cls[PLAIN_OFF + cp]
        if (f & 3) != 0 and (f & 4) == 0:
            cls[PLAIN_OFF + cp] |= 16


@kernel
def _single_rule(units, pool, base, cp, cls):
    """Flag 8 (``_plain_chars``) on cp, whose own rule's node has its children at ``base``, if
    that rule is the only one starting with cp and writes 1 to 3 bytes, no space."""
    if base < 0 or base >= units.shape[0]:
        return  # (a corrupt charsmap: its reads stay in bounds)
    for c in range(1, 256):
        if _child(units, base, c) >= 0:
            return
    v = np.int64(units[base]) & 0x7FFFFFFF
    ln = 0
    while v + ln < pool.shape[0] and pool[v + ln] != 0 and ln < 4:
        if pool[v + ln] == 0x20:
            return
        ln += 1
    if ln == 0 or ln > 3:
        return
    cls[PLAIN_OFF + cp] |= 8
    cls[REPLACED_OFF + 4 * cp] = ln
    for j in range(ln):
        cls[REPLACED_OFF + 4 * cp + 1 + j] = pool[v + j]


@inline_kernel
def _identity_rule(units, pool, base, c):
    """Whether the rule of the ASCII byte c, whose node has its children at ``base``, writes c
    itself and no longer rule starts with c: then c is copied as if it had no rule (older
    ``nmt_nfkc`` charsmaps map ' ' to ' ', which kept every model using them off the 8-byte
    ASCII step: 2026-12-04, tflite-support's model, English normalizing 2.4x slower)."""
    if base < 0 or base >= units.shape[0]:
        return False
    for c2 in range(1, 256):
        if _child(units, base, c2) >= 0:
            return False
    v = np.int64(units[base]) & 0x7FFFFFFF
    return v + 1 < pool.shape[0] and pool[v] == c and pool[v + 1] == 0


@kernel
def _child(units, base, c):
    """Darts position of the child labelled c of the node whose children sit at ``base``, or -1."""
    p = base ^ c
    if 0 <= p < units.shape[0] and (np.int64(units[p]) & 0x800000FF) == c:
        return p
    return -1


@kernel
def _mark_followers(units, base, cls):
    """Flag 4 (``_plain_chars``) on each character that continues a key below the node whose
    children sit at ``base``; False if some key continues with anything but a whole BMP
    character (a 4-byte or invalid sequence, or a key ending inside the character)."""
    n_units = units.shape[0]
    for b0 in range(256):
        p0 = _child(units, base, b0)
        if p0 < 0:
            continue
        if b0 < 0x80:
            cls[PLAIN_OFF + b0] |= 4
            continue
        if b0 < 0xC2 or b0 >= 0xF0:
            return False
        u0 = np.int64(units[p0])
        q0 = p0 ^ _offset(u0)
        if (u0 >> 8) & 1 or q0 < 0 or q0 >= n_units:
            return False
        for b1 in range(256):
            p1 = _child(units, q0, b1)
            if p1 < 0:
                continue
            if (b1 & 0xC0) != 0x80:
                return False
            if b0 < 0xE0:
                cls[PLAIN_OFF + (((b0 & 0x1F) << 6) | (b1 & 0x3F))] |= 4
                continue
            u1 = np.int64(units[p1])
            q1 = p1 ^ _offset(u1)
            if (u1 >> 8) & 1 or q1 < 0 or q1 >= n_units:
                return False
            for b2 in range(256):
                if _child(units, q1, b2) < 0:
                    continue
                cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
                if (b2 & 0xC0) != 0x80 or cp < 0x800 or 0xD800 <= cp < 0xE000:
                    return False
                cls[PLAIN_OFF + cp] |= 4
    return True


# ------------------------------------------------------------------ rules per character
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
    position of a longer rule, ``STARTS`` when a longer rule begins with it. A string is a rule
    when the darts lookup accepts it (``sentencepiece.darts_longest``): a node's children are tried
    label by label, which can also reach units that another node placed there, exactly as a
    lookup would. ``ok`` is False when the walk stops early: a rule source is longer than
    ``MAX_KEY`` bytes or not UTF-8, or the walk visits more than ``MAX_VISITS`` positions per
    unit. Any ``units`` array is read in bounds."""
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
        p = _child(units, base[depth], c)
        if p < 0:
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


@leaf_kernel
def _packed_code_point(buf, i, e):
    """(code point, length) of the character at ``buf[i]`` of text packed from str (valid
    UTF-8: only the lead byte decides the length); bytes that are not such a character read as
    U+FFFD, one byte. With the ASCII test before it, ``flagged_rows`` on 500 KB of Russian /
    Japanese lines took 1.8 / 1.0 ms instead of 2.4 / 1.8 ms (T5's flags)."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    ln = 2 if b0 < 0xE0 else 3 if b0 < 0xF0 else 4
    if b0 < 0xC2 or b0 >= 0xF5 or i + ln > e:
        return 0xFFFD, 1
    cp = b0 & (0x1F if ln == 2 else 0x0F if ln == 3 else 0x07)
    for k in range(1, ln):
        cp = (cp << 6) | (np.int64(buf[i + k]) & 0x3F)
    return (cp, ln) if cp <= 0x10FFFF else (0xFFFD, 1)


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
    # an ASCII byte that starts no string and cannot flag its text (it may precede a joiner)
    clear = np.zeros(256, np.bool_)
    ascii_flags = np.zeros(256, np.uint8)
    for b in range(128):
        ascii_flags[b] = flags[b] if chars else 0
        clear[b] = not first[b] and (ascii_flags[b] & (ANYWHERE | AT_START | JOINER)) == 0
    for d in range(n):
        s = offsets[d]
        e = offsets[d + 1]
        i = s
        prev = np.uint8(0)
        while i < e:
            b0 = buf[i]
            if clear[b0]:   # (500 KB of English: 3.7 ms -> 0.46 ms)
                prev = ascii_flags[b0]
                i += 1
                continue
            if first[b0] and _holds_string(buf, i, e, strings, string_offsets):
                out[d] = True
                break
            if chars:
                cp, ln = _packed_code_point(buf, i, e)
                f = flags[cp]
                if (f & ANYWHERE) or (i == s and (f & AT_START)) or ((f & JOINER) and (prev & BEFORE_JOINER)):
                    out[d] = True
                    break
                prev = f
                i += ln
            else:
                i += 1
    return out
