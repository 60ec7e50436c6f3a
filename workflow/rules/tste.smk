"""t-STE paper (section 4 of design/EXPERIMENTS.md)."""
