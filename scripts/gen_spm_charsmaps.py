"""One-off: extract sentencepiece's built-in normalization rules (precompiled charsmaps) into
nbtok/data/spm_charsmaps.npz by training a tiny model per rule with sentencepiece 0.2.3."""
import io
import sys
from pathlib import Path

import numpy as np
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

RULES = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"]
text = ["hello world abc def ghi"] * 20
out = {}
for name in RULES:
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_writer=buf, vocab_size=30,
                                   model_type="char", normalization_rule_name=name, minloglevel=2)
    m = pb.ModelProto()
    m.ParseFromString(buf.getvalue())
    out[name] = np.frombuffer(m.normalizer_spec.precompiled_charsmap, np.uint8)
dest = Path(__file__).resolve().parent.parent / "nbtok" / "data" / "spm_charsmaps.npz"
np.savez_compressed(dest, **out)
print({k: v.size for k, v in out.items()}, file=sys.stderr)
