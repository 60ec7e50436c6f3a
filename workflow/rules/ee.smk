"""Elastic Embedding (section 5 of design/EXPERIMENTS.md)."""
