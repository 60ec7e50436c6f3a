"""embedlab: reproducible embeddings (SNEST, D-CODE, Diffeomap, t-STE, Elastic Embedding)."""

__version__ = "0.1.0"
