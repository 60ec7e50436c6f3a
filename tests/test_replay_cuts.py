"""benchmarks/replay_cuts.py on a hand-made finished run: each cut's published number is
recomputed from the fits it keeps and judged by its table's own rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from embedlab import runs

from .test_benchmarks import BENCH, run_script


def _synthetic_run(folder: Path) -> None:
    """A finished run's files, hand-made: one SNEST cell (2 rates x 3 restarts, its best run
    at rate 10 and restart 2), one D-CODE counts file (4 subsets) and a Diffeomap full-set
    grid of two points."""
    cell = folder / "embeddings" / "snest" / "school" / "tsne-2.npz"
    cell.parent.mkdir(parents=True)
    kls = {(10.0, 0): 0.70, (10.0, 1): 0.68, (10.0, 2): 0.61, (500.0, 0): 0.75,
           (500.0, 1): 0.72, (500.0, 2): 0.74}  # fmt: skip
    fitted = [
        runs.Run({"learning_rate": rate}, seed, np.zeros((3, 2)), kl, np.array([kl]), 5, 2.0)
        for (rate, seed), kl in kls.items()
    ]
    runs.save_runs(cell, fitted, {"dataset": "school", "cell": "tsne-2", "grid": {}})
    rows = [{"subset": s, "method": "dcode", "median_rank": r} for s, r in enumerate([4, 4, 8, 8])]
    (folder / "dcode").mkdir()
    (folder / "dcode" / "rank_counts_20a_188w.json").write_text(
        json.dumps({"observation": "counts", "size": [20, 188], "rows": rows})
    )
    (folder / "tables").mkdir()
    params = [json.dumps({"sigma_rel": s, "lam": 10.0}) for s in (0.1, 0.2)]
    grid = pd.DataFrame({"dataset": "vowel", "metric": "loo_1nn_errors", "method": "diffeomap",
                         "stage": "full_set", "value": [150, 400], "params": params,
                         "seconds": [10.0, 30.0]})  # fmt: skip
    grid.to_csv(folder / "tables" / "diffeomap_1nn.csv")


def test_cuts_replay_reads_a_synthetic_run(tmp_path):
    """Each cut's number is recomputed from the kept fits and judged by its table's rule: the
    SNEST best (0.61, paper 0.61) is lost with one restart (0.70: worse), D-CODE's mean rank
    over the first 2 subsets is 4 (paper 4.1; all 4 subsets: 6, worse), Diffeomap's best point
    has 150 errors (paper 140: matched, within 10 %), the 0.2 point alone 400 (worse)."""
    sys.path.insert(0, str(BENCH))
    try:
        import replay_cuts
    finally:
        sys.path.remove(str(BENCH))
    _synthetic_run(tmp_path)
    table = replay_cuts.replay(tmp_path, None, snest_restarts=[1], dcode_subsets=[2])
    by_cut = table.set_index("cut")
    one = by_cut.loc["restarts school 1"]
    assert one["cpu_s_saved"] == pytest.approx(4 * 2.0)
    assert one["largest_change"] == pytest.approx(0.09)
    assert one["verdicts_changed"] == "school tsne-2 KL: matched -> worse"
    assert one["taken"] == "no"
    assert by_cut.loc["grid tsne drop learning_rate 500", "taken"] == "yes"
    assert by_cut.loc["grid tsne drop learning_rate 500", "exact"] == "yes"
    assert by_cut.loc["grid tsne drop learning_rate 10", "taken"] == "no"
    config = {"grid": {"default": {"learning_rate": [10.0]}}, "grid_by_dataset": {}}
    narrow = replay_cuts.replay(tmp_path, None, [1], [2], snest_config=config).set_index("cut")
    assert narrow.loc["grid of --config on every dataset", "exact"] == "yes"
    # restarts on top of the config's grid: rate 500 only, best 0.72 (restart 1); its first
    # restart alone gives 0.75, and only rate 500's two later restarts count as saved
    config = {"grid": {"default": {"learning_rate": [500.0]}}, "grid_by_dataset": {}}
    on_grid = replay_cuts.replay(tmp_path, None, [1], [2], snest_config=config).set_index("cut")
    one = on_grid.loc["restarts school 1 on --config's grid"]
    assert one["cpu_s_saved"] == pytest.approx(2 * 2.0)
    assert one["largest_change"] == pytest.approx(0.03)
    flip = "20a,188w dcode median rank: worse -> matched"
    assert by_cut.loc["subsets 2", "verdicts_changed"] == flip
    keep_narrow = by_cut.loc["full_set vowel keep sigma_rel 0.1"]
    assert keep_narrow["cpu_s_saved"] == pytest.approx(30.0) and keep_narrow["exact"] == "yes"
    keep_wide = by_cut.loc["full_set vowel keep sigma_rel 0.2"]
    assert keep_wide["largest_change"] == 250 and keep_wide["taken"] == "no"
    assert "taken" in run_script("replay_cuts.py", "--results", str(tmp_path))


def test_a_kept_table_one_replays_the_rates_that_win_no_cell(tmp_path):
    """From Table 1 alone: the rates of a (dataset, family) that win no cell are dropped at the
    cells' mean seconds per run; a family whose every rate wins a cell has no cut."""
    sys.path.insert(0, str(BENCH))
    try:
        import replay_cuts
    finally:
        sys.path.remove(str(BENCH))
    (tmp_path / "tables").mkdir()
    best = [json.dumps({"learning_rate": r}) for r in (100.0, 100.0, 10.0, 500.0)]
    pd.DataFrame({"dataset": "nips17", "cell": ["sne-2", "sne-3", "tsne-2", "tsne-3"],
                  "kl": [1.9, 0.9, 0.9, 0.8], "verdict": "matched", "best_params": best,
                  "seconds_per_run": [4.0, 6.0, 5.0, 8.0]}).to_csv(
        tmp_path / "tables" / "snest_kl.csv", index=False)  # fmt: skip
    config = {"restarts": {"default": 5}, "grid": {"default": {"learning_rate": [10.0, 500.0]},
              "sne": {"learning_rate": [1.0, 10.0, 100.0]}}, "grid_by_dataset": {}}  # fmt: skip
    table = replay_cuts.replay(tmp_path, None, snest_config=config).set_index("cut")
    assert list(table.index) == ["grid nips17 sne keep learning_rate [100.0]"]
    row = table.iloc[0]
    assert row["cpu_s_saved"] == pytest.approx((4.0 + 6.0) * 2 * 5)
    assert row["exact"] == "yes" and row["taken"] == "yes"


def test_the_replayed_rates_merge_a_partial_override_as_the_workflow_does():
    """snest_rates reads a config's grids as workflow/rules/snest_helpers.smk merges them: a
    dataset's override that names no learning rate keeps its method's, then the default's."""
    sys.path.insert(0, str(BENCH))
    try:
        import replay_cuts
    finally:
        sys.path.remove(str(BENCH))
    config = {
        "grid": {"default": {"learning_rate": [10.0, 500.0]},
                 "snest": {"learning_rate": [1.0, 10.0], "time_ratio": [0.01]}},
        "grid_by_dataset": {"w1000": {"snest": {"time_ratio": [0.1]}, "sne": {}},
                            "grqc": {"default": {"learning_rate": [100.0]}}},
    }  # fmt: skip
    assert replay_cuts.snest_rates(config, "w1000", "snest") == [1.0, 10.0]
    assert replay_cuts.snest_rates(config, "w1000", "sne") == [10.0, 500.0]
    assert replay_cuts.snest_rates(config, "grqc", "snest") == [100.0]
    assert replay_cuts.snest_rates(config, "school", "tsne") == [10.0, 500.0]


def _grid_run(folder: Path, final_point: dict) -> None:
    """A Diffeomap 1-NN table with a reduced-set grid of three points (two tie on the flow's
    errors; the end points' errors decide) and the final fit of ``final_point``."""
    (folder / "tables").mkdir(parents=True)
    points = [{"sigma_rel": 0.1, "lam": 1.0}, {"sigma_rel": 0.2, "lam": 1.0},
              {"sigma_rel": 0.1, "lam": 10.0}]  # fmt: skip
    rows = pd.DataFrame({"dataset": "vowel", "metric": "loo_1nn_errors", "method": "diffeomap",
                         "stage": ["grid"] * 3 + ["final"], "value": [300, 200, 200, 180],
                         "value_end_points": [300, 210, 205, 181],
                         "params": [json.dumps(p) for p in [*points, final_point]],
                         "seconds": [10.0, 20.0, 40.0, 100.0]})  # fmt: skip
    rows.to_csv(folder / "tables" / "diffeomap_1nn.csv", index=False)


def test_a_reduced_set_grid_keeps_the_point_its_final_fit_refits(tmp_path):
    """The selection rule (fewest flow errors, then end-point errors) picks the third point;
    keeping it alone saves the other two fits and moves no number. A final row at another
    point means the table is not the selection's: an error, not a replay."""
    sys.path.insert(0, str(BENCH))
    try:
        import replay_cuts
    finally:
        sys.path.remove(str(BENCH))
    _grid_run(tmp_path / "ok", {"sigma_rel": 0.1, "lam": 10.0})
    (cut,) = replay_cuts.diffeomap_grid_cuts(tmp_path / "ok", None)
    row = cut.row()
    assert row["cut"] == "grid vowel keep sigma_rel 0.1 lam 10"
    assert row["cpu_s_saved"] == pytest.approx(30.0)
    assert row["exact"] == "yes" and row["taken"] == "yes" and row["numbers"] == 1
    _grid_run(tmp_path / "other", {"sigma_rel": 0.2, "lam": 1.0})
    with pytest.raises(ValueError, match="not the grid point"):
        replay_cuts.diffeomap_grid_cuts(tmp_path / "other", None)


def test_stopping_every_run_earlier_replays_its_trace(tmp_path):
    """Two runs of 10 epochs (1 s each) on a cell with paper KL p: the better run ends at
    p - 0.001 (matched); stopped after 5 epochs its trace reads p + 0.1 (worse), after 9
    p + 0.004 (still matched); the saving is the epochs past the limit at each run's seconds
    per epoch."""
    sys.path.insert(0, str(BENCH))
    try:
        import replay_cuts
    finally:
        sys.path.remove(str(BENCH))
    p = replay_cuts._snest_paper()[("school", "tsne-2")]
    cell = tmp_path / "embeddings" / "snest" / "school" / "tsne-2.npz"
    cell.parent.mkdir(parents=True)
    best = p + np.array([0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.004, -0.001])
    fitted = [
        runs.Run({"learning_rate": 10.0}, seed, np.zeros((3, 2)), trace[-1], trace, 10, 1.0,
                 extra={"stop": "max_iter"})
        for seed, trace in enumerate([best, best + 0.3])
    ]  # fmt: skip
    runs.save_runs(cell, fitted, {"dataset": "school", "cell": "tsne-2", "grid": {}})
    cells = replay_cuts.snest_cells(tmp_path)
    five, nine = (c.row() for c in replay_cuts.snest_epoch_cuts(cells, [5, 9], None))
    assert five["verdicts_changed"] == "school tsne-2 KL: matched -> worse"
    assert five["largest_change"] == pytest.approx(0.101) and five["taken"] == "no"
    assert five["cpu_s_saved"] == pytest.approx(2 * 5 * 0.1)
    assert nine["taken"] == "yes" and nine["largest_change"] == pytest.approx(0.005)


def test_a_grid_fit_file_replays_for_a_dataset_without_a_table_row(tmp_path):
    """A figure's dataset (no 1-NN table row): the grid's fit file gives every point's errors
    and seconds; the kept point is the selection's, its own flow errors the compared number."""
    sys.path.insert(0, str(BENCH))
    try:
        import replay_cuts
    finally:
        sys.path.remove(str(BENCH))
    points = [(0.1, 90, 5.0), (0.2, 80, 7.0), (0.4, 85, 11.0)]
    table = [{"sigma_rel": s, "lam": 10.0, "errors_flow": e, "errors_phi": e, "seconds": t,
              "error": ""} for s, e, t in points]  # fmt: skip
    runs.save_npz(tmp_path / "embeddings" / "diffeomap" / "usps" / "grid.npz", {},
                  {"meta": {"dataset": "usps", "stage": "grid"}, "runs": table})  # fmt: skip
    (cut,) = replay_cuts.diffeomap_grid_cuts(tmp_path, None)
    row = cut.row()
    assert row["cut"] == "grid usps keep sigma_rel 0.2 lam 10"
    assert row["cpu_s_saved"] == pytest.approx(16.0) and row["exact"] == "yes"


def test_a_tste_search_keeps_the_values_it_chooses(tmp_path):
    """The paper text chooses per dimension (lowest validation error, the first of equals):
    values 0 and 2 of three; the authors' protocol the fewest violations (the first of
    equals): value 1 of three. The dropped values' jobs are the saving."""
    sys.path.insert(0, str(BENCH))
    try:
        import replay_cuts
    finally:
        sys.path.remove(str(BENCH))
    text = tmp_path / "metrics" / "tste" / "music" / "GNMDS-K" / "search"
    for k, errors in enumerate([[0.2, 0.3], [0.2, 0.4], [0.3, 0.1]]):
        arrays = {"dims": np.array([2, 4]), "errors": np.array(errors)}
        info = {"method": "GNMDS-K", "name": "lam", "value": [0.0, 0.1, 1.0][k]}
        runs.save_npz(text / f"{k}.npz", arrays, info)
    authors = tmp_path / "metrics" / "tste_authors" / "music" / "CKL-K" / "search"
    for k, violations in enumerate([50, 40, 40]):
        runs.save_npz(authors / f"{k}.npz", {},
                      {"method": "CKL-K", "name": "mu", "value": [0.0, 0.1, 0.2][k],
                       "violations": violations})  # fmt: skip
    bench = tmp_path / "benchmarks" / "tste_authors_search" / "tste_authors" / "music" / "CKL-K"
    bench.mkdir(parents=True)
    for k in range(3):
        (bench / f"{k}.tsv").write_text("s\tcpu_time\tmax_rss\n2.0\t1.5\t80\n")
    found = replay_cuts.tste_search_cuts(tmp_path, tmp_path / "benchmarks")
    cuts = {c.cut: c.row() for c in found}
    assert set(cuts) == {"search tste music GNMDS-K keep lam [0.0, 1.0]",
                         "search tste_authors music CKL-K keep mu [0.1]"}  # fmt: skip
    assert cuts["search tste_authors music CKL-K keep mu [0.1]"]["cpu_s_saved"] == 3.0
    assert all(row["exact"] == "yes" and row["taken"] == "yes" for row in cuts.values())
