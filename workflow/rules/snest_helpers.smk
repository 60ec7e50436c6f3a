"""SNEST input functions (included by snest.smk)."""


def snest_grid(dataset, cell):
    """The parameter grid of a Table 1 cell on a dataset: `grid.default`, the cell's method's
    `grid` entry, the dataset's `grid_by_dataset` default, then its method entry, merged key
    by key in that order (a later one's value of a key replaces the earlier's; a key it does
    not name keeps the earlier value), so an override names only what it changes."""
    method = cell.split("-")[0]
    grids, by_dataset = SNEST["grid"], SNEST["grid_by_dataset"]
    override = by_dataset[dataset] if dataset in by_dataset else {}
    merged = {}
    for layers, key in (
        (grids, "default"),
        (grids, method),
        (override, "default"),
        (override, method),
    ):
        merged.update(layers[key] if key in layers else {})
    return merged


def snest_blocks(dataset):
    """The first restart of each job of a (dataset, cell): [0] where one job runs every
    restart (`restarts_per_job` 0, or not below `restarts`), else one per block of
    `restarts_per_job` restarts."""
    restarts = per_dataset(SNEST["restarts"], dataset)
    per_job = per_dataset(SNEST["restarts_per_job"], dataset)
    if per_job == 0 or per_job >= restarts:
        return [0]
    return list(range(0, restarts, per_job))


def snest_parts(dataset, cell):
    """The runs files of a split cell's blocks of restarts (rule snest_embed_part)."""
    return [
        f"results/embeddings/snest/{dataset}/{cell}/restarts_from_{first}.npz"
        for first in snest_blocks(dataset)
    ]
