"""Memory: weights, KV cache, what is left for conversations, and the 100-square grid."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from ..specs import ModelSpec
from .params import total_params


def weight_bytes(m: ModelSpec, bytes_per_param: float) -> float:
    """P_total * b_w (b_w includes any 4-bit block-scale overhead)."""
    return total_params(m) * bytes_per_param


def kv_bytes_per_token_per_layer(m: ModelSpec, kv_bytes_per_element: float) -> float:
    """K and V: 2 * n_kv * d_head elements (GQA); MLA stores one latent plus the RoPE key (arXiv 2412.19437)."""
    if m.mla is not None:
        return (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * kv_bytes_per_element
    return 2 * m.kv_heads * m.head_dim * kv_bytes_per_element


def kv_bytes_per_token(m: ModelSpec, kv_bytes_per_element: float) -> float:
    """Cache one new token adds while every layer still holds it: 2 * L * n_kv * d_head * b_kv."""
    return m.layers * kv_bytes_per_token_per_layer(m, kv_bytes_per_element)


def kv_bytes_for_sequence(m: ModelSpec, tokens: float, kv_bytes_per_element: float) -> float:
    """Cache of one sequence of `tokens`: sliding-window layers keep at most `window` tokens (Mistral 7B, arXiv 2310.06825)."""
    per_layer = kv_bytes_per_token_per_layer(m, kv_bytes_per_element)
    window = m.sliding_window_tokens or tokens
    return per_layer * (m.full_attention_layers * tokens + m.sliding_window_layers * min(tokens, window))


def paged_tokens(tokens: float, block_tokens: int) -> float:
    """Paged attention allocates whole blocks (Kwon et al. 2023, arXiv 2309.06180)."""
    return math.ceil(tokens / block_tokens) * block_tokens


def activation_workspace_bytes(m: ModelSpec, tokens_per_pass: int, bytes_per_element: float) -> float:
    """Peak activations of one forward pass: hidden states, q/k/v, MLP intermediates, logits (fp32).

    Approximation of what vLLM's profiling pass measures; small next to weights and cache.
    """
    ffn = m.moe.expert_ffn_size * m.moe.experts_per_token if m.moe else m.ffn_size
    per_token = (4 * m.hidden_size + 3 * ffn) * bytes_per_element
    logits = m.vocab_size * 4  # sampled positions only: at most one per sequence, bounded by the pass
    return tokens_per_pass * per_token + min(tokens_per_pass, 256) * logits


def usable_kv_bytes(total_memory_bytes: float, reserve_share: float, weights_bytes: float, workspace_bytes: float) -> float:
    """G * M * (1 - reserve) - weights - activation workspace (may be negative: the weights do not fit)."""
    return total_memory_bytes * (1 - reserve_share) - weights_bytes - workspace_bytes


def conversations_that_fit(usable_bytes: float, bytes_per_conversation: float) -> int:
    """floor(usable / per-conversation cache)."""
    if usable_bytes <= 0:
        return 0
    return int(usable_bytes // bytes_per_conversation)


def min_gpus_to_fit(weights_bytes: float, gpu_memory_bytes: float, reserve_share: float, workspace_bytes: float, max_gpus: int) -> int | None:
    """Smallest G with G * M * (1 - reserve) > weights + workspace; None when even max_gpus is too few."""
    per_gpu = gpu_memory_bytes * (1 - reserve_share)
    need = math.floor((weights_bytes + workspace_bytes) / per_gpu) + 1
    return need if need <= max_gpus else None


@dataclass(frozen=True)
class GridCell:
    kind: str  # "weights", "reserve", "kv", "free"
    conversation: int | None = None  # index of the conversation for "kv" cells


_WEIGHTS, _RESERVE, _FREE = GridCell("weights"), GridCell("reserve"), GridCell("free")


@cache
def _kv_cell(conversation: int) -> GridCell:
    return GridCell("kv", conversation)


def memory_grid(total_bytes: float, weights_bytes: float, reserve_bytes: float, conversation_bytes: float,
                conversations: int, cells: int = 100) -> tuple[list[GridCell], int]:
    """Split total memory into `cells` squares (each 1%); return them and the overflow squares.

    Segments lie end to end (weights, runtime reserve, each conversation, free); a square shows the
    segment under its centre. Overflow is how many squares beyond the grid the conversations that
    do not fit would need.
    """
    cell_bytes = total_bytes / cells
    kv_start = weights_bytes + reserve_bytes
    kv_end = kv_start + conversations * conversation_bytes
    grid = []
    for i in range(cells):
        centre = (i + 0.5) * cell_bytes
        if centre < weights_bytes:
            grid.append(_WEIGHTS)
        elif centre < kv_start:
            grid.append(_RESERVE)
        elif centre < kv_end:
            grid.append(_kv_cell(int((centre - kv_start) // conversation_bytes)))
        else:
            grid.append(_FREE)
    overflow_bytes = max(0.0, kv_end - total_bytes)
    return grid, math.ceil(overflow_bytes / cell_bytes - 1e-9)
