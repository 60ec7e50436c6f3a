"""Methods: one module per family; each defines its objective, gradient and estimator, a family
of several ideas with a module per idea beside its estimator's (``diffeomap_energy``), a model
that several families share in a module of its own (``cooccurrence``)."""
