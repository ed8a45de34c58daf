"""infercost: why serving a large language model costs what it costs.

    from infercost import Scenario, estimate
    e = estimate(Scenario(model="llama-3.1-70b", gpu="h100-sxm", gpus=2))
"""

from .catalog import gpu, gpus, model, models
from .errors import ConfigError, InferCostError, ScenarioError, UnknownNameError
from .estimate import estimate, reading
from .results import Estimate
from .scenario import Scenario
from .specs import GpuSpec, KvPrecision, ModelSpec, Precision

__all__ = [
    "ConfigError",
    "Estimate",
    "GpuSpec",
    "InferCostError",
    "KvPrecision",
    "ModelSpec",
    "Precision",
    "Scenario",
    "ScenarioError",
    "UnknownNameError",
    "estimate",
    "gpu",
    "gpus",
    "model",
    "models",
    "reading",
]
