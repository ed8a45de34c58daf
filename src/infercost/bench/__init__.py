"""`infercost bench`: time a model on this machine's devices and put the estimate beside it.

Importing this package does not import torch; the modules that need it import it themselves,
and `infercost.bench.cli.run` imports them only when the benchmark runs.
"""
