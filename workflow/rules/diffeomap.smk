"""Diffeomap paper (section 3 of design/EXPERIMENTS.md)."""
