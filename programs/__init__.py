"""The RASP program library shipped with rasp-forge (`.rasp` files beside this module)."""
