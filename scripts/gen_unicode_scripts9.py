"""Write ``nbtok/data/scripts_9_0.npz``: the Unicode 9.0 ``Script`` property, the table HF
tokenizers' ``UnicodeScripts`` pre-tokenizer reads (its ``scripts.rs`` was generated from
``Scripts-9.0.0.txt``; a code point that file does not list is ``Any`` there). Arrays: ``ranges``
int32 ``[start, end, script]`` (end exclusive) and ``names`` (``script`` indexes it).

    python scripts/gen_unicode_scripts9.py Scripts-9.0.0.txt

The file is Unicode's (https://www.unicode.org/Public/9.0.0/ucd/Scripts.txt); sentencepiece
keeps the same file as ``data/Scripts.txt``.
"""
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "nbtok" / "data" / "scripts_9_0.npz"


def main(path):
    text = Path(path).read_text(encoding="utf-8")
    if not text.startswith("# Scripts-9.0.0.txt"):
        sys.exit(f"{path} is not Scripts-9.0.0.txt")
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        cps, name = (x.strip() for x in line.split(";"))
        lo, _, hi = cps.partition("..")
        rows.append((int(lo, 16), int(hi or lo, 16) + 1, name))
    names = sorted({r[2] for r in rows})
    ranges = np.array([(a, b, names.index(n)) for a, b, n in sorted(rows)], np.int32)
    np.savez_compressed(OUT, ranges=ranges, names=np.array(names))
    print(f"{OUT}: {len(ranges)} ranges, {len(names)} scripts")


if __name__ == "__main__":
    main(sys.argv[1])
