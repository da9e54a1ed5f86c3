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


def pack_utf8(texts, as_bytes=utf8):
    """``(buf uint8[total], offsets int64[n + 1])`` for a list of texts: their UTF-8 bytes end
    to end. A list of str is joined with U+0000 between the texts (if no text has one) and
    encoded by one kernel (``kernels.ragged.utf8_split``), which also finds the offsets: one
    pass, where ``str.encode`` per text and a ``len`` per text cost twice as much on non-ASCII
    text. Otherwise each text goes through ``str.encode``, and one ``str.encode`` does not take
    through ``as_bytes`` (``utf8``: lone surrogates as tiktoken; non-str raises TypeError)."""
    from .kernels.ragged import utf8_split  # here: ``import nbtok`` does not import numba

    n = len(texts)
    if n and utf8_split is not None:
        try:
            joined = "\x00".join(texts)
        except TypeError:  # some text is not a str
            joined = None
        if joined is not None and joined.count("\x00") == n - 1:
            buf, offsets, ok = utf8_split(joined, n)
            if ok:
                return buf, offsets
    try:
        encoded = list(map(str.encode, texts))
    except (UnicodeEncodeError, TypeError):
        encoded = [as_bytes(t) for t in texts]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, n), out=offsets[1:])
    return np.frombuffer(b"".join(encoded), np.uint8), offsets


def split_ragged(flat, offsets):
    """List of views ``flat[offsets[i]:offsets[i+1]]``."""
    return np.split(flat, offsets[1:-1]) if offsets.shape[0] > 1 else []
