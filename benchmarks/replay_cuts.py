"""Which cuts of a protocol keep every verdict? A replay of a finished run, fitting nothing.

A full run keeps every fit it chose from: each SNEST run (restart x learning rate) of a Table 1
cell with its KL and seconds (``results/embeddings/snest/<dataset>/<cell>.npz``), each D-CODE
test subset's ranks (``results/dcode/rank_<observation>_<a>a_<w>w.json``) and each point of
Diffeomap's full-set grid with its 1-NN value and seconds (the ``full_set`` rows of
``results/tables/diffeomap_1nn.csv``). A cut of the protocol keeps a part of those fits; since
the table's number is the best (or the mean) of the fits kept, the replay recomputes it from
the run's own values and applies the table's verdict rule to it:

* ``snest restarts <dataset> k``: the first k restarts (seeds) of every cell of the dataset
  (``--config``: of the runs at that config's rates, against their best: on top of its grid).
  The runs of one cell compare themselves to the best finished run before them and may stop
  early (``snest.stopping``); keeping fewer runs can only raise that reference, so a kept run
  finishes at least as well in a real run of the cut as in the replay: the replayed KL is an
  upper bound (a "worse" flip found here may be absent from a real run, never the reverse);
* ``snest epochs T``: every run stopped after T epochs (its trace's cost there; same bound);
* ``snest grid <method> drop <value>``: one learning rate of a method family left out, on
  every dataset (same bound); from a run's Table 1 alone (``--config``: its grids), the
  rates of a (dataset, method family) that win no cell, which moves no number;
* ``dcode subsets k``: the first k test subsets of each size (the mean rank over them; the
  variance validation runs on the first subsets, so it is unchanged while k >= val_subsets);
* ``diffeomap full_set <dataset> keep <sigma_rel>``: the full-set grid cut to the listed
  point(s); the headline is the kept point with the best 1-NN value;
* ``diffeomap grid <dataset> keep <point>``: the stage-1 grid (on a subset of the basis)
  cut to the point it selects, which the final stage refits: exact by construction.

For each cut the script prints the CPU seconds it saves (the dropped fits' wall seconds, times
their job's CPU / wall from its benchmark file where the run has one), the largest change of
a published number and every verdict that changes; ``exact`` is yes when no published number
moves, ``taken`` is yes only when no verdict changes.

    python benchmarks/replay_cuts.py --results results --benchmarks logs/benchmarks
    python benchmarks/replay_cuts.py --results results --snest-restarts 1 2 3 --dcode-subsets 30 60
    python benchmarks/replay_cuts.py --results docs/templates/kept/run_838a29c \\
        --config config/config.yaml
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from embedlab import runs, tables, timings

REPO = Path(__file__).resolve().parents[1]
PAPER_VALUES = REPO / "config" / "paper_values"

#: each table's verdict rule, as its writer applies it (experiments.snest.kl_table,
#: experiments.dcode.table.rank_table, experiments.diffeomap's 1-NN table)
SNEST_TOL = 0.005
DCODE_TOL = 1.0


def diffeomap_verdict(value: float, paper: float | None, metric: str) -> str:
    accuracy = metric == "1nn_accuracy"
    tol = 0.02 if accuracy else 0.1 * (paper or 0)
    return tables.verdict(value, paper, tol=tol, lower_is_better=not accuracy)


@dataclass
class Cut:
    """One replayed cut: what it keeps, the CPU it saves, the published numbers it moves."""

    section: str
    cut: str
    saved_s: float = 0.0
    changes: list[tuple[str, float, float, str, str]] = field(default_factory=list)
    #: where the saving comes from: each dropped fit's own seconds, or an estimate
    basis: str = "the dropped fits' seconds"

    def compare(self, item: str, old: float, new: float, judge: Callable[[float], str]):
        """One published number before and after the cut, each judged by the table's rule."""
        self.changes.append((item, old, new, judge(old), judge(new)))

    def row(self) -> dict:
        moved = [abs(n - o) for _, o, n, _, _ in self.changes if np.isfinite(n - o)]
        flips = [f"{i}: {ov} -> {nv}" for i, _, _, ov, nv in self.changes if ov != nv]
        return {
            "section": self.section,
            "cut": self.cut,
            "cpu_s_saved": round(self.saved_s, 1),
            "saving_from": self.basis,
            "numbers": len(self.changes),
            "largest_change": float(f"{max(moved):.4g}") if moved else 0.0,
            "verdicts_changed": "; ".join(flips),
            "exact": "yes" if not moved or max(moved) == 0 else "no",
            "taken": "no" if flips else "yes",
        }


def job_benchmark(benchmarks: Path | None, rule: str, log_stem: str) -> dict | None:
    """The job's Snakemake benchmark file (:func:`embedlab.timings.read_benchmark`: wall_s,
    cpu_s from the job's log where it has the runner's line, ...), or None where the run has
    none."""
    if benchmarks is None:
        return None
    path = benchmarks / rule / f"{log_stem}.tsv"
    if not path.is_file():
        return None
    return timings.read_benchmark(path, timings.job_log(benchmarks, path))


def cpu_per_wall(benchmarks: Path | None, rule: str, log_stem: str) -> float:
    """The job's CPU seconds / wall seconds from its benchmark file (1.0 without)."""
    job = job_benchmark(benchmarks, rule, log_stem)
    if job is None or not job["wall_s"] > 0 or not np.isfinite(job["cpu_s"]):
        return 1.0
    return job["cpu_s"] / job["wall_s"]


# ---------------------------------------------------------------------------------- SNEST


def _snest_paper() -> dict[tuple[str, str], float]:
    paper = pd.read_csv(PAPER_VALUES / "snest_table1.csv")
    cells = [
        f"{m}-{s}-{t}" if m == "snest" else f"{m}-{s}"
        for m, s, t in zip(paper["method"], paper["n_space"], paper["n_time"], strict=True)
    ]
    return dict(zip(zip(paper["dataset"], cells, strict=True), paper["kl"], strict=True))


def snest_cells(results: Path) -> list[dict]:
    """Every SNEST cell of the run: dataset, cell, its runs table (restart = seed - min seed)."""
    cells = []
    for path in sorted((results / "embeddings" / "snest").glob("*/*.npz")):
        data = runs.load_runs(path)
        table = pd.DataFrame(data["runs"])
        table["restart"] = table["seed"] - table["seed"].min()
        meta = data["meta"]
        cells.append({"dataset": meta["dataset"], "cell": meta["cell"], "runs": table,
                      "trace": data["trace"]})  # fmt: skip
    return cells


def _snest_cut(cells, name, keep, benchmarks, within=None) -> Cut:
    """A cut keeping the runs ``keep(cell, runs)`` selects (a boolean Series) of those
    ``within(cell, runs)`` selects (default: every run of the cell), against the best of the
    latter: ``within`` replays a cut on top of a narrower grid than the run's."""
    paper = _snest_paper()
    cut = Cut("snest", name)
    for c in cells:
        table = c["runs"]
        base = within(c, table) if within else pd.Series(True, index=table.index)
        kept = keep(c, table) & base
        if kept.equals(base):
            continue
        ratio = cpu_per_wall(benchmarks, "snest_embed", f"snest/{c['dataset']}/{c['cell']}")
        cut.saved_s += float(table.loc[base & ~kept, "seconds"].sum()) * ratio
        costs = table["cost"].astype(float)
        old = float(costs[base].min())
        new = float(costs[kept].min()) if costs[kept].notna().any() else np.nan
        ref = paper.get((c["dataset"], c["cell"]))
        cut.compare(
            f"{c['dataset']} {c['cell']} KL", old, new,
            lambda v, ref=ref: tables.verdict(v, ref, tol=SNEST_TOL, lower_is_better=True),
        )  # fmt: skip
    return cut


def snest_restart_cuts(
    cells, restarts: Iterable[int], benchmarks, config: dict | None = None
) -> list[Cut]:
    """The first k restarts of every cell of a dataset; with ``config`` (a config's snest
    section), of the runs at that config's learning rates only, against their best: the cut
    on top of a default whose grid is narrower than the run's."""
    within = None if config is None else _config_rates(config)
    on = "" if config is None else " on --config's grid"
    out = []
    for dataset in sorted({c["dataset"] for c in cells}):
        for k in restarts:
            out.append(
                _snest_cut(
                    cells,
                    f"restarts {dataset} {k}{on}",
                    lambda c, t, d=dataset, k=k: (t["restart"] < k) | (c["dataset"] != d),
                    benchmarks,
                    within,
                )
            )
    return out


def snest_epoch_cuts(cells, epochs: Iterable[int], benchmarks) -> list[Cut]:
    """Every run of every cell stopped after T epochs (``snest.max_iter``): a run that went
    past T ends at its trace's cost after epoch T, a shorter one as it ended. Same bound as
    the restarts: a run abandoned against a reference that the cut raises may go on and end
    lower, so the replayed KL is an upper bound and the run's true KL at T lies between the
    full run's and it. The saving counts the epochs past T at each run's seconds per epoch,
    less, for an abandoned run, the epochs it might then add up to T (a lower bound)."""
    paper = _snest_paper()
    out = []
    for limit in epochs:
        cut = Cut("snest", f"epochs {limit} on every dataset")
        for c in cells:
            table = c["runs"]
            ok = [k for k in table.index if not table.at[k, "error"]]
            if not ok:
                continue
            ratio = cpu_per_wall(benchmarks, "snest_embed", f"snest/{c['dataset']}/{c['cell']}")
            ends = []
            for k in ok:
                run, trace = table.loc[k], c["trace"](k)
                ends.append(float(trace[limit - 1]) if len(trace) > limit else float(run["cost"]))
                cut_epochs = run["n_iter"] - limit
                if run["stop"] == "abandoned" or cut_epochs > 0:
                    cut.saved_s += run["seconds"] / run["n_iter"] * cut_epochs * ratio
            ref = paper.get((c["dataset"], c["cell"]))
            cut.compare(
                f"{c['dataset']} {c['cell']} KL", float(table.loc[ok, "cost"].min()), min(ends),
                lambda v, ref=ref: tables.verdict(v, ref, tol=SNEST_TOL, lower_is_better=True),
            )  # fmt: skip
        out.append(cut)
    return out


def snest_grid_cuts(cells, benchmarks) -> list[Cut]:
    """One learning rate of one method family (sne, tsne, snest) left out everywhere."""
    out = []
    families = sorted({c["cell"].split("-")[0] for c in cells})
    for family in families:
        mine = [c for c in cells if c["cell"].split("-")[0] == family]
        rates = sorted({float(r) for c in mine for r in c["runs"]["learning_rate"]})
        for rate in rates if len(rates) > 1 else []:
            out.append(
                _snest_cut(
                    mine,
                    f"grid {family} drop learning_rate {rate:g}",
                    lambda c, t, rate=rate: t["learning_rate"].astype(float) != rate,
                    benchmarks,
                )
            )
    return out


def _config_rates(config: dict) -> Callable:
    """(cell, runs) -> whether each run's learning rate is in ``config``'s grid of the cell."""

    def keep(cell, table):
        rates = snest_rates(config, cell["dataset"], cell["cell"].split("-")[0])
        return table["learning_rate"].astype(float).isin(rates)

    return keep


def snest_config_cut(cells, config: dict, benchmarks) -> Cut:
    """The learning rates of ``config``'s ``snest`` section (a narrower grid than the run's)
    kept on every dataset: checks a chosen grid against a run made with every rate."""
    return _snest_cut(cells, "grid of --config on every dataset", _config_rates(config), benchmarks)


def snest_winner_cuts(results: Path, config: dict) -> list[Cut]:
    """Without the runs files, from the run's Table 1 (``tables/snest_kl.csv``: each cell's
    winning learning rate and seconds per run) and the ``snest`` section of its config: per
    (dataset, method family) of more than one rate, the rates that win no cell dropped. The
    cells keep their best run, so no number moves (the best run's reference can only rise, and
    it finished below it); the saving is the dropped runs at the cell's seconds per run."""
    table_csv = results / "tables" / "snest_kl.csv"
    if not table_csv.is_file() or not config:
        return []
    table = pd.read_csv(table_csv)
    out = []
    for (dataset, family), g in table.groupby(
        [table["dataset"], table["cell"].str.split("-").str[0]], sort=True
    ):
        rates = snest_rates(config, dataset, family)
        won = {json.loads(p).get("learning_rate") for p in g["best_params"]}
        dropped = [r for r in rates if r not in won]
        if len(rates) < 2 or not dropped:
            continue
        restarts = per_dataset(config["restarts"], dataset)
        cut = Cut("snest", f"grid {dataset} {family} keep learning_rate {sorted(won)}",
                  basis="the cells' mean seconds per run")  # fmt: skip
        cut.saved_s = float(g["seconds_per_run"].sum()) * len(dropped) * restarts
        for row in g.itertuples():
            cut.compare(f"{dataset} {row.cell} KL", row.kl, row.kl, lambda v, r=row: r.verdict)
        out.append(cut)
    return out


def per_dataset(values: dict, dataset: str):
    return values[dataset] if dataset in values else values["default"]


def snest_rates(config: dict, dataset: str, family: str) -> list[float]:
    """The learning rates of a (dataset, method family), as the workflow resolves them
    (snest_grid in workflow/rules/snest_helpers.smk): grid.default, the family's grid, the
    dataset's grid_by_dataset default and family entries, merged key by key in that order."""
    override = config.get("grid_by_dataset", {}).get(dataset, {})
    grid: dict = {}
    for layer in (config["grid"]["default"], config["grid"].get(family, {}),
                  override.get("default", {}), override.get(family, {})):  # fmt: skip
        grid.update(layer)
    return [float(r) for r in grid["learning_rate"]]


# --------------------------------------------------------------------------------- D-CODE


def dcode_subset_cuts(results: Path, subsets: Iterable[int], benchmarks) -> list[Cut]:
    """Table 2's counts rows from the first k subsets of each size; the saving is the
    subsets' share of the job (subsets cost alike: the same methods on same-sized data)."""
    paper = pd.read_csv(PAPER_VALUES / "dcode_table2.csv")
    ref = {
        (int(a), int(w), m): v
        for a, w, m, v in paper[["n_authors", "n_words", "method", "median_rank"]].itertuples(
            index=False
        )
    }
    files = sorted((results / "dcode").glob("rank_*.json"))
    out = []
    for k in subsets:
        cut = Cut("dcode", f"subsets {k}")
        for path in files:
            data = json.loads(path.read_text())
            rows = pd.DataFrame(data["rows"])
            n = int(rows["subset"].nunique())
            if k >= n:
                continue
            job = job_benchmark(benchmarks, "dcode_rank", f"dcode/{path.stem}")
            if job is not None:
                cpu = job["cpu_s"] if np.isfinite(job["cpu_s"]) else job["wall_s"]
                cut.saved_s += cpu * (n - k) / n
                cut.basis = "the job's share of the subsets"
            if data["observation"] != "counts":
                continue  # the per-token reading has no published number
            a, w = data["size"]
            for method, g in rows.groupby("method"):
                paper_value = ref.get((int(a), int(w), method))
                if paper_value is None:
                    continue
                old = float(g["median_rank"].mean())
                new = float(g.loc[g["subset"] < k, "median_rank"].mean())
                cut.compare(
                    f"{a}a,{w}w {method} median rank", old, new,
                    lambda v, p=paper_value: tables.verdict(v, p, DCODE_TOL, lower_is_better=True),
                )  # fmt: skip
        out.append(cut)
    return out


# ------------------------------------------------------------------------------ Diffeomap


def diffeomap_point_cpu_per_wall(benchmarks: Path | None, dataset: str, k: int) -> float:
    """Full-set point k's CPU per wall second: its own job's (diffeomap_full_set_point), or,
    in a run that fitted every point in one job, that job's."""
    point = ("diffeomap_full_set_point", f"diffeomap/{dataset}/full_set_points/{k}")
    if benchmarks is not None and (benchmarks / point[0] / f"{point[1]}.tsv").is_file():
        return cpu_per_wall(benchmarks, *point)
    return cpu_per_wall(benchmarks, "diffeomap_full_set", f"diffeomap/{dataset}/full_set")


def diffeomap_rows(results: Path) -> pd.DataFrame:
    """Diffeomap's own rows of the run's 1-NN table (``tables/diffeomap_1nn.csv``; none where
    the run has no table)."""
    table_csv = results / "tables" / "diffeomap_1nn.csv"
    if not table_csv.is_file():
        return pd.DataFrame(columns=["dataset", "method", "stage"])
    df = pd.read_csv(table_csv)
    return df[df["method"] == "diffeomap"]


def _diffeomap_paper() -> dict[str, float]:
    """The paper's Diffeomap value per dataset."""
    paper = pd.read_csv(PAPER_VALUES / "diffeomap_1nn.csv")
    paper = paper[paper["method"] == "diffeomap"]
    return dict(zip(paper["dataset"], paper["value"], strict=True))


def diffeomap_full_set_cuts(results: Path, benchmarks) -> list[Cut]:
    """Each dataset's full-set grid cut to each single point: the headline is then that
    point's value instead of the best point's."""
    rows = diffeomap_rows(results)
    full = rows[rows["stage"] == "full_set"]
    ref = _diffeomap_paper()
    out = []
    for dataset, g in full.groupby("dataset", sort=False):
        if len(g) < 2:
            continue
        metric = g["metric"].iloc[0]
        best = g["value"].max() if metric == "1nn_accuracy" else g["value"].min()
        # the points in the table's order are the jobs' point numbers
        ratios = [diffeomap_point_cpu_per_wall(benchmarks, dataset, k) for k in range(len(g))]
        cpu = g["seconds"].to_numpy(dtype=float) * np.array(ratios)
        # a subsampled dataset (a reduced configuration) is compared with no paper value
        subsampled = "subsampled" in g and bool(g["subsampled"].astype(str).eq("True").any())
        paper_value = None if subsampled else ref.get(dataset)
        for position, (_, point) in enumerate(g.iterrows()):
            sigma = json.loads(point["params"])["sigma_rel"]
            cut = Cut("diffeomap", f"full_set {dataset} keep sigma_rel {sigma:g}")
            cut.saved_s = float(cpu.sum() - cpu[position])
            new = float(point["value"])
            cut.compare(
                f"{dataset} diffeomap {metric}", float(best), new,
                lambda v, p=paper_value, m=metric: diffeomap_verdict(v, p, m),
            )  # fmt: skip
            out.append(cut)
    return out


def diffeomap_grids(results: Path, rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each dataset's reduced-set grid, one row a point in the grid's order: sigma_rel, lam,
    flow and end-point errors (an accuracy as its negative: only the order counts) and
    seconds. From the grid's fit file (``embeddings/diffeomap/<dataset>/grid.npz``: every
    dataset, the figures' too), else from the grid rows of the 1-NN table's ``rows``."""
    grids = {}
    for dataset, g in rows[rows["stage"] == "grid"].groupby("dataset", sort=False):
        sign = -1.0 if g["metric"].iloc[0] == "1nn_accuracy" else 1.0
        params = [json.loads(p) for p in g["params"]]
        grids[dataset] = pd.DataFrame({
            "sigma_rel": [p["sigma_rel"] for p in params], "lam": [p["lam"] for p in params],
            "flow": sign * g["value"].to_numpy(float),
            "phi": sign * g["value_end_points"].to_numpy(float),
            "seconds": g["seconds"].to_numpy(float)})  # fmt: skip
    for path in sorted((results / "embeddings" / "diffeomap").glob("*/grid.npz")):
        _, info = runs.load_npz(path)
        table = pd.DataFrame(info["runs"])
        grids[info["meta"]["dataset"]] = pd.DataFrame({
            "sigma_rel": table["sigma_rel"], "lam": table["lam"],
            "flow": table["errors_flow"].astype(float), "phi": table["errors_phi"].astype(float),
            "seconds": table["seconds"].astype(float)})  # fmt: skip
    return grids


def diffeomap_grid_cuts(results: Path, benchmarks) -> list[Cut]:
    """Each dataset's reduced-set grid cut to the point it selects
    (experiments.diffeomap.fits.select: the fewest flow errors, then end-point errors, the
    first of equals). Every point's fit starts from the same seed, so the kept point's fit is
    the same, and what follows from the choice (the final stage's refit and its table row;
    the full-set flow of a dataset without a full-set grid of its own, which the figures
    draw) is unchanged: the replay checks a final row in the 1-NN table against the kept
    point and compares its number; without one, the kept point's own flow errors. The saving
    is the other points' seconds, times the grid job's CPU per wall second."""
    rows = diffeomap_rows(results)
    ref = _diffeomap_paper()
    out = []
    for dataset, grid in diffeomap_grids(results, rows).items():
        if len(grid) < 2:
            continue
        k = min(range(len(grid)), key=lambda k: (grid.at[k, "flow"], grid.at[k, "phi"], k))
        chosen = {"sigma_rel": grid.at[k, "sigma_rel"], "lam": grid.at[k, "lam"]}
        cut = Cut("diffeomap", f"grid {dataset} keep sigma_rel {chosen['sigma_rel']:g} "
                               f"lam {chosen['lam']:g}")  # fmt: skip
        ratio = cpu_per_wall(benchmarks, "diffeomap_fit", f"diffeomap/{dataset}/grid")
        cut.saved_s = float(grid["seconds"].sum() - grid.at[k, "seconds"]) * ratio
        final = rows[(rows["dataset"] == dataset) & (rows["stage"] == "final")]
        if len(final) == 1:
            (final,) = final.itertuples(index=False)
            refitted = {name: json.loads(final.params)[name] for name in chosen}
            if refitted != chosen:
                raise ValueError(
                    f"{results / 'tables' / 'diffeomap_1nn.csv'}: {dataset}'s final fit "
                    f"({refitted}) is not the grid point the "
                    f"selection rule picks ({chosen})"
                )
            paper_value = ref.get(dataset)
            cut.compare(
                f"{dataset} diffeomap final {final.metric}", float(final.value),
                float(final.value),
                lambda v, p=paper_value, m=final.metric: diffeomap_verdict(v, p, m),
            )  # fmt: skip
        else:
            errors = abs(float(grid.at[k, "flow"]))
            cut.compare(f"{dataset} the chosen point's flow errors", errors, errors, lambda v: "")
        out.append(cut)
    return out


# ------------------------------------------------------------------------------------ t-STE


#: a t-STE reading's metrics folder -> the rule of its search jobs
TSTE_SEARCH_RULES = {"tste": "tste_search", "tste_authors": "tste_authors_search",
                     "tste_authors_figure": "tste_authors_search"}  # fmt: skip


def _tste_choice(values: list[dict]) -> set[int]:
    """The grid positions a search chooses (experiments.tste): the paper text per dimension
    the lowest validation error, the authors' protocol the fewest violations; the first in
    grid order on ties. ``values``: each value's search file info and arrays, in grid order."""
    if "violations" in values[0]:
        return {int(np.argmin([v["violations"] for v in values]))}
    errors = np.array([v["errors"] for v in values], dtype=float)  # values x dims
    return {int(k) for k in np.argmin(errors, axis=0)}


def tste_search_cuts(results: Path, benchmarks) -> list[Cut]:
    """Each (reading, dataset, method)'s search cut to the values it chooses. Every value is
    validated from the same seeds, and the fold and 1-NN fits use the chosen values only, so
    the replay recomputes the choice on the kept values (it must be the same: the first of
    equal errors is kept) and no published number moves; the fold rows list the kept values'
    validation errors only. The saving is the dropped search jobs' CPU (their benchmark
    files; without them, their wall seconds are unknown and the cut saves 0)."""
    out = []
    for reading, rule in TSTE_SEARCH_RULES.items():
        for folder in sorted((results / "metrics" / reading).glob("*/*/search")):
            dataset, method = folder.parent.parent.name, folder.parent.name
            files = sorted(folder.glob("*.npz"), key=lambda f: int(f.stem))
            values = []
            for f in files:
                arrays, info = runs.load_npz(f)
                values.append({**info, **arrays})
            if len(values) < 2 or [int(f.stem) for f in files] != list(range(len(files))):
                continue
            kept = sorted(_tste_choice(values))
            if sorted(kept[i] for i in _tste_choice([values[k] for k in kept])) != kept:
                raise ValueError(f"{folder}: the kept values choose differently")
            name = values[0]["name"]
            chosen = [values[k]["value"] for k in kept]
            cut = Cut("tste", f"search {reading} {dataset} {method} keep {name} {chosen}")
            for k in range(len(files)):
                if k not in kept:
                    # a search's benchmark sits in a search/ folder, as its log does; the
                    # kept runs' authors' searches have theirs one folder up: both are read
                    job = job_benchmark(
                        benchmarks, rule, f"{reading}/{dataset}/{method}/search/{k}"
                    ) or job_benchmark(benchmarks, rule, f"{reading}/{dataset}/{method}/{k}")
                    cut.saved_s += job["cpu_s"] if job else 0.0
            cut.compare(f"{reading} {dataset} {method} chosen {name}", len(kept), len(kept),
                        lambda v: "")  # fmt: skip
            out.append(cut)
    return out


# ----------------------------------------------------------------------------------- main


def replay(
    results: Path,
    benchmarks: Path | None,
    snest_restarts: Iterable[int] = (1, 2, 3),
    dcode_subsets: Iterable[int] = (30, 60, 90),
    snest_config: dict | None = None,
    snest_epochs: Iterable[int] = (),
) -> pd.DataFrame:
    """Every cut this run's files allow, one row each (empty sections are skipped); SNEST's
    from its runs files (``snest_config`` given: also that config's grids kept), else
    (``snest_config`` given) from its Table 1 alone."""
    cells = snest_cells(results)
    cuts = [
        *snest_restart_cuts(cells, snest_restarts, benchmarks, snest_config),
        *snest_grid_cuts(cells, benchmarks),
        *snest_epoch_cuts(cells, snest_epochs, benchmarks),
        *([] if cells else snest_winner_cuts(results, snest_config or {})),
        *([snest_config_cut(cells, snest_config, benchmarks)] if cells and snest_config else []),
        *dcode_subset_cuts(results, dcode_subsets, benchmarks),
        *diffeomap_full_set_cuts(results, benchmarks),
        *diffeomap_grid_cuts(results, benchmarks),
        *tste_search_cuts(results, benchmarks),
    ]
    rows = [c.row() for c in cuts if c.changes]
    columns = list(Cut("", "").row())
    return pd.DataFrame(rows, columns=columns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument(
        "--benchmarks", type=Path, default=None,
        help="the run's logs/benchmarks (CPU / wall per job; without it wall seconds count)",
    )
    parser.add_argument("--snest-restarts", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--snest-epochs", type=int, nargs="+", default=[],
                        help="SNEST runs stopped after these epochs (snest.max_iter)")
    parser.add_argument("--dcode-subsets", type=int, nargs="+", default=[30, 60, 90])
    parser.add_argument(
        "--config", type=Path, default=None,
        help="a config file's snest section: with the run's runs files, its grids replayed as a "
        "cut; for a run whose Table 1 is kept without them, the run's own grid and restarts",
    )
    args = parser.parse_args(argv)
    snest_config = yaml.safe_load(args.config.read_text())["snest"] if args.config else None
    table = replay(
        args.results, args.benchmarks, args.snest_restarts, args.dcode_subsets, snest_config,
        args.snest_epochs,
    )
    if table.empty:
        print(f"{args.results}: no fits to replay (no SNEST runs, D-CODE ranks or full-set grid)")
        return 1
    with pd.option_context("display.max_colwidth", 120, "display.width", 200):
        print(table.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
