"""``nbtok.compat.sentencepiece``'s protobuf outputs against ``sentencepiece`` itself.

``out_type='serialized_proto'`` must be sentencepiece's bytes, byte for byte: encode (the
normalizer's alignment: NFKC / case folding, removed whitespace, the dummy prefix; unknown
pieces and their merged runs; byte fallback; user-defined symbols), n-best (sentencepiece's A*
order and float32 scores, ties included) and decode (of ids and of piece strings, random id
sequences with control, unknown and byte pieces). ``out_type='immutable_proto'`` follows
sentencepiece 0.2.1's ``ImmutableSentencePieceText`` (0.2.3 has none): its fields are checked
against sentencepiece's parsed ``SentencePieceText`` with begin / end converted to characters,
and its ``SerializeAsString`` against that message re-serialized by protobuf.

Models are trained here by sentencepiece on the committed text (the configurations of
``test_sentencepiece.py`` but its two 32k ones, in the same session cache); the models of
``../shared/data/models/sentencepiece`` run on lines of the shared corpora when present.
"""
import random

import pytest

spm = pytest.importorskip("sentencepiece")
pytest.importorskip("google.protobuf")
from sentencepiece import sentencepiece_pb2 as pb  # noqa: E402

from conftest import corpus_files, shared_data_dir  # noqa: E402
from test_sentencepiece import CONFIGS, EDGE_CASES, fixture_lines, train  # noqa: E402
from nbtok.compat import sentencepiece as compat  # noqa: E402

NAMES = [name for name in CONFIGS if "32k" not in name]
UNIGRAM = [name for name in NAMES if CONFIGS[name]["model_type"] == "unigram"]
EXTRA = ["ﬁnd the ﬂow", "Ⅻ ㌔ ｶﾞ ＡＢＣ", "x 藤 y 藤藤 z", "\U0001F642\U0001F642 smile \U0001D518", "İ ß Σ",
         "a\u3000\u3000b  \t c", "  ", "\u2581 \u2581\u2581", "<sep><sep>", "<0x41> <unk> <s>"]


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    root = tmp_path_factory.getbasetemp() / "spm_models"  # test_sentencepiece's spm_models cache
    root.mkdir(exist_ok=True)
    paths, lines = {}, None
    for name in NAMES:
        path = root / f"{name}.model"
        if not path.exists():
            lines = lines if lines is not None else fixture_lines()
            train(path, lines, **CONFIGS[name])
        paths[name] = str(path)
    return paths


def texts():
    return EDGE_CASES + EXTRA + fixture_lines()[::5]


def pair(path):
    return spm.SentencePieceProcessor(model_file=path), compat.SentencePieceProcessor(model_file=path)


def mismatches(theirs, ours, inputs):
    assert len(theirs) == len(ours)
    return [(x, a, b) for x, a, b in zip(inputs, theirs, ours) if a != b]


@pytest.mark.parametrize("name", NAMES)
def test_encode_serialized_proto_is_sentencepieces(models, name):
    ref, ours = pair(models[name])
    lines = texts()
    theirs = ref.encode(lines, return_type="serialized_proto")
    bad = mismatches(theirs, ours.encode(lines, out_type="serialized_proto"), lines)
    assert not bad, (len(bad), bad[:3])
    assert len(lines) > 1000
    for text in lines[:80:7]:  # one text, bytes in, the method spellings
        want = ref.encode(text, return_type="serialized_proto")
        assert ours.encode(text, out_type="serialized_proto") == want
        assert ours.EncodeAsSerializedProto(text) == ours.encode_as_serialized_proto(text) == want
        assert ours.encode(text.encode(), out_type="serialized_proto") == ref.encode(text.encode(),
                                                                                     return_type="serialized_proto")
    assert ours.encode(tuple(lines[:5]), out_type="serialized_proto") == theirs[:5]


@pytest.mark.parametrize("name", UNIGRAM)
def test_nbest_is_sentencepieces(models, name):
    ref, ours = pair(models[name])
    lines = EDGE_CASES + EXTRA + fixture_lines()[3::40]
    for k in (1, 2, 10):
        for text in lines:
            want = ref.nbest_encode(text, nbest_size=k, return_type="serialized_proto")
            assert ours.nbest_encode(text, nbest_size=k, out_type="serialized_proto") == want, (k, text)
    for text in lines[::4]:
        assert ours.nbest_encode_as_ids(text, nbest_size=6) == ref.nbest_encode_as_ids(text, nbest_size=6), text
        assert ours.nbest_encode_as_pieces(text, nbest_size=6) == ref.nbest_encode_as_pieces(text, nbest_size=6), text
        assert ours.NBestEncodeAsSerializedProto(text, 3) == ref.nbest_encode(text, nbest_size=3,
                                                                               return_type="serialized_proto")
    assert ours.nbest_encode(lines[:3], nbest_size=4, out_type="serialized_proto") == \
        ref.nbest_encode(lines[:3], nbest_size=4, return_type="serialized_proto")


def test_nbest_long_text_shrinks_and_falls_back_as_sentencepiece(models):
    """A long line with nbest_size 512: sentencepiece's agenda shrinks, then its hypothesis
    budget runs out and it returns the Viterbi path alone; 64 on a shorter one shrinks."""
    ref, ours = pair(models["uni_nmt"])
    lines = sorted(fixture_lines(), key=len)
    spm.set_min_log_level(3)
    for text, k in ((lines[-1], 512), (lines[-20], 64), (lines[-20], 512)):
        want = ref.nbest_encode(text, nbest_size=k, return_type="serialized_proto")
        assert ours.nbest_encode(text, nbest_size=k, out_type="serialized_proto") == want, (len(text), k)
    assert len(pb.NBestSentencePieceText.FromString(want).nbests) == k


@pytest.mark.parametrize("name", NAMES)
def test_decode_serialized_proto_is_sentencepieces(models, name):
    ref, ours = pair(models[name])
    lines = texts()[::3]
    ids = ref.encode(lines)
    bad = mismatches(ref.decode(ids, return_type="serialized_proto"), ours.decode(ids, out_type="serialized_proto"),
                     lines)
    assert not bad, (len(bad), bad[:3])
    pieces = ref.encode(lines, out_type=str)
    bad = mismatches(ref.decode(pieces, return_type="serialized_proto"),
                     ours.decode(pieces, out_type="serialized_proto"), lines)
    assert not bad, (len(bad), bad[:3])
    rng = random.Random(7)
    size = ref.get_piece_size()
    words = ["<unk>", "<s>", "</s>", "\u2581", "\u2581\u2581x", "not-a-piece", "<0x41>", "<0xE3>", "<0x81>", "<0x82>",
             "\u2581the", "<sep>", "a\u2581b", ""]
    for _ in range(300):
        seq = [rng.randrange(size) if rng.random() < 0.8 else rng.choice([0, 1, 2, 3]) for _ in range(rng.randrange(12))]
        assert ours.decode(seq, out_type="serialized_proto") == ref.decode(seq, return_type="serialized_proto"), seq
        strs = [ref.id_to_piece(i) if rng.random() < 0.7 else rng.choice(words) for i in seq] or ["x"]
        assert ours.decode(strs, out_type="serialized_proto") == ref.decode(strs, return_type="serialized_proto"), strs
    assert ours.decode([], out_type="serialized_proto") == ref.decode([], return_type="serialized_proto") == b"\n\x00"
    assert ours.DecodeIdsAsSerializedProto([5]) == ours.decode(5, out_type="serialized_proto") == \
        ref.decode([5], return_type="serialized_proto")


def char_spans(data, message):
    """sentencepiece's ``SentencePieceText`` with begin / end in characters of its text."""
    for p in message.pieces:
        p.begin, p.end = (len(data[:x].decode("utf-8")) for x in (p.begin, p.end))
    return message


def assert_immutable_is(ours, message):
    """An ``ImmutableSentencePieceText`` has the fields of ``message`` (spans in characters)."""
    assert ours.text == message.text and ours.text_as_bytes == message.text.encode()
    assert ours.score == message.score
    assert len(ours.pieces) == len(message.pieces)
    for mine, theirs in zip(ours.pieces, message.pieces):
        assert (mine.piece, mine.id, mine.surface, mine.begin, mine.end) == \
            (theirs.piece, theirs.id, theirs.surface, theirs.begin, theirs.end)
        assert mine.piece_as_bytes == theirs.piece.encode() and mine.surface_as_bytes == theirs.surface.encode()
    assert ours.SerializeAsString() == message.SerializeToString()


@pytest.mark.parametrize("name", ["uni_bf_nfkc", "uni_cf_raw", "uni_symbols", "bpe_llama", "bpe_suffix_symbols"])
def test_immutable_proto_is_sentencepiece_0_2_1s(models, name):
    ref, ours = pair(models[name])
    lines = texts()[::4]
    for text, got, raw in zip(lines, ours.encode(lines, out_type="immutable_proto"),
                              ref.encode(lines, return_type="serialized_proto")):
        assert_immutable_is(got, char_spans(text.encode(), pb.SentencePieceText.FromString(raw)))
        assert [got.text[x.begin:x.end] for x in got.pieces] == [x.surface for x in got.pieces]
    for text in lines[:200:9]:
        ids = ref.encode(text)
        raw = ref.decode(ids, return_type="serialized_proto")
        message = pb.SentencePieceText.FromString(raw)
        assert_immutable_is(ours.decode(ids, out_type="immutable_proto"), char_spans(message.text.encode(), message))
        if CONFIGS[name]["model_type"] == "unigram":
            raw = ref.nbest_encode(text, nbest_size=4, return_type="serialized_proto")
            got = ours.nbest_encode(text, nbest_size=4, out_type="immutable_proto")
            nbest = pb.NBestSentencePieceText.FromString(raw)
            assert len(got.nbests) == len(nbest.nbests)
            for mine, theirs in zip(got.nbests, nbest.nbests):
                assert_immutable_is(mine, char_spans(text.encode(), theirs))
            assert got.SerializeAsString() == nbest.SerializeToString()


def test_immutable_objects_behave_as_sentencepiece_0_2_1s(models):
    _, sp = pair(models["uni_nmt"])
    text = "I saw a girl."
    x = sp.encode(text, out_type="immutable_proto")
    ids, pieces = sp.encode(text), sp.encode(text, out_type=str)
    assert [p.id for p in x.pieces] == ids and [p.piece for p in x.pieces] == pieces
    assert len(x.pieces) == len(ids) and x.pieces[-1] == x.pieces[len(ids) - 1]
    assert x.pieces[::-1] == list(reversed(x.pieces)) and x.pieces[1:3] == list(x.pieces)[1:3]
    for bad in (len(ids), -len(ids) - 1):
        with pytest.raises(IndexError, match="piece index is out of range"):
            x.pieces[bad]
    with pytest.raises(TypeError):
        x.pieces["0"]
    assert x == sp.encode_as_immutable_proto(text) == sp.EncodeAsImmutableProto(text) != sp.encode("I saw a boy.",
                                                                                                  out_type="immutable_proto")
    assert len({x, sp.encode(text, out_type="immutable_proto")}) == 1
    assert len({x.pieces[0], sp.encode(text, out_type="immutable_proto").pieces[0]}) == 1
    first = x.pieces[0]
    assert str(first) == f'piece: "{first.piece}"\nid: {first.id}\nsurface: "{first.surface}"\nbegin: 0\nend: 1\n'
    assert str(x) == f'text: "{text}"\nscore: 0.0\n' + "\n".join(f"pieces {{\n{p}}}" for p in x.pieces)
    n = sp.nbest_encode(text, nbest_size=3, out_type="immutable_proto")
    assert len(n.nbests) == 3 and n.nbests[0].pieces[0] == first and n.nbests[0].score < 0
    assert [sp.decode([p.id for p in v.pieces]) for v in n.nbests] == [text] * 3
    assert n == sp.nbest_encode_as_immutable_proto(text, nbest_size=3) and n.nbests[::-1] == list(reversed(n.nbests))
    assert str(n) == "\n".join(f"nbests {{\n{v}}}" for v in n.nbests)
    with pytest.raises(IndexError, match="nbests index is out of range"):
        n.nbests[3]
    assert sp.decode([], out_type="immutable_proto").SerializeAsString() == b"\n\x00"
    assert sp.decode([[5, 6], []], out_type="immutable_proto")[1].text == ""
    d = sp.decode_ids_as_immutable_proto(ids)
    assert d == sp.DecodePiecesAsImmutableProto(pieces) and d.text == text
    assert isinstance(x, compat.ImmutableSentencePieceText) and isinstance(n, compat.ImmutableNBestSentencePieceText)
    assert isinstance(first, compat.ImmutableSentencePieceText_ImmutableSentencePiece)


def reference_spans(ref, data, message):
    """begin / end / surface of each piece of a segmentation of ``data``, from sentencepiece's
    normalizer alignment (bytes in: byte offsets), as ``PopulateSentencePieceText`` sets them."""
    norm, n2o = ref.normalize(data, with_offsets=True)
    out, p, prev_unk = [], 0, False
    for x in message.pieces:
        w = x.piece.encode()
        unk = ref.is_unknown(x.id)
        if ref.is_byte(x.id):
            raise AssertionError("no byte fallback here")
        if not (unk and prev_unk):
            out.append([n2o[p], n2o[p + len(w)]])
        out[-1][1] = n2o[p + len(w)]
        p += len(w)
        prev_unk = unk
    assert p == len(norm)
    return [(b, e, data[b:e]) for b, e in out]


@pytest.mark.parametrize("name", ["uni_nmt", "uni_cf_raw", "uni_identity_suffix", "bpe_nmt"])
def test_sampled_protos_are_sentencepiece_protos_of_their_segmentation(models, name):
    ref, ours = pair(models[name])
    compat.set_random_generator_seed(3)
    text = "I saw a girl with a telescope. ﬁ 藤藤"
    data = text.encode()
    seen = set()
    for nbest_size in (-1, 5):
        for _ in range(30):
            raw = ours.encode(text, out_type="serialized_proto", enable_sampling=True, alpha=0.5, nbest_size=nbest_size)
            message = pb.SentencePieceText.FromString(raw)
            assert message.text == text
            assert [(x.begin, x.end, x.surface.encode()) for x in message.pieces] == reference_spans(ref, data, message)
            assert ours.decode([x.id for x in message.pieces]) == ref.decode(ref.encode(text))
            seen.add(raw)
    assert len(seen) > 3
    again = ours.sample_encode_as_serialized_proto(text, -1, 0.5)
    assert isinstance(again, bytes) and ours.sample_encode_as_immutable_proto(text, -1, 0.5).text == text
    if CONFIGS[name]["model_type"] == "bpe":  # dropout 0: the encode
        assert ours.encode(text, out_type="serialized_proto", enable_sampling=True, alpha=0.0) == \
            ref.encode(text, return_type="serialized_proto")


def test_batches_and_errors(models):
    ref, ours = pair(models["uni_nmt"])
    assert ours.encode([], out_type="serialized_proto") == ref.encode([], return_type="serialized_proto") == []
    assert ours.encode(["a", "b"], out_type="immutable_proto")[1].text == "b"
    assert ours.nbest_encode([], out_type="serialized_proto") == []
    assert ours.decode([[5, 6], [7]], out_type="serialized_proto") == ref.decode([[5, 6], [7]],
                                                                                 return_type="serialized_proto")
    for opt in ("add_bos", "add_eos", "reverse", "emit_unk_piece"):
        with pytest.raises(RuntimeError, match="not supported in proto API"):
            ref.encode("x", return_type="serialized_proto", **{opt: True})
        with pytest.raises(RuntimeError, match="not supported in proto API"):
            ours.encode("x", out_type="serialized_proto", **{opt: True})
        with pytest.raises(RuntimeError, match="not supported in proto API"):
            ours.nbest_encode("x", out_type="immutable_proto", nbest_size=2, **{opt: True})
    with pytest.raises(RuntimeError, match="not supported in proto API"):
        compat.SentencePieceProcessor(model_file=models["uni_nmt"], add_bos=True).encode_as_serialized_proto("x")
    for call in (lambda sp: sp.decode([ref.get_piece_size()], out_type="serialized_proto"),
                 lambda sp: sp.decode([-1], out_type="serialized_proto")):
        with pytest.raises(IndexError):
            call(ref)
        with pytest.raises(IndexError):
            call(ours)
    with pytest.raises(TypeError):
        ours.encode(5, out_type="serialized_proto")
    with pytest.raises(TypeError):
        ours.decode([1.5], out_type="immutable_proto")
    with pytest.raises(ValueError, match="512"):
        ours.nbest_encode("x", nbest_size=513, out_type="serialized_proto")
    with pytest.raises(ValueError, match="Unigram"):
        pair(models["bpe_nmt"])[1].nbest_encode("x", nbest_size=2, out_type="serialized_proto")
    with pytest.raises(UnicodeEncodeError):
        ours.encode("\ud800", out_type="serialized_proto")


def test_shared_models_on_shared_corpora():
    root = shared_data_dir()
    if root is None:
        pytest.skip("../shared/data is absent (set NBTOK_SHARED_DATA): protos on the shared models skipped")
    paths = sorted((root / "models" / "sentencepiece").glob("*.model"))
    assert paths
    lines = []
    for path in corpus_files(root):
        got = [x for x in path.read_bytes().decode("utf-8", errors="replace").splitlines() if x][:2000:40]
        lines += [x[:400] for x in got]
    assert len(lines) > 500
    for path in paths:
        ref, ours = pair(str(path))
        bad = mismatches(ref.encode(lines, return_type="serialized_proto"),
                         ours.encode(lines, out_type="serialized_proto"), lines)
        assert not bad, (path.name, len(bad), bad[:2])
        ids = ref.encode(lines[::3])
        bad = mismatches(ref.decode(ids, return_type="serialized_proto"),
                         ours.decode(ids, out_type="serialized_proto"), lines[::3])
        assert not bad, (path.name, len(bad), bad[:2])
        if ours._m.model_type == "unigram":
            for text in lines[::25]:
                want = ref.nbest_encode(text, nbest_size=5, return_type="serialized_proto")
                assert ours.nbest_encode(text, nbest_size=5, out_type="serialized_proto") == want, (path.name, text)
