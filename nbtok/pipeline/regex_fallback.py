"""Patterns nbtok's scanners do not know run on the ``regex`` module: ``compile_regex`` for the
tokenizer.json components (Split, Replace) and the byte-level pre-tokenizer's custom patterns,
pinned to the Unicode version of the reference libraries (``PinnedUnicodeRegex``)."""
from functools import lru_cache
from pathlib import Path

import numpy as np


def compile_regex(pattern, where):
    """``pattern`` compiled with the ``regex`` module, matching as the references match it
    (``PinnedUnicodeRegex``); a bad pattern is a ``ValueError`` naming ``where``."""
    try:
        import regex
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(f"{where}: the pattern {pattern!r} is not one nbtok's scanner supports, so it "
                          "needs the `regex` module: pip install regex") from None
    if not isinstance(pattern, str):
        raise ValueError(f"{where}: regex pattern must be a string")
    try:
        return PinnedUnicodeRegex(regex.compile(pattern))
    except regex.error as e:
        raise ValueError(f"{where}: invalid regex {pattern!r}: {e}") from None


_UNICODE16 = Path(__file__).resolve().parent.parent / "data" / "unicode16_assigned.npy"
_UNASSIGNED = "\u0378"  # unassigned in every Unicode version so far


@lru_cache(maxsize=1)
def _newer_than_unicode16():
    """A ``regex`` class of the code points the installed ``regex`` assigns and Unicode 16.0 does
    not (None when there are none: a ``regex`` on Unicode 16.0 or older)."""
    import regex
    assigned16 = np.zeros(0x110001, np.int8)
    ranges = np.load(_UNICODE16)
    if ranges.ndim != 2 or ranges.shape[1] != 2 or ranges.min() < 0 or ranges.max() > 0x110000:
        raise ValueError(f"{_UNICODE16}: not a table of code point ranges")
    np.add.at(assigned16, ranges[:, 0], 1)
    np.add.at(assigned16, ranges[:, 1], -1)
    assigned16 = np.cumsum(assigned16[:-1]) > 0
    cps = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    newer = np.zeros(0x110000, bool)
    for m in regex.finditer(r"\P{Cn}+", cps.tobytes().decode("utf-32-le")):
        a, e = m.span()
        newer[cps[a]:cps[e - 1] + 1] = True
    newer &= ~assigned16
    newer[0xD800:0xE000] = False
    edges = np.flatnonzero(np.diff(np.concatenate([[0], newer.astype(np.int8), [0]]))).reshape(-1, 2)
    if not len(edges):
        return None
    return regex.compile("[" + "".join("\\U%08x-\\U%08x" % (lo, hi - 1) for lo, hi in edges.tolist()) + "]")


class PinnedUnicodeRegex:
    """A compiled ``regex`` pattern that matches as the reference libraries do, with Unicode 16.0
    classes (HF tokenizers' Oniguruma, tiktoken's Rust ``regex``), whatever Unicode the installed
    ``regex`` knows: before matching, each code point that 16.0 does not assign (in
    ``data/unicode16_assigned.npy``, ``scripts/gen_unicode_assigned.py``) is replaced by U+0378,
    unassigned in every version, so that ``\\p{L}``, ``\\s`` or ``[^...]`` see what the references
    see. Each character keeps its index, so spans are the text's own (match objects' ``group``
    shows the replaced text). With ``regex`` on 16.0 nothing is replaced."""

    def __init__(self, rx):
        self.rx = rx
        self.pattern = rx.pattern

    @staticmethod
    def as_unicode16(text):
        if text.isascii():
            return text
        newer = _newer_than_unicode16()
        if newer is None or newer.search(text) is None:
            return text
        return newer.sub(_UNASSIGNED, text)

    def finditer(self, text):
        return self.rx.finditer(self.as_unicode16(text))

    def sub(self, repl, text):
        """``regex.sub`` with a function ``repl`` of the match, on the text's own characters."""
        out, last = [], 0
        for m in self.finditer(text):
            out.append(text[last:m.start()])
            out.append(repl(m))
            last = m.end()
        out.append(text[last:])
        return "".join(out)
