"""Diffeomap paper (Walder & Schoelkopf 2008): 1-NN errors on vowel / NIPS text, Figs. 2-4.

Protocol (the workflow's rules, ``workflow/rules/diffeomap.smk``):

1. ``grid``: every (sigma_rel, lam) of the dataset's grid at cheap reduced-set settings
   (fewer basis points, time steps and iterations), each point fitted once.
2. ``full_set`` (the headline): the exact method, every point a basis function (the paper's
   eq. 13 without the reduced set), fitted at the grid point with the fewest leave-one-out
   1-NN errors or at each point of its own grid, the best one reported. The map is the
   learned flow applied to the data. Each point is its own job (a point file) and the
   ``gather`` step joins the points' files into the file one fit of the whole grid writes.
3. ``final``: the stage-1 best point refitted with the paper's reduced set (n = 300 basis
   functions, p = 20, 1000 iterations), reported as the paper's approximation.

Modules:

- :mod:`.data`: a dataset as fitted (rows, PCA, mocap frames centred, classes);
- :mod:`.scoring`: the 1-NN criterion (one class per point, or several);
- :mod:`.fits`: the fits over a grid, the stage-1 choice, the best run;
- :mod:`.gather`: a grid's point files joined;
- :mod:`.baselines`: PCA, Isomap, t-SNE maps;
- :mod:`.table`: the 1-NN table beside the paper's values;
- :mod:`.authors`: NIPS text, the readings of "authors as classes";
- :mod:`.figures`: Figs. 2-4;
- :mod:`.settings`: each step's settings (the config's ``diffeomap`` section, schema
  ``workflow/schemas/diffeomap.schema.yaml``);
- :mod:`.steps`: the workflow's steps (paths in, files out).
"""
