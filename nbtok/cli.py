"""Command line: ``nbtok`` / ``python -m nbtok``.

    nbtok encode --encoding gpt2 "Hello world"      ids, space separated
    nbtok decode --encoding gpt2 15496 995
    nbtok info   --model path/to/file
"""
import argparse
import sys


def _load(args):
    import nbtok
    if getattr(args, "model", None):
        return load_any(args.model, pattern=getattr(args, "pattern", None))
    return nbtok.get_encoding(args.encoding)


def load_any(path, pattern=None):
    """Pick the reader from the file: SentencePiece ``.model``, ``tokenizer.json``,
    ``.tiktoken`` ranks, or nbtok's native format."""
    import nbtok
    from pathlib import Path
    p = Path(path)
    if not p.exists():
        raise ValueError(f"{path}: no such file")
    head = p.read_bytes()[:64]
    if p.suffix == ".model":
        return nbtok.Tokenizer.from_sentencepiece(p)
    if p.suffix == ".json" or head.lstrip().startswith(b"{"):
        return nbtok.Tokenizer.from_huggingface(p)
    if head.startswith(b"PK"):
        return nbtok.Tokenizer.load(p)
    return nbtok.Tokenizer.from_tiktoken(p, pattern=pattern or "gpt2")


def cmd_encode(args):
    tok = _load(args)
    texts = args.text if args.text else [sys.stdin.read()]
    for text in texts:
        print(" ".join(map(str, tok.encode(text, allowed_special="all").tolist())))


def cmd_decode(args):
    tok = _load(args)
    ids = args.ids if args.ids else sys.stdin.read().split()
    try:
        ids = [int(i) for i in ids]
    except ValueError:
        raise ValueError("decode takes integer token ids") from None
    sys.stdout.write(tok.decode(ids) + "\n")


def cmd_info(args):
    tok = _load(args)
    print(f"model type:  {tok.model.model_type}")
    print(f"vocab size:  {tok.vocab_size}")
    print(f"special:     {len(tok.special_tokens)} tokens")


def build_parser():
    parser = argparse.ArgumentParser(prog="nbtok", description="Subword tokenizers with Numba kernels.")
    sub = parser.add_subparsers(dest="command", required=True)

    def model_args(p):
        p.add_argument("--encoding", default="gpt2", help="bundled encoding (default: gpt2)")
        p.add_argument("--model", help="a tokenizer file: .model, tokenizer.json, .tiktoken or native")
        p.add_argument("--pattern", help="pre-tokenizer for a .tiktoken file (gpt2, cl100k, o200k, or a regex)")

    p = sub.add_parser("encode", help="text -> ids")
    model_args(p)
    p.add_argument("text", nargs="*", help="texts to encode (default: standard input)")
    p.set_defaults(func=cmd_encode)
    p = sub.add_parser("decode", help="ids -> text")
    model_args(p)
    p.add_argument("ids", nargs="*", help="token ids (default: standard input)")
    p.set_defaults(func=cmd_decode)
    p = sub.add_parser("info", help="describe a tokenizer")
    model_args(p)
    p.set_defaults(func=cmd_info)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (ValueError, TypeError, OSError, NotImplementedError) as e:
        print(f"nbtok: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
