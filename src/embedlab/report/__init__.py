"""The report's own tables, run as workflow steps (:mod:`.steps`): the datasets' counts beside
the papers', one line per published number (paper vs ours), and where the run's time went."""
