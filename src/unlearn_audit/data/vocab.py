"""Fixed 100-symbol character vocabulary of the Shakespeare CharLSTM (App. D.2: |V| = 100).

Ids 0-3 are special symbols (``<pad>``, ``<oov>``, ``<bos>``, ``<eos>``); ids 4-99 are the newline
and the 95 printable ASCII characters (space to ``~``).  Every other character maps to the single
out-of-vocabulary id after a small normalisation of typographic Unicode punctuation (curly
quotes, dashes, ellipsis, non-breaking space) to ASCII, so texts from the 1990s Gutenberg editions
(plain ASCII) and from the current UTF-8 edition encode alike.  The windows built in
:mod:`unlearn_audit.data.shakespeare` never contain ``<pad>``/``<bos>``/``<eos>``; the ids are
reserved so that the vocabulary size (and the model's output layer) is exactly 100.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["CharVocab", "SPECIALS", "VOCAB_SIZE", "PAD_ID", "OOV_ID", "BOS_ID", "EOS_ID", "default_vocab", "normalise_text"]

SPECIALS: tuple[str, ...] = ("<pad>", "<oov>", "<bos>", "<eos>")
PAD_ID, OOV_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
_CHARS: str = "\n" + "".join(chr(c) for c in range(32, 127))
VOCAB_SIZE: int = len(SPECIALS) + len(_CHARS)
assert VOCAB_SIZE == 100

_NORMALISE = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
        "\u2013": "-", "\u2014": "--", "\u2015": "--", "\u2010": "-", "\u2011": "-",
        "\u2026": "...", "\u00a0": " ", "\t": " ", "\r": "",
        "\u00e6": "ae", "\u00c6": "AE", "\u0153": "oe", "\u0152": "OE",
    }
)


def normalise_text(text: str) -> str:
    """Map typographic Unicode punctuation to ASCII; tabs become spaces, carriage returns vanish."""
    return text.translate(_NORMALISE)


@dataclass(frozen=True)
class CharVocab:
    """A fixed character vocabulary: ``encode`` maps text to int64 ids, unknown characters to ``<oov>``."""

    chars: str = _CHARS
    specials: tuple[str, ...] = SPECIALS
    oov_id: int = OOV_ID
    _table: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(set(self.chars)) != len(self.chars) or any(ord(c) > 127 for c in self.chars):
            raise ValueError("vocabulary characters must be distinct ASCII characters")
        table = np.full(128, self.oov_id, dtype=np.int64)
        for i, c in enumerate(self.chars):
            table[ord(c)] = len(self.specials) + i
        object.__setattr__(self, "_table", table)

    @property
    def size(self) -> int:
        """Number of symbols, specials included (100 for the default vocabulary)."""
        return len(self.specials) + len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        """int64 ids of the characters of ``text`` (after :func:`normalise_text`)."""
        text = normalise_text(text)
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        ids = self._table[np.minimum(codes, 127)]
        ids[codes > 127] = self.oov_id
        return ids

    def decode(self, ids) -> str:
        """Inverse of :meth:`encode` for in-vocabulary ids; specials decode to their names."""
        k = len(self.specials)
        return "".join(self.specials[i] if i < k else self.chars[i - k] for i in np.asarray(ids, dtype=np.int64).ravel())


def default_vocab() -> CharVocab:
    """The project's 100-symbol vocabulary (App. D.2)."""
    return CharVocab()
