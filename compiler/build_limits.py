"""Refusals of a build before its weights are made or stored: a model over the parameter limit
(`check_params`), and weights past float32's largest number (`check_float32_range`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from compiler.blocks import Plan
from compiler.model import OverParamLimit, config_params
from rasp.errors import CompileError, Diagnostic, option
from rasp.wording import count_text

# float32's largest finite number: a weight past it would be stored as inf
F32_MAX = float(np.finfo(np.float32).max)


def check_float32_range(
    weights: dict[str, np.ndarray], labels: Sequence[str], prefix: str = ""
) -> None:
    """Refuse weights (those under `prefix`) that float32 cannot hold: a program computing with
    numbers past float32's largest (a mean of `tokens_float * 10 ^ 300`) got inf weights, whose
    bounds came out NaN, with numpy's overflow warnings printed, before the certifier refused it."""
    for key, w in weights.items():
        if not key.startswith(prefix) or w.size == 0:
            continue
        if -F32_MAX < w.min() and w.max() < F32_MAX:  # (NaN fails both): no copy on the way
            continue
        big = np.abs(w)
        at = np.unravel_index(int(np.argmax(np.where(np.isnan(big), np.inf, big))), w.shape)
        # the residual dimension it reads or writes, where one of its axes is the residual
        dim = next((at[a] for a in range(w.ndim) if w.shape[a] == len(labels)), None)
        what = f" ({labels[dim]})" if dim is not None else ""
        raise CompileError(
            [
                Diagnostic(
                    f"the weight {key}{what} would be {float(w[at]):.3g}, beyond the largest "
                    f"float32 number ({F32_MAX:.3g}): the program computes with numbers no float32 "
                    "model can hold",
                    None,
                    "scale the numbers down, or keep them as labels (a categorical value, not "
                    "one averaged or computed with)",
                )
            ]
        )


def check_params(config: dict[str, Any], plan: Plan, max_params: int | None) -> None:
    """Refuse a model over `max_params` parameters before allocating its weights. The prediction
    (compiler.budget) sizes only compiles above N = 64 and the first build; a small N with a huge
    value set, or the driver's one-hot fallback for an output of thousands of values, is stopped
    here instead of after gigabytes."""
    params = config_params(config)
    if max_params is None or params <= max_params:
        return
    widest = max(layer["d_mlp"] for layer in config["layers"]) if config["layers"] else 0
    raise OverParamLimit(
        [
            Diagnostic(
                f"the model would have {params:,} parameters (d_model {config['d_model']:,}, "
                f"widest MLP {count_text(widest, 'unit')}, "
                f"{count_text(config['d_vocab_out'], 'output column')} for "
                f"'{plan.output.name}')",
                None,
                f"the limit is {max_params:,} parameters: use a smaller maximum length, or "
                f"raise the limit ({option('max_params')}) if the machine can hold it",
            )
        ]
    )
