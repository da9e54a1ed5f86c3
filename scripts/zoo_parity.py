"""Every tokenizer.json and sentencepiece .model of the zoo against its reference, on every line
of the shared corpora: ids, decode, and speed side by side (one thread each). Writes the table
to ``docs/zoo.md`` (``--out``) and prints it.

    RAYON_NUM_THREADS=1 python scripts/zoo_parity.py [--data ../shared/data] [--max-lines N]

``tests/test_zoo.py`` runs the same comparison on a sample, in CI.
"""
import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import nbtok  # noqa: E402

KINDS = ("tokenizer.json", "sentencepiece")


def corpus_lines(root, max_lines):
    corpora = root / "corpora"
    lines = []
    for p in sorted(p for p in corpora.rglob("*") if p.is_file() and p.suffix in (".txt", ".en", "")
                    and p.name != "MANIFEST.tsv"):
        text = p.read_bytes().decode("utf-8", errors="replace").splitlines()
        lines.extend(text[:max_lines] if max_lines else text)
    return lines


def reference(kind, path):
    if kind == "tokenizer.json":
        import tokenizers
        ref = tokenizers.Tokenizer.from_file(str(path))
        return (lambda texts: [e.ids for e in ref.encode_batch(texts)],
                lambda ids: ref.decode(ids, skip_special_tokens=False))
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(path))
    return (lambda texts: sp.encode(texts), lambda ids: sp.decode(ids))


def load(kind, path):
    if kind == "tokenizer.json":
        return nbtok.Tokenizer.from_huggingface(str(path))
    return nbtok.Tokenizer.from_sentencepiece(str(path))


def compare(kind, path, lines, nbytes):
    try:
        ref_encode, ref_decode = reference(kind, path)
    except Exception as e:  # noqa: BLE001 - the reference refuses the file
        try:
            load(kind, path)
        except (ValueError, NotImplementedError):
            return {"loads": "refused by both"}
        return {"loads": f"reference refuses ({type(e).__name__}), nbtok loads: MISMATCH"}
    tok = load(kind, path)
    tok.encode_batch_ragged(lines[:100], num_threads=1)     # compile / warm
    t0 = time.perf_counter()
    ids, offsets = tok.encode_batch_ragged(lines, num_threads=1)
    t_nb = time.perf_counter() - t0
    t0 = time.perf_counter()
    expected = ref_encode(lines)
    t_ref = time.perf_counter() - t0
    bad = sum(ids[offsets[k]:offsets[k + 1]].tolist() != e for k, e in enumerate(expected))
    sample = expected[::50]
    bad_decode = sum(tok.decode(e, skip_special_tokens=False) != ref_decode(e) for e in sample)
    return {"loads": "yes", "lines": len(lines), "mismatches": bad, "decoded": len(sample),
            "decode_mismatches": bad_decode, "nbtok_mbs": nbytes / t_nb / 1e6, "ref_mbs": nbytes / t_ref / 1e6}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--max-lines", type=int, default=0, help="lines per corpus file (0: all)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "zoo.md"))
    args = ap.parse_args()
    root = Path(args.data)
    rows = [r for r in json.loads((root / "zoo" / "manifest.json").read_text(encoding="utf-8"))
            if r["kind"] in KINDS]
    lines = corpus_lines(root, args.max_lines)
    nbytes = sum(len(t.encode("utf-8")) for t in lines)
    table = ["| file | kind | loads | lines | id mismatches | decode mismatches | nbtok MB/s | reference MB/s | ratio |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        res = compare(r["kind"], root / "zoo" / r["path"], lines, nbytes)
        if res["loads"] == "yes":
            table.append(f"| `{r['path']}` | {r['kind']} | yes | {res['lines']:,} | {res['mismatches']} | "
                         f"{res['decode_mismatches']} of {res['decoded']} | {res['nbtok_mbs']:.2f} | "
                         f"{res['ref_mbs']:.2f} | {res['nbtok_mbs'] / res['ref_mbs']:.1f}x |")
        else:
            table.append(f"| `{r['path']}` | {r['kind']} | {res['loads']} | | | | | | |")
        print(table[-1], flush=True)
    import sentencepiece
    import tokenizers
    head = (f"# The tokenizer zoo against its references\n\n"
            f"`scripts/zoo_parity.py`, run {datetime.date.today().isoformat()}: every tokenizer.json "
            f"and sentencepiece `.model` in `../shared/data/zoo` (its manifest), on "
            f"{'every' if not args.max_lines else f'the first {args.max_lines:,}'} line"
            f"{'' if not args.max_lines else 's'} of every file under `../shared/data/corpora` "
            f"({len(lines):,} lines, {nbytes / 1e6:.1f} MB). Ids are compared on every line, decoded "
            f"text on every 50th. Speed is one thread each, batch encode of all lines, on a shared "
            f"2-core machine (tokenizers {tokenizers.__version__}, sentencepiece "
            f"{sentencepiece.__version__}, nbtok {nbtok.__version__}, Python {sys.version.split()[0]}).\n\n")
    Path(args.out).write_text(head + "\n".join(table) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
