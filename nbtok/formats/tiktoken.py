"""tiktoken ``.tiktoken`` rank files: one ``base64(token_bytes) rank`` pair per line."""
import base64
import gzip
import zlib
from pathlib import Path

import numpy as np

from ._atomic import write_atomic


def read_file(path):
    """The file's bytes as stored (gzip or not); ``ValueError`` if it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None


def _decompress(data, path):
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise ValueError(f"{path}: corrupt gzip data ({e})") from None
    return data


#: OpenAI's published rank files, recognised by the sha256 of their content as tiktoken's
#: registry checks them (``tiktoken_ext/openai_public.py``): their pattern and special tokens
OPENAI_ENCODINGS = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930":
        ("r50k_base", "gpt2", {"<|endoftext|>": 50256}),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069":
        ("p50k_base", "gpt2", {"<|endoftext|>": 50256}),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7":
        ("cl100k_base", "cl100k", {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                                   "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d":
        ("o200k_base", "o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}


def known_encoding(data, path="<rank file>"):
    """``(name, pattern, special_tokens)`` when ``data`` (a rank file's bytes, gzip accepted) is
    one of OpenAI's published encodings, else None."""
    import hashlib
    return OPENAI_ENCODINGS.get(hashlib.sha256(_decompress(data, path)).hexdigest())


def _error_text(rf, error):
    return {rf.BAD_FIELDS: "expected 'base64_token rank'", rf.BAD_BASE64: "bad base64 token",
            rf.BAD_RANK: f"bad rank (decimal digits up to {rf.MAX_RANK})", rf.EMPTY_TOKEN: "empty token",
            rf.DUPLICATE_TOKEN: "duplicate token", rf.DUPLICATE_RANK: "duplicate rank"}[error]


def read_tiktoken(path, data=None):
    """``(piece_bytes, piece_offsets, ranks)`` of a ``.tiktoken`` file (gzip accepted), in file
    order: token k is ``piece_bytes[piece_offsets[k]:piece_offsets[k + 1]]`` with rank
    ``ranks[k]``. Raises ``ValueError`` naming the file and line for anything malformed. Any
    ranks tiktoken accepts are read (arrays sized by the file); a model refuses ranks too sparse
    for its dense vocabulary (``vocab.check_dense_ids``).
    ``data``: the file's bytes (``read_file``), if already read."""
    from . import rankfile as rf  # (not imported when the array cache has the arrays)
    data = _decompress(read_file(path) if data is None else data, path)
    if data.startswith(b"= ") or b"\n= " in data:
        # Whisper's files write an empty token as "=": tiktoken loads it, no text encodes to it;
        # here its rank stays a hole in the vocabulary
        data = b"\n".join(line for line in data.split(b"\n") if not line.startswith(b"= "))
    arrays = rf.parse_plain_rank_lines(np.frombuffer(data, np.uint8))
    if arrays is not None:
        return arrays
    piece_bytes, piece_offsets, ranks, line, error = rf.parse_rank_lines(np.frombuffer(data, np.uint8))
    if error != rf.OK:
        lines = data.splitlines()
        text = lines[line - 1] if line <= len(lines) else b""
        raise ValueError(f"{path}:{line}: {_error_text(rf, error)}: {text[:60]!r}")
    if ranks.size == 0:
        raise ValueError(f"{path}: no ranks found")
    return piece_bytes, piece_offsets, ranks


def load_tiktoken_ranks(path):
    """``dict[bytes, int]`` from a ``.tiktoken`` file (see ``read_tiktoken``)."""
    piece_bytes, piece_offsets, ranks = read_tiktoken(path)
    data, offs = piece_bytes.tobytes(), piece_offsets.tolist()
    return {data[offs[k]:offs[k + 1]]: r for k, r in enumerate(ranks.tolist())}


def save_tiktoken_ranks(ranks, path):
    """Write ``dict[bytes, int]`` in rank order."""
    lines = [base64.b64encode(tok) + b" " + str(rank).encode() for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1])]
    write_atomic(path, b"\n".join(lines) + b"\n")
