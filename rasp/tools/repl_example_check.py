"""The REPL's definition-time check: each new s-op and selector evaluated on its running example.

As the original RASP REPL, a name whose value fails on the running example (`hello` for an s-op,
its selector example for a selector) is reported and not bound. `ExampleCheck` does the evaluating
and keeps each node's value on the examples in use, so that a loop that grows an s-op statement by
statement checks each step in one step (the original memoises each node's last input).
"""

from __future__ import annotations

from typing import Any

from rasp.display import ExampleSettings, example_text, example_tokens
from rasp.errors import RaspError, RaspInputError
from rasp.results import StatementResult
from rasp.sops import Evaluator, Selector, SOp
from rasp.tools.repl_values import nodes_in

# the hint a failure on the running example is given starts so (`repl_unbound` reads it)
ON_EXAMPLE = "this fails on the running example"


class ExampleCheck:
    """Evaluates a statement's new values on the running examples, remembering the last two."""

    def __init__(self) -> None:
        self._evaluators: list[tuple[list[Any], Evaluator]] = []  # see evaluate

    def check(self, result: StatementResult, settings: ExampleSettings) -> None:
        """Evaluate every new s-op and selector (in a list or dict too: the display shows them) on
        its running example; a failure raises, located at the statement."""
        for value in nodes_in(result.values):
            example = settings.seq_example if isinstance(value, SOp) else settings.sel_example
            try:
                self.evaluate(value, example)
            except RaspError as err:
                if isinstance(err, RaspInputError):
                    # The running example is the input it cannot read: say so, at this statement.
                    err.hint, err.span = None, None
                unbound = (
                    f"{ON_EXAMPLE} {example_text(example)}, so it was not "
                    "bound; `set example ...` to test it on another input"
                )
                if err.hint is None:
                    err.hint = unbound
                elif unbound not in err.hint:  # the error's own hint, then this one
                    err.hint = f"{err.hint}\nhint: {unbound}"
                raise err.with_span(result.span) from None

    def evaluate(self, node: SOp | Selector, example: Any) -> Any:
        """`node` on `example`, with one `Evaluator` (its memo of every node's value) per
        example in use."""
        tokens = example_tokens(example)
        key = [(type(t), t) for t in tokens]
        for known, evaluator in self._evaluators:
            if known == key:
                break
        else:
            evaluator = Evaluator(tokens)
            self._evaluators = [(key, evaluator), *self._evaluators[:1]]  # the two examples
        return evaluator.value(node)
