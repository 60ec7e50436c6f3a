"""Fetch raw files: from the local cache, else a mirror folder, else the URL (pooch).

Every file is checked against the registry's sha256 (of the content after decompression).
A mismatch raises :class:`ChecksumError` naming the file, the expected and the actual hash; the
destination is then left absent, never half-written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


class FetchError(RuntimeError):
    """A raw file could not be obtained from any source."""


class ChecksumError(FetchError):
    """A raw file's content does not have the registered sha256."""


def sha256sum(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of the file at ``path``."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def verify(path: str | Path, expected: str, name: str) -> None:
    """Raise :class:`ChecksumError` unless ``path`` has sha256 ``expected``."""
    actual = sha256sum(path)
    if actual != expected.lower():
        raise ChecksumError(
            f"checksum mismatch for raw file {name!r} ({path}): "
            f"expected sha256 {expected.lower()}, got {actual}"
        )


def _download(url: str, compression: str | None, workdir: Path) -> Path:
    import pooch  # imported here: only users without a mirror need it

    processor = pooch.Decompress(method="gzip", name="content") if compression == "gzip" else None
    got = pooch.retrieve(url, known_hash=None, path=workdir, processor=processor, progressbar=False)
    return Path(got)


def fetch(
    name: str,
    entry: Mapping[str, Any],
    dest: str | Path,
    mirrors: Iterable[str | Path] = (),
    allow_download: bool = True,
) -> Path:
    """Place raw file ``name`` (registry entry ``entry``) at ``dest``, verified.

    Sources in order: ``dest`` itself if it already holds the right bytes (the cache),
    ``mirror/name`` for each of ``mirrors`` in turn, then ``entry['url']``. The sha256 is the
    file's identity: where it came from is not recorded, so adding or moving a mirror changes
    nothing downstream.
    """
    dest = Path(dest)
    expected = entry["sha256"]
    if dest.exists():
        try:
            verify(dest, expected, name)
            return dest
        except ChecksumError:
            dest.unlink()  # a stale or corrupt cache entry is replaced, never re-used

    dest.parent.mkdir(parents=True, exist_ok=True)
    tried: list[str] = []
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".fetch-") as tmp:
        tmp_path = Path(tmp)
        source = next((Path(m) / name for m in mirrors if (Path(m) / name).is_file()), None)
        if source is not None:
            staged = tmp_path / "staged"
            shutil.copyfile(source, staged)
        else:
            tried += [f"mirror {Path(m) / name} (absent)" for m in mirrors]
            if not allow_download:
                raise FetchError(
                    f"raw file {name!r} is not available: tried {'; '.join(tried) or 'nothing'}"
                    " and downloads are disabled"
                )
            try:
                staged = _download(entry["url"], entry.get("compression"), tmp_path)
            except Exception as exc:  # network errors come in many types
                tried.append(f"url {entry['url']} ({type(exc).__name__}: {exc})")
                raise FetchError(
                    f"raw file {name!r} could not be fetched; tried: {'; '.join(tried)}"
                ) from exc
            source = Path(entry["url"])
        verify(staged, expected, f"{name} from {source}")
        os.replace(staged, dest)
    return dest
