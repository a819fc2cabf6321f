"""Compile every kernel of the core once into numba's cache: ``python -m
pkm_dynamics.core.precompile`` (``make setup`` runs it after installing the package; see
:func:`.robot_warmup.main`)."""
import sys

from .robot_warmup import main

if __name__ == "__main__":
    sys.exit(main())
