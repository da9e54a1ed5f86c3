"""Command line: ``nbtok`` / ``python -m nbtok``.

    nbtok encode  [--encoding gpt2 | --model FILE] TEXT...        ids, one line per text
    nbtok encode  --model FILE --files a.txt b.txt --lines --output out   out.ids.npy + out.offsets.npy
    nbtok decode  [--encoding gpt2 | --model FILE] ID... | --input ids.npy
    nbtok train   --vocab-size 32000 --output tok.nbtok [--type bytelevel|bpe|unigram] FILE...
    nbtok info    --model FILE
    nbtok convert --model FILE --to native|tiktoken|gpt2|sentencepiece|huggingface --output PATH
    nbtok warmup  [--all | FEATURE...] [--no-fork-twins]           compile kernels ahead of time

Every argument is checked before the work starts. Errors are one line on stderr with exit code 1
(``--debug`` shows the traceback); a closed pipe (``nbtok encode ... | head``) ends quietly.
``decode`` writes the decoded bytes exactly (no newline added unless stdout is a terminal), so
``encode`` then ``decode`` gives back the input byte for byte.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np


def load_any(path, pattern=None, special_tokens=None):
    """Pick the reader from the file: SentencePiece ``.model``, ``tokenizer.json``, a folder
    with ``vocab.json`` + ``merges.txt``, ``.tiktoken`` ranks, a GGUF's vocabulary, or nbtok's
    native format."""
    import nbtok
    p = Path(path)
    if p.is_dir():
        if (p / "tokenizer.json").is_file():
            return nbtok.Tokenizer.from_huggingface(p / "tokenizer.json")
        if (p / "vocab.json").is_file() and (p / "merges.txt").is_file():
            return nbtok.Tokenizer.from_gpt2(p / "vocab.json", p / "merges.txt", pattern=pattern or "gpt2",
                                             special_tokens=special_tokens)
        raise ValueError(f"{path}: a folder without tokenizer.json or vocab.json + merges.txt")
    if not p.is_file():
        raise ValueError(f"{path}: no such file")
    with open(p, "rb") as f:
        head = f.read(64)
    if head.startswith(b"PK"):
        return nbtok.Tokenizer.load(p)
    if head.startswith(b"GGUF"):
        return nbtok.Tokenizer.from_gguf(p)
    if p.suffix == ".json" or head.lstrip().startswith(b"{"):
        return nbtok.Tokenizer.from_huggingface(p)
    if p.suffix == ".model" or (head[:1] == b"\n" and not head.strip().replace(b" ", b"").isalnum()):
        return nbtok.Tokenizer.from_sentencepiece(p)
    opts = {"special_tokens": special_tokens} if special_tokens else {}
    if pattern:
        opts["pattern"] = pattern
    return nbtok.Tokenizer.from_tiktoken(p, **opts)


def _special_token_args(values):
    """``--special-token TEXT=ID`` (repeatable) as ``{TEXT: ID}``."""
    out = {}
    for v in values or ():
        text, sep, i = v.rpartition("=")
        if not sep or not text or not i.isdigit():
            raise ValueError(f"--special-token takes TEXT=ID (a non-negative integer id), not {v!r}")
        out[text] = int(i)
    return out


def _load(args):
    import nbtok
    specials = _special_token_args(getattr(args, "special_token", None))
    if args.model:
        return load_any(args.model, pattern=args.pattern, special_tokens=specials)
    if specials or args.pattern:
        raise ValueError("--pattern and --special-token apply to a --model rank file, not a bundled --encoding")
    return nbtok.get_encoding(args.encoding)


class Progress:
    """A one-line progress report on stderr (only when stderr is a terminal or forced)."""

    def __init__(self, total, label, enabled):
        self.total, self.label, self.enabled = total, label, enabled
        self.done, self.start, self.last = 0, time.perf_counter(), 0.0

    def update(self, n):
        self.done += n
        now = time.perf_counter()
        if self.enabled and (now - self.last > 0.2 or self.done >= self.total):
            self.last = now
            rate = self.done / max(now - self.start, 1e-9) / 1e6
            pct = 100.0 * self.done / max(self.total, 1)
            sys.stderr.write(f"\r{self.label}: {pct:5.1f}%  {self.done / 1e6:.1f}/{self.total / 1e6:.1f} "
                             f"M characters  {rate:.1f} M characters/s")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def _read_text(path):
    try:
        return Path(path).read_bytes().decode("utf-8")
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def cmd_encode(args):
    tok = _load(args)
    if args.files:
        docs = []
        for f in args.files:
            text = _read_text(f)
            docs.extend(text.splitlines() if args.lines else [text])
    else:
        docs = args.text if args.text else [sys.stdin.read()]
    allowed = "all" if args.allow_special else ()
    if len(docs) == 1 and not args.output:
        # one text: the single-document kernel, the one `Tokenizer.encode` uses, so that a first
        # `nbtok encode TEXT` compiles what a later `tok.encode(text)` in Python needs
        print(" ".join(map(str, tok.encode(docs[0], **_special_opts(tok, allowed)).tolist())))
        return
    total = sum(len(d) for d in docs)
    progress = Progress(total, "encode", args.progress or (sys.stderr.isatty() and total > 10_000_000))
    parts, offsets = [], [np.zeros(1, np.int64)]
    base = 0
    for i in range(0, len(docs), 10_000):
        chunk = docs[i:i + 10_000]
        ids, offs = tok.encode_batch_ragged(chunk, **_special_opts(tok, allowed))
        parts.append(ids)
        offsets.append(offs[1:] + base)
        base += ids.shape[0]
        progress.update(sum(len(d) for d in chunk))
    ids = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    offsets = np.concatenate(offsets)
    if args.output:
        out = str(args.output)
        if out.endswith(".npy") and len(docs) == 1:
            np.save(out, ids)
        else:
            prefix = out[:-4] if out.endswith(".npy") else out
            np.save(prefix + ".ids.npy", ids)
            np.save(prefix + ".offsets.npy", offsets)
        return
    for d in range(len(docs)):
        print(" ".join(map(str, ids[offsets[d]:offsets[d + 1]].tolist())))


def _special_opts(tok, allowed):
    """Byte-level models take tiktoken's special-token options; others take none."""
    if tok.model.model_type == "bytelevel_bpe":
        return {"allowed_special": allowed, "disallowed_special": ()}
    return {}


def cmd_decode(args):
    tok = _load(args)
    if args.input:
        try:
            ids = np.load(args.input, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise ValueError(f"{args.input}: not a .npy array of ids ({e})") from None
    else:
        words = args.ids if args.ids else sys.stdin.read().split()
        try:
            ids = np.array([int(w) for w in words], np.int64)
        except ValueError:
            raise ValueError("decode takes integer token ids") from None
    data = tok.decode_bytes(ids)
    if not args.no_newline and sys.stdout.isatty():
        data += b"\n"
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


TRAIN_FORMATS = {"bytelevel": ("native", "tiktoken", "gpt2", "huggingface"),
                 "bpe": ("native", "sentencepiece", "huggingface"),
                 "unigram": ("native", "sentencepiece", "huggingface"),
                 "char": ("native", "sentencepiece"), "word": ("native", "sentencepiece")}


def _check_train_args(args):
    """Everything that could fail after training, checked before it starts."""
    for f in args.files:
        if not Path(f).is_file():
            raise ValueError(f"{f}: no such file")
    if args.vocab_size < 1:
        raise ValueError(f"--vocab-size must be positive, not {args.vocab_size}")
    given = sorted(flag for flag, name, _ in SPM_TRAIN_OPTIONS if getattr(args, name) is not None)
    if given and args.type == "bytelevel":
        raise ValueError(f"{', '.join(given)}: sentencepiece options, for --type bpe or unigram")
    if args.normalization_rule_tsv is not None and not Path(args.normalization_rule_tsv).is_file():
        raise ValueError(f"{args.normalization_rule_tsv}: no such file")
    if args.format not in TRAIN_FORMATS[args.type]:
        raise ValueError(f"--type {args.type} cannot be written as --format {args.format}; "
                         f"choose from {', '.join(TRAIN_FORMATS[args.type])}")
    import os
    out = Path(args.output)
    parent = out.parent.resolve()
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise ValueError(f"{args.output}: cannot write there ({parent} is not a writable folder)")
    if out.is_dir() and args.format != "gpt2":
        raise ValueError(f"{args.output}: is a folder; give a file name")


# sentencepiece trainer options of ``nbtok train --type bpe|unigram``: (flag, option, argparse
# keywords); each flag sets the TrainerSpec / NormalizerSpec field of that name
SPM_TRAIN_OPTIONS = [
    ("--treat-whitespace-as-suffix", "treat_whitespace_as_suffix",
     dict(action="store_true", help="bpe/unigram: '\u2581' ends a word instead of starting it")),
    ("--allow-whitespace-only-pieces", "allow_whitespace_only_pieces",
     dict(action="store_true", help="bpe/unigram: runs of '\u2581' may be pieces of their own")),
    ("--no-split-by-whitespace", "split_by_whitespace",
     dict(action="store_false", help="bpe/unigram: pieces may span words (sentencepiece's split_by_whitespace=false)")),
    ("--required-chars", "required_chars",
     dict(metavar="CHARS", help="bpe/unigram: characters that are always pieces")),
    ("--input-sentence-size", "input_sentence_size",
     dict(type=int, metavar="N", help="bpe/unigram: train on N sentences of the input (0: all)")),
    ("--no-shuffle-input-sentence", "shuffle_input_sentence",
     dict(action="store_false", help="bpe/unigram: with --input-sentence-size, the first N sentences, not a sample")),
    ("--seed", "seed",
     dict(type=int, help="bpe/unigram: seed of --input-sentence-size's sample")),
    ("--normalization-rule-tsv", "normalization_rule_tsv",
     dict(metavar="FILE", help="bpe/unigram: normalize by this rule file instead of NFKC")),
]


def _sentencepiece_options(args):
    """The sentencepiece trainer options given on the command line."""
    return {name: getattr(args, name) for _, name, _ in SPM_TRAIN_OPTIONS if getattr(args, name) is not None}


def cmd_train(args):
    import nbtok
    _check_train_args(args)
    specials = args.special_tokens or []
    if args.type == "bytelevel":
        tok = nbtok.train_bpe([str(f) for f in args.files], args.vocab_size, special_tokens=specials,
                              pattern=args.pattern or "gpt2", progress=not args.quiet)
    else:
        tok = nbtok.train_sentencepiece([str(f) for f in args.files], args.vocab_size, model_type=args.type,
                                        **_sentencepiece_options(args))
    _save(tok, args.format, args.output)
    print(f"trained {tok.model.model_type} with {tok.vocab_size} tokens -> {args.output}", file=sys.stderr)


def _save(tok, fmt, output):
    out = Path(output)
    if fmt == "native":
        tok.save(out)
    elif fmt == "tiktoken":
        _need(tok, "save_tiktoken", fmt)(out)
    elif fmt == "gpt2":
        out.mkdir(parents=True, exist_ok=True)
        _need(tok, "save_gpt2", fmt)(out / "vocab.json", out / "merges.txt")
    elif fmt == "sentencepiece":
        _need(tok, "save_sentencepiece", fmt)(out)
    elif fmt == "huggingface":
        _need(tok, "save_huggingface", fmt)(out)
    else:
        raise ValueError(f"unknown format {fmt!r}")


def _need(tok, method, fmt):
    fn = getattr(tok.model, method, None)
    if fn is None:
        raise ValueError(f"a {tok.model.model_type} model cannot be written as {fmt}")
    return fn


def cmd_info(args):
    tok = _load(args)
    model = tok.model
    print(f"model type:   {model.model_type}")
    print(f"vocab size:   {tok.vocab_size}")
    print(f"special:      {len(tok.special_tokens)} tokens")
    for name in ("pattern", "normalizer_name", "normalizer"):
        value = getattr(model, name, None)
        if isinstance(value, str):
            print(f"{name + ':':13s} {value}")


def cmd_convert(args):
    _save(_load(args), args.to, args.output)


def cmd_warmup(args):
    from .warmup import FEATURES, warmup
    names = list(FEATURES) if args.all or not args.features else args.features
    total = 0.0
    for name, seconds in warmup(names, fork_twins=not args.no_fork_twins):
        total += seconds
        print(f"{name:14s} {seconds:7.2f} s", file=sys.stderr)
    from ._jit import cache_dir
    print(f"compiled {len(names)} feature(s) in {total:.1f} s; Numba's cache: {cache_dir()}", file=sys.stderr)


def build_parser():
    from . import __version__
    parser = argparse.ArgumentParser(prog="nbtok", description="Subword tokenizers with Numba kernels.")
    parser.add_argument("--version", action="version", version=f"nbtok {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)

    def model_args(p):
        p.add_argument("--encoding", default="gpt2", help="bundled encoding when no --model (default: gpt2)")
        p.add_argument("--model", help="tokenizer file: .model, tokenizer.json, .tiktoken, native, or a GPT-2 folder")
        p.add_argument("--pattern", help="pre-tokenizer for .tiktoken / GPT-2 files: gpt2, cl100k, o200k, ... or a regex")
        p.add_argument("--special-token", action="append", metavar="TEXT=ID",
                       help="a special token of a .tiktoken / GPT-2 model (repeatable)")

    formats = ["native", "tiktoken", "gpt2", "sentencepiece", "huggingface"]
    p = sub.add_parser("encode", help="text -> ids")
    model_args(p)
    p.add_argument("text", nargs="*", help="texts (default: standard input)")
    p.add_argument("--files", nargs="+", help="encode these files (each one document, or --lines)")
    p.add_argument("--lines", action="store_true", help="each line of --files is a document")
    p.add_argument("--output", help="write .npy: FILE.npy for one document, else FILE.ids.npy + FILE.offsets.npy")
    p.add_argument("--allow-special", action="store_true", help="encode special-token text as special tokens")
    p.add_argument("--progress", action="store_true", help="progress on stderr")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("decode", help="ids -> text")
    model_args(p)
    p.add_argument("ids", nargs="*", help="token ids (default: standard input)")
    p.add_argument("--input", help="a .npy array of ids")
    p.add_argument("--no-newline", action="store_true",
                   help="never add a newline (none is added unless stdout is a terminal)")
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser("train", help="train a tokenizer on text files")
    p.add_argument("files", nargs="+", help="UTF-8 text files (each one document)")
    p.add_argument("--type", default="bytelevel", choices=["bytelevel", "bpe", "unigram", "char", "word"],
                   help="bytelevel: GPT-2 style BPE; bpe / unigram / char / word: SentencePiece")
    p.add_argument("--vocab-size", type=int, required=True, help="vocabulary size, special tokens included")
    p.add_argument("--special-tokens", "--special-token", dest="special_tokens", action="append",
                   metavar="TOKEN", help="a special token (repeat the option for more)")
    p.add_argument("--pattern", help="pre-tokenizer for bytelevel (default gpt2)")
    p.add_argument("--output", required=True, help="file to write (a folder for --format gpt2)")
    p.add_argument("--format", default="native", choices=formats, help="file format of --output (default native)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    for flag, name, kw in SPM_TRAIN_OPTIONS:
        p.add_argument(flag, dest=name, default=None, **kw)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("info", help="describe a tokenizer")
    model_args(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("convert", help="write a tokenizer in another format")
    model_args(p)
    p.add_argument("--to", required=True, choices=formats, help="format to write")
    p.add_argument("--output", required=True, help="file to write (a folder for --to gpt2)")
    p.set_defaults(func=cmd_convert)

    from .warmup import FEATURES
    p = sub.add_parser("warmup", help="compile the kernels ahead of time (e.g. in a Docker build)")
    p.add_argument("features", nargs="*", metavar="FEATURE",
                   help=f"features to compile: {', '.join(FEATURES)} (default: all)")
    p.add_argument("--all", action="store_true", help="every feature")
    p.add_argument("--no-fork-twins", action="store_true",
                   help="skip the serial batch kernels a forked child (a DataLoader worker) runs")
    p.set_defaults(func=cmd_warmup)

    from .corpus.cli import register as register_corpus
    register_corpus(sub)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (| head): quiet, as other Unix tools
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("nbtok: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # one line for the user; --debug for the traceback
        if args.debug:
            raise
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"nbtok: error: {message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
