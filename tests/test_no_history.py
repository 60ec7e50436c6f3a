"""Code, config and docs say what is true now; history goes to CHANGELOG.md and git.

A comment, docstring, config comment or page that tells the story of past runs ("was 54 ms
before", "used to", a date, an issue number) goes stale and hides the current contract; this
test finds the usual forms of it."""

from __future__ import annotations

import re

from .conftest import REPO

PATTERNS = {
    "a date": r"\b20\d\d-[01]\d-[0-3]\d\b",
    "an issue number": r"\bissues? #?\d+|\(#\d+\)",
    "'used to'": r"\bused to\b",
    "'was ... before'": r"\bwas\b[^.\n]{0,60}\bbefore\b",
    "a time of day or session": (
        r"\b(this|that|last|yesterday's?) (morning|evening|night|session)\b"
    ),
    "'tried and dropped'": r"\btried and dropped\b",
    "'previously' / 'formerly'": r"\b(previously|formerly)\b",
}
FOUND = re.compile("|".join(f"(?P<p{i}>{p})" for i, p in enumerate(PATTERNS.values())), re.I)
WHERE = ["src", "workflow", "config", "docs", "README.md", "benchmarks"]
SUFFIXES = {".py", ".smk", ".yaml", ".yml", ".md", ".rst", ".txt"}
# generated pages quote results tables whose rows may carry a run's own time stamps
SKIP = {"docs/data"}


def files():
    for where in WHERE:
        path = REPO / where
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for f in candidates:
            rel = f.relative_to(REPO).as_posix()
            if f.is_file() and f.suffix in SUFFIXES and not any(rel.startswith(s) for s in SKIP):
                yield f


def history(text: str) -> list[tuple[int, str, str]]:
    """(line number, what, line) of every history phrase in ``text``."""
    names = list(PATTERNS)
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in FOUND.finditer(line):
            group = next(k for k, v in match.groupdict().items() if v is not None)
            found.append((number, names[int(group[1:])], line.strip()))
    return found


def test_the_check_finds_each_form_of_history():
    text = (
        "at 2026-11-23 it took 3 s\nsee issue #22\nP used to be normalised in place\n"
        "the fit was 54 ms before the change\nrun this morning\ntried and dropped: x\n"
        "previously 3 s\nnone here: the kernel sums in a fixed order\n"
    )
    assert [n for n, _, _ in history(text)] == [1, 2, 3, 4, 5, 6, 7]


def test_no_history_outside_the_changelog():
    found = [
        f"{f.relative_to(REPO)}:{n}: {what}: {line[:120]}"
        for f in files()
        for n, what, line in history(f.read_text(errors="replace"))
    ]
    assert not found, "history belongs in CHANGELOG.md and git:\n" + "\n".join(found)
