"""Experiments: the glue of each paper (runs, aggregation into tables, command-line verbs)."""
