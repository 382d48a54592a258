"""Compile RASP programs (as `rasp.sops` graphs) into exact transformer weights.

Stages (see `compiler.driver.compile_sop`): graph -> values -> encode -> schedule -> layout -> assemble.
"""

from compiler.driver import compile_sop
from compiler.model import CompiledModel, ForwardResult, ModelConfig

__all__ = ["CompiledModel", "ForwardResult", "ModelConfig", "compile_sop"]
