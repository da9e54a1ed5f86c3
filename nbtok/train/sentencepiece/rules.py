"""``normalization_rule_tsv``: a file of normalization rules compiled into a precompiled
charsmap, as sentencepiece's ``Builder::LoadCharsMap`` and ``Builder::CompileCharsMap`` read
and compile it.

The file: one rule a line, ``source <TAB> target [<TAB> anything]``, each side code points in
hex separated by spaces (``U+`` or ``0x`` before a code point is allowed), a line with no
tab deleting its source. A later rule for the same source replaces the earlier one. The
rules are used as they are (no NFKC, no built-in rules besides them).

The charsmap: ``<uint32 LE trie size><double array><targets>``. The targets are the distinct
target strings in order of their code points, each in UTF-8 and ended by NUL; the double
array (darts-clone's unit format, ``normalizers/sentencepiece.py``) maps each source's UTF-8 to the
offset of its target. sentencepiece builds it with darts-clone's builder; nbtok places the
nodes itself (``double_array``), so the bytes differ but every lookup gives the same result
(sentencepiece's ``validate`` accepts it and normalizes with it as with its own).

Errors are ``ValueError`` naming the line: a field that is not hex, an empty source, a code
point that is 0, a surrogate or past U+10FFFF (sentencepiece stops on a surrogate and turns a
code point past U+10FFFF into U+FFFD), a rule that maps a source to itself, no rule at all,
or 32 rules or more that are prefixes of one source (the most sentencepiece's normalizer
reads at one position).
"""
import os
import string

import numpy as np

from ..._jit import kernel

MAX_PREFIX_RULES = 32  # sentencepiece's Normalizer::kMaxTrieResultsSize
_HEX = set(string.hexdigits)


def compile_rule_tsv(path):
    """The precompiled charsmap (bytes) of the rules in the file ``path``."""
    return compile_charsmap(load_rule_tsv(path))


def load_rule_tsv(path):
    """``{source: target}`` (str to str) of the rule file ``path``."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"normalization_rule_tsv must be a path, not {type(path).__name__}")
    rules = {}
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{os.fsdecode(path)}: not UTF-8 (byte {e.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # (the newline that ends the last line)
    for number, line in enumerate(lines, 1):
        fields = line.split("\t")
        where = f"{os.fsdecode(path)}:{number}"
        src = _code_points(fields[0], where)
        trg = _code_points(fields[1], where) if len(fields) > 1 else ""
        if not src:
            raise ValueError(f"{where}: a rule needs a source (hex code points before the tab)")
        rules[src] = trg
    if not rules:
        raise ValueError(f"{os.fsdecode(path)}: no normalization rule")
    return rules


def _code_points(field, where):
    out = []
    for word in field.split(" "):
        word = word.strip()
        if not word:
            continue
        digits = word[2:] if word[:2] in ("U+", "0x", "0X") else word
        if not digits or not set(digits) <= _HEX:
            raise ValueError(f"{where}: {word!r} is not a hex code point")
        cp = int(digits, 16)
        if cp == 0 or 0xD800 <= cp <= 0xDFFF or cp > 0x10FFFF:
            raise ValueError(f"{where}: U+{cp:04X} is not a character a rule can hold")
        out.append(chr(cp))
    return "".join(out)


def compile_charsmap(rules):
    """The precompiled charsmap of ``{source: target}`` (``CompileCharsMap``)."""
    if not rules:
        raise ValueError("normalization rules: no rule")
    for src, trg in rules.items():
        if not src:
            raise ValueError("normalization rules: a source is empty")
        if src == trg:
            raise ValueError(f"normalization rules: {_show(src)} maps to itself (an identity rule is not allowed)")
    pool, at = bytearray(), {}
    for trg in sorted(set(rules.values())):
        at[trg] = len(pool)
        pool += trg.encode("utf-8") + b"\0"
    keys = sorted((src.encode("utf-8"), at[trg]) for src, trg in rules.items())
    _check_prefixes([k for k, _ in keys])
    units = double_array(keys)
    return np.uint32(units.nbytes).tobytes() + units.astype("<u4").tobytes() + bytes(pool)


def _check_prefixes(keys):
    """No source may have ``MAX_PREFIX_RULES`` or more sources as prefixes (itself included)."""
    known = set(keys)
    for k in keys:
        n = sum(1 for i in range(1, len(k) + 1) if k[:i] in known)
        if n >= MAX_PREFIX_RULES:
            raise ValueError(f"normalization rules: {n} rules are prefixes of {_show(k.decode('utf-8'))}; "
                             f"sentencepiece reads fewer than {MAX_PREFIX_RULES} at one position")


def _show(s):
    return " ".join(f"U+{ord(c):04X}" for c in s)


LEAF = 1 << 31
WINDOW = 16 * 256  # place_nodes looks for free units this far behind the last base at most
HAS_LEAF = 1 << 8
EXTENSION = 1 << 9


def double_array(keys):
    """darts-clone units (uint32 array, a multiple of 256 long) of ``keys``, sorted distinct
    ``(bytes, value)`` without NUL bytes: the trie of the keys (``_trie``) laid out by
    ``place_nodes``."""
    return place_nodes(*_trie(keys))


def _trie(keys):
    """The trie of the sorted ``keys`` breadth first: ``(first child int64[n + 1], child labels
    int64[], child nodes int64[], value int64[n])`` (value -1 where no key ends)."""
    level = [(0, len(keys), 0)]  # (first key, end key, depth) of each node of one depth
    start, labels, children, value = [0], [], [], []
    node_count = 1
    while level:
        nxt = []
        for lo, hi, d in level:
            v = -1
            if lo < hi and len(keys[lo][0]) == d:  # (sorted: the key ending here comes first)
                v = keys[lo][1]
                lo += 1
            value.append(v)
            i = lo
            while i < hi:
                c = keys[i][0][d]
                if c == 0:
                    raise ValueError("normalization rules: a source holds U+0000")
                j = i + 1
                while j < hi and keys[j][0][d] == c:
                    j += 1
                labels.append(c)
                children.append(node_count)
                node_count += 1
                nxt.append((i, j, d + 1))
                i = j
            start.append(len(labels))
        level = nxt
    return (np.array(start, np.int64), np.array(labels, np.int64), np.array(children, np.int64),
            np.array(value, np.int64))


@kernel
def _offset_bits(offset):
    """The unit bits of an offset, or -1 if darts-clone's unit cannot hold it."""
    if offset < (1 << 21):
        return offset << 10
    if offset < (1 << 29) and (offset & 0xFF) == 0:
        return ((offset >> 8) << 10) | EXTENSION
    return -1


@kernel
def _fits(used, is_base, p, b, has_value, labels, lo, hi):
    """Whether base ``b`` is free for the node at ``p``: an own base, other than 0, an offset
    the unit can hold, and free slots for its leaf and its children's labels."""
    if b == 0 or is_base[b] or _offset_bits(p ^ b) < 0:
        return False
    if has_value and used[b]:
        return False
    for k in range(lo, hi):
        if used[b ^ labels[k]]:
            return False
    return True


@kernel
def place_nodes(start, labels, children, value):
    """darts-clone units of the breadth-first trie (``_trie``).

    A node at position p with base b (its unit's offset is ``p ^ b``) has the child of byte c
    at ``b ^ c``, whose unit holds label c, and its value, if a key ends there, in the leaf
    unit at ``b`` (label 0's slot; the top bit set, so no byte reaches it). Every node has its
    own base, so a unit labelled c at ``b ^ c`` is the child of the node with base b alone.
    A free unit at q gets label ``(q ^ u) & 0xFF`` for a base u of its block that no node has,
    so no lookup matches it; its offset is 0 (darts-clone's ``validate`` checks that
    ``(i ^ offset) | 0xFF`` is inside the array)."""
    n = value.shape[0]
    cap = 512
    while cap < 2 * (labels.shape[0] + n) + 1024:
        cap *= 2
    units = np.zeros(cap, np.int64)
    used = np.zeros(cap, np.bool_)
    is_base = np.zeros(cap, np.bool_)
    pos = np.zeros(n, np.int64)
    used[0] = True
    first_free = 1
    top = 0
    for node in range(n):  # breadth first: a node's position is set when its parent is placed
        lo = start[node]
        hi = start[node + 1]
        has_value = value[node] >= 0
        first = 0 if has_value else labels[lo]
        p = pos[node]
        # free units more than WINDOW behind the last base stay free: a hole no node fits
        # would otherwise be tried by every node after it
        while used[first_free] or first_free + WINDOW < top:
            first_free += 1
        q = first_free
        while True:
            if q + 512 > cap:
                cap *= 2
                units = np.concatenate((units, np.zeros(units.shape[0], np.int64)))
                used = np.concatenate((used, np.zeros(used.shape[0], np.bool_)))
                is_base = np.concatenate((is_base, np.zeros(is_base.shape[0], np.bool_)))
            if not used[q] and _fits(used, is_base, p, q ^ first, has_value, labels, lo, hi):
                break
            q += 1
        b = q ^ first
        is_base[b] = True
        top = max(top, b | 0xFF)
        units[p] |= _offset_bits(p ^ b) | (HAS_LEAF if has_value else 0)
        if has_value:
            used[b] = True
            units[b] = LEAF | value[node]
        for k in range(lo, hi):
            c = labels[k]
            used[b ^ c] = True
            units[b ^ c] = c
            pos[children[k]] = b ^ c
    size = top + 1
    for block in range(0, size, 256):
        taken = np.zeros(256, np.bool_)
        for x in range(256):
            taken[x] = is_base[block + x]
        u = 0
        while u < 256 and taken[u]:
            u += 1
        if u == 256:  # (every low byte is a base here, so every unit of the block is used)
            continue
        for x in range(256):
            if not used[block + x]:
                units[block + x] = x ^ u
    return units[:size].astype(np.uint32)
