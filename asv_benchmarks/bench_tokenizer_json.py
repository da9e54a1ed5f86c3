"""tokenizer.json encode throughput: the same model from its tokenizer.json and from its native
file in nbtok, and HF tokenizers on the tokenizer.json, in the same run.

Models (real files of ``../shared/data/zoo``): GPT-2 (byte-level, GPT-2 regex), Llama 3.1
(byte-level, a Split pattern; native file: Meta's rank file ``tokenizer.model``), Qwen2.5
(byte-level, no native file), T5 (SentencePiece Unigram; native file: ``spiece.model``), Phi-3
(SentencePiece BPE with byte fallback; native file: Llama 2's ``tokenizer.model``, the same
vocabulary), Yi (SentencePiece BPE with byte fallback, no native file).
Documents: the lines of 1 MB of English and of a 1 MB multilingual mix. One thread each.
``scripts/bench_tokenizer_json.py`` prints the same table without asv.
"""
import os

from . import _common as common

MB = 1_000_000
CORPORA = {"english": ["en_gutenberg"], "multilingual": ["ru_literature", "ja_aozora", "zh_classical_poetry"]}
MODELS = {  # name: (tokenizer.json, native file or None, native pattern)
    "gpt2": ("gpt2/lenml/tokenizer.json", None, None),
    "llama3": ("llama3/llama-3.1/tokenizer.json", "llama3/tokenizer.model", "llama3"),
    "qwen2": ("qwen2/qwen2.5/tokenizer.json", None, None),
    "t5": ("t5/sd3-t5xxl/tokenizer.json", "t5/sd3-t5xxl/spiece.model", None),
    # Llama 2's vocabulary with Phi-3's added tokens (SentencePiece BPE, byte fallback); native:
    # Llama 2's tokenizer.model
    "phi3": ("models/hf_tokenizers/phi-3-mini/tokenizer.json", "llama2/tokenizer.model", None),
    "yi": ("yi/tokenizer.json", None, None),
}
SOURCES = ["tokenizer.json", "native", "tokenizers"]


def documents(corpus):
    return common.line_documents(CORPORA[corpus], MB)


def zoo_file(path):
    """A file of ``../shared/data/zoo`` (or of ``../shared/data/models`` for ``models/...``)."""
    full = common.data_dir() / (path if path.startswith("models/") else "zoo/" + path)
    if not full.is_file():
        common.skip(f"zoo file {path} not found")
    return full


def encoder(model, source):
    """A function encoding a list of documents with ``model`` from ``source``, one thread."""
    json_path, native, pattern = MODELS[model]
    if source == "tokenizers":
        tk = common.peer_or_skip("tokenizers")
        os.environ["RAYON_NUM_THREADS"] = "1"
        common.pin_to_one_cpu()
        tok = tk.Tokenizer.from_file(str(zoo_file(json_path)))
        return lambda docs: tok.encode_batch_fast(docs)
    nbtok = common.nbtok_or_skip("nbtok")
    if source == "tokenizer.json":
        tok = nbtok.Tokenizer.from_huggingface(str(zoo_file(json_path)))
        return lambda docs: tok.encode_batch_ragged(docs, num_threads=1)
    if model == "gpt2":
        tok = nbtok.get_encoding("gpt2")
    elif native is None:
        common.skip(f"{model} has no native file in the zoo")
    elif native.endswith(".model") and not native.startswith("llama3/"):
        tok = nbtok.Tokenizer.from_sentencepiece(str(zoo_file(native)))
    else:
        tok = nbtok.Tokenizer.from_tiktoken(str(zoo_file(native)), pattern=pattern)
    return lambda docs: tok.encode_batch_ragged(docs, num_threads=1)


class EncodeBatch:
    params = (["english", "multilingual"], list(MODELS), SOURCES)
    param_names = ["corpus", "model", "source"]
    timeout = 600
    repeat = (1, 5, 20.0)
    number = 1

    def setup(self, corpus, model, source):
        self.docs = documents(corpus)
        self.encode = encoder(model, source)
        self.encode(self.docs[:100])

    def time_encode_batch(self, corpus, model, source):
        self.encode(self.docs)


class Ratios:
    """nbtok on the tokenizer.json over HF tokenizers on it, and over nbtok on the native file."""
    params = (["english", "multilingual"], list(MODELS), ["tokenizers", "native"])
    param_names = ["corpus", "model", "over"]
    timeout = 900
    unit = "x"

    def setup(self, corpus, model, over):
        self.docs = documents(corpus)
        self.ours = encoder(model, "tokenizer.json")
        self.theirs = encoder(model, over)
        self.ours(self.docs[:100])
        self.theirs(self.docs[:100])

    def track_ratio(self, corpus, model, over):
        theirs = common.best_seconds(self.theirs, self.docs, repeat=3)
        ours = common.best_seconds(self.ours, self.docs, repeat=3)
        return theirs / ours
