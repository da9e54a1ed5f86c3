"""tokenizer.json decoders (HF semantics) on token strings: ByteLevel, Metaspace, Replace,
ByteFallback, Fuse, Strip, WordPiece, BPEDecoder, Sequence."""
from ..formats.gpt2 import bytes_to_unicode
from ..pipeline.regex_fallback import compile_regex
from ..pipeline.units import req_str


# ---------------------------------------------------------------------------------------------
# decoders

class _ByteCache(dict):
    """token -> bytes through GPT-2's byte alphabet (raw UTF-8 if a char is outside it), memoised."""

    def __init__(self):
        super().__init__()
        self.table = {c: b for b, c in bytes_to_unicode().items()}

    def __missing__(self, t):
        try:
            v = bytes(self.table[c] for c in t)
        except KeyError:
            v = t.encode("utf-8", errors="surrogatepass")
        self[t] = v
        return v


def _dec_bytelevel(cfg):
    cache = _ByteCache()

    def run(tokens):
        return [b"".join(map(cache.__getitem__, tokens)).decode("utf-8", errors="replace")]
    return run


def _one_char(cfg, key, default, where):
    c = cfg.get(key, default)
    if not isinstance(c, str) or len(c) != 1:
        raise ValueError(f"{where}: {key} must be one character, got {c!r}")
    return c


def _opt_str(cfg, key, default, where):
    v = cfg.get(key, default)
    if not isinstance(v, str):
        raise ValueError(f"{where}: {key} must be a string, got {v!r}")
    return v


def _count(cfg, key, where):
    n = cfg.get(key, 0)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{where}: {key} must be a non-negative integer, got {n!r}")
    return n


def _dec_metaspace(cfg):
    rep = _one_char(cfg, "replacement", "\u2581", "Metaspace decoder")
    scheme = cfg.get("prepend_scheme")
    if scheme is None:
        scheme = "always" if cfg.get("add_prefix_space", True) else "never"
    if scheme not in ("always", "first", "never"):
        raise ValueError(f"Metaspace decoder: unknown prepend_scheme {scheme!r}")

    def run(tokens):
        out = []
        for i, t in enumerate(tokens):
            if i == 0 and scheme != "never":
                out.append(t.replace(rep, ""))
            else:
                out.append(t.replace(rep, " "))
        return out
    return run


def _dec_replace(cfg):
    pat = cfg.get("pattern")
    content = req_str(cfg, "content")
    if isinstance(pat, dict) and "String" in pat:
        s = pat["String"]
        if not isinstance(s, str):
            raise ValueError(f"Replace decoder: pattern String must be a string, got {s!r}")
        return lambda tokens: [t.replace(s, content) for t in tokens]
    if isinstance(pat, dict) and "Regex" in pat:
        rx = compile_regex(pat["Regex"], "Replace decoder")
        return lambda tokens: [rx.sub(lambda m: content, t) for t in tokens]
    raise ValueError(f"Replace decoder: bad pattern {pat!r}")


def _dec_byte_fallback(cfg):
    def flush(buf, out):
        if buf:
            try:
                out.append(bytes(buf).decode("utf-8"))
            except UnicodeDecodeError:
                out.extend("\ufffd" for _ in buf)
            buf.clear()

    def run(tokens):
        out, buf = [], []
        for t in tokens:
            v = None
            if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
                try:
                    v = int(t[3:5], 16)
                except ValueError:
                    v = None
                if v is not None and not all(c in "0123456789abcdefABCDEF" for c in t[3:5]):
                    v = None
            if v is not None:
                buf.append(v)
            else:
                flush(buf, out)
                out.append(t)
        flush(buf, out)
        return out
    return run


def _dec_strip(cfg):
    content = _one_char(cfg, "content", " ", "Strip decoder")
    start, stop = _count(cfg, "start", "Strip decoder"), _count(cfg, "stop", "Strip decoder")

    def one(t):
        a = 0
        for i in range(min(start, len(t))):
            if t[i] == content:
                a = i + 1
            else:
                break
        e = len(t)
        for i in range(stop):
            idx = len(t) - i - 1
            if idx >= 0 and t[idx] == content:
                e = idx
            else:
                break
        return t[a:e] if e >= a else ""
    return lambda tokens: [one(t) for t in tokens]


def _wp_cleanup(s):
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        s = s.replace(a, b)
    return s


def _dec_wordpiece(cfg):
    prefix = _opt_str(cfg, "prefix", "##", "WordPiece decoder")
    cleanup = bool(cfg.get("cleanup", True))

    def run(tokens):
        out = []
        for i, t in enumerate(tokens):
            if i != 0:
                t = t[len(prefix):] if t.startswith(prefix) else " " + t
            if cleanup:
                t = _wp_cleanup(t)
            out.append(t)
        return out
    return run


def _dec_bpe(cfg):
    suffix = _opt_str(cfg, "suffix", "</w>", "BPE decoder")

    def run(tokens):
        n = len(tokens)
        return [t.replace(suffix, "" if i == n - 1 else " ") for i, t in enumerate(tokens)]
    return run


def _dec_ctc(cfg):
    pad = _opt_str(cfg, "pad_token", "<pad>", "CTC decoder")
    delim = _opt_str(cfg, "word_delimiter_token", "|", "CTC decoder")
    cleanup = bool(cfg.get("cleanup", True))

    def run(tokens):
        out = []
        prev = None
        for t in tokens:
            if t == prev:      # runs of one token count once
                continue
            prev = t
            t = t.replace(pad, "")
            if cleanup:
                t = _wp_cleanup(t).replace(delim, " ")
            if t:
                out.append(t)
        return out
    return run


def build_decoder(cfg):
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError(f"decoder must be an object, got {type(cfg).__name__}")
    t = cfg.get("type")
    if t == "Sequence":
        items = cfg.get("decoders")
        if not isinstance(items, list):
            raise ValueError("Sequence decoder needs a 'decoders' list")
        if any(not isinstance(c, dict) for c in items):
            raise ValueError("Sequence decoder: every item must be a decoder object")
        fns = [build_decoder(c) for c in items]

        def run(tokens):
            for f in fns:
                tokens = f(tokens)
            return tokens
        return run
    if t == "ByteLevel":
        return _dec_bytelevel(cfg)
    if t == "Metaspace":
        return _dec_metaspace(cfg)
    if t == "Replace":
        return _dec_replace(cfg)
    if t == "ByteFallback":
        return _dec_byte_fallback(cfg)
    if t == "Fuse":
        return lambda tokens: ["".join(tokens)]
    if t == "Strip":
        return _dec_strip(cfg)
    if t == "WordPiece":
        return _dec_wordpiece(cfg)
    if t == "BPEDecoder":
        return _dec_bpe(cfg)
    if t == "CTC":
        return _dec_ctc(cfg)
    raise NotImplementedError(f"tokenizer.json decoder {t!r} is not supported by nbtok")
