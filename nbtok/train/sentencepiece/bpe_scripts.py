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


@lru_cache(maxsize=None)
def script_of(c):
    if c == "\u30fc":
        return "Han"
    r = _scripts()
    for name in ("Latin", "Han", "Hiragana", "Katakana", "Cyrillic", "Greek", "Arabic", "Hebrew",
                 "Hangul", "Thai", "Devanagari", "Common", "Inherited"):
        if r.fullmatch(r"\p{Script=%s}" % name, c):
            return "Han" if name in ("Hiragana", "Katakana") else name
    m = r.fullmatch(r"\p{Script=Unknown}", c)
    if m:
        return "Unknown"
    return "cp_script_" + str(_other(c))


def _other(c):
    import unicodedata
    name = unicodedata.name(c, "")
    return name.split(" ")[0]
