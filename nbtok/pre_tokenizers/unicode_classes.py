"""The pinned Unicode class table used by the byte-level pre-tokenizer scanners.

``nbtok/data/unicode_classes.npz`` is generated once by ``scripts/gen_unicode_table.py`` by
probing every code point with the ``regex`` module (regex 2026.5.9 = **Unicode 17.0**), so the
scanners' ``\\p{L}``, ``\\p{N}``, ``\\s``, ... are exactly those of ``regex.findall``. tiktoken 0.14
uses Rust regex-syntax 0.8.11 = **Unicode 16.0**; the 4,700 code points where the two engines
disagree (characters new in 17.0, plus property changes such as U+0295 Ll -> Lo) are stored in
the same file, and ``load_table("tiktoken")`` applies them, giving a table that reproduces
tiktoken's splits exactly. ``load_table()`` (flavour ``"regex"``) is the default.

Bits (uint8 per code point, 0x110000 entries; surrogates are 0):

    L=1 (\\p{L})  N=2 (\\p{N})  WS=4 (\\s, Unicode White_Space)
    UP=8 (Lu|Lt)  LOW=16 (Ll)  OTH=32 (Lm|Lo|M)  M=64 (\\p{M})

Tables are loaded lazily, once per flavour, and cached at module level; a flavour's table is
also kept in the array cache (``nbtok/arraycache.py``), which reads it back in a millisecond
instead of the ~8 ms of decompressing the ``.npz``.
"""
from pathlib import Path

import numpy as np

L, N, WS, UP, LOW, OTH, M = 1, 2, 4, 8, 16, 32, 64
PATH = Path(__file__).resolve().parent.parent / "data" / "unicode_classes.npz"

_cache = {}


def _load():
    if "npz" not in _cache:
        with np.load(PATH) as z:
            _cache["npz"] = {k: z[k] for k in z.files}
    return _cache["npz"]


def load_table(flavor="regex"):
    """The class table as a read-only ``uint8[0x110000]``.

    ``flavor="regex"``: the ``regex`` module's classes (Unicode 17.0); ``"tiktoken"``: tiktoken's
    (Rust regex-syntax, Unicode 16.0); ``"hf"``: HF tokenizers' (Oniguruma, Unicode 16.0).
    """
    table = _cache.get(flavor)
    if table is None:
        if flavor not in ("regex", "tiktoken", "hf"):
            raise ValueError(f"unknown table flavor {flavor!r}: use 'regex', 'tiktoken' or 'hf'")
        from .. import arraycache
        name = "unicode-classes-" + flavor
        key = arraycache.digest(PATH.read_bytes(), arraycache.source_key("arraycache.py", "pre_tokenizers/unicode_classes.py"))
        table = (arraycache.load(name, key) or {}).get("table")
        if table is None or table.dtype != np.uint8 or table.shape != (0x110000,):
            table = _build_table(flavor)
            arraycache.store(name, key, {"table": table})
        table.setflags(write=False)
        _cache[flavor] = table
    return table


def _build_table(flavor):
    z = _load()
    table = z["table"].copy()
    if flavor == "tiktoken":
        table[z["tiktoken_diff_cp"]] = z["tiktoken_diff_val"]
    elif flavor == "hf":
        table[z["hf_diff_cp"]] = z["hf_diff_val"]
    return table


def versions():
    """(regex module version, its Unicode version, tiktoken's, HF tokenizers') of the table."""
    z = _load()
    return (str(z["regex_version"]), str(z["unicode_version"]), str(z["tiktoken_unicode_version"]),
            str(z["hf_unicode_version"]))
