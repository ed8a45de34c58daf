"""One step of a serving engine: decode tokens and prompt tokens in the same forward pass.

The plain roofline (latency.py) takes one max(FLOP / F, bytes / B) over a whole pass. A real step is
a sequence of kernels, each bound by its own limit, so the step model sums per-operator rooflines
(Williams et al. 2009) and adds what the plain model leaves out; each term is one function here:

- weight matrices: every token multiplies every weight it meets (2 FLOP per weight), the matrices
  are read once per step; the input embedding is a lookup, logits are computed only for sampled
  positions (Kaplan et al. 2020, arXiv 2001.08361 §2.1; vLLM/TensorRT-LLM gather the last position)
- MoE experts: only the experts the step's tokens touch are read (E(1 - (1 - k/E)^T)); the busiest
  expert sets the pace of the grouped GEMM (load imbalance; Fedus et al. 2021, arXiv 2101.03961 §2.2)
- attention: each decoding sequence reads its whole KV cache; prompt tokens attend causally
  (FlashAttention, Dao et al. 2022, arXiv 2205.14135)
- norms and residual adds on the full hidden state, repeated on every tensor-parallel GPU
- tensor-parallel all-reduces, by link (comms.py), and a fixed overhead per step and per layer
  (kernel launches, scheduling, sampling; constants in data/assumptions.toml).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ..precision import Formats
from ..specs import ModelSpec
from .comms import tensor_parallel_comm_s
from .latency import attention_flop
from .machine import Machine
from .memory import kv_bytes_for_sequence
from .params import embedding_params, expert_params, moe_layer_count, routed_expert_params, total_params


class StepTime(NamedTuple):
    """One engine step: its time and the parts it is made of (seconds)."""

    time_s: float
    weights_s: float  # dense weight matrices (incl. attention projections, lm_head)
    hidden_s: float  # norms and residual adds on the full hidden state, repeated on every GPU
    experts_s: float  # MoE routed experts
    attention_s: float  # attention over cached and new tokens
    comm_s: float  # tensor-parallel all-reduces
    overhead_s: float  # launches, scheduling, sampling

    @property
    def bound(self) -> str:
        """What dominates the step: 'weights', 'experts', 'attention', 'comm' or 'overhead'."""
        parts = {"weights": self.weights_s, "hidden": self.hidden_s, "experts": self.experts_s,
                 "attention": self.attention_s,
                 "comm": self.comm_s, "overhead": self.overhead_s}
        return max(parts, key=parts.get)


class StepPhysics(NamedTuple):
    """Constants of the step model beyond the efficiencies (data/assumptions.toml [serving])."""

    step_overhead_s: float  # per step: scheduling, sampling, launches
    layer_overhead_s: float  # per layer per step: kernel boundaries
    moe_imbalance: float  # routing spread relative to uniform (1 = uniform)
    runtime_bytes_per_gpu: float  # CUDA context, workspaces, graphs: not available to the cache
    knee: float = math.inf  # p of the soft roofline (c^p + m^p)^(1/p); inf = the sharp max
    head_bytes_per_param: float = 2.0  # quantized checkpoints keep lm_head (and embeddings) at 16-bit
    hidden_passes_per_layer: float = 0.0  # full-width hidden-state reads+writes per token per layer (norms, residuals)


class StepLoad(NamedTuple):
    """What one step processes: `decode` sequences writing one token each at `context` tokens, and
    `prefill_requests` prompts of `prompt_tokens` new tokens (fractional: an average step)."""

    decode: float
    context: float
    prefill_requests: float = 0.0
    prompt_tokens: float = 0.0

    @property
    def tokens(self) -> float:
        return self.decode + self.prefill_requests * self.prompt_tokens

    @property
    def sampled(self) -> float:
        return self.decode + self.prefill_requests


def dense_params(m: ModelSpec) -> float:
    """Weights outside the routed experts, without the input-embedding lookup table (untied)."""
    lookup = 0 if m.tied_embeddings else embedding_params(m) / 2
    return total_params(m) - routed_expert_params(m) - lookup


def lm_head_params(m: ModelSpec) -> float:
    return m.vocab_size * m.hidden_size


def _roofline_s(flop: float, bytes_read: float, flop_per_s: float, bytes_per_s: float, knee: float) -> float:
    """max(compute, memory), or its soft form (c^p + m^p)^(1/p): near the ridge a kernel saturates neither."""
    c, m = flop / flop_per_s, bytes_read / bytes_per_s
    if math.isinf(knee) or c == 0 or m == 0:
        return max(c, m)
    hi = max(c, m)
    return hi * ((c / hi) ** knee + (m / hi) ** knee) ** (1 / knee)


def weights_s(m: ModelSpec, machine: Machine, fmt: Formats, load: StepLoad, knee: float = math.inf,
              head_bytes_per_param: float = 2.0) -> float:
    """Dense matrices: read once, 2 FLOP per weight per token (lm_head: per sampled position, kept 16-bit)."""
    head = lm_head_params(m)
    body = dense_params(m) - head
    flop = 2 * body * load.tokens + 2 * head * load.sampled
    bytes_read = body * fmt.weight_bytes_per_param + head * max(fmt.weight_bytes_per_param, head_bytes_per_param)
    return _roofline_s(flop, bytes_read, machine.effective_flop_per_s, machine.effective_bandwidth_bytes_per_s, knee)


def hidden_state_s(m: ModelSpec, machine: Machine, load: StepLoad, passes_per_layer: float) -> float:
    """Norms and residual adds read and write the whole hidden vector of every token, and tensor
    parallelism repeats them on every GPU (Korthikanti et al. 2022, arXiv 2205.05198 §4.2): memory
    traffic tokens * layers * passes * d * 2 bytes per GPU."""
    per_gpu_bytes = load.tokens * m.layers * passes_per_layer * m.hidden_size * 2
    return per_gpu_bytes / (machine.memory_bandwidth_bytes_per_s * machine.memory_efficiency)


def busiest_expert_share(tokens: float, experts: int, per_token: int, imbalance: float) -> float:
    """Tokens of the busiest expert over the mean, uniform routing: the largest of E binomial counts is
    about mean + sqrt(2 ln E) standard deviations (expected maximum of E normal variables), times
    `imbalance` for routing less even than uniform (1 = uniform)."""
    mean = tokens * per_token / experts
    if mean <= 0 or experts <= 1:
        return 1.0
    sd = math.sqrt(mean * (1 - per_token / experts))
    return 1.0 + imbalance * math.sqrt(2 * math.log(experts)) * sd / mean


def experts_s(m: ModelSpec, machine: Machine, fmt: Formats, load: StepLoad, imbalance: float,
              knee: float = math.inf) -> float:
    """Routed experts: bytes of the experts hit; FLOP as if every expert had the busiest one's tokens."""
    if m.moe is None:
        return 0.0
    moe, tokens = m.moe, load.tokens
    hit = moe.experts * (1.0 - (1.0 - moe.experts_per_token / moe.experts) ** tokens)
    per_expert = expert_params(m, moe)
    bytes_read = moe_layer_count(m) * hit * per_expert * fmt.weight_bytes_per_param
    share = busiest_expert_share(tokens, moe.experts, moe.experts_per_token, imbalance)
    flop = 2 * moe_layer_count(m) * moe.experts_per_token * per_expert * tokens * share
    return _roofline_s(flop, bytes_read, machine.effective_flop_per_s, machine.effective_bandwidth_bytes_per_s, knee)


def attention_s(m: ModelSpec, machine: Machine, fmt: Formats, load: StepLoad, attention_flop_per_s_: float) -> float:
    """Decode: each sequence reads its cache (memory-bound); prompts: causal attention (compute-bound)."""
    decode_flop = load.decode * attention_flop(m, load.context, 1)
    decode_bytes = load.decode * kv_bytes_for_sequence(m, load.context, fmt.kv_bytes_per_element)
    prefill_flop = load.prefill_requests * attention_flop(m, 0, load.prompt_tokens)
    bw = machine.effective_bandwidth_bytes_per_s
    return _roofline_s(decode_flop, decode_bytes, attention_flop_per_s_, bw, math.inf) + prefill_flop / attention_flop_per_s_


def engine_step(m: ModelSpec, machine: Machine, fmt: Formats, load: StepLoad, physics: StepPhysics,
                attention_flop_per_s: float) -> StepTime:
    """Time of one mixed step: per-operator rooflines summed, plus communication and overhead."""
    w = weights_s(m, machine, fmt, load, physics.knee, physics.head_bytes_per_param)
    h = hidden_state_s(m, machine, load, physics.hidden_passes_per_layer)
    e = experts_s(m, machine, fmt, load, physics.moe_imbalance, physics.knee)
    a = attention_s(m, machine, fmt, load, attention_flop_per_s)
    c = tensor_parallel_comm_s(m, machine, load.tokens)
    o = physics.step_overhead_s + physics.layer_overhead_s * m.layers
    return StepTime(w + h + e + a + c + o, w, h, e, a, c, o)
