"""The steps the model commands share (`rasp.tools.model_commands`, `rasp.tools.verify_command`,
the REPL's `rasp.tools.repl_compiled`): usage errors, the runtime's errors as `RaspError`s,
loading a program's s-op or a model file, compiling, and naming the compiled graph's nodes.

Each imports the compiler or torch only when called. The commands look these up on this module
when they run (`steps.compile_sop(...)`), so a test may replace one here.
"""

from __future__ import annotations

import copy
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rasp.errors import ErrorKind, RaspError, Source
from rasp.text_width import printable
from rasp.tools.console import Console
from rasp.tools.pyprogram import is_python_target, python_program


def usage_error(command: str, message: str) -> int:
    print(f"usage: rasp {command} ...\nrasp {command}: error: {message}", file=sys.stderr)
    return 2


@contextmanager
def runtime_errors(what: str) -> Iterator[None]:
    """The runtime's own error types (it cannot import `rasp`) as one-line `RaspError`s."""
    import transformer

    try:
        yield
    except transformer.ModelFormatError as err:
        raise RaspError(str(err), kind=ErrorKind.IO) from None
    except transformer.ModelInputError as err:
        from rasp.tools.model_file import ModelInputRefused

        raise ModelInputRefused.of(what, err) from None
    except transformer.ModelOutputError as err:
        raise RaspError(
            f"{what}: {err} (its weights are broken; recompile the program)", kind=ErrorKind.IO
        ) from None


def check_device(device: str) -> None:
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise RaspError(
            "--device cuda: no CUDA device is available here",
            hint="use --device cpu",
            kind=ErrorKind.IO,
        )


def load_model(path: str | Path, device: str, command: str, console: Console | None = None) -> Any:
    """Check the file (one clear line if it is bad), then load it with the torch runtime; warn on
    `console` where its tensors differ from the digests its compiler recorded."""
    with (console or Console(quiet=True)).stage("loading torch"):  # (seconds, said so)
        import transformer
    from rasp.tools.model_file import read_model_file
    from transformer.digests import EditedWeightsWarning, edited_text

    checked = read_model_file(path, command)
    check_device(device)
    with runtime_errors(str(path)), warnings.catch_warnings():
        warnings.simplefilter("ignore", EditedWeightsWarning)  # said once, on the console
        model = transformer.load(str(path), device)
    if (checked.edited or checked.edited_fields) and console is not None:
        console.warn(edited_text(str(path), checked.edited, checked.edited_fields))
    return model


def program_sop(
    file: str | Source,
    name: str | None,
    console: Console | None = None,
    model_output: tuple[str, str] | None = None,
) -> tuple[Any, str, Source]:
    """The s-op to compile from FILE (`-`: standard input; a Source: that text, such as the
    program a model records): (sop, its name, the source). `model_output`: (model file, its
    output's name), the s-op to take when `name` is None."""
    sop, name, source, _ = program_sops(file, name, console, model_output)
    return sop, name, source


def program_sops(
    file: str | Source,
    name: str | None,
    console: Console | None = None,
    model_output: tuple[str, str] | None = None,
) -> tuple[Any, str, Source, Any]:
    """`program_sop`, and the program's s-op of the model's output's name where `name` is
    another one (`verify --model M --name`): the graph the model was compiled from, whose
    variables its residual stream holds. None where the program does not define it as an s-op,
    or is a Python program (it would run a second time)."""
    from rasp.sops import SOp
    from rasp.tools.arguments import load_program, run_source, select_output

    if isinstance(file, Source):
        source = file
        interp = run_source(source, console or Console())
    elif is_python_target(file):
        return (*python_program(file, name), None)
    else:
        interp, source = load_program(file, console)
    if name is None and model_output is not None:
        model, name = model_output
        if name not in set(interp.names()):
            raise RaspError(
                printable(f"{model} computes `{name}`, which {source.name} does not define"),
                hint=f"verify {model} against the program it was compiled from, or pass --name "
                "with the s-op of this program that computes it",
                kind=ErrorKind.NAME,
            )
    sop = select_output(interp, name, source.name, source.text)
    name = name or interp.last_assigned
    other = None
    if model_output is not None and model_output[1] != name:
        output = model_output[1]
        value = interp.get(output) if output in set(interp.names()) else None
        other = _located(value, output, interp) if isinstance(value, SOp) else None
    return _located(sop, name, interp), name, source, other


def _located(sop: Any, name: str, interp: Any) -> Any:
    """`sop` as the program binds `name` to it: located and named there."""
    assigned = interp.assigned_at(name)
    if sop.span is None and assigned is not None:
        # A built-in (`z = length;`) has no place in the program: a copy located where the program
        # names it, so that a refusal of it (`--causal`: length reads every position) points there.
        sop = copy.copy(sop)
        sop.span = assigned
    if getattr(sop, "name", None) is None and name is not None:
        # an expression statement's value, bound to `out` but not named by it: its residual
        # group is the output's name, not a generated `_aggregate_1`
        sop = copy.copy(sop)
        sop.name = name
    return sop


def recorded_program(model_path: str, meta: dict[str, Any]) -> Source:
    """The RASP program a model file records (`rasp compile` stores its text), named after
    the file it was read from and the model; a program it does not record, or a Python one
    (which a model file never gets to run), is a located refusal."""
    program = meta.get("program") or {}
    text, file = program.get("source"), program.get("file")
    if text is None:
        raise RaspError(
            f"{model_path} records no program to verify it against",
            hint=f"name the program: `rasp verify PROGRAM.rasp --model {model_path}`",
            kind=ErrorKind.IO,
        )
    if file is not None and Path(file.split(":")[0]).suffix == ".py":
        output = (meta.get("output") or {}).get("name") or "NAME"
        # an unmodified tracr program loads only with --tracr-compat: the hint's command says so
        compat = " --tracr-compat" if re.search(r"^\s*(from|import)\s+tracr\b", text, re.M) else ""
        raise RaspError(
            f"{model_path} was compiled from the Python program {file}, which rasp-forge does "
            "not run from a model file",
            hint=f"loading a .py file runs it; if you trust it: `rasp verify {file}:{output}"
            f"{compat} --model {model_path}`",
            kind=ErrorKind.IO,
        )
    # its loads look where they did when it was compiled: in its file's directory first
    loads_from = str(Path(file).parent) if file is not None and not file.startswith("<") else None
    # the file names itself: escaped, as `rasp show` writes it (the name heads every message)
    shown = printable(file) if file is not None else "the program"
    return Source(f"{shown} (recorded in {model_path})", text, loads_from)


def compile_sop(
    sop: Any,
    name: str,
    source: Source,
    vocab: Sequence[Any],
    max_len: int,
    causal: bool = False,
    console: Console | None = None,
    max_params: int | None = None,
    head_masks: bool = True,
) -> Any:
    import compiler
    from compiler.budget import DEFAULT_MAX_PARAMS

    # Refuses (CompileError, located) any model the certifier cannot prove, and any model
    # predicted to exceed max_params before building it.
    with (console or Console(quiet=True)).progress() as progress:
        return compiler.compile_sop(
            sop,
            list(vocab),
            max_len,
            name=name,
            source=source,
            causal=causal,
            head_masks=head_masks,
            progress=progress,
            max_params=max_params or DEFAULT_MAX_PARAMS,
        )


def in_memory_model(compiled: Any, device: str = "cpu") -> Any:
    """The torch runtime's model of a freshly compiled one, without writing a file (the same checks
    as loading its file)."""
    import transformer

    check_device(device)
    with runtime_errors("the compiled model"):
        return transformer.from_tensors(compiled.weights, compiled.metadata, device)


def residual_about(
    sop: Any, vocab: Sequence[Any], max_len: int, meta: dict[str, Any]
) -> Callable[[str], str | None]:
    """What a message says of each residual name of the model compiled from `sop` that a
    `def`'s call named or made (rasp.tools.diagnosis.about_names), the graph built at the first
    call: compile's success line names one block, of a model that may have taken minutes."""
    from rasp.tools.diagnosis import about_names

    found: list[Callable[[str], str | None]] = []

    def told(name: str) -> str | None:
        if not found:
            found.append(about_names(nodes_by_residual_name(sop, vocab, max_len, meta)))
        return found[0](name)

    return told


def nodes_by_residual_name(
    sop: Any,
    vocab: Sequence[Any] | None = None,
    max_len: int | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Each s-op node under the name the compiler gives it in the residual labels.

    The compiler's IR has one node per `rasp.sops.walk` node, in walk order, and names the unnamed ones
    `_<op>_<n>`; pairing the two lists recovers the node behind every label, generated names included.
    Given the model's `vocab` and `max_len`, the nodes are those of the graph the compiler compiled
    (`compiler.forms.prepare`: a counted mean is a count there, and the generated names that follow
    it are numbered differently); each computes what the program's node computes. The model's
    metadata `meta` says whether it was built with sums of whole numbers kept as means (and
    with the other forms' flags: counts as means, differences of means as votes).
    """
    from rasp.sops import walk
    from rasp.tools import verify as v

    try:
        from compiler.forms import prepare
        from compiler.graph import build_graph

        if vocab is not None and max_len is not None:
            weighted = not (meta or {}).get("sums_as_means", False)
            fractions = bool((meta or {}).get("fractions_as_means", False))
            votes = bool((meta or {}).get("votes_as_means", False))
            sop = prepare(
                sop, list(vocab), max_len, weighted=weighted, fractions=fractions, votes=votes
            )
        graph = build_graph(sop)
        if _earlier_names(meta, graph):
            from compiler.graph import names_before_def_stems

            with names_before_def_stems():  # a file compiled before 2026-12-06: its labels
                graph = build_graph(sop)
    except (ImportError, RaspError):
        return v.nodes_by_name(sop)
    walked = list(walk(sop))
    if len(walked) != len(graph.nodes):
        return v.nodes_by_name(sop)
    return {**v.nodes_by_name(sop), **{ir.name: node for ir, node in zip(graph.nodes, walked)}}


def _earlier_names(meta: dict[str, Any] | None, graph: Any) -> bool:
    """Whether the file's residual has generated labels (`_aggregate_1`) that `graph` has not,
    where `graph` names some after a def (`_f_aggregate_1`): a compiler before 2026-12-06's."""
    labels = {str(label).split(":")[0] for label in (meta or {}).get("residual") or ()}
    names = {node.name for node in graph.nodes}
    return any(n.startswith("_") and n not in names for n in labels) and any(
        node.place is not None and not node.named for node in graph.nodes
    )
