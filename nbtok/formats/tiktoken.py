"""tiktoken ``.tiktoken`` rank files: one ``base64(token_bytes) rank`` pair per line."""
import base64
import gzip
import zlib
from pathlib import Path

import numpy as np


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


def _error_text(rf, error):
    return {rf.BAD_FIELDS: "expected 'base64_token rank'", rf.BAD_BASE64: "bad base64 token",
            rf.BAD_RANK: f"bad rank (decimal digits up to {rf.MAX_RANK})", rf.EMPTY_TOKEN: "empty token",
            rf.DUPLICATE_TOKEN: "duplicate token", rf.DUPLICATE_RANK: "duplicate rank"}[error]


def read_tiktoken(path, data=None):
    """``(piece_bytes, piece_offsets, ranks)`` of a ``.tiktoken`` file (gzip accepted), in file
    order: token k is ``piece_bytes[piece_offsets[k]:piece_offsets[k + 1]]`` with rank
    ``ranks[k]``. Raises ``ValueError`` naming the file and line for anything malformed.
    ``data``: the file's bytes (``read_file``), if already read."""
    from ..kernels import rankfile as rf  # (not imported when the array cache has the arrays)
    data = _decompress(read_file(path) if data is None else data, path)
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
    Path(path).write_bytes(b"\n".join(lines) + b"\n")
