"""``HuggingFaceModel``: a ``tokenizer.json`` pipeline (HF ``tokenizers`` semantics).

The object layer parses the JSON into per-component configs and flat arrays; a batch goes
through the stages as flat arrays (``nbtok.kernels.hf_text``): added tokens (leftmost-longest,
raw then normalized), normalizers, pre-tokenizers, the model (BPE / Unigram / WordPiece /
WordLevel kernels), then the post-processor. Character offsets into the original text are carried
by per-char alignments exactly as HF's ``NormalizedString`` does.

Per-text Python work happens only where HF semantics need a Unicode algorithm nbtok has no kernel
for: NFC/NFKC/NFD/NFKD on the texts that are not already normalized (``unicodedata``), grapheme
clusters for ``Precompiled`` on texts that contain combining / joining characters (``regex``
``\\X``), and ``Replace`` / ``Split`` regexes that nbtok's scanner does not recognise (``regex``).
"""
import json
import unicodedata
from functools import lru_cache
from pathlib import Path

import numba
import numpy as np

from ..formats.gpt2 import bytes_to_unicode
from ..kernels import hf_models as KM
from ..kernels import hf_text as K
from ..kernels import wordpiece as KW
from ..kernels.hashmap import BytesMap, IntMap
from ..kernels.trie import build_trie
from ..text import fix_surrogates
from ..vocab import CONTROL, NORMAL, UNUSED, Vocab

MAX_ID = 1 << 30


# ---------------------------------------------------------------------------------------------
# Unicode tables (built once per process)

@lru_cache(maxsize=1)
def _all_chars():
    cps = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    return cps.tobytes().decode("utf-32-le")


#: every Unicode class the components below use, shipped as bits in ``data/hf_unicode.npz``
#: (``scripts/gen_hf_unicode.py``: regex 2026.5.9, Unicode 17.0), so no ``regex`` is needed at
#: run time and the classes do not change with the installed ``regex``
GRAPHEME_JOINERS = ("[" + "".join(r"\p{Grapheme_Cluster_Break=%s}" % c for c in (
    "Extend", "ZWJ", "SpacingMark", "Prepend", "Regional_Indicator", "L", "V", "T", "LV", "LVT")) + r"\r]")
HF_UNICODE_CLASSES = (r"\s", r"\p{P}", r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]", r"\p{N}",
                      r"[\p{Cc}\p{Cf}\p{Co}]", r"\p{Mn}", r"\p{Changes_When_Lowercased}", GRAPHEME_JOINERS)
_HF_UNICODE = Path(__file__).resolve().parent.parent / "data" / "hf_unicode.npz"


@lru_cache(maxsize=None)
def _regex_class(prop):
    """bool[0x110000]: the code points in the class ``prop`` (one of ``HF_UNICODE_CLASSES``)."""
    with np.load(_HF_UNICODE) as z:
        bits = z[f"c{HF_UNICODE_CLASSES.index(prop)}"]
    return np.unpackbits(bits)[:0x110000].astype(bool)


@lru_cache(maxsize=1)
def hf_class_table():
    """uint8[0x110000] of the ``hf_text.C_*`` bits. Unicode properties come from the ``regex``
    module (Unicode 17.0, close to the Rust crates HF uses; Python's ``unicodedata`` is older)."""
    table = np.zeros(0x110000, np.uint8)
    table[_regex_class(r"\s")] |= K.C_WS
    is_p = _regex_class(r"\p{P}")
    table[_regex_class(r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]")] |= K.C_WORD
    table[is_p] |= K.C_PUNCT
    ascii_punct = np.zeros(0x110000, bool)
    for r in ((33, 47), (58, 64), (91, 96), (123, 126)):
        ascii_punct[r[0]:r[1] + 1] = True
    table[is_p | ascii_punct] |= K.C_BERT_PUNCT
    table[_regex_class(r"\p{N}")] |= K.C_NUMERIC
    # BertNormalizer's is_other (unicode_categories): Cc, Cf, Co, Cs -- unassigned code points are kept
    ctrl = _regex_class(r"[\p{Cc}\p{Cf}\p{Co}]")
    ctrl[0xD800:0xE000] = True
    ctrl[[9, 10, 13]] = False
    table[ctrl] |= K.C_CONTROL
    table[_regex_class(r"\p{Mn}")] |= K.C_MN
    for a, b in ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
                 (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)):
        table[a:b + 1] |= K.C_CJK
    return table


def _char_map(pairs):
    """IntMap + ragged replacement table from ``{cp: str}``."""
    keys = np.array(sorted(pairs), np.int64)
    repl, off = [], [0]
    for k in keys.tolist():
        r = [ord(c) for c in pairs[k]]
        repl.extend(r)
        off.append(len(repl))
    mp = IntMap.from_arrays(keys, np.arange(len(keys), dtype=np.int64))
    max_repl = max([off[i + 1] - off[i] for i in range(len(keys))] + [1])
    return mp, np.array(repl, np.int32), np.array(off, np.int64), max_repl


@lru_cache(maxsize=1)
def _lowercase_map():
    """Rust ``char::to_lowercase`` as a char map (Python's ``str.lower`` per char)."""
    pairs = {}
    for c in np.nonzero(_regex_class(r"\p{Changes_When_Lowercased}"))[0].tolist():
        ch = chr(c)
        lo = ch.lower()
        if lo != ch:
            pairs[c] = lo
    return _char_map(pairs)


@lru_cache(maxsize=4)
def _nf_unstable(form):
    """bool[0x110000]: chars that may change under ``form`` or interact with neighbours."""
    out = np.zeros(0x110000, bool)
    comb = unicodedata.combining
    norm = unicodedata.normalize
    second = set()
    for c in range(0x110000):
        if 0xD800 <= c < 0xE000:
            continue
        ch = chr(c)
        if comb(ch) or norm(form, ch) != ch:
            out[c] = True
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                second.add(int(parts[1], 16))
    out[list(second)] = True
    out[0x1160:0x11FF + 1] = True   # Hangul V / T jamo compose with a preceding syllable
    out[0xD7B0:0xD7FF + 1] = True
    return out


@lru_cache(maxsize=1)
def _grapheme_joiners():
    """bool[0x110000]: chars that can join a neighbour into a multi-char grapheme cluster."""
    return _regex_class(GRAPHEME_JOINERS)


# ---------------------------------------------------------------------------------------------
# NFC / NFKC / NFD / NFKD with HF's change bookkeeping

def _decompose(s, compat):
    """[(char, change)] after full decomposition + canonical ordering."""
    form = "NFKD" if compat else "NFD"
    out = []
    for ch in s:
        d = unicodedata.normalize(form, ch)
        out.append((d[0], 0))
        out.extend((c, 1) for c in d[1:])
    # canonical ordering: stable sort of runs of non-starters by combining class
    comb = unicodedata.combining
    i = 0
    n = len(out)
    while i < n:
        if comb(out[i][0]) == 0:
            i += 1
            continue
        j = i
        while j < n and comb(out[j][0]) != 0:
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j], key=lambda t: comb(t[0]))
        i = j
    return out


def _compose(items):
    comb = unicodedata.combining
    out = []
    starter = -1
    last_cc = -1
    for ch, chg in items:
        cc = comb(ch)
        if starter >= 0 and (last_cc < cc or (last_cc == 0 and len(out) - 1 == starter)) \
                and (cc != 0 or len(out) - 1 == starter):
            sc, schg = out[starter]
            comp = unicodedata.normalize("NFC", sc + ch)
            if len(comp) == 1 and unicodedata.normalize("NFD", comp) == unicodedata.normalize("NFD", sc + ch):
                out[starter] = (comp, schg + chg - 1)
                continue
        if cc == 0:
            starter = len(out)
            last_cc = 0
        else:
            last_cc = cc
        out.append((ch, chg))
        if cc == 0:
            last_cc = 0
    return out


def nf_transform(s, form):
    """HF ``NormalizedString::nfc()`` etc.: [(char, change)] for ``s``."""
    items = _decompose(s, form in ("NFKC", "NFKD"))
    if form in ("NFC", "NFKC"):
        items = _compose(items)
    if "".join(c for c, _ in items) != unicodedata.normalize(form, s):
        # should not happen; fall back to a plain left-aligned mapping
        target = unicodedata.normalize(form, s)
        items = [(c, 0) for c in target[:len(s)]] + [(c, 1) for c in target[len(s):]]
        if len(target) < len(s) and items:
            items[-1] = (items[-1][0], len(target) - len(s))
    return items


# ---------------------------------------------------------------------------------------------
# threads: the ``*_range`` kernels release the GIL

_POOL = {}


def run_chunks(fn, U, args, num_threads=None):
    """``fn(U, lo, hi, *args)`` over chunks of the units, on ``num_threads`` threads
    (default: ``numba.get_num_threads()``)."""
    threads = numba.get_num_threads() if num_threads is None else max(1, int(num_threads))
    n = len(U)
    if threads == 1 or n < 64:
        fn(U, 0, n, *args)
        return
    n_chunks = min(n, 4 * threads)
    bounds = K.unit_chunks(U, n_chunks).tolist()
    pool = _POOL.get(threads)
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor
        pool = _POOL[threads] = ThreadPoolExecutor(threads, thread_name_prefix="nbtok-hf")
    futures = [pool.submit(fn, U, bounds[c], bounds[c + 1], *args)
               for c in range(n_chunks) if bounds[c + 1] > bounds[c]]
    for f in futures:
        f.result()


# ---------------------------------------------------------------------------------------------
# floats as ``tokenizers`` reads them

_POW10 = [float(f"1e{i}") for i in range(309)]
_U64 = (1 << 64) - 1


class JsonFloat(float):
    """A float that remembers its JSON text (``json.loads(..., parse_float=JsonFloat.parse)``)."""

    __slots__ = ("text",)

    @classmethod
    def parse(cls, text):
        f = cls(text)
        f.text = text
        return f


def serde_f64(x):
    """The f64 ``serde_json`` (without ``float_roundtrip``, as ``tokenizers`` builds it) reads for a
    JSON number: the decimal significand as a u64 (digits past 19-20 dropped), converted to f64,
    then ONE multiplication / division by a power of ten. That double rounding can differ from a
    correctly rounded parse in the last bit, which flips Unigram ties; HF's scores are these."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"expected a number, got {x!r}")
    if isinstance(x, int):
        return float(x)
    text = getattr(x, "text", None) or repr(float(x))
    if text in ("inf", "-inf", "nan"):
        return float(x)
    s = text
    i, n, pos = 0, len(s), True
    if s[0] == "-":
        pos, i = False, 1
    sig = exp = 0
    while i < n and s[i].isdigit():
        d = ord(s[i]) - 48
        if sig * 10 + d > _U64:
            while i < n and s[i].isdigit():
                exp += 1
                i += 1
            break
        sig = sig * 10 + d
        i += 1
    if i < n and s[i] == ".":
        i += 1
        overflow = False
        while i < n and s[i].isdigit():
            d = ord(s[i]) - 48
            if overflow or sig * 10 + d > _U64:
                overflow = True
            else:
                sig = sig * 10 + d
                exp -= 1
            i += 1
    if i < n and s[i] in "eE":
        i += 1
        sign = 1
        if s[i] in "+-":
            sign = 1 if s[i] == "+" else -1
            i += 1
        exp += sign * int(s[i:])
    f = float(sig)
    while True:
        a = abs(exp)
        if a < len(_POW10):
            f = f * _POW10[a] if exp >= 0 else f / _POW10[a]
            break
        if f == 0.0:
            break
        f /= 1e308
        exp += 308
    return f if pos else -f


# ---------------------------------------------------------------------------------------------
# batch state

class _Batch:
    __slots__ = ("U", "cps", "a_s", "a_e", "doc_start", "n_docs", "threads")

    def text_rows(self):
        return np.nonzero(self.U[:, K.TOK] < 0)[0]

    def unit_str(self, u):
        s, e = int(self.U[u, K.START]), int(self.U[u, K.END])
        return self.cps[s:e].tobytes().decode("utf-32-le")

    def set(self, res):
        self.U, self.cps, self.a_s, self.a_e = res

    def seg_starts(self):
        rows = self.text_rows()
        s = self.U[rows, K.START]
        if not len(self.a_s):
            return np.zeros(len(rows), np.int64)
        return np.ascontiguousarray(self.a_s[np.minimum(s, len(self.a_s) - 1)], np.int64)


def _utf32(text):
    try:
        return text.encode("utf-32-le")
    except UnicodeEncodeError:
        return fix_surrogates(text).encode("utf-32-le")


def _transform_units(b, per_unit):
    """Apply python-computed transformations ``{row: [(char, change), ...]}`` (other text rows
    unchanged) through the ``apply_transforms`` kernel."""
    rows = b.text_rows()
    t_cps, t_chg, t_off = [], [], [0]
    for u in rows.tolist():
        items = per_unit.get(u)
        if items is None:
            s, e = int(b.U[u, K.START]), int(b.U[u, K.END])
            t_cps.append(b.cps[s:e])
            t_chg.append(np.zeros(e - s, np.int64))
            t_off.append(t_off[-1] + e - s)
        else:
            t_cps.append(np.array([ord(c) for c, _ in items], np.int32))
            t_chg.append(np.array([c for _, c in items], np.int64))
            t_off.append(t_off[-1] + len(items))
    cat_c = np.concatenate(t_cps).astype(np.int32) if t_cps else np.zeros(0, np.int32)
    cat_g = np.concatenate(t_chg).astype(np.int64) if t_chg else np.zeros(0, np.int64)
    init = np.zeros(len(rows), np.int64)
    b.set(K.apply_transforms(b.U, b.a_s, b.a_e, cat_c, cat_g, np.array(t_off, np.int64), init, b.seg_starts()))


def _flags_per_unit(b, flag_table):
    """bool per text row: does the unit contain a flagged char?"""
    rows = b.text_rows()
    if not len(rows) or not len(b.cps):
        return rows, np.zeros(len(rows), bool)
    f = flag_table[b.cps].astype(np.int64)
    cum = np.concatenate([[0], np.cumsum(f)])
    s = b.U[rows, K.START]
    e = b.U[rows, K.END]
    return rows, (cum[e] - cum[s]) > 0


# ---------------------------------------------------------------------------------------------
# normalizers

def _cp_array(s):
    return np.array([ord(c) for c in s], np.int32)


class _Normalizer:
    def to_json(self):
        return self.cfg


class _NF(_Normalizer):
    def __init__(self, cfg, form):
        self.cfg, self.form = cfg, form

    def apply(self, b):
        rows, flagged = _flags_per_unit(b, _nf_unstable(self.form))
        per = {}
        for u in rows[flagged].tolist():
            s = b.unit_str(u)
            if unicodedata.is_normalized(self.form, s):
                continue
            per[u] = nf_transform(s, self.form)
        if per:
            _transform_units(b, per)

    def normalize_str(self, s):
        return unicodedata.normalize(self.form, s)


class _CharMap(_Normalizer):
    def __init__(self, cfg, table_fn):
        self.cfg, self.table_fn = cfg, table_fn

    def apply(self, b):
        mp, repl, off, max_repl = self.table_fn()
        b.set(K.map_chars(b.U, b.cps, b.a_s, b.a_e, mp.keys, mp.values, repl, off, max_repl))

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
        K.strip_units(b.U, b.cps, hf_class_table(), self.left, self.right)

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
        self.pre = _cp_array(_req_str(cfg, "prepend"))

    def apply(self, b):
        b.set(K.prepend(b.U, b.cps, b.a_s, b.a_e, self.pre, 0, -1, b.doc_start))

    def normalize_str(self, s):
        return "".join(chr(c) for c in self.pre) + s if s else s


class _Replace(_Normalizer):
    def __init__(self, cfg):
        self.cfg = cfg
        pat = cfg.get("pattern")
        if not isinstance(pat, dict) or len(pat) != 1:
            raise ValueError(f"Replace: pattern must be {{'String': ...}} or {{'Regex': ...}}, got {pat!r}")
        self.content = _req_str(cfg, "content")
        if "String" in pat:
            self.string = pat["String"]
            if not isinstance(self.string, str) or not self.string:
                raise ValueError("Replace: pattern String must be a non-empty string")
            self.regex = None
        elif "Regex" in pat:
            self.string = None
            self.regex = _compile_regex(pat["Regex"], "Replace")
        else:
            raise ValueError(f"Replace: unknown pattern kind {list(pat)}")

    def apply(self, b):
        if self.string is not None:
            b.set(K.replace_string(b.U, b.cps, b.a_s, b.a_e, _cp_array(self.string), _cp_array(self.content)))
            return
        ms, me, m_off = _regex_matches(b, self.regex)
        b.set(K.replace_matches(b.U, b.cps, b.a_s, b.a_e, ms, me, m_off, _cp_array(self.content)))

    def normalize_str(self, s):
        if self.string is not None:
            return s.replace(self.string, self.content)
        return self.regex.sub(lambda m: self.content if m.end() > m.start() else m.group(), s)


def _regex_matches(b, rx):
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
        from ..kernels.normalize import decode_charsmap
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
        self.pool_max = int(K._pool_max(self.pool))

    def apply(self, b):
        if not len(self.units):
            return
        gb = np.ones(len(b.cps) + 1, np.bool_)
        rows, flagged = _flags_per_unit(b, _grapheme_joiners())
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
        b.set(K.precompiled(b.U, b.cps, b.a_s, b.a_e, gb, self.units, self.pool, self.pool_max, b.seg_starts()))

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
            b.set(K.map_chars(b.U, b.cps, b.a_s, b.a_e, *_bert_clean_map()))
        if self.chinese:
            b.set(K.map_chars(b.U, b.cps, b.a_s, b.a_e, *_bert_cjk_map()))
        if self.strip_accents:
            _NF(None, "NFD").apply(b)
            b.set(K.map_chars(b.U, b.cps, b.a_s, b.a_e, *_mn_delete_map()))
        if self.lower:
            _CharMap(None, _lowercase_map).apply(b)
        del cls

    def normalize_str(self, s):
        bb = _single_batch(s)
        self.apply(bb)
        return bb.unit_str(0) if len(bb.U) else ""


class _StripAccents(_Normalizer):
    def __init__(self, cfg):
        self.cfg = cfg

    def apply(self, b):
        b.set(K.map_chars(b.U, b.cps, b.a_s, b.a_e, *_mn_delete_map()))

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
    return _unpack_map(_char_map(pairs))


@lru_cache(maxsize=1)
def _bert_cjk_map():
    cls = hf_class_table()
    return _unpack_map(_char_map({c: " " + chr(c) + " " for c in np.nonzero(cls & K.C_CJK)[0].tolist()}))


@lru_cache(maxsize=1)
def _mn_delete_map():
    cls = hf_class_table()
    return _unpack_map(_char_map({c: "" for c in np.nonzero(cls & K.C_MN)[0].tolist()}))


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


def _req_str(cfg, key):
    v = cfg.get(key)
    if not isinstance(v, str):
        raise ValueError(f"{cfg.get('type')}: '{key}' must be a string, got {v!r}")
    return v


def _compile_regex(pattern, where):
    import regex
    if not isinstance(pattern, str):
        raise ValueError(f"{where}: regex pattern must be a string")
    try:
        return regex.compile(pattern)
    except regex.error as e:
        raise ValueError(f"{where}: invalid regex {pattern!r}: {e}") from None


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
        return _CharMap(cfg, _lowercase_map)
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
    raise NotImplementedError(f"tokenizer.json normalizer {t!r} is not supported by nbtok")


def _single_batch(s):
    b = _Batch()
    b.cps = np.frombuffer(_utf32(s), np.int32).copy()
    n = len(b.cps)
    b.a_s = np.arange(n, dtype=np.int64)
    b.a_e = b.a_s + 1
    b.doc_start = np.array([0, n], np.int64)
    b.n_docs = 1
    b.U = np.array([[0, -1, 0, n, 0, 0]], np.int64)
    b.threads = 1
    return b


# ---------------------------------------------------------------------------------------------
# pre-tokenizers

BEHAVIORS = {"Isolated": K.ISOLATED, "Removed": K.REMOVED, "MergedWithPrevious": K.MERGED_PREV,
             "MergedWithNext": K.MERGED_NEXT, "Contiguous": K.CONTIGUOUS}
GPT2_HF = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


class _RegexSplitter:
    """Matches of a regex over text units: nbtok's scanner when it knows the pattern, else ``regex``."""

    def __init__(self, pattern, where):
        from ..pretokenizer import scanner_config
        self.pattern = pattern
        self.cfg = scanner_config(pattern)
        self.regex = None if self.cfg is not None else _compile_regex(pattern, where)

    def matches(self, b):
        if self.cfg is not None:
            from ..unicode_classes import load_table
            buf, offs, char_of = K.units_utf8(b.U, b.cps)
            out = np.empty(len(buf), np.int64)
            counts = np.zeros(len(b.U), np.int64)
            run_chunks(K.pretokenize_range, b.U, (buf, offs, load_table("hf"), self.cfg, out, counts),
                       getattr(b, "threads", None))
            return K.ends_to_matches(b.U, offs, out, counts, char_of)
        return _regex_matches(b, self.regex)


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
            b.set(K.prepend(b.U, b.cps, b.a_s, b.a_e, np.array([32], np.int32), 1, 32, b.doc_start))
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
        b.set(K.replace_string(b.U, b.cps, b.a_s, b.a_e, np.array([32], np.int32), np.array([r], np.int32)))
        if self.scheme != "never":
            b.set(K.prepend(b.U, b.cps, b.a_s, b.a_e, np.array([r], np.int32),
                            1 if self.scheme == "always" else 2, r, b.doc_start))
        if self.split:
            ms, me, m_off = K.class_matches(b.U, b.cps, hf_class_table(), 0, r)
            b.U = K.split_units(b.U, ms, me, m_off, K.MERGED_NEXT, False)


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
    if t == "Whitespace":
        sp = _SplitPre({"type": "Split", "pattern": {"Regex": r"\w+|[^\w\s]+"}, "behavior": "Removed",
                        "invert": True})
        sp.cfg = cfg
        return sp
    raise NotImplementedError(f"tokenizer.json pre-tokenizer {t!r} is not supported by nbtok")


# ---------------------------------------------------------------------------------------------
# decoders

class _ByteCache(dict):
    """token -> bytes through GPT-2's byte alphabet (raw UTF-8 if a char is outside it), memoised."""

    def __init__(self):
        super().__init__()
        self.table = {c: b for b, c in bytes_to_unicode().items()}

    def __missing__(self, t):
        try:
            v = bytes(self.table[c] for c in t)
        except KeyError:
            v = t.encode("utf-8", errors="surrogatepass")
        self[t] = v
        return v


def _dec_bytelevel(cfg):
    cache = _ByteCache()

    def run(tokens):
        return [b"".join(map(cache.__getitem__, tokens)).decode("utf-8", errors="replace")]
    return run


def _one_char(cfg, key, default, where):
    c = cfg.get(key, default)
    if not isinstance(c, str) or len(c) != 1:
        raise ValueError(f"{where}: {key} must be one character, got {c!r}")
    return c


def _opt_str(cfg, key, default, where):
    v = cfg.get(key, default)
    if not isinstance(v, str):
        raise ValueError(f"{where}: {key} must be a string, got {v!r}")
    return v


def _count(cfg, key, where):
    n = cfg.get(key, 0)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{where}: {key} must be a non-negative integer, got {n!r}")
    return n


def _dec_metaspace(cfg):
    rep = _one_char(cfg, "replacement", "\u2581", "Metaspace decoder")
    scheme = cfg.get("prepend_scheme")
    if scheme is None:
        scheme = "always" if cfg.get("add_prefix_space", True) else "never"
    if scheme not in ("always", "first", "never"):
        raise ValueError(f"Metaspace decoder: unknown prepend_scheme {scheme!r}")

    def run(tokens):
        out = []
        for i, t in enumerate(tokens):
            if i == 0 and scheme != "never":
                out.append(t.replace(rep, ""))
            else:
                out.append(t.replace(rep, " "))
        return out
    return run


def _dec_replace(cfg):
    pat = cfg.get("pattern")
    content = _req_str(cfg, "content")
    if isinstance(pat, dict) and "String" in pat:
        s = pat["String"]
        if not isinstance(s, str):
            raise ValueError(f"Replace decoder: pattern String must be a string, got {s!r}")
        return lambda tokens: [t.replace(s, content) for t in tokens]
    if isinstance(pat, dict) and "Regex" in pat:
        rx = _compile_regex(pat["Regex"], "Replace decoder")
        return lambda tokens: [rx.sub(lambda m: content, t) for t in tokens]
    raise ValueError(f"Replace decoder: bad pattern {pat!r}")


def _dec_byte_fallback(cfg):
    def flush(buf, out):
        if buf:
            try:
                out.append(bytes(buf).decode("utf-8"))
            except UnicodeDecodeError:
                out.extend("\ufffd" for _ in buf)
            buf.clear()

    def run(tokens):
        out, buf = [], []
        for t in tokens:
            v = None
            if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
                try:
                    v = int(t[3:5], 16)
                except ValueError:
                    v = None
                if v is not None and not all(c in "0123456789abcdefABCDEF" for c in t[3:5]):
                    v = None
            if v is not None:
                buf.append(v)
            else:
                flush(buf, out)
                out.append(t)
        flush(buf, out)
        return out
    return run


def _dec_strip(cfg):
    content = _one_char(cfg, "content", " ", "Strip decoder")
    start, stop = _count(cfg, "start", "Strip decoder"), _count(cfg, "stop", "Strip decoder")

    def one(t):
        a = 0
        for i in range(min(start, len(t))):
            if t[i] == content:
                a = i + 1
            else:
                break
        e = len(t)
        for i in range(stop):
            idx = len(t) - i - 1
            if idx >= 0 and t[idx] == content:
                e = idx
            else:
                break
        return t[a:e] if e >= a else ""
    return lambda tokens: [one(t) for t in tokens]


def _wp_cleanup(s):
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        s = s.replace(a, b)
    return s


def _dec_wordpiece(cfg):
    prefix = _opt_str(cfg, "prefix", "##", "WordPiece decoder")
    cleanup = bool(cfg.get("cleanup", True))

    def run(tokens):
        out = []
        for i, t in enumerate(tokens):
            if i != 0:
                t = t[len(prefix):] if t.startswith(prefix) else " " + t
            if cleanup:
                t = _wp_cleanup(t)
            out.append(t)
        return out
    return run


def _dec_bpe(cfg):
    suffix = _opt_str(cfg, "suffix", "</w>", "BPE decoder")

    def run(tokens):
        n = len(tokens)
        return [t.replace(suffix, "" if i == n - 1 else " ") for i, t in enumerate(tokens)]
    return run


def build_decoder(cfg):
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError(f"decoder must be an object, got {type(cfg).__name__}")
    t = cfg.get("type")
    if t == "Sequence":
        items = cfg.get("decoders")
        if not isinstance(items, list):
            raise ValueError("Sequence decoder needs a 'decoders' list")
        if any(not isinstance(c, dict) for c in items):
            raise ValueError("Sequence decoder: every item must be a decoder object")
        fns = [build_decoder(c) for c in items]

        def run(tokens):
            for f in fns:
                tokens = f(tokens)
            return tokens
        return run
    if t == "ByteLevel":
        return _dec_bytelevel(cfg)
    if t == "Metaspace":
        return _dec_metaspace(cfg)
    if t == "Replace":
        return _dec_replace(cfg)
    if t == "ByteFallback":
        return _dec_byte_fallback(cfg)
    if t == "Fuse":
        return lambda tokens: ["".join(tokens)]
    if t == "Strip":
        return _dec_strip(cfg)
    if t == "WordPiece":
        return _dec_wordpiece(cfg)
    if t == "BPEDecoder":
        return _dec_bpe(cfg)
    raise NotImplementedError(f"tokenizer.json decoder {t!r} is not supported by nbtok")


# ---------------------------------------------------------------------------------------------
# post-processors

class _Post:
    """Flattened post-processor: optional offset trimming + a template of specials around A."""

    def __init__(self, cfg, token_ids):
        self.cfg = cfg
        self.trim = False
        self.trim_prefix_space = False
        self.prefix_ids = np.zeros(0, np.int32)
        self.suffix_ids = np.zeros(0, np.int32)
        self._parse(cfg, token_ids)

    def _parse(self, cfg, token_ids):
        if cfg is None:
            return
        if not isinstance(cfg, dict):
            raise ValueError("post_processor must be an object")
        t = cfg.get("type")
        if t == "Sequence":
            items = cfg.get("processors")
            if not isinstance(items, list):
                raise ValueError("Sequence post-processor needs a 'processors' list")
            for c in items:
                self._parse(c, token_ids)
            return
        if t == "ByteLevel":
            if cfg.get("trim_offsets", True):
                self.trim = True
                self.trim_prefix_space = bool(cfg.get("add_prefix_space", True))
            return
        if t in ("RobertaProcessing", "BertProcessing"):
            sep, cls = cfg.get("sep"), cfg.get("cls")
            if not (isinstance(sep, list) and len(sep) == 2 and isinstance(cls, list) and len(cls) == 2):
                raise ValueError(f"{t}: 'sep' and 'cls' must be [token, id]")
            self._set_template([_int_id(cls[1], t)], [_int_id(sep[1], t)])
            if t == "RobertaProcessing" and cfg.get("trim_offsets", True):
                self.trim = True
                self.trim_prefix_space = bool(cfg.get("add_prefix_space", True))
            return
        if t == "TemplateProcessing":
            single = cfg.get("single")
            specials = cfg.get("special_tokens") or {}
            if not isinstance(single, list) or not isinstance(specials, dict):
                raise ValueError("TemplateProcessing: 'single' must be a list and 'special_tokens' an object")
            pre, suf, seen = [], [], False
            for piece in single:
                if not isinstance(piece, dict) or len(piece) != 1:
                    raise ValueError(f"TemplateProcessing: bad template piece {piece!r}")
                if "Sequence" in piece:
                    if seen:
                        raise NotImplementedError("TemplateProcessing with the sequence twice is not supported")
                    seen = True
                elif "SpecialToken" in piece:
                    name = piece["SpecialToken"].get("id")
                    sp = specials.get(name)
                    if not isinstance(sp, dict) or not isinstance(sp.get("ids"), list):
                        raise ValueError(f"TemplateProcessing: special token {name!r} is not defined")
                    ids = [_int_id(i, "TemplateProcessing") for i in sp["ids"]]
                    (suf if seen else pre).extend(ids)
                else:
                    raise ValueError(f"TemplateProcessing: bad template piece {piece!r}")
            self._set_template(pre, suf)
            return
        raise NotImplementedError(f"tokenizer.json post-processor {t!r} is not supported by nbtok")

    def _set_template(self, pre, suf):
        self.prefix_ids = np.concatenate([self.prefix_ids, np.array(pre, np.int32)]).astype(np.int32)
        self.suffix_ids = np.concatenate([np.array(suf, np.int32), self.suffix_ids]).astype(np.int32)


def _int_id(v, where):
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < MAX_ID:
        raise ValueError(f"{where}: token id must be a non-negative integer, got {v!r}")
    return v


# ---------------------------------------------------------------------------------------------
# the model

class HuggingFaceModel:
    """A ``tokenizer.json`` tokenizer; see the module docstring."""

    model_type = "huggingface"
    accepts_add_special_tokens = True

    def __init__(self, config):
        if not isinstance(config, dict):
            raise ValueError("tokenizer.json must hold a JSON object")
        self.config = config
        model = config.get("model")
        if not isinstance(model, dict):
            raise ValueError("tokenizer.json has no 'model' object")
        self.kind = model.get("type")
        if self.kind is None:
            # older files omit the type: infer it
            if "merges" in model:
                self.kind = "BPE"
            elif isinstance(model.get("vocab"), list):
                self.kind = "Unigram"
            elif "max_input_chars_per_word" in model:
                self.kind = "WordPiece"
            else:
                self.kind = "WordLevel"
        if self.kind not in ("BPE", "Unigram", "WordPiece", "WordLevel"):
            raise NotImplementedError(f"tokenizer.json model {self.kind!r} is not supported by nbtok")
        self._build_model(model)
        self._build_added(config.get("added_tokens") or [])
        self.normalizer = build_normalizer(config.get("normalizer"))
        self.pre_tokenizer = build_pre_tokenizer(config.get("pre_tokenizer"))
        self.decoder = build_decoder(config.get("decoder"))
        self.post = _Post(config.get("post_processor"), None)
        for i in np.concatenate([self.post.prefix_ids, self.post.suffix_ids]).tolist():
            if i >= len(self.tokens):
                raise ValueError(f"post-processor special token id {i} is outside the vocabulary")
        self._build_token_tables()
        self._dec_tokens = list(self.tokens)
        self._dec_tokens_skip = [None if i in self.special_ids else t for i, t in enumerate(self.tokens)]
        pad = config.get("padding")
        self.pad_id = self.pad_token = None
        if isinstance(pad, dict):
            self.pad_id = pad.get("pad_id")
            self.pad_token = pad.get("pad_token")
        self.truncation = _truncation_params(config.get("truncation"))
        self.padding = _padding_params(config.get("padding"))
        self._build_added_tries()
        from .hf_fused import fuse
        self.fused = fuse(self)

    # ------------------------------------------------------------------ construction
    def _build_model(self, m):
        self.model_cfg = m
        if self.kind == "Unigram":
            vocab = m.get("vocab")
            if not isinstance(vocab, list):
                raise ValueError("Unigram: 'vocab' must be a list of [piece, score]")
            pieces, scores = [], []
            for i, e in enumerate(vocab):
                if not (isinstance(e, list) and len(e) == 2 and isinstance(e[0], str)
                        and isinstance(e[1], (int, float)) and not isinstance(e[1], bool)):
                    raise ValueError(f"Unigram: vocab entry {i} must be [piece, score], got {e!r}")
                pieces.append(e[0])
                scores.append(serde_f64(e[1]))
            if not pieces:
                raise ValueError("Unigram: empty vocabulary")
            unk = m.get("unk_id")
            if unk is not None:
                unk = _int_id(unk, "Unigram unk_id")
                if unk >= len(pieces):
                    raise ValueError("Unigram: unk_id is outside the vocabulary")
            self.unk_id = -1 if unk is None else unk
            self.byte_fallback = bool(m.get("byte_fallback", False))
            self.model_tokens = pieces
            self.scores = np.array(scores, np.float64)
            if not np.isfinite(self.scores).all():
                raise ValueError("Unigram: scores must be finite")
            self.token_to_id = {}
            for i, p in enumerate(pieces):
                self.token_to_id[p] = i
        else:
            vocab = m.get("vocab")
            if not isinstance(vocab, dict):
                raise ValueError(f"{self.kind}: 'vocab' must be an object token -> id")
            n = 0
            for tok, i in vocab.items():
                _int_id(i, f"{self.kind} vocab")
                n = max(n, i + 1)
            pieces = [None] * n
            for tok, i in vocab.items():
                if pieces[i] is not None:
                    raise ValueError(f"{self.kind}: id {i} is given to two tokens")
                pieces[i] = tok
            self.model_tokens = pieces
            self.token_to_id = dict(vocab)
            unk = m.get("unk_token")
            if unk is not None and not isinstance(unk, str):
                raise ValueError(f"{self.kind}: unk_token must be a string")
            self.unk_token = unk
            self.unk_id = vocab.get(unk, -1) if unk is not None else -1
        data = [(p or "").encode("utf-8") for p in self.model_tokens]
        self.model_vocab = Vocab(data)
        mv = self.model_vocab
        self._V = (mv.map.slot_ids, mv.map.slot_hashes, mv.piece_bytes, mv.piece_offsets)
        self.byte_tok = np.full(256, -1, np.int64)
        for b in range(256):
            self.byte_tok[b] = self.token_to_id.get(f"<0x{b:02X}>", -1)
        if self.kind == "BPE":
            self._build_bpe(m)
        elif self.kind == "Unigram":
            keys = np.nonzero(np.diff(mv.piece_offsets) > 0)[0]
            bc, value = build_trie(mv.piece_bytes, mv.piece_offsets, keys)
            params = np.array([self.unk_id, 1, int(self.byte_fallback)], np.int64)
            unk_score = np.array([self.scores.min() - 10.0], np.float64)
            self._G = (bc, value, self.scores, params, unk_score, self.byte_tok)
        elif self.kind == "WordPiece":
            if self.unk_id < 0:
                raise ValueError("WordPiece: unk_token must be in the vocabulary")
            prefix = m.get("continuing_subword_prefix", "##")
            if not isinstance(prefix, str):
                raise ValueError("WordPiece: continuing_subword_prefix must be a string")
            self.wp_prefix = np.frombuffer(prefix.encode("utf-8"), np.uint8).copy()
            mc = m.get("max_input_chars_per_word", 100)
            self.wp_max = _int_id(mc, "WordPiece max_input_chars_per_word")

    def _build_bpe(self, m):
        if m.get("dropout") not in (None, 0, 0.0):
            raise NotImplementedError("BPE dropout in tokenizer.json is not supported by nbtok")
        prefix = m.get("continuing_subword_prefix")
        suffix = m.get("end_of_word_suffix")
        for name, v in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix)):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"BPE: {name} must be a string or null")
        self.bpe_prefix, self.bpe_suffix = prefix or None, suffix or None
        self.fuse_unk = bool(m.get("fuse_unk", False))
        self.byte_fallback = bool(m.get("byte_fallback", False))
        self.ignore_merges = bool(m.get("ignore_merges", False))
        vocab = self.token_to_id
        # single-char symbols (with the prefix / suffix variants)
        ck, cv = [], []
        pre, suf = self.bpe_prefix or "", self.bpe_suffix or ""
        for tok, i in vocab.items():
            variants = [(0, tok)]
            if pre and tok.startswith(pre):
                variants.append((1, tok[len(pre):]))
            if suf and tok.endswith(suf):
                variants.append((2, tok[:len(tok) - len(suf)]))
            if pre and suf and tok.startswith(pre) and tok.endswith(suf) and len(tok) >= len(pre) + len(suf):
                variants.append((3, tok[len(pre):len(tok) - len(suf)]))
            for flags, core in variants:
                if len(core) == 1:
                    ck.append(ord(core) | (flags << 32))
                    cv.append(i)
        cmap = IntMap.from_arrays(np.array(ck, np.int64), np.array(cv, np.int64))
        merges = m.get("merges")
        if merges is None:
            merges = []
        if not isinstance(merges, list):
            raise ValueError("BPE: 'merges' must be a list")
        plen = len(pre.encode("utf-8")) if pre else 0
        keys = np.empty(len(merges), np.int64)
        vals = np.empty(len(merges), np.int64)
        self.merges = []
        for r, mg in enumerate(merges):
            if isinstance(mg, str):
                parts = mg.split(" ")
                if len(parts) != 2:
                    raise ValueError(f"BPE: merge {r} must be 'left right', got {mg!r}")
                a, b = parts
            elif isinstance(mg, list) and len(mg) == 2 and all(isinstance(x, str) for x in mg):
                a, b = mg
            else:
                raise ValueError(f"BPE: merge {r} must be 'left right' or [left, right], got {mg!r}")
            ia, ib = vocab.get(a), vocab.get(b)
            bb = b.encode("utf-8")[plen:].decode("utf-8", errors="strict") if plen else b
            im = vocab.get(a + bb)
            if ia is None or ib is None or im is None:
                missing = a if ia is None else b if ib is None else a + bb
                raise ValueError(f"BPE: merge {r} ({a!r} {b!r}): {missing!r} is not in the vocabulary")
            keys[r] = (ia << 32) | ib
            vals[r] = (r << 32) | im
            self.merges.append((a, b))
        self.merge_ids = (keys, vals)   # (left << 32 | right, rank << 32 | merged) in rank order
        # a repeated pair keeps its LAST rank (HF collects the merges into a HashMap)
        mm = IntMap.from_arrays(keys[::-1].copy(), vals[::-1].copy())
        params = np.array([self.unk_id, int(self.fuse_unk), int(self.byte_fallback), int(self.ignore_merges),
                           int(bool(pre)), int(bool(suf))], np.int64)
        self._B = (cmap.keys, cmap.values, self.byte_tok, params,
                   np.frombuffer(pre.encode("utf-8"), np.uint8).copy(),
                   np.frombuffer(suf.encode("utf-8"), np.uint8).copy(), mm.keys, mm.values)
        self._bpe_per_char = 4 + len(pre.encode()) + len(suf.encode())
        self._keep = (cmap, mm)

    def _build_added(self, added):
        if not isinstance(added, list):
            raise ValueError("'added_tokens' must be a list")
        # HF ignores the ids written in the file: ``AddedVocabulary::add_tokens`` gives each token the
        # id it already has (added before, or in the model's vocabulary), else the next free id.
        model_size = len(self.token_to_id) if self.kind != "Unigram" else len(self.model_tokens)
        by_content, by_id = {}, {}
        next_id = model_size
        for e in added:
            if not isinstance(e, dict) or not isinstance(e.get("content"), str):
                raise ValueError(f"added token must be an object with a string 'content', got {e!r}")
            if "id" in e:
                _int_id(e.get("id"), "added token")
            if not e["content"]:
                continue
            tok = {"content": e["content"], "single_word": bool(e.get("single_word", False)),
                   "lstrip": bool(e.get("lstrip", False)), "rstrip": bool(e.get("rstrip", False)),
                   "normalized": bool(e.get("normalized", not e.get("special", False))),
                   "special": bool(e.get("special", False))}
            i = by_content.get(tok["content"])
            if i is not None and by_id.get(i) == tok:
                continue
            if i is None:
                i = self.token_to_id.get(tok["content"])
            if i is None:
                i = next_id
                next_id += 1
            if i >= MAX_ID:
                raise ValueError("added token id is too large")
            by_content[tok["content"]] = i
            by_id[i] = tok
        self.added = [dict(t, id=i) for i, t in by_id.items()]
        n = max([len(self.model_tokens)] + [a["id"] + 1 for a in self.added])
        tokens = list(self.model_tokens) + [None] * (n - len(self.model_tokens))
        for a in self.added:
            tokens[a["id"]] = a["content"]
        self.tokens = tokens
        self.special_ids = {a["id"] for a in self.added if a["special"]}
        self.special_tokens = {a["content"]: a["id"] for a in self.added if a["special"]}
        pieces = [(t or "").encode("utf-8") for t in tokens]
        kinds = np.array([UNUSED if t is None else (CONTROL if i in self.special_ids else NORMAL)
                          for i, t in enumerate(tokens)], np.int8)
        self.vocab = Vocab(pieces, kinds=kinds)
        self._piece_to_id = {}
        for i, t in enumerate(self.model_tokens):
            if t is not None:
                self._piece_to_id.setdefault(t, i)
        for a in self.added:
            self._piece_to_id[a["content"]] = a["id"]

    def _build_added_tries(self):
        self._tries = {}
        for normalized in (False, True):
            pats = []
            for a in self.added:
                if a["normalized"] != normalized:
                    continue
                content = a["content"]
                if normalized and self.normalizer is not None:
                    content = self.normalizer.normalize_str(content)
                if content:
                    pats.append((content, a))
            self._tries[normalized] = self._make_trie(pats) if pats else None

    @staticmethod
    def _make_trie(pats):
        children = {}
        term = [-1]
        flags, ids = [], []
        for content, a in pats:
            node = 0
            for ch in content:
                key = node * 0x110000 + ord(ch)
                nxt = children.get(key)
                if nxt is None:
                    nxt = len(term)
                    children[key] = nxt
                    term.append(-1)
                node = nxt
            if term[node] < 0:   # first occurrence of equal contents wins
                term[node] = len(ids)
                ids.append(a["id"])
                flags.append(int(a["single_word"]) | 2 * int(a["lstrip"]) | 4 * int(a["rstrip"]) | 8 * int(a["special"]))
        mp = IntMap.from_arrays(np.array(list(children), np.int64), np.array(list(children.values()), np.int64))
        return (mp.keys, mp.values, np.array(term, np.int64), np.array(ids, np.int64), np.array(flags, np.int64), mp)

    def _build_token_tables(self):
        """Per-id counts of leading / trailing spaces for ByteLevel offset trimming."""
        g = bytes_to_unicode()[32]
        n = len(self.tokens)
        lead = np.zeros(n, np.int64)
        trail = np.zeros(n, np.int64)
        if self.post.trim:
            for i, t in enumerate(self.tokens):
                if not t:
                    continue
                k = 0
                while k < len(t) and (t[k] == g or t[k].isspace() and _is_ws(t[k])):
                    k += 1
                lead[i] = k
                k = 0
                while k < len(t) and (t[-1 - k] == g or t[-1 - k].isspace() and _is_ws(t[-1 - k])):
                    k += 1
                trail[i] = k
        self._lead, self._trail = lead, trail

    # ------------------------------------------------------------------ state
    def state(self):
        return {"json": json.dumps(self.config, ensure_ascii=False)}

    @classmethod
    def from_state(cls, st):
        try:
            cfg = json.loads(st["json"])
        except (TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"malformed HuggingFaceModel state: {e}") from None
        return cls(cfg)

    def __getstate__(self):
        return self.state()

    def __setstate__(self, st):
        self.__dict__.update(self.from_state(st).__dict__)

    def save_huggingface(self, path):
        from ..formats.huggingface import save_huggingface
        save_huggingface(self, path)

    def to_json(self):
        """The configuration as loaded; ``truncation`` / ``padding`` null once set to None here."""
        cfg = dict(self.config)
        for key in ("truncation", "padding"):
            if getattr(self, key) is None:
                cfg[key] = None
        return cfg

    # ------------------------------------------------------------------ encoding
    def _run(self, texts, add_special_tokens=True, split_special_tokens=False, num_threads=None,
             offsets=True):
        """``(ids, starts, ends, doc_offsets)`` of a batch; ``starts``/``ends`` only with ``offsets``
        (else None). The model step runs fused (``hf_fused``) for the texts it can, stage by
        stage for the others."""
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"expected str, got {type(t).__name__}")
        fused = None if self.fused is None else self.fused.encode_batch(
            texts, split_special_tokens, num_threads, offsets)
        if fused is None:
            res = self._run_stages(texts, split_special_tokens, num_threads)
        elif fused[0] is None:
            res = fused[1]
        else:
            rows = set(fused[0])
            rest = [k for k in range(len(texts)) if k not in rows]
            res = fused[1]
            if rest:
                res = _merge_ragged(len(texts), (fused[0], res),
                                    (rest, self._run_stages([texts[k] for k in rest], split_special_tokens, num_threads)),
                                    offsets)
        ids, st, en, doc_off = self._post_process(*res, add_special_tokens)
        if self.truncation is not None or self.padding is not None:
            ids, st, en, doc_off = self._file_lengths(ids, st, en, doc_off, add_special_tokens)
        return ids, st, en, doc_off

    def _file_lengths(self, ids, st, en, doc_off, add_special_tokens):
        """The file's own ``truncation`` and ``padding``, as HF applies them on every encode:
        cut each text's ids to ``max_length`` (keeping the post-processor's tokens), then pad
        to a fixed length or to the longest of the batch (pads at offsets (0, 0))."""
        from ..kernels import ragged as R
        post = self.post
        lead, trail = (post.prefix_ids.size, post.suffix_ids.size) if add_special_tokens else (0, 0)
        if self.truncation is not None:
            max_length, left = self.truncation
            if max_length < lead + trail:
                raise ValueError(f"tokenizer.json truncation: max_length {max_length} is shorter than the "
                                 f"{lead + trail} special tokens the post-processor adds")
            keep = R.truncation_mask(doc_off, max_length, lead, trail, left)
            if not keep.all():
                doc_off = R.kept_offsets(keep, doc_off)
                ids = ids[keep]
                st, en = (st[keep], en[keep]) if st is not None else (None, None)
        if self.padding is not None:
            fixed, multiple, left, pad_id = self.padding
            counts = np.diff(doc_off)
            target = fixed if fixed is not None else (int(counts.max()) if counts.size else 0)
            if multiple and target % multiple:
                target += multiple - target % multiple
            ids, st, en, doc_off = _pad_rows(ids, st, en, doc_off, target, left, pad_id)
        return ids, st, en, doc_off

    def _run_stages(self, texts, split_special_tokens, num_threads):
        """``(ids, starts, ends, doc_offsets, lead, trail)`` before the post-processor, stage by stage."""
        b = self._pre_model(texts, split_special_tokens, num_threads)
        t_ids, t_s, t_e, t_off = self._model(b, num_threads)
        ids, st, en, doc_off, lead, trail = K.assemble(b.U, t_ids, t_s, t_e, t_off, b.a_s, b.a_e,
                                                      b.n_docs, b.doc_start)
        if ids.size and ids.min() < 0:
            raise ValueError("the text needs the unknown token, but the model defines none")
        return ids, st, en, doc_off, lead, trail

    def _pre_model(self, texts, split_special_tokens, num_threads):
        """The batch state after added tokens, normalizer and pre-tokenizer: the model's input."""
        b = _Batch()
        b.threads = num_threads
        lengths = np.fromiter(map(len, texts), np.int64, len(texts))
        joined = "".join(texts)
        raw = _utf32(joined)
        b.cps = np.frombuffer(raw, np.int32)
        if len(b.cps) != lengths.sum():  # surrogates were replaced: lengths are unchanged
            raise ValueError("internal error: code point count mismatch")
        n = len(b.cps)
        b.n_docs = len(texts)
        b.doc_start = np.zeros(len(texts) + 1, np.int64)
        np.cumsum(lengths, out=b.doc_start[1:])
        b.a_s = np.arange(n, dtype=np.int64)
        b.a_e = b.a_s + 1
        U = np.zeros((len(texts), K.NCOL), np.int64)
        U[:, K.DOC] = np.arange(len(texts))
        U[:, K.TOK] = -1
        U[:, K.START] = b.doc_start[:-1]
        U[:, K.END] = b.doc_start[1:]
        b.U = U
        cls = None
        tr = self._tries[False]
        if tr is not None:
            cls = hf_class_table() if self._needs_cls() else _ZERO_CLS
            b.U = K.added_split(b.U, b.cps, b.a_s, b.a_e, tr[0], tr[1], tr[2], tr[3], tr[4],
                                bool(split_special_tokens), cls)
        if self.normalizer is not None:
            self.normalizer.apply(b)
        tr = self._tries[True]
        if tr is not None:
            cls = hf_class_table() if self._needs_cls() else _ZERO_CLS
            b.U = K.added_split(b.U, b.cps, b.a_s, b.a_e, tr[0], tr[1], tr[2], tr[3], tr[4],
                                bool(split_special_tokens), cls)
        if self.pre_tokenizer is not None:
            self.pre_tokenizer.apply(b)
        return b

    def _needs_cls(self):
        """Whether finding added tokens needs the character classes: for lstrip / rstrip /
        single_word, and for the whitespace at an added token's ends that ByteLevel trims."""
        return self.post.trim or any(a["lstrip"] or a["rstrip"] or a["single_word"] for a in self.added)

    def _model(self, b, num_threads):
        if self.kind == "BPE":
            per_char, extra = self._bpe_per_char, 0
        else:
            per_char, extra = 4, 1
        slot = K.unit_slots(b.U, per_char, extra)
        total = max(int(slot[-1]), 1)
        out_ids = np.empty(total, np.int32)
        out_s = np.empty(total, np.int64)
        out_e = np.empty(total, np.int64)
        counts = np.zeros(len(b.U), np.int64)
        outs = (slot, out_ids, out_s, out_e, counts)
        if self.kind == "BPE":
            fn, args = KM.bpe_range, (b.cps, self._V, self._B, slot, per_char, out_ids, out_s, out_e, counts)
        elif self.kind == "Unigram":
            fn, args = KM.unigram_range, (b.cps, self._V, self._G) + outs
        elif self.kind == "WordPiece":
            fn, args = KW.wordpiece_range, (b.cps, self._V, self.wp_prefix, self.unk_id, self.wp_max) + outs
        else:
            fn, args = KM.wordlevel_range, (b.cps, self._V, self.unk_id) + outs
        run_chunks(fn, b.U, args, num_threads)
        if counts.size and counts.min() < 0:
            raise ValueError("the text needs the unknown token, but the model defines none")
        ids, ts, te, t_off = K.compact_tokens(b.U, out_ids, out_s, out_e, counts, slot, 0)
        return ids, ts, te, t_off

    def _post_process(self, ids, st, en, doc_off, lead, trail, add_special_tokens):
        post = self.post
        if post.trim and ids.size and st is not None:
            lt = np.where(lead >= 0, lead, self._lead[ids])
            tt = np.where(trail >= 0, trail, self._trail[ids])
            pos_in_doc = np.arange(ids.size) - np.repeat(doc_off[:-1], np.diff(doc_off))
            is_first = (pos_in_doc == 0) | (st == 0)
            if post.trim_prefix_space:
                lt = np.where(is_first & (lt == 1), 0, lt)
            st2 = np.where(lt > 0, np.minimum(st + lt, en), st)
            en2 = np.where((tt > 0) & (en >= tt), np.maximum(en - tt, st2), en)
            st, en = st2, en2
        if add_special_tokens and (post.prefix_ids.size or post.suffix_ids.size):
            p, s = post.prefix_ids.size, post.suffix_ids.size
            n_docs = doc_off.size - 1
            counts = np.diff(doc_off) + p + s
            new_off = np.zeros(n_docs + 1, np.int64)
            np.cumsum(counts, out=new_off[1:])
            total = int(new_off[-1])
            nid = np.empty(total, np.int32)
            nst = np.zeros(total, np.int64)
            nen = np.zeros(total, np.int64)
            doc_of = np.repeat(np.arange(n_docs), np.diff(doc_off))
            dst = np.arange(ids.size) - doc_off[doc_of] + new_off[doc_of] + p
            nid[dst] = ids
            if st is not None:
                nst[dst] = st
                nen[dst] = en
            for k in range(p):
                nid[new_off[:-1] + k] = post.prefix_ids[k]
            for k in range(s):
                nid[new_off[1:] - s + k] = post.suffix_ids[k]
            ids, doc_off = nid, new_off
            st, en = (nst, nen) if st is not None else (None, None)
        return ids, st, en, doc_off

    def encode_batch_with_offsets(self, texts, add_special_tokens=True, **opts):
        """``(ids int32[], starts int64[], ends int64[], doc_offsets int64[n + 1])`` for a batch."""
        return self._run(texts, add_special_tokens, **self._opts(opts))

    def encode_batch_offsets(self, texts, add_special_tokens=True, **opts):
        """Tokenizer protocol: ``(ids, doc_offsets, starts, ends)``."""
        ids, st, en, off = self._run(texts, add_special_tokens, **self._opts(opts))
        return ids, off, st, en

    def encode_with_offsets(self, text, add_special_tokens=True, **opts):
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        ids, st, en, _ = self._run([text], add_special_tokens, **self._opts(opts))
        return ids, st, en

    def encode(self, text, add_special_tokens=True, **opts):
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        opts = self._opts(opts)
        if self.fused is not None and "num_threads" not in opts and self.truncation is None and self.padding is None:
            ids = self.fused.encode(text, opts.get("split_special_tokens", False))
            if ids is not None:
                post = self.post
                if add_special_tokens and (post.prefix_ids.size or post.suffix_ids.size):
                    ids = np.concatenate([post.prefix_ids, ids, post.suffix_ids])
                return ids
        return self._run([text], add_special_tokens, offsets=False, **opts)[0]

    def encode_ordinary(self, text):
        return self.encode(text, add_special_tokens=False, split_special_tokens=True)

    def encode_batch_ragged(self, texts, add_special_tokens=True, **opts):
        ids, _, _, off = self._run(texts, add_special_tokens, offsets=False, **self._opts(opts))
        return ids, off

    @staticmethod
    def _opts(opts):
        out = {}
        allowed = opts.pop("allowed_special", None)
        disallowed = opts.pop("disallowed_special", None)
        if allowed is not None and disallowed is not None and not allowed and not disallowed:
            out["split_special_tokens"] = True   # Tokenizer.encode_ordinary
        if "split_special_tokens" in opts:
            out["split_special_tokens"] = bool(opts.pop("split_special_tokens"))
        if "num_threads" in opts:
            out["num_threads"] = opts.pop("num_threads")
        if opts:
            raise TypeError(f"unexpected encode options: {sorted(opts)}")
        return out

    def encode_as_pieces(self, text, add_special_tokens=True):
        """The tokens as strings, as HF's ``Encoding.tokens``: a Unigram model's unknown token
        is the (normalized) text it covers, not the unknown piece."""
        if self.kind != "Unigram" or self.unk_id < 0 or self.truncation or self.padding:
            return [self.tokens[i] for i in self.encode(text, add_special_tokens).tolist()]
        b = self._pre_model([text], False, None)
        t_ids, t_s, t_e, t_off = self._model(b, None)
        pieces = []
        for u in range(len(b.U)):
            if b.U[u, K.TOK] >= 0:
                pieces.append(self.tokens[b.U[u, K.TOK]])
                continue
            for t in range(t_off[u], t_off[u + 1]):
                i = int(t_ids[t])
                pieces.append(b.cps[t_s[t]:t_e[t]].tobytes().decode("utf-32-le") if i == self.unk_id else self.tokens[i])
        if add_special_tokens:
            pieces = [self.tokens[i] for i in self.post.prefix_ids.tolist()] + pieces + \
                [self.tokens[i] for i in self.post.suffix_ids.tolist()]
        return pieces

    # ------------------------------------------------------------------ decoding
    def _check_ids(self, ids):
        if isinstance(ids, list):
            # a non-integer id makes the token-table lookup raise TypeError
            if ids:
                lo, hi = min(ids), max(ids)
                if isinstance(lo, (float, str)) or isinstance(hi, (float, str)):
                    raise TypeError("token ids must be integers")
                if lo < 0 or hi >= len(self.tokens):
                    raise ValueError(f"token id {lo if lo < 0 else hi} is out of range [0, {len(self.tokens)})")
            return ids
        ids = np.asarray(ids)
        if ids.size == 0:
            return []
        if ids.dtype.kind not in "iu":
            raise TypeError(f"token ids must be integers, not {ids.dtype}")
        lst = ids.ravel().tolist()
        lo, hi = min(lst), max(lst)
        if lo < 0 or hi >= len(self.tokens):
            raise ValueError(f"token id {lo if lo < 0 else hi} is out of range [0, {len(self.tokens)})")
        return lst

    def decode(self, ids, skip_special_tokens=True):
        return self._decode_list(self._check_ids(ids), skip_special_tokens)

    def decode_batch(self, batch, skip_special_tokens=True):
        return [self._decode_list(self._check_ids(ids), skip_special_tokens) for ids in batch]

    def _decode_list(self, ids, skip_special_tokens):
        table = self._dec_tokens_skip if skip_special_tokens else self._dec_tokens
        tokens = [t for t in map(table.__getitem__, ids) if t is not None]
        if self.decoder is None:
            return " ".join(tokens)
        return "".join(self.decoder(tokens))

    def decode_bytes(self, ids, skip_special_tokens=True):
        return self.decode(ids, skip_special_tokens).encode("utf-8", errors="surrogatepass")

    # ------------------------------------------------------------------ vocabulary
    def id_to_piece(self, i):
        i = int(i)
        if not 0 <= i < len(self.tokens) or self.tokens[i] is None:
            raise IndexError(f"id {i} is not in the vocabulary")
        return self.tokens[i]

    def piece_to_id(self, piece):
        if not isinstance(piece, str):
            raise TypeError("piece must be a str")
        return self._piece_to_id.get(piece, -1)

    def get_vocab(self):
        return {t: i for i, t in enumerate(self.tokens) if t is not None}


_ZERO_CLS = np.zeros(0x110000, np.uint8)


def _truncation_params(cfg):
    """``(max_length, left)`` of a tokenizer.json ``truncation`` object, or None."""
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError("tokenizer.json 'truncation' must be an object or null")
    max_length = _int_id(cfg.get("max_length"), "truncation max_length")
    direction = cfg.get("direction", "Right")
    if direction not in ("Right", "Left"):
        raise ValueError(f"tokenizer.json truncation: unknown direction {direction!r}")
    strategy = cfg.get("strategy", "LongestFirst")
    if strategy not in ("LongestFirst", "OnlyFirst", "OnlySecond"):
        raise ValueError(f"tokenizer.json truncation: unknown strategy {strategy!r}")
    return max_length, direction == "Left"


def _padding_params(cfg):
    """``(fixed length or None, pad_to_multiple_of or None, left, pad_id)`` of a tokenizer.json
    ``padding`` object, or None."""
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError("tokenizer.json 'padding' must be an object or null")
    strategy = cfg.get("strategy", "BatchLongest")
    if strategy == "BatchLongest":
        fixed = None
    elif isinstance(strategy, dict) and list(strategy) == ["Fixed"]:
        fixed = _int_id(strategy["Fixed"], "padding Fixed length")
    else:
        raise ValueError(f"tokenizer.json padding: unknown strategy {strategy!r}")
    direction = cfg.get("direction", "Right")
    if direction not in ("Right", "Left"):
        raise ValueError(f"tokenizer.json padding: unknown direction {direction!r}")
    multiple = cfg.get("pad_to_multiple_of")
    if multiple is not None:
        multiple = _int_id(multiple, "padding pad_to_multiple_of")
    return fixed, multiple or None, direction == "Left", _int_id(cfg.get("pad_id", 0), "padding pad_id")


def _pad_rows(ids, st, en, doc_off, target, left, pad_id):
    """Ragged rows padded with ``pad_id`` up to ``target`` ids each (longer rows unchanged)."""
    counts = np.diff(doc_off)
    pads = np.maximum(target - counts, 0)
    new_off = np.zeros(doc_off.size, np.int64)
    np.cumsum(counts + pads, out=new_off[1:])
    base = new_off[:-1] + (pads if left else 0)
    dst = np.arange(ids.size) + np.repeat(base - doc_off[:-1], counts)
    out = np.full(int(new_off[-1]), pad_id, np.int32)
    out[dst] = ids
    if st is not None:
        nst, nen = np.zeros(out.size, np.int64), np.zeros(out.size, np.int64)
        nst[dst], nen[dst] = st, en
        st, en = nst, nen
    return out, st, en, new_off


def _merge_ragged(n_docs, *parts_and_offsets):
    """One ragged result ``(ids, starts, ends, doc_offsets, lead, trail)`` for ``n_docs`` texts from
    parts ``(rows, result)`` that each cover some of the texts (``starts``/``ends`` may be None)."""
    *parts, offsets = parts_and_offsets
    doc_of = np.concatenate([np.repeat(np.asarray(rows, np.int64), np.diff(r[3])) for rows, r in parts])
    order = np.argsort(doc_of, kind="stable")
    cat = [np.concatenate([r[i] for _, r in parts])[order] if (i not in (1, 2) or offsets) else None
           for i in (0, 1, 2, 4, 5)]
    counts = np.zeros(n_docs, np.int64)
    for rows, r in parts:
        counts[np.asarray(rows, np.int64)] = np.diff(r[3])
    doc_off = np.zeros(n_docs + 1, np.int64)
    np.cumsum(counts, out=doc_off[1:])
    return cat[0], cat[1], cat[2], doc_off, cat[3], cat[4]


def _is_ws(c):
    return bool(hf_class_table()[ord(c)] & K.C_WS)
