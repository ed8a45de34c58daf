"""Parameter counts from the architecture, not from the model's name.

Shapes as in Hugging Face transformers' modeling files (LlamaForCausalLM, Qwen2/3, Mixtral,
DeepSeek-V3, GptOss, Gemma2/3). Counts are numbers of weights (not bytes).
"""

from __future__ import annotations

from functools import cache

from ..specs import MlaSpec, ModelSpec, MoeSpec


def embedding_params(m: ModelSpec) -> int:
    """Input embedding plus the output head (zero extra when tied): V * d each."""
    table = m.vocab_size * m.hidden_size
    return table if m.tied_embeddings else 2 * table


def mla_attention_params(d: int, heads: int, mla: MlaSpec) -> int:
    """DeepSeek-V3 attention: low-rank q and kv projections with their norms (arXiv 2412.19437 §2.1.1)."""
    qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    if mla.q_lora_rank:
        q = d * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * heads * qk_head
    else:
        q = d * heads * qk_head
    kv_down = d * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    kv_up = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
    out = heads * mla.v_head_dim * d
    return q + kv_down + kv_up + out


def attention_params(m: ModelSpec) -> int:
    """One layer's attention: q, k, v, o with grouped-query heads (GQA, arXiv 2305.13245)."""
    if m.mla is not None:
        return mla_attention_params(m.hidden_size, m.heads, m.mla)
    q_dim = m.heads * m.head_dim
    kv_dim = m.kv_heads * m.head_dim
    weights = m.hidden_size * q_dim + 2 * m.hidden_size * kv_dim + q_dim * m.hidden_size
    bias = (q_dim + 2 * kv_dim if m.qkv_bias else 0) + (m.hidden_size if m.attention_output_bias else 0)
    qk_norm = 2 * m.head_dim if m.qk_norm else 0
    return weights + bias + qk_norm


def mlp_params(d: int, ffn: int, gated: bool, bias: bool = False) -> int:
    """One MLP: gate, up, down for SwiGLU/GeGLU (Shazeer 2020, arXiv 2002.05202); up, down otherwise."""
    matrices = 3 if gated else 2
    bias_params = ((2 if gated else 1) * ffn + d) if bias else 0
    return matrices * d * ffn + bias_params


def expert_params(m: ModelSpec, moe: MoeSpec) -> int:
    """One routed or shared expert."""
    return mlp_params(m.hidden_size, moe.expert_ffn_size, m.gated_mlp, moe.expert_bias)


def moe_layer_count(m: ModelSpec) -> int:
    return 0 if m.moe is None else m.layers - m.moe.dense_layers


def dense_layer_count(m: ModelSpec) -> int:
    return m.layers - moe_layer_count(m)


def router_params(m: ModelSpec, moe: MoeSpec) -> int:
    return m.hidden_size * moe.experts + (moe.experts if moe.expert_bias else 0)


@cache
def _shared_params(m: ModelSpec) -> int:
    """Everything every token touches: embeddings, attention, norms, dense MLPs, routers, shared experts."""
    per_layer = attention_params(m) + m.norms_per_layer * m.hidden_size
    total = embedding_params(m) + m.layers * per_layer + m.hidden_size  # + final norm
    total += dense_layer_count(m) * mlp_params(m.hidden_size, m.ffn_size, m.gated_mlp)
    if m.moe is not None:
        moe_layers = moe_layer_count(m)
        total += moe_layers * (router_params(m, m.moe) + m.moe.shared_experts * expert_params(m, m.moe))
    return total


@cache
def routed_expert_params(m: ModelSpec) -> int:
    """All routed experts of all MoE layers (zero for a dense model)."""
    if m.moe is None:
        return 0
    return moe_layer_count(m) * m.moe.experts * expert_params(m, m.moe)


@cache
def total_params(m: ModelSpec) -> int:
    """Every weight the server must hold."""
    return _shared_params(m) + routed_expert_params(m)


@cache
def active_params(m: ModelSpec) -> int:
    """Weights one token multiplies by: shared part plus experts_per_token routed experts per MoE layer."""
    if m.moe is None:
        return total_params(m)
    return _shared_params(m) + moe_layer_count(m) * m.moe.experts_per_token * expert_params(m, m.moe)


@cache
def matmul_params(m: ModelSpec) -> int:
    """Weights one token is multiplied by: the active weights less the input embedding, which is a
    table lookup (a tied table still counts once, as the output head)."""
    lookup = 0 if m.tied_embeddings else m.vocab_size * m.hidden_size
    return active_params(m) - lookup


def params_touched_at_batch(m: ModelSpec, batch_tokens: float) -> float:
    """Weights read for one step over `batch_tokens` tokens: MoE layers load only the experts hit.

    With uniform routing, each of E experts is missed by one token with probability 1 - k/E, so the
    expected number hit by b tokens is E * (1 - (1 - k/E)^b).
    """
    if m.moe is None:
        return float(total_params(m))
    moe = m.moe
    hit = moe.experts * (1.0 - (1.0 - moe.experts_per_token / moe.experts) ** batch_tokens)
    return _shared_params(m) + moe_layer_count(m) * hit * expert_params(m, moe)
