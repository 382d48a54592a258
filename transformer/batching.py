"""Which inputs run together: batches of inputs of near lengths, for `run` and `run_array`.

A batch is padded with PAD to its longest input. The compiled weights give PAD keys softmax
weight exactly 0 (docs/compiler.md, "BOS and PAD are handled by assembly"), so padding never
changes a real position's output; it only costs time: a padded position costs what a real one
does, and attention grows with the square of the width. On the CPU, 1024 inputs of lengths 1..N
run as one padded batch took 2.3-4.5x (N = 64) and 5.0-6.4x (N = 256) the forward passes of the
same inputs grouped by length (bench/README.md, "Inputs of mixed lengths"), so there a batch is closed where padding it to the
next length would waste much (`WASTE`), once it is large enough that one more forward call costs
less than the padding it saves (`SLACK_TOKENS`). A batch on the CPU also holds at most
`CPU_POSITIONS` positions: past a few thousand, a library model's activations (d_mlp grows with
N) leave the CPU's caches, and a position cost 2-3x as much (one thread, hist at N = 256: 2.3 us
a position in batches of 16 x 256, 5.3 us in 64 x 256; sort 6.7 us in 16 x 64, 21 us in 64 x 64).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# A batch ends before a longer input when padding its rows to that input's length would add more
# than this share of its real tokens...
WASTE = 0.25
# ...and more than this many padded positions: a forward call costs about as much as 100-300
# positions of the library's models on the CPU (0.24 ms for hist, 1 ms for most_freq), so smaller
# savings would cost more calls than they save.
SLACK_TOKENS = 512
# The most positions (rows x padded width, BOS included) of a batch on the CPU, but one input.
CPU_POSITIONS = 4096


def length_batches(
    lengths: Sequence[int] | np.ndarray, batch_size: int, *, cpu: bool
) -> list[np.ndarray]:
    """Input indices sorted by length (stably: equal lengths keep input order), at most
    `batch_size` per batch; with `cpu`, also cut where padding would waste
    much and at `CPU_POSITIONS` (above).
    Without it a batch is `batch_size` consecutive inputs of that order (as on a GPU, where a
    large batch costs little more than a small one; not measured with this rule)."""
    sizes = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(sizes, kind="stable")
    if not cpu:
        return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    widths, counts = np.unique(sizes[order], return_counts=True)  # ascending
    cuts: list[int] = []  # positions in `order` where a batch starts, after the first
    at = rows = real = 0  # the open batch: its rows and their real tokens
    for width, count in zip(widths.tolist(), counts.tolist(), strict=True):
        limit = min(batch_size, max(1, CPU_POSITIONS // (1 + width)))  # rows at this width
        waste = rows * width - real  # padding the open batch's rows to `width`
        if rows and (rows >= limit or waste > max(WASTE * real, SLACK_TOKENS)):
            cuts.append(at)
            rows = real = 0
        while count:  # this length's inputs, `limit` rows at most per batch
            take = min(count, limit - rows)
            at, rows, real, count = at + take, rows + take, real + take * width, count - take
            if rows == limit:
                cuts.append(at)
                rows = real = 0
    bounds = [0, *(cut for cut in cuts if cut < len(order)), len(order)]
    return [order[start:end] for start, end in zip(bounds, bounds[1:], strict=False) if end > start]
