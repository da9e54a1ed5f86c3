"""Byte-level BPE pre-token counts over a corpus: a map over shards (each task returns its
unique pre-tokens and counts as arrays) and a reduce (a tree of pairwise merges on Dask).

``PretokenCounts`` is saveable (``.save(path)`` -> one ``.npz``) and loadable
(``PretokenCounts.load``), and ``nbtok.train_bpe_from_counts`` trains on it.
"""
import io
import json
import pickle

import numpy as np

from .inputs import expand_inputs
from .progress import Progress
from .runners import get_client, run
from .shards import plan_shards, shard_documents
from ..formats._atomic import write_atomic


class PretokenCounts:
    """Unique pre-tokens ``wbytes[woff[w]:woff[w+1]]`` occurring ``wcount[w]`` times, sorted by
    bytes, with the ``pattern`` and ``special_tokens`` they were counted with.

    Examples:
        >>> c = PretokenCounts.from_dict({b"a": 2, b" b": 1}, "gpt2", ())
        >>> c.as_dict()[b"a"]
        2
    """

    def __init__(self, wbytes, woff, wcount, pattern, special_tokens):
        self.wbytes = np.ascontiguousarray(wbytes, np.uint8)
        self.woff = np.ascontiguousarray(woff, np.int64)
        self.wcount = np.ascontiguousarray(wcount, np.int64)
        self.pattern = pattern
        self.special_tokens = list(special_tokens)
        if self.woff.shape[0] != self.wcount.shape[0] + 1 or self.woff[0] != 0 or \
                self.woff[-1] != self.wbytes.shape[0] or np.any(np.diff(self.woff) <= 0) or np.any(self.wcount < 0):
            raise ValueError("inconsistent pre-token count arrays")

    def __len__(self):
        return self.wcount.shape[0]

    def as_dict(self):
        data, offs = self.wbytes.tobytes(), self.woff.tolist()
        return {data[offs[i]:offs[i + 1]]: int(c) for i, c in enumerate(self.wcount.tolist())}

    @classmethod
    def from_dict(cls, d, pattern, special_tokens):
        keys = sorted(d)
        woff = np.zeros(len(keys) + 1, np.int64)
        np.cumsum([len(k) for k in keys], out=woff[1:])
        wbytes = np.frombuffer(b"".join(keys), np.uint8) if keys else np.zeros(0, np.uint8)
        return cls(wbytes, woff, np.array([d[k] for k in keys], np.int64), pattern, special_tokens)

    def merged(self, other):
        """The sum of two counts (same pattern and special tokens)."""
        if (self.pattern, self.special_tokens) != (other.pattern, other.special_tokens):
            raise ValueError("cannot merge counts made with different patterns or special tokens")
        d = self.as_dict()
        for k, c in other.as_dict().items():
            d[k] = d.get(k, 0) + c
        return PretokenCounts.from_dict(d, self.pattern, self.special_tokens)

    def save(self, path):
        """One ``.npz``, written to a temporary name and renamed (a reader never sees half)."""
        meta = json.dumps({"pattern": self.pattern, "special_tokens": self.special_tokens})
        buf = io.BytesIO()
        np.savez(buf, wbytes=self.wbytes, woff=self.woff, wcount=self.wcount,
                 meta=np.frombuffer(meta.encode(), np.uint8))
        write_atomic(path, buf.getvalue())

    @classmethod
    def load(cls, path):
        """Read ``save``'s file; ``ValueError`` for arrays of another dtype or shape (never cast:
        the training kernels index with them)."""
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in ("wbytes", "woff", "wcount", "meta")}
        except (KeyError, OSError, ValueError) as e:
            raise ValueError(f"{path}: not a pre-token counts file ({e})") from None
        for name, dtype in (("wbytes", np.uint8), ("woff", np.int64), ("wcount", np.int64), ("meta", np.uint8)):
            if arrays[name].dtype != dtype or arrays[name].ndim != 1:
                raise ValueError(f"{path}: {name} must be a 1-D {np.dtype(dtype)} array, "
                                 f"not {arrays[name].ndim}-D {arrays[name].dtype}")
        try:
            meta = json.loads(arrays["meta"].tobytes().decode())
            pattern, special_tokens = meta["pattern"], meta["special_tokens"]
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: bad metadata ({e})") from None
        return cls(arrays["wbytes"], arrays["woff"], arrays["wcount"], pattern, special_tokens)


def _merge(a, b):
    return a.merged(b)


def count_shard(config, spec, opts):
    """The pre-token counts of one shard."""
    from ..pre_tokenizers.bytelevel import Pretokenizer
    from ..train.counting import PretokenCounter
    counter = PretokenCounter(Pretokenizer(config["pattern"]), config["special_tokens"])
    counter.add_texts(shard_documents(spec, opts["text_field"]))
    w = counter.result()
    return PretokenCounts.from_dict(w.as_dict(), config["pattern"], config["special_tokens"])


def _tree_reduce(client, futs):
    while len(futs) > 1:
        nxt = [client.submit(_merge, futs[i], futs[i + 1]) for i in range(0, len(futs) - 1, 2)]
        if len(futs) % 2:
            nxt.append(futs[-1])
        futs = nxt
    return futs[0].result()


def count(inputs, pattern="gpt2", special_tokens=(), output=None, kind=None, text_field="text",
          shard_size=10000, num_workers=1, client=None, progress=False):
    """Count byte-level BPE pre-tokens over a corpus; returns ``PretokenCounts`` (also saved to
    ``output`` when given). Documents and shards as in ``nbtok.corpus.tokenize``.

    Examples:
        >>> counts = nbtok.corpus.count("data/*.txt", num_workers=2)      # doctest: +SKIP
        >>> tok = nbtok.train_bpe_from_counts(counts, 32000)               # doctest: +SKIP
    """
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of str")
    config = {"pattern": pattern, "special_tokens": list(special_tokens)}
    from ..train.bpe import _make_pretokenizer
    _make_pretokenizer(pattern)  # a bad pattern fails here, not in a worker
    sources = expand_inputs(inputs, kind)
    specs = plan_shards(sources, _check_shard_size(shard_size), text_field)
    opts = {"text_field": text_field}
    blob = pickle.dumps(config)
    if not specs:
        total = PretokenCounts.from_dict({}, pattern, special_tokens)
    elif client is not None:
        from .runners import _dask_call
        client = get_client(client)
        blob_f = client.scatter(blob, broadcast=True)
        futs = client.map(_dask_call, [count_shard] * len(specs), specs, [opts] * len(specs),
                          [blob_f] * len(specs), pure=False)
        total = _tree_reduce(client, futs)
    else:
        total, bar = None, Progress(progress, len(specs), "counting")
        for part in run(count_shard, blob, specs, opts, num_workers):
            total = part if total is None else total.merged(part)
            bar.update({"documents": 0})
    if output is not None:
        total.save(output)
    return total


def _check_shard_size(shard_size):
    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 1:
        raise ValueError(f"shard_size must be a positive int (documents per shard), not {shard_size!r}")
    return shard_size
