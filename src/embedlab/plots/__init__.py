"""Plots: one function per paper figure."""
