"""The command line as a user meets it: every argument checked before the work, byte-exact
decode, quiet on a closed pipe, --version, help on every option, warmup."""
import subprocess
import sys

import pytest

import nbtok
from nbtok.cli import build_parser
from conftest import FIXTURES

CORPUS = FIXTURES / "train" / "corpus.en"


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "nbtok", *map(str, args)], input=stdin,
                          capture_output=True, timeout=600)


def test_version():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.decode().strip() == f"nbtok {nbtok.__version__}"


def test_every_option_has_help():
    parser = build_parser()
    subparsers = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"][0]
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            assert action.help, f"nbtok {name} {action.option_strings or action.dest} has no help"


@pytest.mark.parametrize("text", ["Hello world", "no newline at the end", "tabs\tand\nnewlines\n\n", "日本語 🙃"])
def test_decode_gives_back_the_input_byte_for_byte(text):
    ids = run("encode", stdin=text.encode())
    assert ids.returncode == 0
    back = run("decode", stdin=ids.stdout)
    assert back.returncode == 0 and back.stdout == text.encode()
    assert run("decode", "--no-newline", *ids.stdout.decode().split()).stdout == text.encode()


def test_closed_pipe_is_quiet(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("hello world\n" * 200_000)
    cmd = f'"{sys.executable}" -m nbtok encode --files "{big}" --lines | head -1'
    out = subprocess.run(cmd, shell=True, capture_output=True, timeout=600)
    assert out.stdout.decode().split() == ["31373", "995"]
    assert out.stderr == b"", out.stderr


def test_train_checks_arguments_before_training(tmp_path):
    for args, needle in [
        (("--output", "/no/such/folder/x.nbtok"), "cannot write there"),
        (("--output", tmp_path / "x.tiktoken", "--type", "unigram", "--format", "tiktoken"), "cannot be written as"),
        (("--output", tmp_path, "--format", "native"), "is a folder"),
        (("--output", tmp_path / "x.nbtok", "--vocab-size", "0"), "must be positive"),
    ]:
        if "--vocab-size" not in args:
            args = args + ("--vocab-size", "300")
        out = run("train", CORPUS, *args)
        err = out.stderr.decode()
        assert out.returncode == 1 and needle in err, err
        assert "counting" not in err  # failed before any work


def test_special_tokens_do_not_swallow_the_corpus(tmp_path):
    out = run("train", "--special-tokens", "<|endoftext|>", CORPUS, "--vocab-size", "300",
              "--output", tmp_path / "t.nbtok", "--quiet")
    assert out.returncode == 0, out.stderr
    tok = nbtok.Tokenizer.load(tmp_path / "t.nbtok")
    assert tok.special_tokens == {"<|endoftext|>": 0} and tok.vocab_size == 300


def test_special_token_and_pattern_for_rank_files(tmp_path):
    path = tmp_path / "mine.tiktoken"
    nbtok.get_encoding("gpt2").save_tiktoken(path)
    out = run("encode", "--model", path, "--pattern", "gpt2", "--special-token", "<|endoftext|>=50256",
              "--allow-special", "hi<|endoftext|>")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().split() == ["5303", "50256"]
    bad = run("encode", "--model", path, "--pattern", "gpt2", "--special-token", "oops", "hi")
    assert bad.returncode == 1 and b"TEXT=ID" in bad.stderr


def test_encode_with_a_gguf_vocabulary():
    gguf = FIXTURES / "gguf" / "tiny-gpt2.gguf"
    out = run("encode", "--model", gguf, "hello world")
    assert out.returncode == 0 and out.stdout.decode().split() == ["259", "264"], out.stderr


def test_warmup_says_what_it_compiled():
    out = run("warmup", "bytelevel")
    err = out.stderr.decode()
    assert out.returncode == 0 and "bytelevel" in err and "compiled 1 feature" in err
    bad = run("warmup", "no-such-feature")
    assert bad.returncode == 1 and b"unknown feature" in bad.stderr


@pytest.mark.parametrize("kind", ["unigram", "bpe", "word"])
def test_train_sentencepiece_from_the_cli_loads_in_sentencepiece(tmp_path, kind):
    spm = pytest.importorskip("sentencepiece")
    pytest.importorskip("regex")
    out = tmp_path / "m.model"
    done = run("train", "--type", kind, "--vocab-size", 300, "--format", "sentencepiece", "--output", out,
               FIXTURES / "spm" / "udhr_eng.txt")
    assert done.returncode == 0, done.stderr
    sp = spm.SentencePieceProcessor(model_file=str(out))
    ours = nbtok.Tokenizer.from_sentencepiece(out)
    assert sp.get_piece_size() == 300 and ours.model_type == kind
    line = "Everyone has the right to life, liberty and security of person."
    assert sp.encode(line) == ours.encode(line).tolist()


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_train_sentencepiece_options_from_the_cli(tmp_path, kind):
    """nbtok train --type bpe|unigram passes sentencepiece's trainer options: the model is the
    one train_sentencepiece gives with them (for BPE also sentencepiece's own, piece for piece)."""
    spm = pytest.importorskip("sentencepiece")
    pytest.importorskip("regex")
    corpus = FIXTURES / "spm" / "udhr_eng.txt"
    rules = tmp_path / "rules.tsv"
    rules.write_text("".join(f"{c:X}\t{c + 32:X}\n" for c in range(0x41, 0x5B)), encoding="utf-8")
    out = tmp_path / "m.model"
    done = run("train", "--type", kind, "--vocab-size", 300, "--format", "sentencepiece", "--output", out,
               "--treat-whitespace-as-suffix", "--allow-whitespace-only-pieces", "--no-split-by-whitespace",
               "--required-chars", "\u00e9\u20ac", "--input-sentence-size", 150, "--no-shuffle-input-sentence",
               "--normalization-rule-tsv", rules, corpus)
    assert done.returncode == 0, done.stderr
    options = dict(treat_whitespace_as_suffix=True, allow_whitespace_only_pieces=True, split_by_whitespace=False,
                   required_chars="\u00e9\u20ac", input_sentence_size=150, shuffle_input_sentence=False,
                   normalization_rule_tsv=str(rules))
    api = nbtok.train_sentencepiece(corpus, 300, model_type=kind, **options)
    sp = spm.SentencePieceProcessor(model_file=str(out))
    ours = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert ours == [api.id_to_piece(i) for i in range(api.vocab_size)]
    assert "\u00e9" in ours and not any(c.isupper() for p in ours[3:] for c in p)
    if kind == "bpe":
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "ref"), vocab_size=300,
                                       model_type=kind, minloglevel=2, **options)
        ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "ref.model"))
        assert ours == [ref.id_to_piece(i) for i in range(ref.get_piece_size())]
    seeded = run("train", "--type", kind, "--vocab-size", 300, "--output", tmp_path / "s.nbtok",
                 "--input-sentence-size", 150, "--seed", 3, corpus)
    assert seeded.returncode == 0, seeded.stderr
    assert nbtok.Tokenizer.load(tmp_path / "s.nbtok").vocab == \
        nbtok.train_sentencepiece(corpus, 300, model_type=kind, input_sentence_size=150, seed=3).vocab


def test_train_sentencepiece_options_are_checked_first(tmp_path):
    corpus = FIXTURES / "spm" / "udhr_eng.txt"
    bad = run("train", "--vocab-size", 300, "--output", tmp_path / "m", "--treat-whitespace-as-suffix", corpus)
    assert bad.returncode == 1 and b"--treat-whitespace-as-suffix: sentencepiece options" in bad.stderr
    bad = run("train", "--type", "bpe", "--vocab-size", 300, "--output", tmp_path / "m",
              "--normalization-rule-tsv", tmp_path / "none.tsv", corpus)
    assert bad.returncode == 1 and b"none.tsv: no such file" in bad.stderr
    bad = run("train", "--type", "unigram", "--vocab-size", 300, "--output", tmp_path / "m",
              "--input-sentence-size", 50, corpus)
    assert bad.returncode == 1 and b"input_sentence_size must be 0" in bad.stderr
