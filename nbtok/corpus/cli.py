"""``nbtok tokenize-corpus`` and ``nbtok count`` (registered into ``nbtok.cli``).

    nbtok tokenize-corpus --model tok.json --output out/ [--format megatron] [--workers 2 | --dask ADDR] data/*.txt
    nbtok count --output counts.npz [--workers 2 | --dask ADDR] data/*.txt
"""


def _client(args):
    return args.dask if args.dask else None


def cmd_tokenize_corpus(args):
    from ..cli import load_any
    from . import tokenize
    import nbtok
    tok = load_any(args.model, args.pattern) if args.model else nbtok.get_encoding(args.encoding)
    bos = int(args.bos) if args.bos and args.bos.isdigit() else args.bos
    eos = int(args.eos) if args.eos and args.eos.isdigit() else args.eos
    man = tokenize(args.inputs, tok, args.output, format=args.format, num_workers=args.workers,
                   client=_client(args), bos=bos, eos=eos, shard_size=args.shard_size, kind=args.kind,
                   text_field=args.text_field, progress=not args.quiet)
    t = man["totals"]
    print(f"{t['documents']:,} documents, {t['tokens']:,} tokens in {len(man['shards'])} shards -> {args.output}")


def cmd_count(args):
    from . import count
    c = count(args.inputs, pattern=args.pattern or "gpt2", special_tokens=args.special_tokens or (),
              output=args.output, kind=args.kind, text_field=args.text_field, shard_size=args.shard_size,
              num_workers=args.workers, client=_client(args), progress=not args.quiet)
    print(f"{len(c):,} unique pre-tokens -> {args.output}")


def _common(p):
    p.add_argument("inputs", nargs="+", help="files, folders or globs")
    p.add_argument("--kind", choices=["lines", "file", "jsonl", "parquet"], help="default: from the file name")
    p.add_argument("--text-field", default="text", help="JSON field / Parquet column (default: text)")
    p.add_argument("--shard-size", type=int, default=10000, help="documents per shard")
    p.add_argument("--workers", type=int, default=1, help="processes on this machine")
    p.add_argument("--dask", help="a Dask scheduler address (tcp://host:8786)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def register(sub):
    """Add the corpus subcommands to ``nbtok``'s subparsers."""
    p = sub.add_parser("tokenize-corpus", help="tokenize a corpus into Megatron / NumPy / datatrove shards")
    _common(p)
    p.add_argument("--encoding", default="gpt2", help="bundled encoding when no --model (default: gpt2)")
    p.add_argument("--model", help="tokenizer file (as for nbtok encode)")
    p.add_argument("--pattern", help="pre-tokenizer for a .tiktoken / GPT-2 --model")
    p.add_argument("--output", required=True, help="output folder")
    p.add_argument("--format", default="megatron", choices=["megatron", "numpy", "datatrove"],
                   help="output layout: Megatron .bin/.idx, NumPy .npy ids + offsets, datatrove .ds/.index")
    p.add_argument("--bos", help="token id or special token added before each document")
    p.add_argument("--eos", help="token id or special token added after each document")
    p.set_defaults(func=cmd_tokenize_corpus)

    p = sub.add_parser("count", help="byte-level BPE pre-token counts of a corpus (for train_bpe_from_counts)")
    _common(p)
    p.add_argument("--pattern", help="pre-tokenizer (default gpt2)")
    p.add_argument("--special-tokens", "--special-token", dest="special_tokens", action="append",
                   metavar="TOKEN", help="a special token the text is split on (repeat for more)")
    p.add_argument("--output", required=True, help="counts file (.npz)")
    p.set_defaults(func=cmd_count)
