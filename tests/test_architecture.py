"""The import rules of docs/architecture.md, enforced on the real import graph (grimp).

Layers, lowest first:  rasp core  <-  compiler  <-  rasp.tools ;  transformer stands alone and only
rasp.tools loads it. Every import counts: module level, inside functions, and under TYPE_CHECKING.
Each rule is a function of the graph, so the tests below can also show that a crossing edge or a
cycle added to the graph is caught.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import grimp
import pytest

PACKAGES = ("rasp", "compiler", "transformer")
TOOLS = "rasp.tools"
ENTRY_POINTS = {"rasp.__main__"}  # `python -m rasp` starts the CLI; nothing imports it


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, include_external_packages=True)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return _graph()


def _layer(module: str) -> str:
    if module == TOOLS or module.startswith(TOOLS + "."):
        return "tools"
    top = module.split(".")[0]
    if top == "rasp":
        return "entry" if module in ENTRY_POINTS else "core"
    return top  # "compiler", "transformer" or an external package


# What each layer may import (besides itself and external packages listed below).
ALLOWED = {
    "core": {"core"},
    "compiler": {"compiler", "core"},
    "transformer": {"transformer"},
    "tools": {"tools", "core", "compiler", "transformer"},
    "entry": {"tools", "core"},
}
# External packages each layer may import; anything else (a new dependency) must be added here.
EXTERNAL = {
    "core": {"lark", "numpy"},
    "compiler": {"numpy", "safetensors"},  # the compiler writes the weights file
    "transformer": {"torch", "numpy", "safetensors"},
}


def layer_violations(graph: grimp.ImportGraph) -> list[str]:
    """Every direct import that goes against ALLOWED / EXTERNAL, as 'importer -> imported'."""
    ours = {_layer(p) for p in PACKAGES} | {"core", "tools", "entry"}
    found = []
    for importer in sorted(graph.modules):
        src = _layer(importer)
        if src not in ALLOWED:
            continue  # an external package's own imports are not ours to police
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            dst = _layer(imported)
            if dst in ours:
                if dst not in ALLOWED[src]:
                    found.append(f"{importer} ({src}) -> {imported} ({dst})")
            elif dst in sys.stdlib_module_names:
                continue
            elif src in EXTERNAL and dst not in EXTERNAL[src]:
                found.append(f"{importer} ({src}) -> external {imported}")
    return found


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    modules = sorted(m for m in graph.modules if _layer(m) in ALLOWED)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def successors(module: str) -> Iterable[str]:
        return sorted(
            m for m in graph.find_modules_directly_imported_by(module) if _layer(m) in ALLOWED
        )

    for root in modules:
        if root in index:
            continue
        work = [(root, iter(successors(root)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors(child))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_layers_are_crossed_only_downwards(graph: grimp.ImportGraph) -> None:
    assert layer_violations(graph) == []


def test_no_module_imports_one_that_imports_it_back(graph: grimp.ImportGraph) -> None:
    assert import_cycles(graph) == []


def test_the_tools_are_the_only_bridge(graph: grimp.ImportGraph) -> None:
    # Spelled out for the reader: the core never reaches the compiler or the runtime, even through
    # a chain of imports, and the compiler never reaches the runtime.
    core = [m for m in graph.modules if _layer(m) == "core"]
    far = [m for m in graph.modules if _layer(m) in ("compiler", "transformer", "tools")]
    for module in core:
        for target in far:
            assert not graph.chain_exists(module, target), (module, target)
    assert not graph.chain_exists("compiler", "transformer", as_packages=True)
    assert not graph.chain_exists("transformer", "rasp", as_packages=True)


def test_a_crossing_import_is_caught() -> None:
    graph = _graph()
    graph.add_import(importer="rasp.sops", imported="compiler.driver")
    assert layer_violations(graph) == ["rasp.sops (core) -> compiler.driver (compiler)"]
    graph.add_import(importer="compiler.driver", imported="rasp.tools.cli")
    assert "compiler.driver (compiler) -> rasp.tools.cli (tools)" in layer_violations(graph)


def test_a_new_dependency_of_the_core_is_caught() -> None:
    graph = _graph()
    graph.add_module("torch", is_squashed=True) if "torch" not in graph.modules else None
    graph.add_import(importer="rasp.interpreter", imported="torch")
    assert layer_violations(graph) == ["rasp.interpreter (core) -> external torch"]


def test_a_cycle_is_caught() -> None:
    graph = _graph()
    graph.add_import(importer="rasp.tools.inspect", imported="rasp.tools.cli")
    cycles = import_cycles(graph)
    assert any({"rasp.tools.inspect", "rasp.tools.cli"} <= set(cycle) for cycle in cycles)
