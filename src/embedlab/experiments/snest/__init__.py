"""Space-time local embeddings (SNEST paper): Table 1 and Figs. 2-4.

A *cell* is one (method, n_space, n_time) row of Table 1 (``sne-2``, ``tsne-3``,
``snest-2-1``); on each dataset every restart x learning rate of a cell is run and kept, and
the table takes the minimal KL per (dataset, cell) beside the paper's value.

- :mod:`.cells`: cell names, labels, parameter budgets and estimators;
- :mod:`.fit`: every run of one cell on one dataset's P;
- :mod:`.table1`: Table 1 (long form, the paper's layout, the space-time claims);
- :mod:`.figures`: Figs. 2a, 3 and 4 from a cell's best run, Fig. 2b (the kernel);
- :mod:`.settings`: each step's settings (the config's ``snest`` section, schema
  ``workflow/schemas/snest.schema.yaml``);
- :mod:`.steps`: the workflow's steps (paths in, files out).
"""
