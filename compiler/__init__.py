"""Compile RASP programs (as `rasp.sops` graphs) into exact transformer weights.

Stages (see `compiler.driver.compile_sop`): graph -> values -> encode -> schedule -> layout -> assemble
-> certify (no model leaves the compiler without a certificate that every decision is exact).
"""

from compiler.certify import Certificate, certify, recheck
from compiler.driver import compile_sop
from compiler.model import CompiledModel

__all__ = [
    "Certificate",
    "CompiledModel",
    "certify",
    "compile_sop",
    "recheck",
]
