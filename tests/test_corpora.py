"""Any corpus: `vrs-edu reproduce NAME --corpus FILE` trains a recipe's text runs on a teacher's file, records which
text it was (name, bytes, tokens, sha256, licence) and writes beside, never over, the default results; bad files are
refused in one line before any training. The second named corpus (the King James Bible, public domain) ships with
the set-up, and the [UNK] share of the 2,048-word tokenizer is computed, not typed."""
import hashlib
import json
import random
import re

import pytest

from vrs_edu.cli import main
from vrs_edu.lab import experiments
from vrs_edu.lab.corpora import NAMED, get_corpus, kjv_text, named_corpus, run_suffix, unk_share
from vrs_edu.lab.data import train_tokenizer
from vrs_edu.lab.experiments import Recipe, load_results, results_path
from vrs_edu.recipes import RECIPES


def _prose(n_sentences: int, seed: int = 0) -> str:
    """Sentences of a small vocabulary: enough word tokens for word-8x64's 64-token blocks in both splits."""
    rng = random.Random(seed)
    words = "the a cat dog sat on mat and ran to house of tree big small red blue river stone walked saw".split()
    return " ".join(" ".join(rng.choice(words) for _ in range(rng.randint(4, 12))).capitalize() + "."
                    for _ in range(n_sentences))


# ---------------------------------------------------------------------------------------------------------------
# The run on a teacher's file


@pytest.mark.slow  # one quick value-residual run, one seed: about 20 s on 2 cores
def test_reproduce_value_residual_on_a_file_writes_beside_the_default_results(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "some.txt"
    corpus.write_text(_prose(400), encoding="utf-8")
    out = tmp_path / "results"
    # a quarter width, one process: what is recorded about the corpus does not depend on the model's size
    assert main(["reproduce", "value-residual", "--corpus", str(corpus), "--quick", "--seeds", "0",
                 "--out", str(out), "--set", "d_model=32", "--set", "batch_size=8", "--jobs", "1"]) == 0
    assert [p.name for p in out.iterdir()] == ["value-residual.corpus-some.quick.json"]  # the default file untouched
    # the run says how the chapters would show it — here: not at all, a quick run in another folder
    assert capsys.readouterr().out.splitlines()[-1] == ("the chapters read full runs from data/results/ only: rerun "
                                                       "without --quick and --out to show them this corpus")
    r = json.loads((out / "value-residual.corpus-some.quick.json").read_text())
    raw = corpus.read_bytes()
    assert r["text_corpus"] == {"name": "some", "source": str(corpus), "bytes": len(raw), "characters": len(raw),
                                "sha256": hashlib.sha256(raw).hexdigest(), "licence": None}
    assert r["command"].startswith(f"vrs-edu reproduce value-residual --quick --corpus {corpus}")
    part = r["corpus"]  # the recipe's text part trained on the file, with the preset's word tokenizer
    assert part["corpus"] == "some" and part["tokenizer"] == "word"
    n_tokens = len(train_tokenizer(corpus.read_text(), "word", 2048).encode(corpus.read_text()))
    assert part["corpus_tokens"]["train"] + part["corpus_tokens"]["val"] == n_tokens
    # Every distinct word (capitalised sentence starts count apart) and "." fit in 2,048 entries, plus [UNK].
    assert part["vocab_size"] == len(set(re.findall(r"\w+|[^\w\s]+", corpus.read_text()))) + 1
    # One setting re-points a chapter's load_results at these runs.
    monkeypatch.setenv("VRS_EDU_CORPUS", "some")
    assert load_results("value-residual", quick=True, out_dir=out)["text_corpus"]["name"] == "some"


def _no_training(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("training started before the corpus was checked")
    monkeypatch.setattr(experiments, "train", refuse)


@pytest.mark.parametrize("make, problem", [
    (lambda p: None, "does not exist"),
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: p.write_bytes(b""), "is empty"),
    (lambda p: p.write_bytes(b" \n\t\n"), "is empty (only whitespace)"),
    (lambda p: p.write_bytes(b"text\x00\x01\x02binary"), "looks binary (a NUL byte at offset 4)"),
    (lambda p: p.write_bytes("café".encode("latin-1")), "is not UTF-8 text (bad byte at offset 3)"),
])
def test_a_bad_corpus_file_is_refused_while_the_command_line_is_parsed(tmp_path, capsys, monkeypatch, make,
                                                                       problem):
    """`reproduce --corpus` is typed like `train --corpus`: argparse's usage line, then one line naming the
    argument, the file and the problem, and exit status 2, before any training."""
    _no_training(monkeypatch)
    path = tmp_path / "bad.txt"
    make(path)
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "value-residual", "--corpus", str(path), "--quick", "--seeds", "0",
              "--out", str(tmp_path / "out")])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert e.value.code == 2
    assert last.startswith("vrs-edu reproduce: error: argument --corpus: ")
    assert str(path) in last and problem in last
    assert not (tmp_path / "out").exists()


def test_a_corpus_too_short_for_the_recipe_s_blocks_gets_one_line_before_any_training(tmp_path, capsys,
                                                                                      monkeypatch):
    """How many tokens a text makes depends on the recipe's tokenizer, so this check comes when its data are built
    (still before any training): one line, exit status 2."""
    _no_training(monkeypatch)
    path = tmp_path / "bad.txt"
    path.write_text(_prose(20))
    code = main(["reproduce", "value-residual", "--corpus", str(path), "--quick", "--seeds", "0",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert str(path) in err and "too short: its validation split has" in err
    assert not (tmp_path / "out").exists()


def test_a_recipe_that_does_not_train_on_text_refuses_corpus_and_tokenizer(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(RECIPES, "no-text", Recipe("no-text", lambda quick, seeds: {"ok": 1}, "a synthetic task"))
    corpus = tmp_path / "t.txt"
    corpus.write_text(_prose(400))
    for flags in (["--corpus", str(corpus)], ["--tokenizer", "bpe"]):
        assert main(["reproduce", "no-text", "--quick", "--out", str(tmp_path), *flags]) == 2
        assert "recipe 'no-text' does not train on text" in capsys.readouterr().err
    assert all(RECIPES[n].text for n in ("value-residual", "bank-of-values", "depth-mixers", "char-6x64"))


def test_the_synthetic_recipes_are_the_table_s_recipes_without_text():
    """load_results (in lab, below the table) knows the synthetic recipes by name: the same as the table's."""
    assert set(experiments.SYNTHETIC_RECIPES) == {n for n, r in RECIPES.items() if not r.text}
    assert all(experiments.trains_on_text(n) == r.text for n, r in RECIPES.items())


def test_result_names_keep_corpus_and_tokenizer_runs_apart_and_the_setting_repoints_load_results(tmp_path,
                                                                                                 monkeypatch):
    assert results_path("value-residual", out_dir=tmp_path).name == "value-residual.json"
    assert results_path("value-residual", True, tmp_path, "kjv").name == "value-residual.corpus-kjv.quick.json"
    assert results_path("x", False, tmp_path, "kjv", "bpe").name == "x.corpus-kjv.tokenizer-bpe.json"
    assert run_suffix() == ""
    (tmp_path / "value-residual.json").write_text('{"which": "default"}')
    (tmp_path / "value-residual.corpus-kjv.json").write_text('{"which": "kjv"}')
    monkeypatch.delenv("VRS_EDU_CORPUS", raising=False)
    assert load_results("value-residual", out_dir=tmp_path)["which"] == "default"
    monkeypatch.setenv("VRS_EDU_CORPUS", "kjv")
    assert load_results("value-residual", out_dir=tmp_path)["which"] == "kjv"
    assert load_results("value-residual", out_dir=tmp_path, corpus="kjv")["which"] == "kjv"
    with pytest.raises(FileNotFoundError, match=r"run `vrs-edu reproduce bank-of-values --corpus kjv`"):
        load_results("bank-of-values", out_dir=tmp_path)
    monkeypatch.setenv("VRS_EDU_CORPUS", "")  # empty = the default corpus
    assert load_results("value-residual", out_dir=tmp_path)["which"] == "default"


# ---------------------------------------------------------------------------------------------------------------
# The named corpora


def test_the_second_corpus_is_the_king_james_bible_as_plain_prose():
    text = kjv_text()
    assert text.startswith("In the beginning God created the")
    assert text.rstrip().endswith("The grace of our Lord Jesus Christ be with you all. Amen.")
    assert text.count("\n\n") + 1 == 1189  # one paragraph per chapter: 929 + 260 chapters
    assert not any(ch.isdigit() for ch in text)  # the chapter:verse markers are gone
    rec = named_corpus("kjv").record()
    assert rec["bytes"] > 4_000_000 and rec["licence"].startswith("public domain")
    assert set(NAMED) == {"python-docs", "kjv"}


def test_a_name_picks_a_named_corpus_and_a_file_of_that_name_is_refused_not_mistaken_for_it(tmp_path, monkeypatch):
    assert get_corpus("python-docs").source.startswith("pydoc_data.topics")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kjv").write_text("my own text, not the Bible")
    # read as a teacher's file it would be saved as "kjv" and overwrite the Bible's results: refused by name
    with pytest.raises(ValueError, match="corpus file kjv would be saved as 'kjv'.*rename the file"):
        get_corpus("kjv")
    (tmp_path / "mine.txt").write_text("my own text, not the Bible")
    c = get_corpus("mine.txt")
    assert c.name == "mine" and c.text == "my own text, not the Bible" and c.licence is None
    with pytest.raises(FileNotFoundError, match="corpus file nope.txt does not exist"):
        get_corpus("nope.txt")


def test_unk_share_counts_the_words_outside_the_vocabulary():
    # 20 words, word i (0-based) written 20 - i times: 210 tokens. A 16-entry vocabulary is [UNK] and the 15 most
    # frequent words, so the 5 rarest (5 + 4 + 3 + 2 + 1 = 15 tokens) become [UNK]: 15 / 210.
    text = " ".join(f"w{i:02d} " * (20 - i) for i in range(20))
    assert unk_share(text, vocab_size=16) == pytest.approx(15 / 210)
    assert unk_share(text, vocab_size=2048) == 0.0  # every word fits
    with pytest.raises(ValueError, match="at least one token"):
        unk_share(" ", vocab_size=16)


def test_the_setting_also_points_the_chapters_at_the_char_model_of_that_corpus(tmp_path, monkeypatch):
    from vrs_edu.lab import char_model

    monkeypatch.setattr(experiments, "CHECKPOINT_DIR", tmp_path)
    monkeypatch.setenv("VRS_EDU_CORPUS", "kjv")
    with pytest.raises(FileNotFoundError, match=r"no checkpoint at \S*char-6x64\.corpus-kjv:"):
        char_model.load_char_model()
    monkeypatch.delenv("VRS_EDU_CORPUS")
    with pytest.raises(FileNotFoundError, match=r"no checkpoint at \S*char-6x64:"):
        char_model.load_char_model()


@pytest.mark.parametrize("name", ["kjv.txt", "python-docs.md", "kjv"])
def test_a_file_named_like_a_shipped_corpus_is_refused_before_it_can_overwrite_its_results(tmp_path, name):
    path = tmp_path / name
    path.write_text(_prose(400))
    from vrs_edu.lab.corpora import read_corpus_file
    with pytest.raises(ValueError, match="the name of a corpus that ships with the course; rename the file"):
        read_corpus_file(path)


def test_a_small_vocabulary_gets_the_budget_error_with_its_remedy(tmp_path, capsys, monkeypatch):
    _no_training(monkeypatch)
    path = tmp_path / "tiny-vocab.txt"
    path.write_text(("the cat sat on the mat and the dog ran to the log . " * 3000))
    code = main(["reproduce", "depth-mixers", "--corpus", str(path), "--quick", "--seeds", "0",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "over the parameter budget: dca adds" in err and "at least about 1,500 distinct words" in err


def test_load_results_or_none_names_the_command_of_a_missing_file_and_reads_one_that_exists(tmp_path):
    from vrs_edu.lab.experiments import load_results_or_none
    said = []
    assert load_results_or_none("recall-rates", out_dir=tmp_path, say=said.append) is None
    assert said == ["recall-rates: not made yet (`vrs-edu reproduce recall-rates`)"]
    assert load_results_or_none("value-residual", corpus="kjv", out_dir=tmp_path, say=said.append) is None
    assert said[-1] == "value-residual: not made yet (`vrs-edu reproduce value-residual --corpus kjv`)"
    (tmp_path / "recall-rates.json").write_text('{"which": "stored"}')
    assert load_results_or_none("recall-rates", out_dir=tmp_path) == {"which": "stored"}
    (tmp_path / "recall.json").write_text("{damaged")
    with pytest.raises(ValueError):             # a damaged file is a fault, not "not made"
        load_results_or_none("recall", out_dir=tmp_path)
