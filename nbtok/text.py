"""Strings in, flat buffers out (and back).

A batch of documents is one ``uint8`` buffer of UTF-8 plus ``int64`` offsets (CSR layout):
document i is ``buf[offsets[i]:offsets[i+1]]``. It is built with one ``join``.
"""
import numpy as np


def fix_surrogates(text):
    """What tiktoken does with lone surrogates: round-trip through UTF-16 with 'replace'
    (each lone surrogate becomes U+FFFD)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utf8(text):
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return fix_surrogates(text).encode("utf-8")


def utf8_array(text):
    return np.frombuffer(utf8(text), np.uint8)


def pack_utf8(texts):
    """``(buf uint8[total], offsets int64[n + 1], encoded list[bytes])`` for a list of str."""
    try:
        encoded = list(map(str.encode, texts))
    except (UnicodeEncodeError, TypeError):
        encoded = [utf8(t) for t in texts]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    if encoded:
        np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    buf = np.frombuffer(b"".join(encoded), np.uint8)
    return buf, offsets, encoded


def split_ragged(flat, offsets):
    """List of views ``flat[offsets[i]:offsets[i+1]]``."""
    return np.split(flat, offsets[1:-1]) if offsets.shape[0] > 1 else []
