"""Methods: one module per family; each defines its objective, gradient and estimator."""
