"""Subword regularization on ``SentencePieceModel``: sampling (Unigram forward-filtering
backward-sampling or over the n best, BPE-dropout), n-best and the segmentation entropy, as
sentencepiece's ``SampleEncode``, ``NBestEncode`` and ``CalculateEntropy`` compute them
(kernels: ``models.unigram.sampling``, ``models.unigram.nbest``, ``models.bpe.sentencepiece``)."""
import numpy as np

from .unigram import sampling as ksample
from .bpe import sentencepiece as kbpe
from ..text import pack_utf8, utf8 as _as_bytes


def seed_sampling(seed):
    """Seed the generator subword sampling draws from (Numba's): ``seed`` an int in
    ``[0, 2**32)``, the range of sentencepiece's ``SetRandomGeneratorSeed`` and NumPy's
    ``seed`` (Numba would truncate a larger one, so two seeds would give one stream)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    if not 0 <= int(seed) < 1 << 32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    ksample.seed_rng(int(seed))


class Regularization:
    """The regularization methods of ``SentencePieceModel`` (a mixin: it reads the model's
    normalizer ``N``, lattice ``ML``, BPE tables and ids ``_F``)."""

    def sample_encode(self, text, alpha=0.1, nbest_size=-1, seed=None, add_bos=False, add_eos=False):
        """Subword regularization. Unigram: ``nbest_size < 0`` samples a segmentation from the full
        lattice (forward-filtering backward-sampling, p ~ exp(alpha * score)); 0 or 1 is Viterbi;
        ``nbest_size > 1`` (at most 512) draws one of the nbest_size best segmentations with
        p ~ exp(alpha * score) (sentencepiece's ``SampleEncode``).
        BPE: BPE-dropout, each valid merge skipped with probability ``alpha``.
        ``seed`` seeds Numba's generator (sentencepiece's mt19937 streams are not reproduced)."""
        if self.model_type in ("char", "word"):
            raise NotImplementedError(f"sample_encode: a {self.model_type.upper()} model has one segmentation "
                                      "(sentencepiece samples Unigram and BPE models only)")
        buf = np.frombuffer(_as_bytes(text), np.uint8)
        F = self._F(add_bos, add_eos)
        if seed is not None:
            seed_sampling(seed)
        if self.model_type == "bpe":
            if not 0.0 <= alpha <= 1.0:
                raise ValueError("alpha must be in [0, 1] for BPE-dropout")
            if alpha == 0.0 and self.fast_words:
                return self.encode(text, add_bos, add_eos)
            return kbpe.encode_one(buf, self.N, self.M, F, float(alpha), self.W)
        if nbest_size in (0, 1):
            return self.encode(text, add_bos, add_eos)
        if nbest_size > 1:
            return self._sample_nbest(text, alpha, nbest_size, add_bos, add_eos)
        return ksample.sample_one(buf, self.N, self.ML, F, float(alpha))

    def sample_encode_batch(self, texts, alpha=0.1, nbest_size=-1, seed=None, add_bos=False, add_eos=False):
        """``sample_encode`` of every text, as a list of int32 arrays. With ``seed``, text i is
        drawn as ``sample_encode(texts[i], seed=seed + i)`` draws it, so a seeded batch is
        reproducible and equal to the single calls. Unigram with ``nbest_size < 0`` samples
        every text in one parallel kernel call; the other kinds text by text."""
        if isinstance(texts, (str, bytes)):
            raise TypeError("sample_encode_batch expects a list of texts, not a single text")
        texts = list(texts)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"seed must be an int, not {type(seed).__name__}")
        base = int(np.random.randint(0, 2 ** 31)) if seed is None else int(seed)
        if not 0 <= base <= 2 ** 32 - 1 - len(texts):
            raise ValueError(f"seed must be an int in [0, 2**32 - {len(texts)}] for a batch of {len(texts)} "
                             f"texts (text i is drawn with seed + i), not {seed!r}")
        seeds = [base + i for i in range(len(texts))]
        if self.model_type != "unigram" or nbest_size >= 0 or not texts:
            return [self.sample_encode(t, alpha, nbest_size, s, add_bos, add_eos) for t, s in zip(texts, seeds)]
        buf, offsets, _ = pack_utf8(texts, _as_bytes)
        ids, off = ksample.sample_batch(buf, offsets, self.N, self.ML, self._F(add_bos, add_eos), float(alpha),
                                     np.array(seeds, np.int64))
        return [ids[off[i]:off[i + 1]] for i in range(len(texts))]

    def calculate_entropy(self, text, alpha):
        """Entropy of ``p ~ exp(alpha * score)`` over the segmentations of ``text`` (Unigram;
        ``models.unigram.sampling.lattice_entropy``)."""
        if self.model_type != "unigram":
            raise NotImplementedError("calculate_entropy needs a Unigram model (sentencepiece computes "
                                      "it only for Unigram)")
        buf = np.frombuffer(_as_bytes(text), np.uint8)
        return float(ksample.entropy_one(buf, self.N, self.ML, float(alpha)))

    def nbest_encode(self, text, n, add_bos=False, add_eos=False):
        """The ``n`` best segmentations (Unigram), as a list of int32 arrays, in the order
        sentencepiece's ``NBestEncode`` returns them: its A* search is replayed step for step
        (``models.unigram.nbest``), ties and float32 rounding included. ``n = 1`` is ``encode``
        (sentencepiece's ``NBestEncode`` with nbest_size 1 encodes)."""
        if self.model_type != "unigram":
            raise ValueError("nbest_encode needs a Unigram model")
        n = int(n)
        if not 1 <= n <= 1024:
            raise ValueError("n must be in [1, 1024]")
        if n == 1:
            return [np.asarray(self.encode(text, add_bos, add_eos), np.int32)]
        ids, off, _ = self._nbest_raw(text, n, add_bos, add_eos)
        return [ids[off[j]:off[j + 1]] for j in range(off.size - 1)]

    def _sample_nbest(self, text, alpha, nbest_size, add_bos, add_eos):
        """sentencepiece ``SampleEncode`` with nbest_size > 1: the nbest_size best segmentations,
        one drawn with probability exp(alpha * score - Z), Z = logsumexp over them."""
        from ..normalizers import sentencepiece_offsets as koff
        if nbest_size > 512:
            raise ValueError("nbest_size must be <= 512")
        ids, off, scores = self._nbest_raw(text, nbest_size, add_bos, add_eos)
        j = koff.sample_nbest_index(scores, float(alpha))
        return ids[off[j]:off[j + 1]].copy()

    def _nbest_raw(self, text, n, add_bos=False, add_eos=False):
        """(ids, offsets, scores) of the n best segmentations (``models.unigram.nbest.nbest_ids``)."""
        from .unigram.nbest import nbest_ids
        if self.model_type != "unigram":
            raise ValueError("n-best needs a Unigram model")
        buf = np.frombuffer(_as_bytes(text), np.uint8)
        return nbest_ids(buf, self.N, self.ML, self._F(add_bos, add_eos), int(n))
