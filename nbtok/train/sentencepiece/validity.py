"""IsValidSentencePiece: length, ``▁`` placement (``whitespace.ws_allowed``), digits and Unicode-script boundaries."""
from .bpe_scripts import script_of
from .whitespace import ws_allowed, ws_flags

WS = "\u2581"
UNK_CHAR = "\u2585"


def is_decimal_digit(c):
    """sentencepiece's ``is_unicode_decimal_number``: ASCII and fullwidth digits."""
    return "0" <= c <= "9" or "\uff10" <= c <= "\uff19"


class Validity:
    def __init__(self, spec):
        self.max_len = int(spec["max_sentencepiece_length"])
        self.by_script = bool(spec["split_by_unicode_script"])
        self.by_number = bool(spec["split_by_number"])
        self.digits = bool(spec["split_digits"])
        self.ws = ws_flags(spec)

    def __call__(self, piece):
        if not piece or len(piece) > self.max_len:
            return False
        prev = None
        all_ws = WS in piece and piece.count(WS) == len(piece)
        for pos, c in enumerate(piece):
            if c in (UNK_CHAR, "\0", " ", "\x1f"):
                return False
            if c == WS:
                if not ws_allowed(pos, len(piece), all_ws, self.ws):
                    return False
                continue
            s = script_of(c)
            if s == "Inherited":  # a combining mark takes the script of what it follows
                s = prev
            digit = is_decimal_digit(c)
            if not self.by_number and digit:
                s = None
            if self.digits and digit and len(piece) > 1:
                return False
            if self.by_script and s is not None and prev is not None and prev != s:
                return False
            prev = s
        return True
