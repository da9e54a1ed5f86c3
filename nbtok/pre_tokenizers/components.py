"""tokenizer.json pre-tokenizers (HF semantics): ByteLevel, Split (every behaviour; nbtok's
scanner for the patterns it knows, else ``regex``), Metaspace, WhitespaceSplit, Whitespace,
BertPreTokenizer, Punctuation, Digits, CharDelimiterSplit, FixedLength, UnicodeScripts, Sequence."""
import numpy as np

from ..formats.gpt2 import bytes_to_unicode
from ..normalizers import component_kernels as KN
from ..pipeline import unit_kernels as K
from ..normalizers.components import regex_matches
from ..pipeline.unicode import hf_class_table, hf_script_table
from ..pipeline.regex_fallback import compile_regex
from ..pipeline.units import run_chunks


# ---------------------------------------------------------------------------------------------
# pre-tokenizers

BEHAVIORS = {"Isolated": K.ISOLATED, "Removed": K.REMOVED, "MergedWithPrevious": K.MERGED_PREV,
             "MergedWithNext": K.MERGED_NEXT, "Contiguous": K.CONTIGUOUS}
GPT2_HF = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


class _RegexSplitter:
    """Matches of a regex over text units: nbtok's scanner when it knows the pattern, else ``regex``."""

    def __init__(self, pattern, where):
        from .bytelevel import scanner_config
        self.pattern = pattern
        self.cfg = scanner_config(pattern)
        self.regex = None if self.cfg is not None else compile_regex(pattern, where)

    def matches(self, b):
        if self.cfg is not None:
            from .unicode_classes import load_table
            buf, offs, char_of = K.units_utf8(b.U, b.cps)
            out = np.empty(len(buf), np.int64)
            counts = np.zeros(len(b.U), np.int64)
            run_chunks(K.pretokenize_range, b.U, (buf, offs, load_table("hf"), self.cfg, out, counts),
                       getattr(b, "threads", None))
            return K.ends_to_matches(b.U, offs, out, counts, char_of)
        return regex_matches(b, self.regex)


class _Pre:
    def to_json(self):
        return self.cfg


class _ByteLevelPre(_Pre):
    def __init__(self, cfg):
        self.cfg = cfg
        self.add_prefix_space = bool(cfg.get("add_prefix_space", True))
        self.use_regex = bool(cfg.get("use_regex", True))
        self.splitter = _RegexSplitter(GPT2_HF, "ByteLevel") if self.use_regex else None

    def apply(self, b):
        if self.add_prefix_space:
            b.set(KN.prepend(b.U, b.cps, b.a_s, b.a_e, np.array([32], np.int32), 1, 32, b.doc_start))
        if self.splitter is not None:
            ms, me, m_off = self.splitter.matches(b)
            b.U = K.split_units(b.U, ms, me, m_off, K.ISOLATED, False)
        b2u = np.array([ord(bytes_to_unicode()[i]) for i in range(256)], np.int32)
        b.set(K.bytelevel_chars(b.U, b.cps, b.a_s, b.a_e, b2u))


class _SplitPre(_Pre):
    def __init__(self, cfg):
        self.cfg = cfg
        pat = cfg.get("pattern")
        if not isinstance(pat, dict) or len(pat) != 1:
            raise ValueError(f"Split: pattern must be {{'String': ...}} or {{'Regex': ...}}, got {pat!r}")
        beh = cfg.get("behavior")
        if beh not in BEHAVIORS:
            raise ValueError(f"Split: unknown behavior {beh!r}")
        self.behavior = BEHAVIORS[beh]
        self.invert = bool(cfg.get("invert", False))
        if "String" in pat:
            import regex
            s = pat["String"]
            if not isinstance(s, str):
                raise ValueError("Split: pattern String must be a string")
            self.splitter = _RegexSplitter(regex.escape(s), "Split")
            self.splitter.cfg = None
            self.splitter.regex = regex.compile(regex.escape(s))
        elif "Regex" in pat:
            self.splitter = _RegexSplitter(pat["Regex"], "Split")
        else:
            raise ValueError(f"Split: unknown pattern kind {list(pat)}")

    def apply(self, b):
        ms, me, m_off = self.splitter.matches(b)
        b.U = K.split_units(b.U, ms, me, m_off, self.behavior, self.invert)


class _ClassSplit(_Pre):
    def __init__(self, cfg, steps):
        self.cfg, self.steps = cfg, steps   # [(mask, eq_cp, behavior)]

    def apply(self, b):
        cls = hf_class_table()
        for mask, eq_cp, beh in self.steps:
            ms, me, m_off = K.class_matches(b.U, b.cps, cls, mask, eq_cp)
            b.U = K.split_units(b.U, ms, me, m_off, beh, False)


class _MetaspacePre(_Pre):
    def __init__(self, cfg):
        self.cfg = cfg
        rep = cfg.get("replacement", "\u2581")
        if not isinstance(rep, str) or len(rep) != 1:
            raise ValueError(f"Metaspace: replacement must be one character, got {rep!r}")
        self.replacement = rep
        scheme = cfg.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if cfg.get("add_prefix_space", True) else "never"
        if scheme not in ("always", "first", "never"):
            raise ValueError(f"Metaspace: unknown prepend_scheme {scheme!r}")
        self.scheme = scheme
        self.split = bool(cfg.get("split", True))

    def apply(self, b):
        r = ord(self.replacement)
        b.set(KN.replace_string(b.U, b.cps, b.a_s, b.a_e, np.array([32], np.int32), np.array([r], np.int32)))
        if self.scheme != "never":
            b.set(KN.prepend(b.U, b.cps, b.a_s, b.a_e, np.array([r], np.int32),
                            1 if self.scheme == "always" else 2, r, b.doc_start))
        if self.split:
            ms, me, m_off = K.class_matches(b.U, b.cps, hf_class_table(), 0, r)
            b.U = K.split_units(b.U, ms, me, m_off, K.MERGED_NEXT, False)


class _UnicodeScriptsPre(_Pre):
    """Cuts text where the Unicode script changes (``pipeline.unit_kernels.script_runs``)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def apply(self, b):
        ms, me, m_off = K.script_runs(b.U, b.cps, hf_script_table())
        b.U = K.split_units(b.U, ms, me, m_off, K.REMOVED, True)


class _FixedLengthPre(_Pre):
    """Each text unit cut into pieces of ``length`` chars (the last one shorter); empty units go."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.length = cfg.get("length", 5)
        if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length < 1:
            raise ValueError("FixedLength: length must be a positive integer")

    def apply(self, b):
        U = b.U
        text = U[:, K.TOK] < 0
        size = U[:, K.END] - U[:, K.START]
        pieces = np.where(text, -(-size // self.length), 1)
        rows = np.repeat(np.arange(len(U)), pieces)
        first = np.zeros(len(U) + 1, np.int64)
        np.cumsum(pieces, out=first[1:])
        k = np.arange(len(rows)) - first[rows]
        out = U[rows].copy()
        t = text[rows]
        out[t, K.START] = U[rows[t], K.START] + k[t] * self.length
        out[t, K.END] = np.minimum(out[t, K.START] + self.length, U[rows[t], K.END])
        b.U = np.ascontiguousarray(out)


class _SeqPre(_Pre):
    def __init__(self, cfg, items):
        self.cfg, self.items = cfg, items

    def apply(self, b):
        for it in self.items:
            it.apply(b)


def build_pre_tokenizer(cfg):
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError(f"pre_tokenizer must be an object, got {type(cfg).__name__}")
    t = cfg.get("type")
    if t == "Sequence":
        items = cfg.get("pretokenizers")
        if not isinstance(items, list):
            raise ValueError("Sequence pre-tokenizer needs a 'pretokenizers' list")
        if any(not isinstance(c, dict) for c in items):
            raise ValueError("Sequence pre-tokenizer: every item must be a pre-tokenizer object")
        return _SeqPre(cfg, [build_pre_tokenizer(c) for c in items])
    if t == "ByteLevel":
        return _ByteLevelPre(cfg)
    if t == "Split":
        return _SplitPre(cfg)
    if t == "Metaspace":
        return _MetaspacePre(cfg)
    if t == "WhitespaceSplit":
        return _ClassSplit(cfg, [(K.C_WS, -1, K.REMOVED)])
    if t == "BertPreTokenizer":
        return _ClassSplit(cfg, [(K.C_WS, -1, K.REMOVED), (K.C_BERT_PUNCT, -1, K.ISOLATED)])
    if t == "Punctuation":
        beh = cfg.get("behavior", "Isolated")
        if beh not in BEHAVIORS:
            raise ValueError(f"Punctuation: unknown behavior {beh!r}")
        return _ClassSplit(cfg, [(K.C_BERT_PUNCT, -1, BEHAVIORS[beh])])
    if t == "Digits":
        beh = K.ISOLATED if cfg.get("individual_digits", False) else K.CONTIGUOUS
        return _ClassSplit(cfg, [(K.C_NUMERIC, -1, beh)])
    if t == "CharDelimiterSplit":
        d = cfg.get("delimiter")
        if not isinstance(d, str) or len(d) != 1:
            raise ValueError("CharDelimiterSplit: delimiter must be one character")
        return _ClassSplit(cfg, [(0, ord(d), K.REMOVED)])
    if t == "FixedLength":
        return _FixedLengthPre(cfg)
    if t == "UnicodeScripts":
        return _UnicodeScriptsPre(cfg)
    if t == "Whitespace":
        sp = _SplitPre({"type": "Split", "pattern": {"Regex": r"\w+|[^\w\s]+"}, "behavior": "Removed",
                        "invert": True})
        sp.cfg = cfg
        return sp
    raise NotImplementedError(f"tokenizer.json pre-tokenizer {t!r} is not supported by nbtok")


def pre_tokenize_str(pre, text):
    """The splits of ``text`` by the pre-tokenizer ``pre`` (from ``build_pre_tokenizer``), as
    HF's ``pre_tokenize_str``: ``[(split, (start, end))]``, char offsets into ``text``.

    Examples:
        >>> pre_tokenize_str(build_pre_tokenizer({"type": "WhitespaceSplit"}), "a  bc")
        [('a', (0, 1)), ('bc', (3, 5))]
    """
    from ..normalizers.components import _single_batch
    b = _single_batch(text)
    if pre is not None:
        pre.apply(b)
    out = []
    for u in range(len(b.U)):
        s, e = int(b.U[u, K.START]), int(b.U[u, K.END])
        if e > s:
            out.append((b.unit_str(u), (int(b.a_s[s]), int(b.a_e[e - 1]))))
    return out
