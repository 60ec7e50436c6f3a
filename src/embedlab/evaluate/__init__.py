"""Evaluation: KL, triplet error, 1-NN / leave-one-out error, author rank, trustworthiness."""
