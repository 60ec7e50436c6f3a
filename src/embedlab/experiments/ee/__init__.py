"""Elastic Embedding (smallvis notes on EE): lambda sweeps and the homotopy method.

- :mod:`.sweep`: every (negative weights, lambda) map of one dataset, with the learning-rate
  fallback and the metrics;
- :mod:`.homotopy`: the Swiss roll, a fixed lambda against homotopy schedules;
- :mod:`.settings`: each step's settings (the config's ``ee`` section, schema
  ``workflow/schemas/ee.schema.yaml``);
- :mod:`.steps`: the workflow's steps (paths in, files out).
"""
