"""Per-family readers for Hugging Face config.json files (used by hf_config.py).

`Config` reads typed values from one config dict, naming the field in every error. Each family
entry says how its model_type spells attention biases, sliding windows, experts and latent
attention, following transformers' configuration_*.py and modeling_*.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .errors import ConfigError
from .specs import MlaSpec, MoeSpec

MAX_INT = 2**31 - 1
_MISSING = object()
_LAYER_KINDS = ("sliding_attention", "full_attention")


class Config:
    """Typed reads from one config dict; every error names the field with its prefix."""

    def __init__(self, data: dict, prefix: str = "", defaults: dict | None = None) -> None:
        self.data, self.prefix, self.defaults = data, prefix, defaults or {}

    def field(self, key: str) -> str:
        return self.prefix + key

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        value = self.data.get(key)
        if value is None:
            value = self.defaults.get(key, default)
        if value is _MISSING:
            raise ConfigError(self.field(key), "missing")
        return value

    def int(self, key: str, default: Any = _MISSING, minimum: int = 1) -> Any:
        value = self.raw(key, default)
        if value is default and default is not _MISSING:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(self.field(key), f"must be an integer, got {describe(value)}")
        if not minimum <= value <= MAX_INT:
            raise ConfigError(self.field(key), f"must be between {minimum} and {MAX_INT}, got {value}")
        return value

    def bool(self, key: str, default: bool) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise ConfigError(self.field(key), f"must be true or false, got {describe(value)}")
        return value

    def layer_kinds(self, layers: int) -> list[str] | None:
        """`layer_types` when present: one "sliding_attention" or "full_attention" per layer."""
        value = self.raw("layer_types", None)
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != layers:
            raise ConfigError(self.field("layer_types"), f"must be a list of {layers} layer kinds")
        for kind in value:
            if kind not in _LAYER_KINDS:
                raise ConfigError(self.field("layer_types"), f"unsupported kind {describe(kind)}; "
                                  f"supported: {', '.join(_LAYER_KINDS)}")
        return value

    def int_list(self, key: str) -> list[int]:
        value = self.raw(key, [])
        if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
            raise ConfigError(self.field(key), f"must be a list of integers, got {describe(value)}")
        return value


def describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"


# --- per-family pieces: each returns ModelSpec keyword arguments ----------------------------------

def _bias_from_config(default: bool) -> Callable[[Config], dict]:
    def attention(c: Config) -> dict:
        bias = c.bool("attention_bias", default)
        return {"qkv_bias": bias, "attention_output_bias": bias}
    return attention


def _qkv_bias_only(c: Config) -> dict:
    return {"qkv_bias": True, "attention_output_bias": False}  # Qwen2: q, k, v carry biases; o not


def _window(c: Config, sliding_layers: int) -> dict:
    if sliding_layers == 0:
        return {}
    return {"sliding_window_tokens": c.int("sliding_window"), "sliding_window_layers": sliding_layers}


def _no_window(c: Config, layers: int) -> dict:
    return {}


def _window_all_layers(c: Config, layers: int) -> dict:
    """Mistral / Mixtral: a non-null sliding_window applies to every layer."""
    return _window(c, layers if c.raw("sliding_window", None) is not None else 0)


def _window_qwen(c: Config, layers: int) -> dict:
    """Qwen2/3: only with use_sliding_window; layers from max_window_layers on slide."""
    if not c.bool("use_sliding_window", False):
        return {}
    kinds = c.layer_kinds(layers)
    if kinds is not None:
        return _window(c, kinds.count("sliding_attention"))
    return _window(c, layers - min(layers, c.int("max_window_layers", 28, minimum=0)))


def _window_every_other(c: Config, layers: int) -> dict:
    """gpt-oss and Gemma 2: layer_types, else even layers (0, 2, ...) slide."""
    kinds = c.layer_kinds(layers)
    return _window(c, kinds.count("sliding_attention") if kinds is not None else (layers + 1) // 2)


def _window_gemma3(c: Config, layers: int) -> dict:
    """Gemma 3: layer_types, else every sliding_window_pattern-th layer is global (5 local : 1)."""
    kinds = c.layer_kinds(layers)
    if kinds is not None:
        return _window(c, kinds.count("sliding_attention"))
    pattern = c.int("sliding_window_pattern", 6)
    return _window(c, layers - layers // pattern)


def _no_moe(c: Config, layers: int) -> dict:
    return {}


def _moe(c: Config, experts_key: str, per_token_key: str, ffn_key: str, moe_layers: int,
         layers: int, shared: int = 0, bias: bool = False) -> dict:
    experts = c.int(experts_key)
    per_token = c.int(per_token_key)
    if per_token > experts:
        raise ConfigError(c.field(per_token_key), f"{per_token} exceeds {experts_key} ({experts})")
    if moe_layers == 0:
        return {}
    return {"moe": MoeSpec(experts=experts, experts_per_token=per_token, expert_ffn_size=c.int(ffn_key),
                           shared_experts=shared, dense_layers=layers - moe_layers, expert_bias=bias)}


def _moe_mixtral(c: Config, layers: int) -> dict:
    return _moe(c, "num_local_experts", "num_experts_per_tok", "intermediate_size", layers, layers)


def _moe_gpt_oss(c: Config, layers: int) -> dict:
    per_token_key = "experts_per_token" if c.raw("experts_per_token", None) is not None else "num_experts_per_tok"
    return _moe(c, "num_local_experts", per_token_key, "intermediate_size", layers, layers, bias=True)


def _moe_qwen(c: Config, layers: int) -> dict:
    """Qwen2-MoE / Qwen3-MoE: layer i is MoE unless in mlp_only_layers or off the decoder_sparse_step."""
    step, dense_only = c.int("decoder_sparse_step", 1), set(c.int_list("mlp_only_layers"))
    on_step = [i for i in dense_only if 0 <= i < layers and (i + 1) % step == 0]
    moe_layers = layers // step - len(on_step)  # counted, not looped: layers may be huge
    expert_ffn = c.int("moe_intermediate_size")
    shared_ffn = c.int("shared_expert_intermediate_size", 0, minimum=0)
    if shared_ffn % expert_ffn:  # one wide shared expert counts as shared_ffn / expert_ffn experts
        raise ConfigError(c.field("shared_expert_intermediate_size"),
                          f"must be a multiple of moe_intermediate_size ({expert_ffn})")
    return _moe(c, "num_experts", "num_experts_per_tok", "moe_intermediate_size", moe_layers,
                layers, shared=shared_ffn // expert_ffn)


def _moe_deepseek(c: Config, layers: int) -> dict:
    """DeepSeek-V2/V3: layers from first_k_dense_replace on, every moe_layer_freq-th, are MoE."""
    if c.raw("n_routed_experts", None) is None:
        return {}
    first_dense, freq = c.int("first_k_dense_replace", 0, minimum=0), c.int("moe_layer_freq", 1)
    first_moe = min(first_dense, layers)
    moe_layers = -(-layers // freq) - -(-first_moe // freq)  # multiples of freq in [first_moe, layers)
    shared = c.int("n_shared_experts", 0, minimum=0)
    return _moe(c, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", moe_layers,
                layers, shared=shared)


def _no_latent(c: Config) -> dict:
    return {}


def _latent_deepseek(c: Config) -> dict:
    """Multi-head latent attention; head_dim is set to v_head_dim (the KV formula uses the latent)."""
    mla = MlaSpec(kv_lora_rank=c.int("kv_lora_rank"), qk_rope_head_dim=c.int("qk_rope_head_dim"),
                  qk_nope_head_dim=c.int("qk_nope_head_dim"), v_head_dim=c.int("v_head_dim"),
                  q_lora_rank=c.int("q_lora_rank", None))
    return {"mla": mla, "head_dim": mla.v_head_dim}


@dataclass(frozen=True)
class Family:
    """How one model_type maps onto ModelSpec."""

    family: str  # tokenizer lineage, as in the catalog
    tied_default: bool
    attention: Callable[[Config], dict]
    window: Callable[[Config, int], dict] = _no_window
    moe: Callable[[Config, int], dict] = _no_moe
    fixed: tuple[tuple[str, Any], ...] = ()  # ModelSpec fields the architecture fixes
    defaults: tuple[tuple[str, Any], ...] = ()  # transformers defaults for fields real configs omit
    latent: Callable[[Config], dict] = _no_latent  # multi-head latent attention (DeepSeek)


_QK_NORM = (("qk_norm", True),)
_GEMMA_NORMS = (("norms_per_layer", 4),)
FAMILIES: dict[str, Family] = {
    "llama": Family("llama", False, _bias_from_config(False)),
    "mistral": Family("mistral", False, _bias_from_config(False), _window_all_layers),
    "mixtral": Family("mistral", False, _bias_from_config(False), _window_all_layers, _moe_mixtral),
    "qwen2": Family("qwen2", False, _qkv_bias_only, _window_qwen),
    "qwen2_moe": Family("qwen2", False, _qkv_bias_only, _window_qwen, _moe_qwen),
    "qwen3": Family("qwen3", False, _bias_from_config(False), _window_qwen, fixed=_QK_NORM),
    "qwen3_moe": Family("qwen3", False, _bias_from_config(False), _window_qwen, _moe_qwen, _QK_NORM),
    "deepseek_v2": Family("deepseek", False, _bias_from_config(False), moe=_moe_deepseek,
                          latent=_latent_deepseek),
    "deepseek_v3": Family("deepseek", False, _bias_from_config(False), moe=_moe_deepseek,
                          latent=_latent_deepseek),
    "gpt_oss": Family("gpt-oss", False, _bias_from_config(True), _window_every_other, _moe_gpt_oss,
                      defaults=(("sliding_window", 128),)),
    "gemma": Family("gemma", True, _bias_from_config(False)),
    "gemma2": Family("gemma2", True, _bias_from_config(False), _window_every_other, fixed=_GEMMA_NORMS,
                     defaults=(("sliding_window", 4096),)),
    "gemma3_text": Family("gemma3", True, _bias_from_config(False), _window_gemma3,
                          fixed=_GEMMA_NORMS + _QK_NORM,
                          defaults=(("vocab_size", 262208), ("max_position_embeddings", 131072),
                                    ("sliding_window", 4096))),
}
LLAMA2_VOCAB_SIZE = 32000  # Llama 2's tokenizer (TinyLlama, Llama 2); Llama 3 has 128,256 tokens


def tokenizer_family(family: Family, vocab_size: int) -> str:
    """The tokenizer lineage: a config names the architecture, and Llama 2 and 3 share one."""
    return "llama2" if family.family == "llama" and vocab_size == LLAMA2_VOCAB_SIZE else family.family


SUPPORTED_MODEL_TYPES = tuple(sorted(FAMILIES)) + ("gemma3",)  # gemma3: text_config holds gemma3_text
