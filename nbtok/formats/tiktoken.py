"""tiktoken ``.tiktoken`` rank files: one ``base64(token_bytes) rank`` pair per line."""
import base64
import binascii
import gzip
import sys
from pathlib import Path


def _read_bytes(path):
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def _b64decode(text):
    """Strict base64 (no stray characters), without ``base64.b64decode(validate=True)``'s
    regular-expression check per call: a quarter of the time of loading a ranks file."""
    if sys.version_info >= (3, 11):
        return binascii.a2b_base64(text, strict_mode=True)
    return base64.b64decode(text, validate=True)


def load_tiktoken_ranks(path):
    """``dict[bytes, int]`` from a ``.tiktoken`` file (gzip accepted). Raises ``ValueError``
    naming the file and line for anything malformed."""
    ranks = {}
    seen_ranks = set()
    for lineno, line in enumerate(_read_bytes(path).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{path}:{lineno}: expected 'base64_token rank', got {line[:60]!r}")
        try:
            token = _b64decode(parts[0])
            rank = int(parts[1])
        except (binascii.Error, ValueError):
            raise ValueError(f"{path}:{lineno}: bad token or rank {line[:60]!r}") from None
        if rank < 0 or rank >= 1 << 31:
            raise ValueError(f"{path}:{lineno}: rank {rank} out of range")
        if token in ranks or rank in seen_ranks:
            raise ValueError(f"{path}:{lineno}: duplicate token or rank {line[:60]!r}")
        if not token:
            raise ValueError(f"{path}:{lineno}: empty token")
        ranks[token] = rank
        seen_ranks.add(rank)
    if not ranks:
        raise ValueError(f"{path}: no ranks found")
    return ranks


def save_tiktoken_ranks(ranks, path):
    """Write ``dict[bytes, int]`` in rank order."""
    lines = [base64.b64encode(tok) + b" " + str(rank).encode() for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1])]
    Path(path).write_bytes(b"\n".join(lines) + b"\n")
