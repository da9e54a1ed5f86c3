"""Where ``▁`` (the escaped space) may stand in a trained piece, and how sentencepiece's trainer
splits a normalized sentence into words, under ``split_by_whitespace``,
``treat_whitespace_as_suffix`` and ``allow_whitespace_only_pieces``
(``IsValidSentencePiece`` and ``SplitIntoWords`` of sentencepiece 0.2.3).

``▁`` in a piece of n characters, at position ``pos``:

* with ``allow_whitespace_only_pieces``, a piece made of ``▁`` only is always allowed;
* otherwise, whitespace as prefix: with ``split_by_whitespace`` only at ``pos == 0``; without
  it anywhere but the last position of a longer piece (``"▁a▁b"``, not ``"a▁"``);
* whitespace as suffix: with ``split_by_whitespace`` only at ``pos == n - 1``; without it
  anywhere but the first position of a longer piece.

The rule travels to the seed kernel as the bit flags ``ws_flags``.
"""
WS = "\u2581"

SUFFIX = 1       # treat_whitespace_as_suffix
SPLIT = 2        # split_by_whitespace
ALLOW_ONLY = 4   # allow_whitespace_only_pieces


def ws_flags(spec):
    return ((SUFFIX if spec["treat_whitespace_as_suffix"] else 0) | (SPLIT if spec["split_by_whitespace"] else 0)
            | (ALLOW_ONLY if spec["allow_whitespace_only_pieces"] else 0))


def default_whitespace(spec):
    """Whether the options are sentencepiece's default whitespace handling (prefix, split, no
    whitespace-only pieces)."""
    return ws_flags(spec) == SPLIT


def ws_allowed(pos, n, all_ws, flags):
    """Whether ``▁`` may stand at ``pos`` of a piece of ``n`` characters (``all_ws``: the piece
    is only ``▁``)."""
    if flags & ALLOW_ONLY and all_ws:
        return True
    if flags & SUFFIX:
        return pos == n - 1 if flags & SPLIT else not (pos == 0 and n > 1)
    return pos == 0 if flags & SPLIT else not (pos == n - 1 and n > 1)


def split_into_words(s, suffix=False, allow_ws_only=False):
    """sentencepiece's ``SplitIntoWords``. Whitespace as prefix: a word starts at the start and
    at each ``▁`` (with ``allow_ws_only``, at the first ``▁`` of a run only). As suffix: a word
    ends after each ``▁`` (with ``allow_ws_only``, a run of ``▁`` ends the word before the next
    other character)."""
    if not s:
        return []
    words = []
    start = 0
    if suffix:
        in_run = False
        for i, c in enumerate(s):
            if c == WS:
                in_run = True
                if not allow_ws_only and i + 1 < len(s):
                    words.append(s[start:i + 1])
                    start = i + 1
            elif in_run:
                in_run = False
                if allow_ws_only:
                    words.append(s[start:i])
                    start = i
        words.append(s[start:])
        return words
    in_run = False
    for i, c in enumerate(s):
        ws = c == WS
        if i == 0 or (ws and (not in_run or not allow_ws_only)):
            if i > 0:
                words.append(s[start:i])
                start = i
            in_run = True
        if in_run and not ws:
            in_run = False
    words.append(s[start:])
    return words
