"""Write ``nbtok/data/hf_unicode.npz``: the Unicode classes the tokenizer.json normalizers and
pre-tokenizers use (whitespace, punctuation, word characters, numbers, controls, Mn, characters
that change when lowercased, grapheme joiners), one bit per code point.

They are taken from the ``regex`` module once, here, so that nbtok needs no ``regex`` at run
time and its answers do not move when ``regex`` adopts a newer Unicode version. Generated with
regex 2026.5.9 (Unicode 17.0), the release the byte-level class table was built from:

    pip install --target /tmp/rx regex==2026.5.9
    PYTHONPATH=/tmp/rx python scripts/gen_hf_unicode.py
"""
from pathlib import Path

import numpy as np
import regex

from nbtok.pipeline.unicode import HF_UNICODE_CLASSES, _all_chars

OUT = Path(__file__).resolve().parent.parent / "nbtok" / "data" / "hf_unicode.npz"


def matches(prop):
    out = np.zeros(0x110000, bool)
    for m in regex.finditer("(?:%s)+" % prop, _all_chars()):
        a, e = m.span()
        for lo, hi in ((a, min(e, 0xD800)), (max(a, 0xD800), e)):  # the string skips surrogates
            if lo < hi:
                shift = 0 if lo < 0xD800 else 0x800
                out[lo + shift:hi + shift] = True
    return out


def main():
    arrays = {f"c{i}": np.packbits(matches(p)) for i, p in enumerate(HF_UNICODE_CLASSES)}
    np.savez_compressed(OUT, regex_version=np.array(regex.__version__), **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes) from regex {regex.__version__}")


if __name__ == "__main__":
    main()
