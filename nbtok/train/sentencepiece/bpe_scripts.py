"""Unicode script of a character as sentencepiece groups them (Hiragana/Katakana/U+30FC as Han).
Uses the ``regex`` module's script property (needed only for training)."""
from functools import lru_cache

_SCRIPTS = None


def _scripts():
    global _SCRIPTS
    if _SCRIPTS is None:
        try:
            import regex
        except ImportError:
            raise ImportError("train_sentencepiece needs the 'regex' package for Unicode scripts "
                              "(pip install nbtok[train])") from None
        _SCRIPTS = regex
    return _SCRIPTS


_NAMED = ("Latin", "Han", "Hiragana", "Katakana", "Cyrillic", "Greek", "Arabic", "Hebrew", "Hangul", "Thai",
          "Devanagari", "Common", "Inherited", "Unknown")


def scripts_of(chars):
    """The script of each character of ``chars`` (a list of one-character strings): one of
    ``_NAMED`` (Hiragana and Katakana as Han, and U+30FC too), else ``cp_script_`` + the first
    word of its Unicode name. One ``regex`` pass per script over all the characters at once."""
    r = _scripts()
    text = "".join(chars)
    if len(text) != len(chars):
        raise ValueError("scripts_of takes single characters")
    out = [None] * len(chars)
    for name in _NAMED:
        for m in r.finditer(r"\p{Script=%s}+" % name, text):
            for i in range(*m.span()):
                out[i] = "Han" if name in ("Hiragana", "Katakana") else name
    for i, c in enumerate(chars):
        if c == "\u30fc":
            out[i] = "Han"
        elif out[i] is None:
            out[i] = "cp_script_" + str(_other(c))
    return out


@lru_cache(maxsize=None)
def script_of(c):
    return scripts_of([c])[0]


def _other(c):
    import unicodedata
    name = unicodedata.name(c, "")
    return name.split(" ")[0]
