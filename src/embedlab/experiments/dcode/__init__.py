"""D-CODE paper (Sarkar, Siddiqi & Gordon 2007, section 4): Table 2 (author ranking on NIPS)
and Figs. 3-5.

- :mod:`.subsets`: the pool of prolific authors and their words, the random subsets, their
  count matrices and test papers (:class:`.subsets.RankSetup`, what one Table 2 job shares);
- :mod:`.fits`: each compared method fitted on a subset's counts, and its ``log p(w | a)``;
- :mod:`.validation`: the D-CODE variances chosen on held-out years (growing log grids);
- :mod:`.rank`: one Table 2 job, validation then every method on the test year's papers;
- :mod:`.table`: Table 2 from the jobs' result files (no method imported);
- :mod:`.figures`: the data of Figs. 3-5;
- :mod:`.own`: Table 2's protocol and Fig. 4's map on a user's own co-occurrence table;
- :mod:`.settings`: each step's settings (the config's ``dcode`` section, schema
  ``workflow/schemas/dcode.schema.yaml``);
- :mod:`.steps`: the workflow's steps (paths in, files out).
"""
