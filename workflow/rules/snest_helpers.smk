"""SNEST input functions (included by snest.smk)."""


def snest_grid(dataset, cell):
    """The parameter grid of a Table 1 cell on a dataset: the first of the dataset's override
    for the cell's method, the dataset's default override, the method's grid, the default.
    """
    method = cell.split("-")[0]
    grids = SNEST["grid"]
    by_dataset = SNEST["grid_by_dataset"]
    override = by_dataset[dataset] if dataset in by_dataset else {}
    for candidates, key in ((override, method), (override, "default"), (grids, method)):
        if key in candidates:
            return candidates[key]
    return grids["default"]
