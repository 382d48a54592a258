"""Predict a model's size before building it, and refuse what will not fit.

Value sets, encodings and weights all grow polynomially in the maximum length N, with an exponent
that depends on the program (a one-hot of `indices` grows as N, a table of `length - indices - 1`
as N^2, ...). So the prediction plans the program for two small lengths (its sketch: the shape
the model would have, no weight and no certificate), fits size = a * N^k through them, and
extrapolates; the part responsible is the
residual variable, head or MLP whose width grows the most. That takes a fraction of a second, long
before a compile for N = 100,000 would have exhausted memory.

The prediction errs low for programs whose growth only starts at larger N; the limit is a
guard against hopeless compiles, not an exact size (the real size is printed after compiling).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from compiler.model import Sketch
from rasp.named_text import MessageNames, generated_texts

DEFAULT_MAX_PARAMS = 200_000_000  # 800 MB of float32 weights; `--max-params` raises it
# Small compiles the prediction extrapolates from: long enough that every select side has the many
# values (compiler.addressing.MATCH_MIN_VALUES, selectors.MIN_CLASSED_VALUES) from which it is
# built as it will be at the target length.
PROBE_LENGTHS = (32, 48)
PREDICT_ABOVE = 64  # below this a compile is quick anyway: no prediction
# float32 weights, plus float64 copies and temporaries of the layer being assembled or certified
# (one layer at a time; a model's widest layer can be most of it): kept high, a rough upper guess
BYTES_PER_PARAM_COMPILING = 24


@dataclass(frozen=True)
class Prediction:
    max_len: int
    params: int  # predicted parameters at max_len
    exponent: float  # params grow as N^exponent between the probes
    compile_bytes: int  # rough peak memory of the compile itself
    widest: str  # the part whose width grows the most, described
    probes: tuple[tuple[int, int], ...]  # (N, parameters) of the probe compiles

    def describe(self) -> str:
        return (
            f"about {_count(self.params)} parameters ({bytes_text(4 * self.params)} of float32 "
            f"weights; compiling would need about {bytes_text(self.compile_bytes)}), predicted from "
            f"compiles at max-len "
            + " and ".join(f"{n} ({_count(p)})" for n, p in self.probes)
            + f" part by part; {self.widest}"
        )


def predict(build: Callable[[int], Sketch], max_len: int) -> Prediction | None:
    """The predicted size of the model `build(max_len)` sketches, from its sketches at
    PROBE_LENGTHS (None: max_len is small enough to just compile).

    Each part is extrapolated on its own (every residual variable's width, every layer's head
    count, head width and MLP width), then the parameters are counted as the file would hold them
    (head widths rounded up to a power of 4 where the layer averages keys): the total jumps where a head width crosses a power
    of 4, which a single power law through two totals would miss.
    """
    if max_len <= PREDICT_ABOVE:
        return None
    (n1, m1), (n2, m2) = ((n, build(n)) for n in PROBE_LENGTHS)
    grow = _Growth(n1, n2, max_len)
    w1, w2 = _residual_widths(m1), _residual_widths(m2)
    widths = {name: grow(w1.get(name, 1), width) for name, width in w2.items()}
    d_model = sum(widths.values())
    # a generated label (`_map_3`) with what it computes: the program never wrote that name
    told = MessageNames(lambda name: None, generated_texts(dict(m2.texts)))
    parts = [(width, f"{told.quoted(name)} in the residual") for name, width in widths.items()]
    cfg1, cfg2 = m1.config, m2.config
    # W_pos only where the model reads positions from the embedding (config_params counts so):
    # a program that sees positions only through its heads' masks has none at any N
    positions = max_len + 1 if cfg2.get("positional", True) else 0
    params = (cfg2["d_vocab"] + positions) * d_model + (d_model + 1) * cfg2["d_vocab_out"]
    if len(cfg1["layers"]) == len(cfg2["layers"]):
        for layer, (a, b) in enumerate(zip(_layer_sizes(m1), _layer_sizes(m2), strict=True)):
            heads, raw_width, hidden = b[0], grow(a[1], b[1]), grow(a[2], b[2])
            stored = cfg2["layers"][layer]["d_head"]
            if not heads or raw_width < 1:
                d_head = 0
            elif stored & (stored - 1) or stored.bit_length() % 2 == 0:  # not a power of 4
                d_head = math.ceil(raw_width)  # a layer of single-key heads: its own width
            else:
                d_head = 4 ** math.ceil(math.log(raw_width, 4))
            params += heads * (4 * d_model * d_head + 3 * d_head) + d_model
            params += 2 * d_model * hidden + hidden + d_model
            parts.append((raw_width, f"the head width of layer {layer}"))
            parts.append((hidden, f"the MLP of layer {layer}"))
    else:  # the probes scheduled differently: fall back to one power law on the totals
        params = int(grow(m1.params, m2.params))
    width, where = max(parts) if parts else (0.0, "nothing")
    total_growth = grow.exponent(m1.params, m2.params)
    return Prediction(
        max_len=max_len,
        params=int(params),
        exponent=total_growth,
        compile_bytes=int(params) * BYTES_PER_PARAM_COMPILING,
        widest=f"the widest part is {where}: about {_count(int(width))} wide",
        probes=((n1, m1.params), (n2, m2.params)),
    )


class _Growth:
    """Extrapolate a size measured at n1 and n2 to n, as a power law a * N^k (k >= 0)."""

    def __init__(self, n1: int, n2: int, n: int) -> None:
        self.n1, self.n2, self.n = n1, n2, n

    def exponent(self, a: float, b: float) -> float:
        if a <= 0 or b <= 0:
            return 0.0
        return max(math.log(b / a) / math.log(self.n2 / self.n1), 0.0)

    def __call__(self, a: float, b: float) -> float:
        return float(b) * (self.n / self.n2) ** self.exponent(a, b)


def _layer_sizes(sketch: Sketch) -> list[tuple[int, int, int]]:
    """(heads, used head width, MLP width) per layer; the used width counts the columns of its
    widest head (the stored width may be rounded up to a power of 4)."""
    return [
        (shape["n_heads"], width, shape["d_mlp"])
        for shape, width in zip(sketch.config["layers"], sketch.head_widths, strict=True)
    ]


def _residual_widths(sketch: Sketch) -> Counter[str]:
    # labels are "name:value" (one-hot) or "name" (a number): group by name
    return Counter(label.split(":", 1)[0] for label in sketch.residual)


# From here on a predicted count is shown as 1.23e20: its digits past the third are float noise,
# and a unit's prefix (5e+08T) would only hide the exponent.
SCIENTIFIC_FROM = 1e15


def scientific(x: float) -> str:
    """`x` to 3 significant digits with its exponent: 1.23e20, 5e33."""
    return f"{x:.3g}".replace("e+", "e")


def approximate(n: int) -> str:
    """A count that may be huge: exact with thousands separators, or `scientific` from 1e15 on."""
    return scientific(n) if n >= SCIENTIFIC_FROM else f"{n:,}"


def _count(n: int) -> str:
    if n >= SCIENTIFIC_FROM:
        return scientific(n)
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)


def bytes_text(n: float) -> str:
    """A size to 3 significant digits in the largest unit it fills: 31 MB, 1 TB, 2e21 bytes."""
    if n >= SCIENTIFIC_FROM:
        return f"{scientific(n)} bytes"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:,.0f} bytes"
