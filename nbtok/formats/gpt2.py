"""GPT-2 ``vocab.json`` (encoder.json) + ``merges.txt`` (vocab.bpe).

Tokens are written in GPT-2's printable byte alphabet (``bytes_to_unicode``): printable
Latin-1 bytes stand for themselves, the other 68 bytes for U+0100 and up.
"""
import json
from functools import lru_cache
from pathlib import Path

from ._atomic import write_many_atomic


@lru_cache(maxsize=1)
def bytes_to_unicode():
    """byte value -> printable character, exactly GPT-2's ``encoder.py`` table."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    table = {}
    extra = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@lru_cache(maxsize=1)
def unicode_to_bytes():
    return {c: b for b, c in bytes_to_unicode().items()}


@lru_cache(maxsize=1)
def _translation():
    """``str.translate`` table: each alphabet character to its byte (as a Latin-1 code point),
    each Latin-1 character outside the alphabet to U+FFFF (which Latin-1 cannot encode)."""
    table = {ord(c): b for c, b in unicode_to_bytes().items()}
    for c in range(256):
        table.setdefault(c, 0xFFFF)
    return table


def alphabet_bytes(token):
    """The bytes a token in GPT-2's alphabet stands for, or None if a character is outside it:
    one ``str.translate`` and a Latin-1 encode (vocabularies of 100k+ tokens load in C speed)."""
    try:
        return token.translate(_translation()).encode("latin-1")
    except UnicodeEncodeError:
        return None


def token_to_bytes(token, where):
    data = alphabet_bytes(token)
    if data is None:
        bad = next(c for c in token if c not in unicode_to_bytes())
        raise ValueError(f"{where}: character {bad!r} is not in GPT-2's byte alphabet")
    return data


def bytes_to_token(data):
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


def _read_text(path):
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None


def load_gpt2_vocab(vocab_json_path):
    """``(tokens dict[bytes, int], specials dict[str, int])``. Entries whose text is not in
    the byte alphabet (``<|endoftext|>``) are special tokens."""
    try:
        raw = json.loads(_read_text(vocab_json_path))
    except json.JSONDecodeError as e:
        raise ValueError(f"{vocab_json_path}:{e.lineno}: invalid JSON: {e.msg}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{vocab_json_path}: expected a JSON object token -> id")
    tokens, specials = {}, {}
    for token, idx in raw.items():
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < 1 << 31:
            raise ValueError(f"{vocab_json_path}: id of {token!r} must be a non-negative integer, got {idx!r}")
        data = alphabet_bytes(token) if token else None
        if data is not None:
            tokens[data] = idx
        else:
            specials[token] = idx
    if len(set(tokens.values()) | set(specials.values())) != len(raw):
        raise ValueError(f"{vocab_json_path}: two tokens share an id")
    return tokens, specials


def load_gpt2_merges(merges_txt_path):
    """``list[tuple[bytes, bytes]]`` in merge order; ``#version`` lines are skipped."""
    merges = []
    for lineno, line in enumerate(_read_text(merges_txt_path).split("\n"), 1):
        if not line or (lineno == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ValueError(f"{merges_txt_path}:{lineno}: expected 'left right', got {line[:60]!r}")
        where = f"{merges_txt_path}:{lineno}"
        merges.append((token_to_bytes(parts[0], where), token_to_bytes(parts[1], where)))
    return merges


def load_gpt2(vocab_json_path, merges_txt_path):
    """``(tokens, merges, specials)`` for ``ByteLevelBPE.from_merges``.

    A multi-byte entry of ``vocab.json`` that no merge produces (``<|endoftext|>``) cannot come
    out of BPE: it is a special token."""
    tokens, specials = load_gpt2_vocab(vocab_json_path)
    merges = load_gpt2_merges(merges_txt_path)
    produced = {a + b for a, b in merges}
    for token in [t for t in tokens if len(t) > 1 and t not in produced]:
        try:
            specials[token.decode("utf-8")] = tokens.pop(token)
        except UnicodeDecodeError:
            raise ValueError(f"{vocab_json_path}: token {bytes_to_token(token)!r} is produced by no merge") from None
    return tokens, merges, specials


def save_gpt2(tokens, merges, special_tokens, vocab_json_path, merges_txt_path):
    """Write ``vocab.json`` (tokens and special tokens) and ``merges.txt`` (with a ``#version`` line),
    both to temporaries before either is renamed (``formats._atomic``)."""
    vocab = {bytes_to_token(tok): idx for tok, idx in tokens.items()}
    vocab.update(special_tokens)
    vocab = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    lines = ["#version: 0.2"] + [f"{bytes_to_token(a)} {bytes_to_token(b)}" for a, b in merges]
    write_many_atomic([(vocab_json_path, json.dumps(vocab, ensure_ascii=False)),
                       (merges_txt_path, "\n".join(lines) + "\n")])
