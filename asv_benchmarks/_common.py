"""Shared helpers for every asv suite (and the scripts under scripts/).

Everything a suite needs to find its inputs and its peers, with one rule: a missing
input or a missing peer library raises ``NotImplementedError``, which asv reports as a
skipped benchmark (call these helpers from ``setup`` / ``setup_cache``).

    corpus_path(name)                 -> Path      a file under <data>/corpora
    model_path(name)                  -> Path      a file under <data>/models
    read_corpus(name, max_bytes=None) -> str       utf-8 text, cut on a character boundary
    lines(name, n=None, skip_empty=False) -> list[str]  the first n lines
    peer_or_skip(modname)             -> module    the peer library, or skip
    nbtok_or_skip(modname="nbtok")    -> module    an nbtok (sub)module, or skip (old commits)
    mbps(nbytes, seconds)             -> float     throughput in MB/s (10**6 bytes)
    best_seconds(fn, *args, repeat=5, min_time=0.05) -> float  best per-call wall time
    cpu_threads()                     -> int
    cache_dir()                       -> Path      scratch space for trained models etc.

Data folder: ``$NBTOK_SHARED_DATA`` if set, else ``../shared/data`` relative to the repo
root. Corpus names may be a short alias (see ``CORPORA``) or a path relative to
``corpora/`` such as ``"tinyshakespeare/input.txt"``.

Importing this module also makes ``import nbtok`` resolve to this checkout when asv runs
with ``--python=same`` (an "existing" environment): the working tree goes first on
``sys.path``, so a fresh clone needs no install and another installed copy is not measured
by mistake. In virtualenv environments asv installs the commit under test and the working
tree is never used.
"""
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent

# ------------------------------------------------------------------ nbtok import path
# With an existing environment (asv --python=same, or a plain python run) the nbtok measured
# is the one in this checkout, even if another copy is installed (e.g. an editable install of
# a different working tree): the results are recorded for this checkout's commit.
if os.environ.get("ASV_ENV_TYPE", "existing") == "existing" and (REPO_ROOT / "nbtok" / "__init__.py").is_file():
    if sys.path[:1] != [str(REPO_ROOT)]:
        sys.path.insert(0, str(REPO_ROOT))
    _loaded = sys.modules.get("nbtok")
    if _loaded is not None and not str(getattr(_loaded, "__file__", "") or "").startswith(str(REPO_ROOT)):
        import warnings
        warnings.warn(f"nbtok was already imported from {_loaded.__file__}, not from {REPO_ROOT}", stacklevel=2)

# ------------------------------------------------------------------ data
CORPORA = {
    "tinyshakespeare": "tinyshakespeare/input.txt",
    "botchan": "sentencepiece/botchan.txt",
    "wagahaiwa": "sentencepiece/wagahaiwa_nekodearu.txt",
    "corpus.en": "cs336/corpus.en",
    "tinystories_sample": "cs336/tinystories_sample.txt",
    "en_gutenberg": "bench/en_gutenberg.txt",
    "ja_aozora": "bench/ja_aozora.txt",
    "zh_classical_poetry": "bench/zh_classical_poetry.txt",
    "ru_literature": "bench/ru_literature.txt",
    "multi_bible_nt": "bench/multi_bible_nt.txt",
    "xquad_en": "xquad/xquad.en.contexts.txt",
    "udhr_eng": "udhr/udhr_eng.txt",
}

MODELS = {
    "gpt2.tiktoken": "gpt2/gpt2.tiktoken",
    "gpt2_vocab": "gpt2/vocab.json",
    "gpt2_merges": "gpt2/merges.txt",
    "cl100k_base.tiktoken": "tiktoken/cl100k_base.tiktoken",
    "sp_unigram_test": "sentencepiece/sentencepiece_test_model.model",
    "sp_unigram_ja": "sentencepiece/sentencepiece_test_ja_model.model",
    "sp_unigram_wmtende": "sentencepiece/opennmt_wmtende.model",
    "sp_bpe_bpemb_en": "sentencepiece/bpemb_en.wiki.bpe.vs100000.model",
    "hf_t5_small": "hf_tokenizers/t5-small/tokenizer.json",
    "hf_phi3_mini": "hf_tokenizers/phi-3-mini/tokenizer.json",
}

GPT2_SPECIALS = {"<|endoftext|>": 50256}


def script_module(name):
    """The module ``scripts/<name>.py`` of the commit under test (skips when it has none)."""
    import importlib.util
    path = REPO_ROOT / "scripts" / f"{name}.py"
    if not path.is_file():
        skip(f"scripts/{name}.py is not in this commit")
    spec = importlib.util.spec_from_file_location(f"{name}_script", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def skip(reason):
    """Raise the exception asv turns into "skipped" (use in setup)."""
    raise NotImplementedError(reason)


def data_dir(required=True):
    """The shared data folder, or skip (None if ``required=False``)."""
    env = os.environ.get("NBTOK_SHARED_DATA")
    if env:
        path = Path(env)
    else:
        root = Path(os.environ.get("ASV_CONF_DIR", REPO_ROOT))
        path = root.parent / "shared" / "data"
        if not path.is_dir():
            path = REPO_ROOT.parent / "shared" / "data"
    if path.is_dir():
        return path.resolve()
    if required:
        skip(f"shared data folder not found ({path}); set NBTOK_SHARED_DATA")
    return None


def corpus_path(name):
    path = data_dir() / "corpora" / CORPORA.get(name, name)
    if not path.is_file():
        skip(f"corpus {name!r} not found at {path}")
    return path


def model_path(name):
    path = data_dir() / "models" / MODELS.get(name, name)
    if not path.is_file():
        skip(f"model {name!r} not found at {path}")
    return path


def read_corpus(name, max_bytes=None):
    """The corpus as ``str``; with ``max_bytes``, at most that many UTF-8 bytes (whole characters)."""
    path = corpus_path(name)
    with open(path, "rb") as f:
        data = f.read() if max_bytes is None else f.read(max_bytes)
    # errors="ignore" only drops a character cut in half at the end
    return data.decode("utf-8", errors="ignore") if max_bytes is not None else data.decode("utf-8")


def lines(name, n=None, skip_empty=False):
    """The first ``n`` lines (all if None), without line ends."""
    out = read_corpus(name).splitlines()
    if skip_empty:
        out = [s for s in out if s.strip()]
    return out if n is None else out[:n]


def line_documents(names, max_bytes):
    """The non-empty lines of ``max_bytes`` of text taken evenly from the corpora ``names``."""
    docs = []
    for name in names:
        docs.extend(x for x in read_corpus(name, max_bytes // len(names)).split("\n") if x)
    return docs


def udhr_path(lang="English"):
    """A UDHR text by language name, looked up in corpora/udhr/index.xml."""
    import xml.etree.ElementTree as ET
    udhr = data_dir() / "corpora" / "udhr"
    index = udhr / "index.xml"
    if not index.is_file():
        skip("corpora/udhr/index.xml not found")
    for node in ET.parse(index).getroot().iter("udhr"):
        if node.get("n") == lang:
            path = udhr / f"udhr_{node.get('f')}.txt"
            if path.is_file():
                return path
    skip(f"no UDHR text for {lang!r}")


def udhr_article(n=1, lang="English"):
    """The body of article ``n`` (lines after the "Article n" heading, joined by spaces)."""
    text = udhr_path(lang).read_text("utf-8").splitlines()
    head = f"Article {n}"
    for i, line in enumerate(text):
        if line.strip() == head:
            body = []
            for follow in text[i + 1:]:
                if not follow.strip() or follow.strip().startswith("Article "):
                    break
                body.append(follow.strip())
            return " ".join(body)
    skip(f"article {n} not found in the UDHR text")


def cache_dir():
    """Scratch folder for derived inputs (trained models, generated text); gitignored."""
    path = Path(os.environ.get("NBTOK_BENCH_CACHE", REPO_ROOT / ".asv" / "cache"))
    path.mkdir(parents=True, exist_ok=True)
    return path


# ------------------------------------------------------------------ libraries
def peer_or_skip(modname):
    """Import a peer library (tiktoken, sentencepiece, tokenizers, ...) or skip."""
    import importlib
    try:
        return importlib.import_module(modname)
    except ImportError as exc:
        skip(f"peer {modname!r} is not installed ({exc})")


def nbtok_or_skip(modname="nbtok", attr=None):
    """Import an nbtok module (optionally check one attribute) or skip.

    Old commits lack later modules; benchmarking history must skip them, not fail.
    """
    import importlib
    try:
        mod = importlib.import_module(modname)
    except ImportError as exc:
        skip(f"{modname} is not available in this commit ({exc})")
    if attr is not None and not hasattr(mod, attr):
        skip(f"{modname}.{attr} is not available in this commit")
    return mod


# ------------------------------------------------------------------ measuring
def mbps(nbytes, seconds):
    """Throughput in MB/s (10**6 bytes per second)."""
    return nbytes / seconds / 1e6


def best_seconds(fn, *args, repeat=5, min_time=0.05, clock=time.perf_counter, **kwargs):
    """Best time of one call of ``fn(*args, **kwargs)`` on ``clock`` (wall time by default;
    ``time.thread_time`` for a single-threaded call leaves out the time other jobs hold the
    core, which a long call suffers more than a short one).

    Each of ``repeat`` samples loops the call until ``min_time`` has passed and divides;
    the minimum sample is returned. For ``track_`` ratio benchmarks, where asv does not
    time anything itself.
    """
    best = float("inf")
    for _ in range(repeat):
        number = 0
        t0 = clock()
        while True:
            fn(*args, **kwargs)
            number += 1
            elapsed = clock() - t0
            if elapsed >= min_time:
                break
        best = min(best, elapsed / number)
    return best


def cpu_threads():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pin_to_one_cpu():
    """Run this thread, and every thread it starts from now on, on one CPU. A Rust peer sizes
    its thread pool by the CPUs it may use when it first needs one (tokie ignores
    ``RAYON_NUM_THREADS``), so this, before its first call, is what makes it a one-thread peer."""
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except AttributeError:  # not Linux: RAYON_NUM_THREADS is all there is
        pass


def cpu_model():
    """CPU model name from /proc/cpuinfo (or platform.processor())."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or "unknown"


def sentencepiece_text(text):
    """SentencePiece-style surface form: whitespace runs -> one ``▁``, plus a leading ``▁``."""
    return "\u2581" + "\u2581".join(text.split())


# ------------------------------------------------------------------ ready-made tokenizers
# Every constructor reads the shared data only (no network) and skips when a piece is missing.
def nbtok_gpt2():
    """nbtok's GPT-2 encoding (the bundled ranks)."""
    nbtok = nbtok_or_skip("nbtok")
    nbtok_or_skip("nbtok.models.bytelevel")  # skip on commits before byte-level BPE
    return nbtok.get_encoding("gpt2")


def tiktoken_gpt2():
    """tiktoken's GPT-2 encoding built from the shared gpt2.tiktoken (tiktoken.get_encoding
    would download it)."""
    tiktoken = peer_or_skip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext.openai_public import r50k_pat_str
    return tiktoken.Encoding("gpt2", pat_str=r50k_pat_str,
                             mergeable_ranks=load_tiktoken_bpe(str(model_path("gpt2.tiktoken"))),
                             special_tokens=dict(GPT2_SPECIALS))


def tokenizers_gpt2():
    """HF tokenizers' GPT-2 (byte-level BPE from the shared vocab.json + merges.txt)."""
    tk = peer_or_skip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers
    tok = tk.Tokenizer(models.BPE.from_file(str(model_path("gpt2_vocab")), str(model_path("gpt2_merges"))))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def tokenizers_cl100k_json():
    """A tokenizer.json of cl100k_base for the peers that read only that format (tokie): HF
    BPE whose merges are rebuilt from the shared ranks (the usual tiktoken -> HF conversion:
    each token's last merge, found by running rank-BPE on its bytes), the cl100k split regex
    then ``ByteLevel`` without its own regex. Written once to ``cache_dir()``."""
    path = cache_dir() / "cl100k-tokenizer.json"
    if path.is_file():
        return path
    tk = peer_or_skip("tokenizers")
    from tokenizers import Regex, decoders, models, pre_tokenizers
    from tiktoken.load import load_tiktoken_bpe
    pattern = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
               r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")  # tiktoken's cl100k_base pat_str
    ranks = load_tiktoken_bpe(str(model_path("cl100k_base.tiktoken")))
    # GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for 256 + k
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    for b in range(256):
        if b not in bs:
            cs.append(256 + len(bs) - len(cs) + (len(cs) - len(bs)) + sum(c >= 256 for c in cs))
            bs.append(b)
    byte_char = {b: chr(c) for b, c in zip(bs, cs)}
    def show(token):
        return "".join(byte_char[b] for b in token)
    def last_merge(token, rank):
        parts = [bytes([b]) for b in token]
        while True:
            best, at = None, None
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < rank and (best is None or r < best):
                    best, at = r, i
            if best is None:
                return parts
            parts[at:at + 2] = [parts[at] + parts[at + 1]]
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) > 1:
            a, b = last_merge(token, rank)
            merges.append((show(a), show(b)))
    vocab = {show(t): r for t, r in ranks.items()}
    tok = tk.Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.save(str(path))
    return path


def nbtok_sentencepiece(model):
    """nbtok's SentencePiece model (``model``: a MODELS key or a path), or skip."""
    nbtok = nbtok_or_skip("nbtok")
    nbtok_or_skip("nbtok.models.sentencepiece")
    path = model if os.path.isfile(str(model)) else model_path(model)
    return nbtok.Tokenizer.from_sentencepiece(str(path))


def sentencepiece_processor(model):
    spm = peer_or_skip("sentencepiece")
    path = model if os.path.isfile(str(model)) else model_path(model)
    return spm.SentencePieceProcessor(model_file=str(path))


# ------------------------------------------------------------------ short multilingual lines
SHORT_LINE_SOURCES = ([f"xquad/xquad.{lang}.contexts.txt" for lang in
                       ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")]
                      + ["bench/en_gutenberg.txt", "bench/ru_literature.txt", "bench/ja_aozora.txt",
                         "bench/zh_classical_poetry.txt", "bench/multi_bible_nt.txt"])


def cut_short(line, rnd, lo=40, hi=200):
    """``line`` cut into pieces of ``lo..hi`` UTF-8 bytes (drawn from ``rnd``), at a space when
    one is near the cut, else at a character boundary."""
    data = line.encode()
    out = []
    s = 0
    while s < len(data):
        e = min(len(data), s + rnd.randint(lo, hi))
        if e < len(data):
            space = data.rfind(b" ", s + lo // 2, e)
            if space > s:
                e = space
            while e < len(data) and (data[e] & 0xC0) == 0x80:
                e += 1
        out.append(data[s:e].decode())
        s = e
    return out


def short_lines(max_bytes):
    """A web-style multilingual mix of short lines (~85 bytes on average, ~41% ASCII bytes):
    xquad paragraphs (12 languages), UDHR lines (every language) and bench lines, all cut into
    pieces of 40-200 bytes and shuffled (fixed seed). At most ``max_bytes`` bytes."""
    import random
    rnd = random.Random(25)
    corpora = data_dir() / "corpora"
    pieces = []
    sources = [corpora / f for f in SHORT_LINE_SOURCES] + sorted((corpora / "udhr").glob("udhr_*.txt"))
    per_source = {p: 400_000 for p in sources[:12]}  # xquad: every paragraph
    per_source.update({p: 500_000 for p in sources[13:17]})  # bench: 500 KB each,
    per_source[sources[12]] = 50_000  # English 50 KB (English is in xquad and UDHR too)
    per_source.update({p: 12_000 for p in sources[17:]})  # UDHR: the first 12 KB of each text
    for path in sources:
        text = path.read_bytes()[:per_source[path]].decode("utf-8", "ignore")
        for line in text.split("\n"):
            line = line.strip()
            if line:
                pieces.extend(cut_short(line, rnd))
    rnd.shuffle(pieces)
    docs, total = [], 0
    for p in pieces:
        n = len(p.encode())
        if total + n > max_bytes:
            break
        docs.append(p)
        total += n
    return docs
