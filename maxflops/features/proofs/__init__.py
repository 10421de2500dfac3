"""The trunk features' part of the Flax model (``maxflops.xla.model``): one module per feature that has one, named in
its record (``Feature.proof``) and found by ``maxflops.xla.registry``, which lists the hooks a module may define.
These modules import jax; ``import maxflops`` does not import them."""
