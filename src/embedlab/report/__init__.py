"""The report's own tables, run as workflow steps (:mod:`.steps`): the datasets' counts beside
the papers', one line per published number (paper vs ours), where the run's time went; and
every table as a page that the HTML report shows inline (:mod:`.pages`)."""
