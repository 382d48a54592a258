"""The input `:residual` and `:draw` run the compiled model on: INPUT as typed, else the running
example; one the model cannot take is refused before it runs, with the hint `rasp run --model`
gives for the same mistake (`rasp.tools.input_hints`), written as the REPL's INPUT
(`:residual ab`, `:residual ["the","cat"]`).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from rasp.display import ExampleSettings, example_text, example_tokens
from rasp.errors import RaspError
from rasp.tools.input_hints import Spell
from rasp.tools.repl_arguments import Refusal, parse_tokens_text


class CompiledModel(Protocol):
    """What is read of the session's compiled model (`repl_compiled.CompiledState`)."""

    name: str
    vocab: tuple[Any, ...]
    model: Any  # transformer.CompiledTransformer


def model_input(
    state: CompiledModel, rest: str, settings: ExampleSettings, command: str
) -> list[Any]:
    """The tokens of INPUT `rest` (the running example where it is empty), refused in words
    where the model cannot take them."""
    tokens = parse_tokens_text(rest, "INPUT") if rest else example_tokens(settings.seq_example)
    if not tokens:
        raise Refusal("INPUT is empty; give at least one token")
    # only characters (`:residual 21`, an example "21") get this refusal: a JSON list of
    # strings was written as the user meant it, and the runtime's hint says what to change
    as_characters = (
        not rest.lstrip().startswith("[") if rest else isinstance(settings.seq_example, str)
    )
    if (
        as_characters
        and all(isinstance(t, str) for t in tokens)
        and not any(isinstance(v, str) for v in state.vocab)
    ):
        # `:residual 21` reads the characters "2" and "1": say how to write the numbers
        as_json = {json.dumps(v) for v in state.vocab}
        if all(t in as_json for t in tokens):
            raise Refusal(
                f"the model's tokens are not strings: write the input as a list, "
                f"{command} [{', '.join(tokens)}]"
            )
    if rest:
        _check_typed(state, tokens, command)
    else:
        _check_example(state, tokens, settings, command)
    return tokens


def repl_spelling(command: str) -> Spell:
    """How `command` takes an input: its characters bare (`:residual ab`), in a RASP string
    where bare ones would read otherwise (a space at an end, a leading `[`), or a JSON list."""

    def spell(text: str, characters: bool) -> str:
        if characters and '"' in text:  # (a RASP string cannot hold one)
            text = json.dumps(list(text), ensure_ascii=False)
        elif characters and (not text or text != text.strip() or text.startswith("[")):
            text = f'"{text}"'
        elif not characters:  # (spaced as the REPL prints a list: `[1, 2]`)
            text = json.dumps(json.loads(text), ensure_ascii=False)
        return f"{command} {text}"

    return spell


def _check_typed(state: CompiledModel, tokens: list[Any], command: str) -> None:
    """A typed INPUT the model refuses (`:residual ABC` for "abc"), with what to write instead:
    it said only that "A" is not in the vocabulary."""
    import transformer
    from rasp.tools.model_file import ModelInputRefused

    try:
        state.model.encode([tokens])
    except transformer.ModelInputError as err:
        refused = ModelInputRefused.of(f"`{state.name}`", err, tuple(state.vocab))
        hint = refused.input_hint(tokens, repl_spelling(command)) or refused.hint
        raise ModelInputRefused(refused.what, refused.reason, refused.vocab, hint) from None


def _check_example(
    state: CompiledModel, tokens: list[Any], settings: ExampleSettings, command: str
) -> None:
    """The running example, which no one typed here, named where the model cannot take it
    (it said `cannot run r on this input: the input has 5 tokens`, of an input not shown)."""
    import transformer

    try:
        state.model.encode([tokens])
    except transformer.ModelInputError as err:
        from rasp.tools.input_hints import input_hint

        shown = example_text(settings.seq_example)
        # what to write (`set example "abc"` for "ABC"), else the runtime's own hint, on a
        # `hint:` line of its own, as for a typed INPUT
        own = input_hint(tokens, state.vocab, _example_spelling) or getattr(err, "hint", "")
        reason = getattr(err, "reason", str(err))
        ours = f"give {command} an INPUT, or set example to one the model takes"
        raise RaspError(
            f"cannot run `{state.name}` on the running example {shown}: {reason}",
            hint=f"{own}\nhint: {ours}" if own else ours,
        ) from None


def _example_spelling(text: str, characters: bool) -> str:
    """How `set example` takes an input: a RASP string, or a list."""
    if characters and '"' not in text:
        return f'set example "{text}"'
    return f"set example {json.dumps(list(text) if characters else json.loads(text))}"
