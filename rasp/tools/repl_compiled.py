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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rasp.display import ExampleSettings, example_tokens
from rasp.errors import Diagnostic, RaspError, RaspNameError, Source
from rasp.residual_labels import text_of
from rasp.sops import Evaluator, Node, Selector, SeqValue, SOp
from rasp.text_width import display_width, ljust
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
from rasp.tools.residual_types import NoValue
from rasp.values import kind_name
from rasp.wording import with_article

if TYPE_CHECKING:
    from rasp.interpreter import Interpreter
    from rasp.tools.residual_helpers import HelperDim
    from rasp.tools.residuals import Checkpoint


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
        return "\n".join([done, *warnings])

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
        if operations:
            lines += operations_table(operations)
            note = output_read_note(meta, operations)
            lines += [] if note is None else [note]
        else:
            lines.append("no heads or MLPs: the embedding computes the output")
        return "\n".join(line.rstrip() for line in lines)

    # -- :residual ------------------------------------------------------------------------------

    def _residual(self, rest: str, session: ReplSession) -> str:
        from rasp.tools.diagnosis import shown_name
        from rasp.tools.model_steps import runtime_errors
        from rasp.tools.residuals import Stray
        from rasp.tools.verify import NON_FINITE, decode_checkpoints, operation_of, same_value
        from rasp.tools.verify_text import show_tokens

        state = self._state()
        tokens = self._input(rest, session, ":residual")
        with runtime_errors(f"`{state.name}`"):
            points = decode_checkpoints(state.model, tokens, state.nodes)
            try:
                got: list[Any] = list(state.model.run([tokens])[0])
            except ArithmeticError:  # a broken model computed NaN or infinity
                got = [NON_FINITE] * len(tokens)
        failure = None
        try:
            want = list(_values(state.sop, tokens))
            output_text = _values_text(want)
            out_wrong = len(got) != len(want) or not all(map(same_value, got, want))
        except RaspError as err:
            failure, out_wrong = err.message, False
            output_text = f"(the interpreter fails: {failure})"
        rows: list[Row] = [("  ", "variable", "model (decoded residual stream)", "interpreter")]
        rows += _checkpoint_rows(points, state.meta)
        output_name = str(state.meta["output"]["name"])
        rows.append("decoded output")
        rows.append(("X " if out_wrong else "  ", output_name, _values_text(got), output_text))
        lines = [
            f"{state.name}({show_tokens(tokens)}) in the compiled model and in the interpreter",
            *_table(rows),
            "(* = completed by this sublayer, X = they disagree, ? = no value, - = not evaluated)",
        ]
        first = _first_divergence(points)
        if first is not None:
            point, var, pos = first
            name = var.group if isinstance(var, Stray) else var.name
            operation = operation_of(state.meta, name)
            what = f" = {operation}" if operation and operation != name else ""
            # (with where a def's call made it: `got_2` (got in pick, called at ...))
            shown = f"`{name}`" + shown_name(name, state.nodes).removeprefix(name)
            if isinstance(var, Stray) and var.written_at is None:
                where = f"the `{var.label}` dim"
            elif isinstance(var, Stray):
                where = f"variable {shown}{what} before it is written"
            else:
                where = f"variable {shown}{what}"
            at = "at BOS" if pos is None else f"position {pos}"
            lines.append(f"first divergence: {where}, {point.where}, {at}")
        elif failure is not None:
            lines.append("the interpreter fails on this input, so the output is not defined here")
        elif out_wrong:
            lines.append("every variable agrees; the output differs (the unembedding)")
        else:
            lines.append("the model agrees with the interpreter everywhere on this input")
        return "\n".join(line.rstrip() for line in lines)

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
        return format_success(report, what) if report.ok else format_failure(report, what)

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
            return "\n".join(write_pictures(trace, png, state.meta, weights, dot))
        except OSError as exc:
            raise Refusal(f"cannot write {png}: {exc.strerror or exc}") from None


# ------------------------------------------------------------------------------------------------
# Arguments


def _sop_named(session: ReplSession, name: str) -> SOp:
    try:  # (an unknown name is the interpreter's `Undefined variable: NAME`, with a hint)
        value = session.interpreter.get(name)
    except RaspNameError as err:
        raise name_hint(err, name, session.interpreter.search_dirs) from None
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


def _values(sop: SOp, tokens: list[Any]) -> tuple[Any, ...]:
    value = Evaluator(tokens).value(sop)
    return tuple(value.values) if isinstance(value, SeqValue) else ()


def _value_text(value: Any, quoted: bool = False) -> str:
    if value is None or isinstance(value, NoValue):  # no column hot; the interpreter's None
        return "?"
    if quoted and isinstance(value, str):
        return text_of(value, quoted)
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _values_text(values: Sequence[Any], quoted: bool = False) -> str:
    """A row's values; `quoted`: a variable whose labels write strings as JSON, the interpreter's
    strings so too (`"1"` beside the model's `1` and `"1"`)."""
    return "[" + ", ".join(_value_text(v, quoted) for v in values) + "]"


def _tokens_text(tokens: Any) -> str:
    from rasp.tools.verify_text import show_tokens

    return show_tokens(list(tokens)) if tokens else json.dumps([])


def _operations_at(meta: Mapping[str, Any], point: Checkpoint) -> str:
    """` (head 0: length)`: what a sublayer computes, for its heading; "" for the embedding."""
    if point.layer is None:
        return ""
    ops = meta["layers"][point.layer].get(point.sublayer, [])
    if not ops:
        return " (no operation)"
    names = [
        f"head {op.get('head', 0)}: {op.get('name')}"
        if point.sublayer == "attn"
        else f"mlp: {op.get('name')}"
        for op in ops
    ]
    return " (" + "; ".join(names) + ")"


Row = tuple[str, str, str, str] | str  # (mark, variable, model, interpreter) or a heading


def _checkpoint_rows(points: list[Checkpoint], meta: Mapping[str, Any]) -> list[Row]:
    """A heading per checkpoint and a row per variable; a checkpoint where no decoded variable is
    new or changed is one line."""
    rows: list[Row] = []
    previous: dict[str, tuple[Any, ...]] | None = None
    for point in points:
        now = {v.name: v.model for v in point.variables}
        heading = point.where + _operations_at(meta, point)
        if previous is not None and now == previous and not any(v.new for v in point.variables):
            if not point.helpers:
                rows.append(f"{heading}: no decoded variable is new or changed")
                continue
            # a head that writes only a helper (a width's `n.frac`) did something: show it
            rows.append(f"{heading}: only helper dims are new (a later sublayer reads them)")
            rows += [_helper_row(helper) for helper in point.helpers]
            continue
        previous = now
        rows.append(heading if point.variables else f"{heading}: no decoded variable")
        for var in point.variables:
            mark = ("X" if var.wrong else " ") + ("*" if var.new else " ")
            theirs = "-" if var.interpreter is None else _values_text(var.interpreter, var.quoted)
            rows.append((mark, var.name, _values_text(var.model, var.quoted), theirs))
        for stray in point.strays:  # a dim written where the model holds a fixed value
            until = "" if stray.written_at is None else f" until {stray.written_at}"
            at = "BOS" if stray.position is None else f"position {stray.position}"
            model = f"{stray.value:.6g} at {at}"
            rows.append(("X ", stray.label, model, f"(dim holds {stray.expected:g}{until})"))
        # what a head wrote beside its neighbours' variables (`hist.frac` beside `length`)
        rows += [_helper_row(helper) for helper in point.helpers]
    return rows


def _helper_row(helper: HelperDim) -> Row:
    """`hist.frac  [1/3, 1/3, 1/2]  1/(hist + 1) = [1/3, 1/3, 1/2]`: a width's frac as the
    fraction it is, beside the one the interpreter's width gives."""
    from rasp.tools.residual_helpers import fraction_text

    def text(values: Sequence[float]) -> str:
        shown = fraction_text if helper.is_fraction else (lambda v: f"{v:.6g}")
        return "[" + ", ".join(map(shown, values)) + "]"

    theirs = "-" if helper.expected is None else text(helper.expected)
    if helper.meaning:
        theirs = f"{helper.meaning} = {theirs}" if helper.expected else f"{helper.meaning}, -"
    mark = "X " if helper.wrong else "  "
    return (mark, helper.label, text(helper.values), theirs)


def _table(rows: list[Row]) -> list[str]:
    """Headings as they are; (mark, name, model, interpreter) rows in aligned columns (by
    terminal columns: a value `[日, 本]` is 8 characters wide but takes 10 columns)."""
    cells = [row for row in rows if isinstance(row, tuple)]
    name_w = max((display_width(r[1]) for r in cells), default=0)
    model_w = max((display_width(r[2]) for r in cells), default=0)
    return [
        row
        if isinstance(row, str)
        else f"  {row[0]} {ljust(row[1], name_w)}  {ljust(row[2], model_w)}  {row[3]}"
        for row in rows
    ]


def _first_divergence(points: list[Checkpoint]) -> tuple[Checkpoint, Any, int] | None:
    """The first wrong variable, else stray dim (a `Stray`), as `rasp verify` finds it."""
    for point in points:
        for var in point.variables:
            if var.wrong:
                return point, var, var.wrong[0]
        if point.strays:
            stray = min(point.strays, key=lambda s: -1 if s.position is None else s.position)
            return point, stray, stray.position
    return None
