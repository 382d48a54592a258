"""Compile RASP programs (as `rasp.sops` graphs) into exact transformer weights."""
