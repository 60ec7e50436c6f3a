"""t-STE paper (van der Maaten & Weinberger 2012): Fig. 2 (triplet generalisation and 1-NN
errors vs dimension) as tables, the paper's claims about it, Figs. 2-4.

Three readings of the Fig. 2 protocol (config ``tste.protocols``): ``paper_text`` follows the
paper's text; ``authors_code`` the authors' released MATLAB scripts (STE_Release);
``authors_figure`` is the released protocol with the solver options that reproduce the
paper's Fig. 2 (config ``tste.authors_figure.settings``: t-STE-X at alpha = 1, t-STE-X and
STE-X maximising the sum of probabilities), the methods it does not change being the
authors_code fits.

- :mod:`.protocol`: what both readings share: the readings, the triplets, the estimators, the
  k-fold split, a metrics row, the merge of one (dataset, method)'s parts, a grid's files;
- :mod:`.paper_text`: the paper text's protocol: validation of a grid value, the choice per
  dimension, one fold's fits;
- :mod:`.authors`: the released protocol: the coded solver settings, the regulariser search
  on the first 10 % of the triplets, the 1-NN fits and one fold's fits;
- :mod:`.fig2`: Fig. 2 as a table (means over folds), degenerate fits, the table's title;
- :mod:`.claims`: the paper's textual claims checked on the Fig. 2 tables;
- :mod:`.maps`: the 2-D maps of Figs. 3 and 4;
- :mod:`.settings`: each step's settings (the config's ``tste`` section, schema
  ``workflow/schemas/tste.schema.yaml``);
- :mod:`.steps`: the workflow's steps (paths in, files out).
"""
