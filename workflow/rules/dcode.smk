"""D-CODE paper (section 2 of design/EXPERIMENTS.md)."""
