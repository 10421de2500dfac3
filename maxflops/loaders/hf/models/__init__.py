"""One module per Hugging Face model type, named as transformers names the type; each holds ``TYPE``, an
``HFType`` (see ``maxflops.loaders.hf``). The registry (``house.names()``) lists this folder."""
