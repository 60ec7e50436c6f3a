"""A long co-occurrence table with a planted drift: two groups of authors swap topics halfway.

Authors ``X01..`` and ``Y01..`` (``group_size`` each) write words of topic A (``A1..``), topic
B (``B1..``; ``topic_words`` each) and shared words (``C1..``; ``shared_words``) over
``n_periods`` yearly periods from ``first_year``. Before the swap (the first
``n_periods // 2`` periods) an X author uses each A word at the expected count ``rate``, each
B word at ``off_rate`` and each shared word at ``shared_rate``; a Y author the same with A and
B exchanged; from the swap on, the groups exchange topics. Counts are Poisson draws from these
means (numpy Generator seeded with ``seed``); only positive counts are written.

The table is D-CODE's own-data format (:mod:`embedlab.datasets.own_cooccurrence`) with the
header ``year,author,word,n``. A method that follows the drift ranks each author's documents of
the last period within the author's group; one that pools every period (Empirical NB) puts the
group on the topic it held longest, the wrong one at the end.

``config/examples/data/topic_swap.csv`` (the own-data example of
``config/examples/own_datasets.yaml``) is this table with the defaults, written by::

    python -m embedlab.datasets.topic_swap config/examples/data/topic_swap.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab import artifacts

#: the table's header (the example entry maps it with ``columns:``)
COLUMNS = {"time": "year", "row": "author", "column": "word", "count": "n"}


def expected_counts(
    n_periods: int = 10,
    group_size: int = 10,
    topic_words: int = 8,
    shared_words: int = 4,
    rate: float = 2.0,
    off_rate: float = 0.1,
    shared_rate: float = 1.0,
) -> tuple[np.ndarray, list[str], list[str]]:
    """(Poisson means, shape (periods, authors, words); author names; word names)."""
    if n_periods < 2 or min(group_size, topic_words) < 1 or shared_words < 0:
        raise ValueError(
            "topic_swap: need n_periods >= 2, group_size >= 1, topic_words >= 1 and "
            f"shared_words >= 0, got {n_periods}, {group_size}, {topic_words}, {shared_words}"
        )
    if not rate > off_rate >= 0 or shared_rate < 0:
        raise ValueError(
            f"topic_swap: need rate > off_rate >= 0 and shared_rate >= 0, got {rate}, "
            f"{off_rate}, {shared_rate}"
        )
    authors = [f"{g}{k + 1:02d}" for g in "XY" for k in range(group_size)]
    words = [f"{t}{k + 1}" for t in "AB" for k in range(topic_words)]
    words += [f"C{k + 1}" for k in range(shared_words)]
    means = np.empty((n_periods, len(authors), len(words)))
    for t in range(n_periods):
        swapped = t >= n_periods // 2
        for g in range(2):  # X, then Y
            on_a = (g == 0) != swapped  # X: A before the swap, B after; Y the other way
            topic = np.r_[np.full(topic_words, rate if on_a else off_rate),
                          np.full(topic_words, off_rate if on_a else rate)]  # fmt: skip
            rows = slice(g * group_size, (g + 1) * group_size)
            means[t, rows] = np.r_[topic, np.full(shared_words, shared_rate)]
    return means, authors, words


def topic_swap_table(first_year: int = 2015, seed: int = 0, **params) -> pd.DataFrame:
    """The long table (header :data:`COLUMNS`' names): one line per positive Poisson draw of
    :func:`expected_counts` ``(**params)``, in period, author, word order."""
    means, authors, words = expected_counts(**params)
    draws = np.random.default_rng(seed).poisson(means)
    t, a, w = np.nonzero(draws)
    return pd.DataFrame(
        {
            COLUMNS["time"]: first_year + t,
            COLUMNS["row"]: np.asarray(authors)[a],
            COLUMNS["column"]: np.asarray(words)[w],
            COLUMNS["count"]: draws[t, a, w],
        }
    )


def write_table(path: str | Path, **params) -> Path:
    """:func:`topic_swap_table` ``(**params)`` written to ``path`` (through a temporary file)."""
    text = topic_swap_table(**params).to_csv(index=False, lineterminator="\n")
    return artifacts.write_text_atomic(path, text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", help="the CSV file to write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    write_table(args.path, seed=args.seed)


if __name__ == "__main__":
    main()
