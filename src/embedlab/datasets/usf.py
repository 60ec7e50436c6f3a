"""Word association similarities W1000 / W5000 (SNEST paper) from the USF Free Association Norms.

Each ``usf/Cue_Target_Pairs.*`` file is an HTML page whose ``<PRE>`` block holds a CSV table
(header line ``CUE, TARGET, NORMED?, #G, #P, FSG, ...``; fields separated by a comma and padded
with blanks). FSG is the forward strength: the share of participants who answered TARGET when
shown CUE.

Construction (the SNEST paper's W1000 / W5000: the most frequent cue words):

* score(w) = (number of target rows of cue w) + (number of cues that gave w as a target),
  for every word w that is a cue; the top ``n_words`` by score, ties broken alphabetically, are
  the items, in that order;
* WS_ij = FSG of target j for cue i, both among the selected words (asymmetric, zero diagonal);
* P = :func:`embedlab.affinities.row_normalised_symmetric` (WS), i.e.
  p_ij ∝ WS_ij / sum_k WS_ik + WS_ji / sum_k WS_jk.

Decisions the text leaves open:

* targets that are not cues count in their cues' scores (the first term) but cannot be
  selected (they have no score and no row of their own);
* rows whose cue equals its target (AGAIN -> AGAIN, 4 in the norms) are dropped before scoring:
  a word is not its own association and WS has a zero diagonal;
* a row whose FSG is ``?`` or blank has no measured strength and is dropped (counted in
  ``meta["counts"]["missing_fsg"]``; the mirror files have none); any other FSG that is not a
  number in (0, 1] is an error naming file, line and value;
* a (cue, target) pair listed twice is an error naming both lines (the norms list each once);
* a selected word without any association to another selected word would give P an empty row:
  that is an error naming the word (it does not happen for W1000 / W5000).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.affinities import row_normalised_symmetric
from embedlab.artifacts import Artifact
from embedlab.datasets import DatasetError

MISSING = ("?", "")


def read_pairs(path: str | Path) -> tuple[pd.DataFrame, int]:
    """(cue, target, fsg, file, line) of every row of one USF file with an FSG; rows without."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None
    starts = [i for i, line in enumerate(lines) if line.strip().upper() == "<PRE>"]
    ends = [i for i, line in enumerate(lines) if line.strip().upper() == "</PRE>"]
    if len(starts) != 1 or len(ends) != 1 or ends[0] <= starts[0] + 1:
        raise DatasetError(f"{path}: expected one <PRE> ... </PRE> block holding the table")
    header_at = starts[0] + 1
    header = [h.strip().upper() for h in lines[header_at].split(",")]
    for column in ("CUE", "TARGET", "FSG"):
        if column not in header:
            raise DatasetError(f"{path}, line {header_at + 1}: header has no column {column!r}")
    cue_at, target_at, fsg_at = (header.index(c) for c in ("CUE", "TARGET", "FSG"))
    cues, targets, strengths, line_numbers = [], [], [], []
    missing = 0
    for i in range(header_at + 1, ends[0]):
        lineno = i + 1
        if not lines[i].strip():
            continue
        fields = [f.strip() for f in lines[i].split(",")]
        if len(fields) != len(header):
            raise DatasetError(
                f"{path}, line {lineno}: {len(fields)} fields, header has {len(header)}"
            )
        cue, target, fsg = fields[cue_at], fields[target_at], fields[fsg_at]
        if not cue or not target:
            raise DatasetError(f"{path}, line {lineno}: empty CUE or TARGET field")
        if fsg in MISSING:
            missing += 1
            continue
        try:
            value = float(fsg)
        except ValueError:
            value = math.nan
        if not 0.0 < value <= 1.0:
            raise DatasetError(f"{path}, line {lineno}: field FSG = {fsg!r} is not in (0, 1]")
        cues.append(cue)
        targets.append(target)
        strengths.append(value)
        line_numbers.append(lineno)
    pairs = pd.DataFrame(
        {"cue": cues, "target": targets, "fsg": strengths, "file": str(path), "line": line_numbers}
    )
    return pairs, missing


def select_words(pairs: pd.DataFrame, n_words: int) -> pd.DataFrame:
    """The ``n_words`` cues with the highest score, ties alphabetical (module docstring).

    Returns ``name``, ``score``, ``n_targets`` (target rows of the cue) and ``n_cued_by`` (cues
    that gave the word as a target), in selection order.
    """
    n_targets = pairs.groupby("cue").size()
    n_cued_by = pairs.groupby("target")["cue"].nunique()
    words = pd.DataFrame({"name": n_targets.index, "n_targets": n_targets.to_numpy()})
    words["n_cued_by"] = words["name"].map(n_cued_by).fillna(0).astype(np.int64)
    words["score"] = words["n_targets"] + words["n_cued_by"]
    if not 1 <= n_words <= len(words):
        raise DatasetError(f"usf: n_words = {n_words} must lie in [1, {len(words)}] (the cues)")
    words = words.sort_values(["score", "name"], ascending=[False, True], kind="stable")
    return words.head(n_words)[["name", "score", "n_targets", "n_cued_by"]].reset_index(drop=True)


def association_matrix(pairs: pd.DataFrame, words: pd.Series) -> sp.csr_matrix:
    """WS_ij = FSG of target words[j] for cue words[i] (pairs among ``words`` only)."""
    index = pd.Series(np.arange(len(words)), index=pd.Index(words))
    inside = pairs["cue"].isin(index.index) & pairs["target"].isin(index.index)
    rows = index[pairs.loc[inside, "cue"]].to_numpy()
    cols = index[pairs.loc[inside, "target"]].to_numpy()
    n = len(words)
    return sp.csr_matrix((pairs.loc[inside, "fsg"].to_numpy(), (rows, cols)), shape=(n, n))


def build(files: Mapping[str, Path], n_words: int = 1000) -> Artifact:
    """W<n_words>: P from the USF FSG among the top ``n_words`` cues (module docstring)."""
    paths = [Path(files[k]) for k in sorted(files) if Path(k).name.startswith("Cue_Target_Pairs.")]
    if not paths:
        raise DatasetError(f"usf: no Cue_Target_Pairs.* file among {sorted(files)}")
    parsed = [read_pairs(p) for p in paths]
    pairs = pd.concat([df for df, _ in parsed], ignore_index=True)
    twice = pairs.duplicated(["cue", "target"], keep=False)
    if twice.any():
        first = pairs[twice].sort_values(["cue", "target"]).head(2)
        where = "; ".join(f"{r.file}, line {r.line}" for r in first.itertuples())
        raise DatasetError(
            f"usf: pair ({first.iloc[0]['cue']}, {first.iloc[0]['target']}) listed twice: {where}"
        )
    self_pairs = pairs["cue"] == pairs["target"]
    pairs = pairs[~self_pairs].reset_index(drop=True)

    words = select_words(pairs, int(n_words))
    WS = association_matrix(pairs, words["name"])
    linked = (np.diff(WS.indptr) > 0) | (np.diff(WS.tocsc().indptr) > 0)
    if not linked.all():
        lonely = words["name"][~linked].tolist()
        raise DatasetError(
            f"usf: {len(lonely)} selected word(s) have no association with another selected "
            f"word (first: {lonely[0]!r}); P would have an empty row"
        )
    cue_set = set(pairs["cue"])
    counts = {
        "rows": int(len(pairs) + self_pairs.sum()),
        "cues": len(cue_set),
        "targets_not_cues": len(set(pairs["target"]) - cue_set),
        "self_pairs": int(self_pairs.sum()),
        "missing_fsg": int(sum(m for _, m in parsed)),
        "associations": int(WS.nnz),
        "n": len(words),
    }
    P = row_normalised_symmetric(WS, name=f"usf top {n_words}")
    return Artifact(kind="similarity", arrays={"P": P}, items=words, meta={"counts": counts})
