"""tracr's `compiling.compile_rasp_to_model`, compiled by rasp-forge: an exact, certified model.

    from rasp.tools.tracr_compiling import compile_rasp_to_model
    model = compile_rasp_to_model(program, vocab={1, 2, 3}, max_seq_len=5, compiler_bos="BOS")
    model.apply(["BOS", 3, 1, 2]).decoded      # ["BOS", ...], as tracr's model gives it
    model.save("program.safetensors")          # then `rasp run --model`, `verify`, `show`, `export`

The model is a `compiler.CompiledModel` (the same file, runtime and tools as any other) with tracr's
`apply`. tracr's `mlp_exactness` has no counterpart: every model is exact on every input of length
1..max_seq_len, or the compile is refused with the reason. Under `--tracr-compat` this module is
`tracr.compiler.compiling`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from compiler import CompiledModel, compile_sop
from rasp.tracr.boxes import model_values
from rasp.tracr.expr import RASPExpr, explicit_name

COMPILER_BOS = "compiler_bos"
COMPILER_PAD = "compiler_pad"


@dataclasses.dataclass(frozen=True)
class TracrModelOutput:
    """What tracr's `model.apply(tokens)` returns, as far as rasp-forge has it: `decoded`, one value
    per input position, the BOS position holding the BOS token."""

    decoded: list[Any]

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(_missing(self, name, _OUTPUT_FIELDS))


@dataclasses.dataclass(frozen=True)
class TracrModel(CompiledModel):
    """A compiled model with tracr's `apply`; everything else is `CompiledModel`'s."""

    compiler_bos: str = COMPILER_BOS
    compiler_pad: str = COMPILER_PAD

    def apply(self, tokens: Sequence[Any]) -> TracrModelOutput:
        """Run the model on `tokens` (starting with the BOS token, as tracr's do; trailing PAD
        tokens are echoed back). Without the BOS token first, ValueError: tracr would read the
        first token as BOS and give a meaningless first value."""
        body = list(tokens)
        if not body or body[0] != self.compiler_bos:
            raise ValueError(
                f"apply takes the BOS token first, as tracr's models do: "
                f"apply([{self.compiler_bos!r}, *tokens]), got {body[:3]!r}"
                + ("..." if len(body) > 3 else "")
            )
        body = body[1:]
        pads = 0
        while body and body[-1] == self.compiler_pad:
            body.pop()
            pads += 1
        runtime = self.runtime()
        _check_body(runtime, body, self.compiler_bos, self.compiler_pad)
        # tuples (n-ary maps) as such, where the file says its output's marked strings are tuples
        outputs = model_values(runtime.run([body])[0], runtime.meta.output.tuples) if body else []
        return TracrModelOutput([self.compiler_bos, *outputs, *[self.compiler_pad] * pads])

    @property
    def residual_labels(self) -> list[str]:
        """The residual stream's dimensions, one label each (`tokens:a`, `one`, `hist`), as tracr's
        model has them."""
        return list(self.metadata["residual"])

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(_missing(self, name, _MODEL_FIELDS))

    def runtime(self) -> Any:
        """The torch runtime's model of these weights (built once)."""
        cached = self.__dict__.get("_runtime")
        if cached is None:
            import transformer  # torch is loaded only when the model runs

            cached = transformer.from_tensors(self.weights, self.metadata)
            object.__setattr__(self, "_runtime", cached)
        return cached


# tracr's fields that have no counterpart of that name here, and where to look instead
_RUN = (
    "ids, _ = model.runtime().encode([tokens]) (the tokens without BOS), then "
    "model.runtime().run_with_cache(ids),"
)
_OUTPUT_FIELDS = {
    name: f"{_RUN} gives the residual stream at every layer under TransformerLens hook names"
    for name in (
        "unembedded",
        "layer_outputs",
        "residuals",
        "attn_logits",
        "transformer_output",
        "input_embeddings",
    )
}
_MODEL_FIELDS = {
    "params": "model.weights holds the weights (numpy, under TransformerLens names)",
    "model_config": "model.config holds the shapes (a dict, TransformerLens's names)",
    "forward": "model.runtime() is the torch model: .run([tokens]), .run_with_cache(ids)",
    "get_compiled_model": "model.runtime() is the torch model: .run([tokens]), .run_with_cache(ids)",
    "input_encoder": "model.runtime().encode([tokens]) gives (ids, lengths), the BOS added",
    "output_encoder": "model.apply(...).decoded, or model.runtime().to_values(codes, lengths)",
}


def _missing(owner: object, name: str, fields: dict[str, str]) -> str:
    """AttributeError's message, Python's; for a field of tracr's, where its counterpart is."""
    said = f"{type(owner).__name__!r} object has no attribute {name!r}"
    return said if name not in fields else f"{said} (tracr's; here: {fields[name]})"


def _check_body(runtime: Any, body: list[Any], bos: str, pad: str) -> None:
    """The runtime's checks of `apply`'s tokens, said in positions of the list `apply` was given
    (the BOS token at 0; the runtime would count from the first token after it)."""
    from transformer.errors import ModelInputError
    from transformer.vocab import show_token

    if len(body) > runtime.max_len:
        raise ModelInputError(
            f"apply was given {len(body)} tokens after the BOS token; this model was compiled for "
            f"at most {runtime.max_len} (max_seq_len)"
        )
    for position, token in enumerate(body, start=1):
        if runtime.vocab.id_of(token) is None:
            where = "the BOS token" if token == bos else "a PAD token" if token == pad else "token"
            raise ModelInputError(
                f"{where} {show_token(token)} at position {position} of apply's tokens (the BOS "
                f"token at 0) is not in the model's vocabulary {runtime.vocab.describe()}"
                + ("; PAD tokens may only end the input" if token == pad else "")
            )


def compile_rasp_to_model(
    program: RASPExpr,
    vocab: AbstractSet[Any] | Sequence[Any],
    max_seq_len: int,
    causal: bool = False,
    compiler_bos: str = COMPILER_BOS,
    compiler_pad: str = COMPILER_PAD,
    mlp_exactness: int = 100,
) -> TracrModel:
    """Compile a rasp.tracr program for inputs over `vocab` of length 1..max_seq_len (tracr's
    signature; `mlp_exactness` is accepted and unused). Raises `rasp.errors.CompileError`, with
    every reason located in the program, when the program cannot be compiled exactly, and
    ValueError, as tracr does, when `vocab` holds `compiler_bos` or `compiler_pad`."""
    del mlp_exactness
    # As tracr refuses them: `apply` strips a leading BOS token and trailing PAD tokens, so a
    # vocabulary token spelled like either would be read as one, silently changing the input.
    if compiler_bos in vocab:
        raise ValueError(
            f"Compiler BOS token must not be present in the vocab. Found {compiler_bos!r} in {vocab}"
        )
    if compiler_pad in vocab:
        raise ValueError(
            f"Compiler PAD token must not be present in the vocab. Found {compiler_pad!r} in {vocab}"
        )
    # (compile_sop says what else `program` is: a function, or DeepMind tracr's own s-op)
    name = explicit_name(program) if isinstance(program, RASPExpr) else None
    compiled = compile_sop(program, vocab, max_seq_len, name=name, causal=causal)
    fields = {f.name: getattr(compiled, f.name) for f in dataclasses.fields(compiled) if f.init}
    return TracrModel(**fields, compiler_bos=compiler_bos, compiler_pad=compiler_pad)
