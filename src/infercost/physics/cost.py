"""Cost: what the GPUs cost per hour divided by what they produce in that hour."""

from __future__ import annotations

from ..units import HOUR_S, MILLION


def tokens_per_hour(tokens_per_s: float, busy_share: float) -> float:
    """Tokens/s * 3600 * share of the hour the server has work."""
    return tokens_per_s * HOUR_S * busy_share


def usd_per_million_tokens(gpus: int, price_per_gpu_hour_usd: float, tokens_per_s: float, busy_share: float) -> float:
    """G * price per GPU-hour / tokens per hour * 1e6."""
    return gpus * price_per_gpu_hour_usd / tokens_per_hour(tokens_per_s, busy_share) * MILLION


def usd_per_answer(question_tokens: int, answer_tokens: int, usd_per_million_input: float,
                   usd_per_million_output: float) -> float:
    """One answer: its question read at the input price plus its answer written at the output price."""
    return (question_tokens * usd_per_million_input + answer_tokens * usd_per_million_output) / MILLION
