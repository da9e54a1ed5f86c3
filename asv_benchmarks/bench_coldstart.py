"""Cold start and peak memory, nbtok side by side with its peers.

ColdStart.time_coldstart
    A new Python process that imports the library, loads the model and encodes one short
    sentence (``python -c ...``), timed from outside. nbtok keeps two caches on disk: numba's
    compiled kernels (``cache=True``) and the array cache (``nbtok/arraycache.py``: the arrays a
    model builds from its files, e.g. GPT-2's merge table and hash maps, read back instead of
    built; here in a temporary ``NBTOK_CACHE_DIR``). setup runs the same process once, which
    fills both, so this is what every later process pays.
ColdStartNoCache.track_first_run_seconds
    The same process with an empty ``NUMBA_CACHE_DIR`` and an empty ``NBTOK_CACHE_DIR``: the
    very first run after install, when every kernel it touches is compiled and every array
    built.
PeakMemory.peakmem_load_encode_1mb
    Peak resident memory of the benchmark process (asv ``peakmem_``) that imports the
    library, loads the model and encodes 1 MB of English (corpora/bench/en_gutenberg.txt).
"""
import os
import subprocess
import sys
import tempfile
import time

from . import _common as common

LIBRARIES = ["nbtok_gpt2", "tiktoken_gpt2", "tokenizers_gpt2", "nbtok_sp_unigram", "sentencepiece_unigram"]
SENTENCE = "Hello, world! The quick brown fox jumps over the lazy dog."
SP_UNIGRAM = "sp_unigram_wmtende"


def snippet(library):
    """Python source for one cold start (paths resolved now; skips if something is missing)."""
    if library == "nbtok_gpt2":
        common.nbtok_or_skip("nbtok.models.bytelevel")
        return "import nbtok\ntok = nbtok.get_encoding('gpt2')\nids = tok.encode(TEXT)\n"
    if library == "tiktoken_gpt2":
        common.peer_or_skip("tiktoken")
        path = str(common.model_path("gpt2.tiktoken"))
        return ("import tiktoken\nfrom tiktoken.load import load_tiktoken_bpe\n"
                "from tiktoken_ext.openai_public import r50k_pat_str\n"
                f"enc = tiktoken.Encoding('gpt2', pat_str=r50k_pat_str, mergeable_ranks=load_tiktoken_bpe({path!r}),"
                " special_tokens={'<|endoftext|>': 50256})\nids = enc.encode(TEXT)\n")
    if library == "tokenizers_gpt2":
        common.peer_or_skip("tokenizers")
        vocab, merges = str(common.model_path("gpt2_vocab")), str(common.model_path("gpt2_merges"))
        return ("from tokenizers import Tokenizer, models, pre_tokenizers\n"
                f"tok = Tokenizer(models.BPE.from_file({vocab!r}, {merges!r}))\n"
                "tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)\n"
                "ids = tok.encode(TEXT).ids\n")
    if library == "nbtok_sp_unigram":
        common.nbtok_or_skip("nbtok.models.sentencepiece")
        path = str(common.model_path(SP_UNIGRAM))
        return f"import nbtok\ntok = nbtok.Tokenizer.from_sentencepiece({path!r})\nids = tok.encode(TEXT)\n"
    if library == "sentencepiece_unigram":
        common.peer_or_skip("sentencepiece")
        path = str(common.model_path(SP_UNIGRAM))
        return ("import sentencepiece as spm\n"
                f"sp = spm.SentencePieceProcessor(model_file={path!r})\nids = sp.encode(TEXT)\n")
    raise ValueError(library)


def child_env(extra=None):
    """Environment for the child: nbtok importable from wherever this process imports it."""
    env = dict(os.environ)
    try:
        import nbtok
        where = getattr(nbtok, "__file__", None)
    except ImportError:
        where = None
    if where:  # (a namespace package on very old commits has no __file__)
        root = os.path.dirname(os.path.dirname(os.path.abspath(where)))
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


def run_child(code, env):
    src = f"TEXT = {SENTENCE!r}\n" + code
    proc = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"cold-start child failed:\n{proc.stderr[-2000:]}")


class ColdStart:
    params = [LIBRARIES]
    param_names = ["library"]
    number = 1
    repeat = (3, 10, 60.0)
    timeout = 900

    def setup(self, library):
        self.code = snippet(library)
        self.arrays = tempfile.TemporaryDirectory(prefix="nbtok-array-cache-")
        self.env = child_env({"NBTOK_CACHE_DIR": self.arrays.name})
        run_child(self.code, self.env)  # fills numba's cache (first run compiles) and the array cache

    def teardown(self, library):
        self.arrays.cleanup()

    def time_coldstart(self, library):
        run_child(self.code, self.env)


class ColdStartNoCache:
    params = [["nbtok_gpt2", "nbtok_sp_unigram"]]
    param_names = ["library"]
    timeout = 1200
    repeat = 1
    number = 1

    def setup(self, library):
        self.code = snippet(library)

    def track_first_run_seconds(self, library):
        with tempfile.TemporaryDirectory(prefix="nbtok-numba-cache-") as numba_cache, \
                tempfile.TemporaryDirectory(prefix="nbtok-array-cache-") as array_cache:
            env = child_env({"NUMBA_CACHE_DIR": numba_cache, "NBTOK_CACHE_DIR": array_cache})
            t0 = time.perf_counter()
            run_child(self.code, env)
            return time.perf_counter() - t0

    track_first_run_seconds.unit = "seconds"


class PeakMemory:
    params = [LIBRARIES]
    param_names = ["library"]
    timeout = 900

    def setup(self, library):
        self.code = snippet(library)  # checks the library and files; imports nothing heavy
        self.text = common.read_corpus("en_gutenberg", 1_000_000)
        # compile nbtok's kernels into the on-disk cache in a child, not in this process
        run_child(self.code, child_env())

    def peakmem_load_encode_1mb(self, library):
        scope = {"TEXT": self.text}
        exec(compile(self.code, f"<{library}>", "exec"), scope)


QUICK_START = ("import numba.core.event as ev\n"
               "compiled = []\n"
               "class L(ev.Listener):\n"
               "    def on_start(self, e): compiled.append(1)\n"
               "    def on_end(self, e): pass\n"
               "ev.register('numba:compile', L())\n"
               "import nbtok\n"
               "tok = nbtok.get_encoding('gpt2')\n"
               "ids = tok.encode('hi')\n"
               "print(len(compiled))\n"
               "tok.decode(ids)\n")


class FirstCommandThenQuickStart:
    """From empty caches: the README's first command (``nbtok encode --encoding gpt2 "Hello
    world"``), then the Python quick start in a second process: its ``encode`` compiles nothing,
    the first command compiled it (``track_quick_start_compilations``: 0); its ``decode``, which
    the first command does not use, compiles its own kernels."""
    timeout = 1200
    repeat = 1
    number = 1

    def setup(self):
        self.numba_cache = tempfile.TemporaryDirectory(prefix="nbtok-numba-cache-")
        self.array_cache = tempfile.TemporaryDirectory(prefix="nbtok-array-cache-")
        self.env = child_env({"NUMBA_CACHE_DIR": self.numba_cache.name, "NBTOK_CACHE_DIR": self.array_cache.name})
        t0 = time.perf_counter()
        first = subprocess.run([sys.executable, "-m", "nbtok", "encode", "--encoding", "gpt2", "Hello world"],
                               env=self.env, capture_output=True, text=True)
        self.first_seconds = time.perf_counter() - t0
        if first.returncode != 0:
            raise RuntimeError(first.stderr[-2000:])
        t0 = time.perf_counter()
        second = subprocess.run([sys.executable, "-c", QUICK_START], env=self.env, capture_output=True, text=True)
        self.second_seconds = time.perf_counter() - t0
        if second.returncode != 0:
            raise RuntimeError(second.stderr[-2000:])
        self.compilations = int(second.stdout.split()[0])

    def teardown(self):
        self.numba_cache.cleanup()
        self.array_cache.cleanup()

    def track_first_command_seconds(self):
        return self.first_seconds

    def track_quick_start_seconds(self):
        return self.second_seconds

    def track_quick_start_compilations(self):
        return self.compilations

    track_first_command_seconds.unit = "seconds"
    track_quick_start_seconds.unit = "seconds"
    track_quick_start_compilations.unit = "compilations"
