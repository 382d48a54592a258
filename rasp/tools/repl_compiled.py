"""The REPL's compiled view: `:compile`, `:layers`, `:residual`, `:verify` and `:draw`.

`:compile NAME [VOCAB] [MAX_LEN] [MAX_PARAMS]` compiles an s-op of the session (the path `rasp
compile` takes) and keeps the model in memory as the session's current compiled model; the other commands look at
it: its schedule (`:layers`), every variable decoded from the residual stream after every sublayer
beside the interpreter's value (`:residual`), a comparison with the interpreter on many inputs
(`:verify`), and a picture (`:draw`). docs/inspect.md describes each command.

The compiler, torch and matplotlib are imported only when a command needs them, so the language
part of the REPL works without them; a missing package is one error line, never a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rasp.display import ExampleSettings, example_tokens
from rasp.errors import Diagnostic, RaspError, RaspNameError, Source
from rasp.sops import Node, Selector, SOp
from rasp.tools.console import not_installed
from rasp.tools.output_files import no_directory
from rasp.tools.repl_arguments import (
    Refusal,
    compile_arguments,
    compile_options,
    example_vocab,
    name_hint,
    no_arguments,
    non_negative,
    parameter_count,
    positive,
    vocab_tokens,
)
from rasp.tools.repl_wrap import wrap_line, wrap_report
from rasp.values import kind_name
from rasp.wording import with_article

if TYPE_CHECKING:
    from rasp.interpreter import Interpreter


class ReplSession(Protocol):
    """What the compiled view reads from the session (`rasp.tools.repl.ReplSession`, which imports
    this module: a protocol here keeps the import one-way)."""

    interpreter: Interpreter
    settings: ExampleSettings
    precedence_warnings: list[Diagnostic]  # rasp.lint's so far: a constant output's likely cause
    width: int | None  # the columns a message is wrapped to (None: one line each)
    quiet: bool  # `rasp repl -q`: no warnings, notes or progress bars

    @property
    def source_text(self) -> str: ...


COMMANDS = (":compile", ":layers", ":residual", ":verify", ":draw")
MIN_MAX_LEN = 8  # :compile's default MAX_LEN is max(MIN_MAX_LEN, length of the running example)
VERIFY_BUDGET = 2_000  # :verify checks every input up to the longest length within this many
VERIFY_SAMPLES = 200  # then this many seeded random longer inputs
VERIFY_SEED = 0
NO_MODEL = "no compiled model; use :compile NAME first"
_DRAW_OUTPUT = re.compile(r"(?:^|\s)-o\s+(\S+)\s*$")


@dataclass(frozen=True)
class CompiledState:
    """The session's current compiled model and what it was compiled from."""

    name: str
    sop: SOp  # the s-op NAME was bound to when compiled (later rebinding does not change it)
    vocab: tuple[Any, ...]
    max_len: int
    model: Any  # transformer.CompiledTransformer
    nodes: Mapping[str, Node]  # residual variable name -> s-op node, fixed at compile time

    @property
    def meta(self) -> dict[str, Any]:
        return self.model.meta.raw  # type: ignore[no-any-return]


class CompiledView:
    """The colon commands of the compiled view; holds the current compiled model."""

    def __init__(self) -> None:
        self.current: CompiledState | None = None

    def command(self, word: str, rest: str, session: ReplSession) -> str:
        """Run `word` (one of COMMANDS) with its argument text; returns what the REPL prints."""
        handlers: dict[str, Callable[[str, ReplSession], str]] = {
            ":compile": self._compile,
            ":layers": self._layers,
            ":residual": self._residual,
            ":verify": self._verify,
            ":draw": self._draw,
        }
        width = session.width  # (every message is wrapped to it, a refusal's 200 characters too)
        try:
            printed = handlers[word](rest, session)
        except RaspError as err:
            return err.render(width=width)
        except ModuleNotFoundError as exc:
            return Diagnostic(not_installed(word, exc)).render(width=width)
        except MemoryError as exc:  # (a huge VOCAB: the size check predicts from MAX_LEN only)
            what = "VOCAB or MAX_LEN" if word == ":compile" else "input"
            ran_out = f"{word} ran out of memory ({exc or 'MemoryError'}); try a smaller {what}"
            return Diagnostic(ran_out).render(width=width)
        note = None if word == ":compile" or session.quiet else self._rebound_note(session)
        if note is None:
            return printed
        return f"{Diagnostic(note, severity='note').render(width=width)}\n{printed}"

    def _rebound_note(self, session: ReplSession) -> str | None:
        """A line saying the model is not of what its name means now (`reverse` rebound since
        `:compile reverse`), so that `:verify` after a redefinition is not read as verifying it."""
        state = self.current
        if state is None or session.interpreter.get(state.name) is state.sop:
            return None
        return (
            f"`{state.name}` has been rebound since it was compiled; this model is of its "
            f"earlier value (:compile {state.name} to compile the new one)"
        )

    def _state(self) -> CompiledState:
        if self.current is None:
            raise Refusal(NO_MODEL)
        return self.current

    # -- :compile -------------------------------------------------------------------------------

    def _compile(self, rest: str, session: ReplSession) -> str:
        name, vocab_text, max_text, params_text = compile_arguments(rest)
        sop = _sop_named(session, name)
        example = example_tokens(session.settings.seq_example)
        vocab = vocab_tokens(vocab_text) if vocab_text else example_vocab(example, name)
        max_len = positive(max_text, "MAX_LEN") if max_text else max(MIN_MAX_LEN, len(example))
        max_params = parameter_count(params_text, "MAX_PARAMS") if params_text else None

        from rasp.tools.console import Console
        from rasp.tools.inspect import heads_text
        from rasp.tools.model_steps import compile_sop, in_memory_model, nodes_by_residual_name

        source = Source("<repl>", session.source_text)
        # on a terminal, the compile's stage bars (and one while torch loads), as rasp compile
        # draws them: a class's first :compile was 8 s of nothing; piped, none (stderr no tty)
        console = Console(quiet=session.quiet)
        try:
            compiled = compile_sop(
                sop, name, source, vocab, max_len, console=console, max_params=max_params
            )
        except RaspError as err:  # a refusal names this command's arguments, not the CLI's options
            spelling = compile_options(name, vocab_text or _tokens_text(vocab), max_len)
            return err.render(options=spelling, width=session.width)
        with console.stage("loading torch"):
            model = in_memory_model(compiled, "cpu")
        nodes = nodes_by_residual_name(sop, vocab, max_len, compiled.metadata)
        self.current = CompiledState(name, sop, tuple(vocab), max_len, model, nodes)
        cfg = self.current.meta["config"]
        done = (
            f"compiled {name}: {heads_text(cfg)}, "
            f"d_model {cfg['d_model']}, {compiled.param_count():,} parameters "
            f"({compiled.nonzero_params():,} non-zero); vocab {_tokens_text(vocab)}"
            # defaulted, it may lack the program's tokens: `:compile depth` over "helo"
            + ("" if vocab_text else " (the running example's tokens)")
            + f", max_len {max_len}"
        )
        from rasp.tools.probe import probe_warnings

        warned = (
            []
            if session.quiet
            else probe_warnings(sop, vocab, max_len, name, session.precedence_warnings)
        )
        warnings = (Diagnostic(w, severity="warning").render(width=session.width) for w in warned)
        return "\n".join([wrap_report(done, session.width), *warnings])

    # -- :layers --------------------------------------------------------------------------------

    def _layers(self, rest: str, session: ReplSession) -> str:
        from rasp.tools.inspect import (
            layer_operations,
            operations_table,
            output_read_note,
            output_type_text,
            shape_text,
        )

        no_arguments(":layers", rest)
        state = self._state()
        meta = state.meta
        output = meta["output"]
        lines = [
            f"{state.name}: vocab {_tokens_text(state.vocab)}, max_len {state.max_len}; output "
            f"{output.get('name')} ({output.get('encoding')}, {output_type_text(output)})",
            f"shape: {shape_text(meta['config'])}",
        ]
        operations = layer_operations(meta)
        table: list[str] = []
        if operations:
            table = operations_table(operations)
            note = output_read_note(meta, operations)
            after = [] if note is None else [note]
        else:
            after = ["no heads or MLPs: the embedding computes the output"]
        width = session.width
        if width is not None:  # an operation's later lines under its column, if not too far in
            column = table[0].index("operation") if table else 0
            hang = column if column <= width // 2 else 4
            table = [part for line in table for part in wrap_line(line, width, hang)]
            lines, after = (
                [wrap_report(line, width) for line in lines],
                [wrap_report(line, width) for line in after],
            )
        return "\n".join(line.rstrip() for line in [*lines, *table, *after])

    # -- :residual ------------------------------------------------------------------------------

    def _residual(self, rest: str, session: ReplSession) -> str:
        from rasp.tools.repl_residual import residual_report

        state = self._state()
        return residual_report(state, self._input(rest, session, ":residual"), session.width)

    def _input(self, rest: str, session: ReplSession, command: str) -> list[Any]:
        from rasp.tools.repl_model_input import model_input

        return model_input(self._state(), rest, session.settings, command)

    # -- :verify --------------------------------------------------------------------------------

    def _verify(self, rest: str, session: ReplSession) -> str:
        state = self._state()  # (before torch loads: with no model, say so at once)
        import torch

        from rasp.tools import verify as v
        from rasp.tools.model_steps import runtime_errors
        from rasp.tools.verify_orders import check_model
        from rasp.tools.verify_text import format_failure, format_success

        k = (
            non_negative(rest, "K")
            if rest
            else v.default_exhaustive_len(len(state.vocab), state.max_len, VERIFY_BUDGET)
        )
        plan = v.plan_inputs(
            state.vocab, state.max_len, k, VERIFY_SAMPLES, VERIFY_SEED, program=state.sop
        )
        v.check_plan_size(plan, ":verify", None)  # refuse years, bar or no bar
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # tiny batches: threads only add overhead (see rasp verify)
        # on a terminal, a bar per stage as `rasp verify` draws them (the inputs, then the
        # evaluation orders): a :verify was seconds of silence; piped, none (stderr no tty)
        from rasp.tools.console import Console

        try:
            with Console(quiet=session.quiet).progress() as bars, runtime_errors(f"`{state.name}`"):
                progress = None if bars is None else partial(bars, "verifying")
                report = check_model(
                    state.sop, state.model, plan, nodes=state.nodes, progress=progress, stages=bars
                )
        finally:
            torch.set_num_threads(threads)
        what = f"`{state.name}`"
        text = format_success(report, what) if report.ok else format_failure(report, what)
        return wrap_report(text, session.width)

    # -- :draw ----------------------------------------------------------------------------------

    def _draw(self, rest: str, session: ReplSession) -> str:
        state = self._state()
        match = _DRAW_OUTPUT.search(rest)
        if match is None and re.search(r"(?:^|\s)-o(?:\s|$)", rest):
            raise Refusal(":draw INPUT -o FILE.png: -o takes one path, last (no spaces in it)")
        png = Path(match.group(1)) if match else None
        tokens = self._input(rest[: match.start()].strip() if match else rest, session, ":draw")
        if png is not None and png.suffix.lower() != ".png":
            raise Refusal(f"-o {png}: the picture is a PNG; give a name ending in .png")
        missing = None if png is None else no_directory(png)
        if missing is not None:
            raise Refusal(f"cannot write {png}: {missing}")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise Refusal(
                ":draw needs matplotlib, which is not installed (pip install 'rasp-forge[viz]')"
            ) from None
        from rasp.tools.draw import flow_stem, trace_model, write_pictures
        from rasp.tools.model_steps import runtime_errors

        with runtime_errors(f"`{state.name}`"):
            trace = trace_model(state.model, tokens)
        dot = None
        if png is None:  # like the original: comp_flows/NAME_INPUT.png and .dot (flow_stem)
            folder = Path("comp_flows")
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise Refusal(f"cannot write {folder}/: {exc.strerror or exc}") from None
            stem = flow_stem(state.name, tokens)
            png, dot = folder / f"{stem}.png", folder / f"{stem}.dot"
        weights = {
            name: tensor.detach().float().cpu().numpy()
            for name, tensor in state.model.model.state_dict().items()
        }
        try:
            return wrap_report(
                "\n".join(write_pictures(trace, png, state.meta, weights, dot)), session.width
            )
        except OSError as exc:
            raise Refusal(f"cannot write {png}: {exc.strerror or exc}") from None


# ------------------------------------------------------------------------------------------------
# Arguments


def _sop_named(session: ReplSession, name: str) -> SOp:
    try:  # (an unknown name is the interpreter's `Undefined variable: NAME`, with a hint)
        value = session.interpreter.get(name)
    except RaspNameError as err:
        explained = session.failed_names.explain(err)  # (its statement failed: say so)
        raise name_hint(explained, name, session.interpreter.search_dirs) from None
    if isinstance(value, Selector):
        raise Refusal(
            f"'{name}' is a selector, not an s-op; only s-ops compile "
            f"(aggregate it, or count it with selector_width({name}))"
        )
    if not isinstance(value, SOp):
        raise Refusal(
            f"'{name}' is {with_article(kind_name(value))}, not an s-op; only s-ops compile"
        )
    return value


# ------------------------------------------------------------------------------------------------
# Text


def _tokens_text(tokens: Any) -> str:
    from rasp.tools.verify_text import show_tokens

    return show_tokens(list(tokens)) if tokens else json.dumps([])
