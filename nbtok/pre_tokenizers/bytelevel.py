"""Regex pre-tokenizers for byte-level BPE: a Numba scanner for the known patterns, ``regex`` otherwise.

``Pretokenizer(pattern)`` takes a name (see ``PATTERNS``: gpt2 = r50k_base = p50k_base,
gpt2_original (HF ByteLevel), cl100k(_base), llama3, o200k(_base, _harmony), qwen2, qwen35,
nanochat, deepseek_v3) or a regex string. Regex strings of the GPT-2 / cl100k / o200k families -- in any of their published spellings (possessive or not,
``'s|'t|...`` or ``'(?:[sdmt]|ll|ve|re)``, ``[\\p{L}]`` or ``\\p{L}``) and their variants (digit
groups of 1, 2, 3 or unbounded, ``\\s++$`` or not, Qwen3.5's marks-in-words, llama.cpp's
``'[sS]`` contractions, ...) -- are recognised after normalisation and
run by the hand-written scanner in ``nbtok.pre_tokenizers.scanner`` (``.cfg`` is its config). Any
other regex falls back to the ``regex`` module (``.cfg is None``).

Splits equal ``regex.findall(pattern, text)`` and tiktoken's split. Text the regex does not match
(only possible in fallback mode, for a pattern that does not cover every character) is handled as
tiktoken does: it is DROPPED (``unmatched="drop"``, the default). In ``.ends()`` a dropped gap is
still a contiguous piece, but its end is stored bit-inverted (``~end``, a negative number), so
callers skip pieces with a negative end and continue from ``~end``. ``unmatched="isolate"`` keeps
each gap as an ordinary piece instead (HF ``Split(behavior="Isolated")`` semantics).

The scanner's Unicode classes come from the ``regex`` module (Unicode 17.0); pass
``unicode="tiktoken"`` (or ``"hf"``, the same table) for tiktoken's / HF tokenizers' classes
(Unicode 16.0; see ``nbtok.pre_tokenizers.unicode_classes``). Use them for parity with those libraries.
"""
import re as _re

import numpy as np

from . import scanner as _k
from .unicode_classes import load_table

GPT2_ORIGINAL = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
          r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
LLAMA3 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
          r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
O200K = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
QWEN2 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
         r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
# Qwen3.5 (tokenizer.json): Qwen2's with combining marks taken into words
QWEN35 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"""
          r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
NANOCHAT = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
            r"""|\s*[\r\n]|\s+(?!\S)|\s+""")
# DeepSeek-V3 / R1 / V4 tokenizer.json: a Sequence of three Split(behavior="Isolated") passes
DEEPSEEK_V3 = (
    r"""\p{N}{1,3}""",
    r"""[一-龥぀-ゟ゠-ヿ]+""",
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
)

PATTERNS = {
    "gpt2": R50K, "r50k_base": R50K, "p50k_base": R50K, "p50k_edit": R50K,
    "gpt2_original": GPT2_ORIGINAL,
    "cl100k": CL100K, "cl100k_base": CL100K,
    "llama3": LLAMA3,
    "o200k": O200K, "o200k_base": O200K, "o200k_harmony": O200K,
    "qwen2": QWEN2,
    "qwen35": QWEN35, "qwen3.5": QWEN35,
    "nanochat": NANOCHAT,
    "deepseek_v3": DEEPSEEK_V3, "deepseek": DEEPSEEK_V3,
    "gpt4": CL100K, "gpt-4": CL100K, "gpt4o": O200K, "gpt-4o": O200K,
}

# ---------------------------------------------------------------------------------------------
# recognising a pattern string: normalise, split into top-level alternatives, match slot by slot

_CONTR_CS = {"'(?:[sdmt]|ll|ve|re)", "'s|'t|'re|'ve|'m|'ll|'d", "(?:'s|'t|'re|'ve|'m|'ll|'d)"}
_CONTR_ACI = {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])",
              "'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]"}
_CONTR_CI = {"'(?i:[sdmt]|ll|ve|re)", "(?i:'s|'t|'re|'ve|'m|'ll|'d)", "'(?i:s|t|re|ve|m|ll|d)"}
_CONTR_SUFFIX = ["(?i:'s|'t|'re|'ve|'m|'ll|'d)?", "(?i:'[sdmt]|'ll|'ve|'re)?"]
_PREFIX = r"[^\r\n\p{L}\p{N}]?"
_O200K_1 = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
_O200K_2 = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
_PUNCT = r"[^\s\p{L}\p{N}]+"
_PUNCT_MARKS = r"[^\s\p{L}\p{M}\p{N}]+"
_TAILS = {"": 0, r"[\r\n]*": 1, r"[\r\n/]*": 2}


def _normalise(pattern):
    # tokenizer.json files sometimes hold real CR/LF characters where the regex means \r / \n
    p = pattern.replace("\r", r"\r").replace("\n", r"\n")
    p = p.replace(r"[\p{L}]", r"\p{L}").replace(r"[\p{N}]", r"\p{N}")
    # possessive quantifiers give the same splits in these patterns (nothing follows to backtrack)
    p = _re.sub(r"(\{[0-9]+(?:,[0-9]*)?\})\+", r"\1", p)
    return _re.sub(r"(?<!\\)([+*?])\+", r"\1", p)


def _alternatives(p):
    """Split at top-level ``|`` (outside groups and classes)."""
    out, depth, cls, cur, i = [], 0, False, [], 0
    while i < len(p):
        ch = p[i]
        if ch == "\\":
            cur.append(p[i:i + 2])
            i += 2
            continue
        if cls:
            cls = ch != "]"
        elif ch == "[":
            cls = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


def _strip_suffix(alt):
    for s in _CONTR_SUFFIX:
        if alt.endswith(s):
            return alt[: -len(s)], True
    return alt, False


def _parse(pattern):
    """The scanner cfg for a pattern string of a supported family, or None."""
    alts = _alternatives(_normalise(pattern))
    if alts[:7] == ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"]:
        alts = ["'s|'t|'re|'ve|'m|'ll|'d"] + alts[7:]
    if alts[:7] == ["'[sS]", "'[tT]", "'[rR][eE]", "'[vV][eE]", "'[mM]", "'[lL][lL]", "'[dD]"]:
        alts = ["|".join(alts[:7])] + alts[7:]
    cfg = np.zeros(_k.CFG_SIZE, np.int64)
    k = 0

    def at(j):
        return alts[j] if j < len(alts) else None

    if at(k) in _CONTR_CS:
        cfg[_k.CONTR] = _k.CONTR_CASE
        k += 1
    elif at(k) in _CONTR_CI:
        cfg[_k.CONTR] = _k.CONTR_ICASE
        k += 1
    elif at(k) in _CONTR_ACI:
        cfg[_k.CONTR] = _k.CONTR_ASCII_ICASE
        k += 1
    # letters
    a, attached = _strip_suffix(at(k) or "")
    if a in (r" ?\p{L}+", r" ?[\p{L}\p{M}]+"):
        cfg[_k.LETTERS] = _k.LETTERS_SPACE
        cfg[_k.MARKS] = a.endswith(r"\p{M}]+")
        k += 1
    elif a in (_PREFIX + r"\p{L}+", _PREFIX + r"[\p{L}\p{M}]+"):
        cfg[_k.LETTERS] = _k.LETTERS_PREFIX
        cfg[_k.MARKS] = a.endswith(r"\p{M}]+")
        k += 1
    elif a == _PREFIX + _O200K_1:
        b, attached2 = _strip_suffix(at(k + 1) or "")
        if b != _PREFIX + _O200K_2 or attached2 != attached:
            return None
        cfg[_k.LETTERS] = _k.LETTERS_O200K
        k += 2
    else:
        return None
    if attached:
        if cfg[_k.CONTR] != _k.CONTR_NONE:
            return None
        cfg[_k.CONTR] = _k.CONTR_ATTACHED
    # digits
    a = at(k) or ""
    if a.startswith(" ?"):
        cfg[_k.DIGIT_SPACE] = 1
        a = a[2:]
    if a == r"\p{N}+":
        cfg[_k.DIGITS] = 0
    elif a == r"\p{N}":
        cfg[_k.DIGITS] = 1
    else:
        m = _re.fullmatch(r"\\p\{N\}\{1,([1-9][0-9]*)\}", a)
        if m is None:
            return None
        cfg[_k.DIGITS] = int(m.group(1))
    k += 1
    # punctuation
    a = at(k) or ""
    if a.startswith(" ?"):
        cfg[_k.PUNCT_SPACE] = 1
        a = a[2:]
    punct = _PUNCT_MARKS if cfg[_k.MARKS] else _PUNCT
    if not a.startswith(punct) or a[len(punct):] not in _TAILS:
        return None
    cfg[_k.PUNCT_TAIL] = _TAILS[a[len(punct):]]
    k += 1
    # whitespace
    if at(k) == r"\s+$":
        cfg[_k.WS_END] = 1
        k += 1
    if at(k) in (r"\s*[\r\n]", r"\s*[\r\n]+"):
        cfg[_k.NEWLINE] = 1
        k += 1
    if at(k) != r"\s+(?!\S)" or at(k + 1) not in (r"\s+", r"\s") or k + 2 != len(alts):
        return None
    return cfg


def resolve_pattern(pattern):
    """The regex string for a pattern name (or the string itself).

    A bare word that is not a known name (``"gpt3"``, ``"cl100"``) is an error rather than a
    regex that matches that word literally.
    """
    if isinstance(pattern, str) and pattern not in PATTERNS and _re.fullmatch(r"[A-Za-z][A-Za-z0-9_.\-]*", pattern):
        raise ValueError(f"unknown pre-tokenizer pattern name {pattern!r}; known names: "
                         f"{', '.join(sorted(PATTERNS))} (or pass a regex string)")
    return PATTERNS.get(pattern, pattern)


def scanner_config(pattern):
    """The scanner cfg (int64 array) for a pattern name or regex string; None if unsupported."""
    return _parse(resolve_pattern(pattern))


# ---------------------------------------------------------------------------------------------

def _compile_regex(pattern):
    from ..pipeline.regex_fallback import compile_regex
    return compile_regex(pattern, "pre-tokenizer")


def _utf8(text):
    """UTF-8 bytes of ``text``; lone surrogates become U+FFFD first, as tiktoken does."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def _as_buf(text_or_buf):
    if isinstance(text_or_buf, str):
        return np.frombuffer(_utf8(text_or_buf), np.uint8)
    if isinstance(text_or_buf, (bytes, bytearray, memoryview)):
        return np.frombuffer(text_or_buf, np.uint8)
    return np.ascontiguousarray(text_or_buf, np.uint8)


class Pretokenizer:
    """Split UTF-8 text into pre-tokens with a GPT-2 / cl100k / o200k style regex.

    ``pattern``: a name in ``PATTERNS``, a regex string, or a tuple of regex strings (a sequence
    of HF ``Split(behavior="Isolated")`` passes, each applied to every piece of the previous one,
    as DeepSeek-V3's ``tokenizer.json`` does; always ``unmatched="isolate"``).
    """

    def __init__(self, pattern="gpt2", unicode="regex", unmatched="drop"):
        if unmatched not in ("drop", "isolate"):
            raise ValueError("unmatched must be 'drop' (tiktoken) or 'isolate' (HF Split)")
        self.name = pattern if isinstance(pattern, str) and pattern in PATTERNS else None
        self.pattern = resolve_pattern(pattern)
        if isinstance(self.pattern, (tuple, list)):
            self.pattern = tuple(self.pattern)
            self.cfg = None
            unmatched = "isolate"
        else:
            self.cfg = _parse(self.pattern)
        self.unmatched = unmatched
        self.table = load_table(unicode)
        self._regexes = None
        if self.cfg is None:
            pats = self.pattern if isinstance(self.pattern, tuple) else (self.pattern,)
            self._regexes = [_compile_regex(p) for p in pats]

    def __repr__(self):
        mode = "scanner" if self.cfg is not None else "regex"
        return f"Pretokenizer({self.name or self.pattern!r}, {mode})"

    @property
    def uses_scanner(self):
        return self.cfg is not None

    # -- single document ------------------------------------------------------------------
    def ends(self, buf, start=0, end=None):
        """Absolute end offsets (int64) of the pre-tokens of ``buf[start:end]`` (UTF-8 bytes).

        Pieces are contiguous from ``start``; in fallback mode with ``unmatched="drop"`` an
        unmatched gap's end is stored as ``~end`` (negative).
        """
        buf = _as_buf(buf)
        end = len(buf) if end is None else int(end)
        start = int(start)
        if self.cfg is not None:
            out = np.empty(max(end - start, 0), np.int64)
            n = _k.pretokenize(buf, start, end, self.table, self.cfg, out)
            return out[:n].copy()
        return self._regex_ends(buf, start, end)

    def _char_pieces(self, text):
        """[(char_start, char_end, kept)] covering ``text``, from the regex pass(es)."""
        pieces = [(0, len(text), True)] if text else []
        for rx in self._regexes:
            out = []
            for s, e, _ in pieces:
                sub = text[s:e] if (s, e) != (0, len(text)) else text
                last = 0
                for m in rx.finditer(sub):
                    ms, me = m.span()
                    if ms == me:
                        continue
                    if ms > last:
                        out.append((s + last, s + ms, False))
                    out.append((s + ms, s + me, True))
                    last = me
                if last < e - s:
                    out.append((s + last, e, False))
            pieces = out
        return pieces

    def _regex_ends(self, buf, start, end):
        text = bytes(buf[start:end]).decode("utf-8")
        pieces = self._char_pieces(text)
        if not pieces:
            return np.zeros(0, np.int64)
        char_ends = np.array([e for _, e, _ in pieces], np.int64)
        if not text.isascii():  # char offset -> byte offset
            cps = np.frombuffer(text.encode("utf-32-le"), np.uint32)
            lens = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)
            cum = np.concatenate([[0], np.cumsum(lens)])
            char_ends = cum[char_ends]
        ends = start + char_ends.astype(np.int64)
        if self.unmatched == "drop":
            gap = np.array([not k for _, _, k in pieces])
            ends[gap] = ~ends[gap]
        return ends

    def spans(self, buf, start=0, end=None):
        """(starts, ends) of the kept pre-tokens (absolute byte offsets)."""
        e = self.ends(buf, start, end)
        ends_abs = np.where(e < 0, ~e, e)
        starts = np.concatenate([[int(start)], ends_abs[:-1]]).astype(np.int64)
        keep = e >= 0
        return starts[keep], ends_abs[keep]

    def split(self, text):
        """The pre-tokens of ``text`` as strings (``regex.findall`` / tiktoken's split)."""
        if self.cfg is None:
            text = _utf8(text).decode("utf-8")
            drop = self.unmatched == "drop"
            return [text[s:e] for s, e, k in self._char_pieces(text) if k or not drop]
        b = _utf8(text)
        s, e = self.spans(np.frombuffer(b, np.uint8))
        return [b[i:j].decode("utf-8") for i, j in zip(s.tolist(), e.tolist())]

    # -- batches --------------------------------------------------------------------------
    def ends_batch(self, buf, offsets):
        """Pre-tokenize documents ``buf[offsets[d]:offsets[d+1]]``.

        Returns ``(ends, counts)``: ``ends`` is flat (document d's ends are the ``counts[d]``
        entries after those of documents < d), ``counts`` is ``int64[n]``.
        """
        buf = _as_buf(buf)
        offsets = np.ascontiguousarray(offsets, np.int64)
        n = len(offsets) - 1
        if self.cfg is not None:
            out = np.empty(len(buf), np.int64)
            counts = np.zeros(n, np.int64)
            _k.pretokenize_batch(buf, offsets, self.table, self.cfg, out, counts)
            if n == 0:
                return np.zeros(0, np.int64), counts
            idx = np.repeat(offsets[:-1], counts) + (np.arange(counts.sum()) - np.repeat(
                np.cumsum(counts) - counts, counts))
            return out[idx], counts
        parts = [self._regex_ends(buf, int(offsets[d]), int(offsets[d + 1])) for d in range(n)]
        counts = np.array([len(p) for p in parts], np.int64)
        ends = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        return ends.astype(np.int64), counts
