"""Raw-file fetching: cache, mirror, URL; checksum errors name file, expected and actual hash."""

import gzip
import hashlib

import pytest

from embedlab import fetch
from embedlab.fetch import ChecksumError, FetchError


def _entry(content: bytes, url="https://example.invalid/f.txt", compression=None):
    return {"url": url, "sha256": hashlib.sha256(content).hexdigest(), "compression": compression}


def test_mirror_then_cache(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "d").mkdir(parents=True)
    (mirror / "d" / "f.txt").write_bytes(b"hello")
    dest = tmp_path / "raw" / "d" / "f.txt"
    fetch.fetch("d/f.txt", _entry(b"hello"), dest, mirrors=[mirror], allow_download=False)
    assert dest.read_bytes() == b"hello"
    # second call: the cache is used even without a mirror
    fetch.fetch("d/f.txt", _entry(b"hello"), dest, allow_download=False)
    assert dest.read_bytes() == b"hello"


def test_checksum_mismatch_names_file_and_hashes(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "f.txt").write_bytes(b"tampered")
    entry = _entry(b"original")
    dest = tmp_path / "raw" / "f.txt"
    with pytest.raises(ChecksumError) as err:
        fetch.fetch("f.txt", entry, dest, mirrors=[mirror], allow_download=False)
    msg = str(err.value)
    assert "'f.txt" in msg
    assert entry["sha256"] in msg
    assert hashlib.sha256(b"tampered").hexdigest() in msg
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []  # no staging debris left behind


def test_corrupt_cache_is_replaced_from_mirror(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "f.txt").write_bytes(b"good")
    dest = tmp_path / "raw" / "f.txt"
    dest.parent.mkdir()
    dest.write_bytes(b"corrupt")
    fetch.fetch("f.txt", _entry(b"good"), dest, mirrors=[mirror], allow_download=False)
    assert dest.read_bytes() == b"good"


def test_missing_everywhere_offline(tmp_path):
    with pytest.raises(FetchError, match=r"'f.txt' is not available.*mirror .*absent"):
        fetch.fetch(
            "f.txt", _entry(b"x"), tmp_path / "f.txt", mirrors=[tmp_path], allow_download=False
        )


def test_download_with_gzip_checks_decompressed_content(tmp_path, monkeypatch):
    """The URL path: pooch is asked for the file; the hash is of the decompressed content."""
    payload = b"decompressed content"
    calls = {}

    def fake_retrieve(url, known_hash, path, processor, progressbar):
        calls["url"], calls["processor"] = url, processor
        raw = path / "download.gz"
        raw.write_bytes(gzip.compress(payload))
        return processor(str(raw), "download", None) if processor else str(raw)

    import pooch

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    entry = _entry(payload, url="https://example.invalid/f.gz", compression="gzip")
    dest = tmp_path / "raw" / "f.txt"
    fetch.fetch("f.txt", entry, dest)
    assert dest.read_bytes() == payload
    assert calls["url"] == entry["url"] and calls["processor"] is not None


def test_download_failure_lists_sources(tmp_path, monkeypatch):
    import pooch

    def boom(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(pooch, "retrieve", boom)
    with pytest.raises(FetchError, match=r"tried: mirror .*absent.*url https://example.invalid"):
        fetch.fetch("f.txt", _entry(b"x"), tmp_path / "raw" / "f.txt", mirrors=[tmp_path])


def test_mirrors_are_tried_in_turn(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (second / "f.txt").write_bytes(b"found")
    dest = tmp_path / "raw" / "f.txt"
    fetch.fetch("f.txt", _entry(b"found"), dest, mirrors=[first, second], allow_download=False)
    assert dest.read_bytes() == b"found"
