"""The proof side's ground floor: what every family's ``proof.py`` builds on, below ``families/`` so that every
folder-level import points down (``xla/`` and ``bench/`` import the families' proof modules; the proof modules
import only this).

- ``case``: what a bench case is and what a family's case builder is given (no jax);
- ``kernels``: the reference JAX building blocks the families' kernels share (jax).
"""
