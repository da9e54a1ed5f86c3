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
    """``(buf uint8[total], offsets int64[n + 1], joined bytes)`` for a list of texts: their
    UTF-8 bytes end to end (``buf`` is a view of ``joined``). A list of ASCII str (``str.isascii``
    is a flag lookup) is joined and encoded at once; a text ``str.encode`` does not take goes
    through ``as_bytes`` (``utf8``: lone surrogates as tiktoken; non-str raises TypeError)."""
    n = len(texts)
    try:
        ascii_only = all(map(str.isascii, texts))
    except TypeError:  # some text is not a str
        ascii_only = False
    if ascii_only:
        joined = "".join(texts).encode()
        lengths = np.fromiter(map(len, texts), np.int64, n)
    else:
        try:
            encoded = list(map(str.encode, texts))
        except (UnicodeEncodeError, TypeError):
            encoded = [as_bytes(t) for t in texts]
        joined = b"".join(encoded)
        lengths = np.fromiter(map(len, encoded), np.int64, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(joined, np.uint8), offsets, joined


def split_ragged(flat, offsets):
    """List of views ``flat[offsets[i]:offsets[i+1]]``."""
    return np.split(flat, offsets[1:-1]) if offsets.shape[0] > 1 else []
