"""Strings in, flat buffers out (and back).

A batch of documents is one ``uint8`` buffer of UTF-8 plus ``int64`` offsets (CSR layout):
document i is ``buf[offsets[i]:offsets[i+1]]``. It is built with one ``join``.
"""
import numpy as np


def fix_surrogates(text):
    """What tiktoken does with lone surrogates: round-trip through UTF-16 with 'replace'
    (each lone surrogate becomes U+FFFD)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def as_str(text, name="text"):
    """``text`` as a ``str``: a str as it is, bytes-like input decoded as UTF-8 (``ValueError``
    when it is not valid UTF-8); anything else is a ``TypeError`` naming ``name``."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            return bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{name} is bytes but not valid UTF-8 ({e.reason} at byte {e.start})") from None
    raise TypeError(f"{name} must be str or UTF-8 bytes, not {type(text).__name__}")


def str_list(texts, name="texts"):
    """A batch as a list of ``str`` (each item through ``as_str``); a single text is a TypeError."""
    if isinstance(texts, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be a list of texts, not a single {type(texts).__name__}; wrap it in a list")
    try:
        texts = texts if type(texts) is list else list(texts)
    except TypeError:
        raise TypeError(f"{name} must be a list of texts, not {type(texts).__name__}") from None
    if set(map(type, texts)) - {str}:
        texts = [as_str(t, f"{name}[{i}]") for i, t in enumerate(texts)]
    return texts


def utf8(text):
    """UTF-8 bytes of ``str`` or UTF-8 ``bytes`` (see ``as_str``); lone surrogates become U+FFFD."""
    if type(text) is not str:
        text = as_str(text)
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
    through ``as_bytes`` (``utf8``: lone surrogates as tiktoken; bytes as UTF-8; others TypeError)."""
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
