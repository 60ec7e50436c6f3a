"""scripts/compare_tables.py: equal tables pass, a changed number or a missing table fails."""

from __future__ import annotations

import importlib.util

import pandas as pd

from .conftest import REPO

spec = importlib.util.spec_from_file_location("compare", REPO / "scripts" / "compare_tables.py")
compare_tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_tables)


def test_equal_tables_pass_and_changes_fail(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    table = pd.DataFrame(
        {"method": ["x", "y"], "note": ["a", None], "kl": [0.5, 0.25], "seconds": [1.0, 2.0]}
    )
    table.to_csv(a / "t.csv", index=False)
    table.assign(seconds=[9.0, 9.0]).to_csv(b / "t.csv", index=False)  # timing: ignored
    assert compare_tables.compare(a, b) == []
    table.assign(kl=[0.5, 0.2500001]).to_csv(b / "t.csv", index=False)
    assert compare_tables.compare(a, b) == ["t.csv: row 1, kl: 0.25 vs 0.2500001"]
    assert compare_tables.compare(a, b, rtol=1e-5) == []
    table.assign(note=["a", "b"]).to_csv(b / "t.csv", index=False)
    assert compare_tables.compare(a, b) == ["t.csv: row 1, note: nan vs b"]
    table.to_csv(b / "t.csv", index=False)
    table.to_csv(b / "u.csv", index=False)
    assert any("u.csv: only in" in line for line in compare_tables.compare(a, b, rtol=1e-5))
