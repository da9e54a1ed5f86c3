"""Write ``nbtok/data/unicode16_assigned.npy``: the code points Unicode 16.0 assigns, as int32
``[start, end)`` ranges. The reference libraries match their regexes with Unicode 16.0 classes
(HF tokenizers' Oniguruma, tiktoken's Rust ``regex``); when nbtok runs a pattern on the ``regex``
module, a newer ``regex`` knows characters they do not, and ``nbtok.pipeline.units.compile_regex``
uses this table to hide them (``PinnedUnicodeRegex``).

Generated with regex 2025.9.18, the last release on Unicode 16.0 (2025.10.23 moved to 17.0):

    pip install --target /tmp/rx16 regex==2025.9.18
    PYTHONPATH=/tmp/rx16 python scripts/gen_unicode_assigned.py
"""
from pathlib import Path

import numpy as np
import regex

OUT = Path(__file__).resolve().parent.parent / "nbtok" / "data" / "unicode16_assigned.npy"


def main():
    cps = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    text = cps.tobytes().decode("utf-32-le")
    assigned = np.zeros(0x110000, bool)
    assigned[0xD800:0xE000] = True  # surrogates are assigned (Cs); the string cannot hold them
    for m in regex.finditer(r"\P{Cn}+", text):
        a, e = m.span()
        lo, hi = int(cps[a]), int(cps[e - 1]) + 1  # a run never spans the surrogate gap's edges here
        assigned[lo:hi] = True
    edges = np.flatnonzero(np.diff(np.concatenate([[0], assigned.astype(np.int8), [0]])))
    ranges = edges.reshape(-1, 2).astype(np.int32)
    np.save(OUT, ranges)
    print(f"{OUT}: {len(ranges)} ranges, {int(assigned.sum())} assigned code points (regex {regex.__version__})")


if __name__ == "__main__":
    main()
