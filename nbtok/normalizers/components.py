"""tokenizer.json normalizers (HF semantics, alignments kept): NFC / NFKC / NFD / NFKD,
Lowercase, Nmt, Strip, StripAccents, Prepend, Replace, Precompiled (a sentencepiece charsmap),
BertNormalizer, ByteLevel, Sequence. ``build_normalizer(cfg)`` builds one from its JSON object."""
import unicodedata
from functools import lru_cache

import numpy as np

from . import component_kernels as KN
from ..pipeline import unit_kernels as K
from ..pipeline.unicode import char_map, grapheme_joiners, hf_class_table, lowercase_map, nf_decompose, nf_transform, nf_unstable
from ..pipeline.regex_fallback import compile_regex
from ..pipeline.units import Batch, cp_array, flags_per_unit, req_str, transform_units, utf32


# ---------------------------------------------------------------------------------------------
# normalizers

class _Normalizer:
    def to_json(self):
        return self.cfg


class _NF(_Normalizer):
    def __init__(self, cfg, form):
        self.cfg, self.form = cfg, form

    def apply(self, b):
        rows, flagged = flags_per_unit(b, nf_unstable(self.form))
        per = {}
        decompose = self.form in ("NFD", "NFKD")
        for u in rows[flagged].tolist():
            s = b.unit_str(u)
            if unicodedata.is_normalized(self.form, s):
                continue
            items = nf_decompose(s, b.unit_cps(u), self.form) if decompose else None
            per[u] = nf_transform(s, self.form) if items is None else items
        if per:
            transform_units(b, per)

    def normalize_str(self, s):
        return unicodedata.normalize(self.form, s)


class _CharMap(_Normalizer):
    def __init__(self, cfg, table_fn):
        self.cfg, self.table_fn = cfg, table_fn

    def apply(self, b):
        mp, repl, off, max_repl = self.table_fn()
        b.set(KN.map_chars(b.U, b.cps, b.a_s, b.a_e, mp.keys, mp.values, repl, off, max_repl))

    def normalize_str(self, s):
        mp, repl, off, _ = self.table_fn()
        out = []
        for ch in s:
            r = mp.get(ord(ch))
            out.append(ch if r < 0 else "".join(chr(c) for c in repl[off[r]:off[r + 1]]))
        return "".join(out)


class _Strip(_Normalizer):
    def __init__(self, cfg):
        self.cfg = cfg
        self.left, self.right = bool(cfg.get("strip_left", True)), bool(cfg.get("strip_right", True))

    def apply(self, b):
        KN.strip_units(b.U, b.cps, hf_class_table(), self.left, self.right)

    def normalize_str(self, s):
        ws = "".join(chr(c) for c in np.nonzero(hf_class_table() & K.C_WS)[0][:64])
        if self.left:
            s = s.lstrip(ws)
        if self.right:
            s = s.rstrip(ws)
        return s


class _Prepend(_Normalizer):
    def __init__(self, cfg):
        self.cfg = cfg
        self.pre = cp_array(req_str(cfg, "prepend"))

    def apply(self, b):
        b.set(KN.prepend(b.U, b.cps, b.a_s, b.a_e, self.pre, 0, -1, b.doc_start))

    def normalize_str(self, s):
        return "".join(chr(c) for c in self.pre) + s if s else s


class _Replace(_Normalizer):
    def __init__(self, cfg):
        self.cfg = cfg
        pat = cfg.get("pattern")
        if not isinstance(pat, dict) or len(pat) != 1:
            raise ValueError(f"Replace: pattern must be {{'String': ...}} or {{'Regex': ...}}, got {pat!r}")
        self.content = req_str(cfg, "content")
        if "String" in pat:
            self.string = pat["String"]
            if not isinstance(self.string, str) or not self.string:
                raise ValueError("Replace: pattern String must be a non-empty string")
            self.regex = None
        elif "Regex" in pat:
            self.string = None
            self.regex = compile_regex(pat["Regex"], "Replace")
        else:
            raise ValueError(f"Replace: unknown pattern kind {list(pat)}")

    def apply(self, b):
        if self.string is not None:
            b.set(KN.replace_string(b.U, b.cps, b.a_s, b.a_e, cp_array(self.string), cp_array(self.content)))
            return
        ms, me, m_off = regex_matches(b, self.regex)
        b.set(KN.replace_matches(b.U, b.cps, b.a_s, b.a_e, ms, me, m_off, cp_array(self.content)))

    def normalize_str(self, s):
        if self.string is not None:
            return s.replace(self.string, self.content)
        return self.regex.sub(lambda m: self.content if m.end() > m.start() else m.group(), s)


def regex_matches(b, rx):
    """Non-empty matches of ``rx`` in every text unit (char spans into S), per unit."""
    ms, me, m_off = [], [], [0]
    for u in range(len(b.U)):
        if b.U[u, K.TOK] < 0:
            s0 = int(b.U[u, K.START])
            for m in rx.finditer(b.unit_str(u)):
                if m.end() > m.start():
                    ms.append(s0 + m.start())
                    me.append(s0 + m.end())
        m_off.append(len(ms))
    return np.array(ms, np.int64), np.array(me, np.int64), np.array(m_off, np.int64)


class _Precompiled(_Normalizer):
    def __init__(self, cfg):
        import base64
        from .sentencepiece import decode_charsmap
        self.cfg = cfg
        raw = cfg.get("precompiled_charsmap")
        if raw is None:
            self.units = np.zeros(0, np.uint32)
            self.pool = np.zeros(1, np.uint8)
        else:
            if not isinstance(raw, str):
                raise ValueError("Precompiled: precompiled_charsmap must be a base64 string")
            try:
                blob = base64.b64decode(raw, validate=True)
            except ValueError:
                raise ValueError("Precompiled: precompiled_charsmap is not valid base64") from None
            self.units, self.pool = decode_charsmap(blob)
        self.pool_max = int(KN._pool_max(self.pool))

    def apply(self, b):
        if not len(self.units):
            return
        gb = np.ones(len(b.cps) + 1, np.bool_)
        rows, flagged = flags_per_unit(b, grapheme_joiners())
        if flagged.any():
            import regex
            xpat = regex.compile(r"\X")
            for u in rows[flagged].tolist():
                s0 = int(b.U[u, K.START])
                s = b.unit_str(u)
                lens = np.fromiter((len(g) for g in xpat.findall(s)), np.int64)
                starts = s0 + np.concatenate([[0], np.cumsum(lens)[:-1]])
                gb[s0:s0 + len(s)] = False
                gb[starts] = True
        b.set(KN.precompiled(b.U, b.cps, b.a_s, b.a_e, gb, self.units, self.pool, self.pool_max, b.seg_starts()))

    def normalize_str(self, s):
        bb = _single_batch(s)
        self.apply(bb)
        return bb.unit_str(0) if len(bb.U) else ""


class _Bert(_Normalizer):
    def __init__(self, cfg):
        self.cfg = cfg
        self.clean_text = bool(cfg.get("clean_text", True))
        self.chinese = bool(cfg.get("handle_chinese_chars", True))
        self.lower = bool(cfg.get("lowercase", True))
        sa = cfg.get("strip_accents")
        self.strip_accents = self.lower if sa is None else bool(sa)

    def apply(self, b):
        cls = hf_class_table()
        if self.clean_text:
            b.set(KN.map_chars(b.U, b.cps, b.a_s, b.a_e, *_bert_clean_map()))
        if self.chinese:
            b.set(KN.map_chars(b.U, b.cps, b.a_s, b.a_e, *_bert_cjk_map()))
        if self.strip_accents:
            _NF(None, "NFD").apply(b)
            b.set(KN.map_chars(b.U, b.cps, b.a_s, b.a_e, *_mn_delete_map()))
        if self.lower:
            _CharMap(None, lowercase_map).apply(b)
        del cls

    def normalize_str(self, s):
        bb = _single_batch(s)
        self.apply(bb)
        return bb.unit_str(0) if len(bb.U) else ""


class _StripAccents(_Normalizer):
    def __init__(self, cfg):
        self.cfg = cfg

    def apply(self, b):
        b.set(KN.map_chars(b.U, b.cps, b.a_s, b.a_e, *_mn_delete_map()))

    def normalize_str(self, s):
        return "".join(c for c in s if unicodedata.category(c) != "Mn")


def _unpack_map(m):
    mp, repl, off, max_repl = m
    return mp.keys, mp.values, repl, off, max_repl


@lru_cache(maxsize=1)
def _bert_clean_map():
    cls = hf_class_table()
    pairs = {}
    for c in np.nonzero(cls & K.C_CONTROL)[0].tolist():
        pairs[c] = ""
    pairs[0] = ""
    pairs[0xFFFD] = ""
    for c in np.nonzero(cls & K.C_WS)[0].tolist():
        if c not in pairs:
            pairs[c] = " "
    for c in (9, 10, 13):
        pairs[c] = " "
    return _unpack_map(char_map(pairs))


@lru_cache(maxsize=1)
def _bert_cjk_map():
    cls = hf_class_table()
    return _unpack_map(char_map({c: " " + chr(c) + " " for c in np.nonzero(cls & K.C_CJK)[0].tolist()}))


@lru_cache(maxsize=1)
def _mn_delete_map():
    cls = hf_class_table()
    return _unpack_map(char_map({c: "" for c in np.nonzero(cls & K.C_MN)[0].tolist()}))


@lru_cache(maxsize=1)
def nmt_map():
    """HF's ``Nmt`` normalizer (``normalizers/unicode.rs``) as a char map: the ASCII and C1
    controls it filters out are deleted, the code points it takes for whitespace become a space."""
    pairs = {c: "" for c in [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]}
    for c in (0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD):
        pairs[c] = " "
    return char_map(pairs)


class _ByteLevel(_Normalizer):
    """Every char becomes one char per UTF-8 byte (GPT-2's ``bytes_to_unicode``), all with the
    char's alignment (the ByteLevel pre-tokenizer's transform, as a normalizer)."""

    def __init__(self, cfg):
        from ..formats.gpt2 import bytes_to_unicode
        self.cfg = cfg
        self.chars = bytes_to_unicode()
        self.b2u = np.array([ord(self.chars[i]) for i in range(256)], np.int32)

    def apply(self, b):
        b.set(K.bytelevel_chars(b.U, b.cps, b.a_s, b.a_e, self.b2u))

    def normalize_str(self, s):
        return "".join(self.chars[x] for x in s.encode("utf-8", "surrogatepass"))


class _Sequence(_Normalizer):
    def __init__(self, cfg, items):
        self.cfg, self.items = cfg, items

    def apply(self, b):
        for n in self.items:
            n.apply(b)

    def normalize_str(self, s):
        for n in self.items:
            s = n.normalize_str(s)
        return s


def build_normalizer(cfg):
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError(f"normalizer must be an object, got {type(cfg).__name__}")
    t = cfg.get("type")
    if t == "Sequence":
        items = cfg.get("normalizers")
        if not isinstance(items, list):
            raise ValueError("Sequence normalizer needs a 'normalizers' list")
        if any(not isinstance(c, dict) for c in items):
            raise ValueError("Sequence normalizer: every item must be a normalizer object")
        return _Sequence(cfg, [build_normalizer(c) for c in items])
    if t in ("NFC", "NFKC", "NFD", "NFKD"):
        return _NF(cfg, t)
    if t == "Lowercase":
        return _CharMap(cfg, lowercase_map)
    if t == "Nmt":
        return _CharMap(cfg, nmt_map)
    if t == "Strip":
        return _Strip(cfg)
    if t == "StripAccents":
        return _StripAccents(cfg)
    if t == "Prepend":
        return _Prepend(cfg)
    if t == "Replace":
        return _Replace(cfg)
    if t == "Precompiled":
        return _Precompiled(cfg)
    if t == "BertNormalizer":
        return _Bert(cfg)
    if t == "ByteLevel":
        return _ByteLevel(cfg)
    raise NotImplementedError(f"tokenizer.json normalizer {t!r} is not supported by nbtok")


def _single_batch(s):
    b = Batch()
    b.cps = np.frombuffer(utf32(s), np.int32).copy()
    n = len(b.cps)
    b.a_s = np.arange(n, dtype=np.int64)
    b.a_e = b.a_s + 1
    b.doc_start = np.array([0, n], np.int64)
    b.n_docs = 1
    b.U = np.array([[0, -1, 0, n, 0, 0]], np.int64)
    b.threads = 1
    return b
