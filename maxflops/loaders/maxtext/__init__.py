"""Reading MaxText's keys: ``keys`` (every key of MaxText 0.2.5's config classified, and ``base.yml``'s values),
``mapping`` (``map_keys``: MaxText keys -> schema overrides, in steps over ``model``'s keys, what the network is,
and ``program``'s, how the step runs) and ``model_yaml`` (a MaxText model YAML through that mapping). MaxText's
config object reaches the same mapping through ``maxflops.maxtext`` (``from_maxtext``), the integration."""
