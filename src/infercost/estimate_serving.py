"""The `serving` section of an Estimate: the scenario's question/answer lengths served at max load and
at the step-3 batch by a continuous-batching engine (physics/serving.py), with its cost per token."""

from __future__ import annotations

from .physics import cost
from .physics.engines import DEFAULT_ENGINE, serving_estimate
from .physics.serving import Concurrency, Load, MaxLoad
from .precision import Formats
from .results import Serving, ServingPoint, ServingStep
from .scenario import Scenario
from .specs import GpuSpec, ModelSpec


def _point(m: ModelSpec, gpu: GpuSpec, fmt: Formats, s: Scenario, load: Load,
           price: float | None) -> ServingPoint:
    sv = serving_estimate(m, gpu, s.gpus, fmt, s.question_tokens, s.answer_tokens, load, DEFAULT_ENGINE,
                          s.compute_efficiency, s.memory_efficiency)
    st = sv.step
    usd = None if price is None else cost.usd_per_million_tokens(s.gpus, price, sv.output_tokens_per_s,
                                                                 s.busy_share)
    return ServingPoint(
        load=sv.load, engine=sv.engine, batch=sv.batch, batch_limit=sv.batch_limit, max_batch=sv.max_batch,
        kv_capacity_tokens=sv.kv_capacity_tokens, output_tokens_per_s=sv.output_tokens_per_s,
        input_tokens_per_s=sv.input_tokens_per_s, requests_per_s=sv.requests_per_s, ttft_s=sv.ttft_s,
        tpot_s=sv.tpot_s, per_user_tokens_per_s=1 / sv.tpot_s, usd_per_million_output=usd,
        step=ServingStep(st.weights_s, st.hidden_s, st.experts_s, st.attention_s, st.comm_s, st.overhead_s,
                         st.bound),
    )


def serving_section(m: ModelSpec, gpu: GpuSpec, fmt: Formats, s: Scenario, fits: bool,
                    price: float | None) -> Serving:
    """Max load and the step-3 batch; None points (with the reason) when no request fits."""
    isl, osl = s.question_tokens, s.answer_tokens
    if not fits:
        return Serving(isl, osl, None, None, "The weights do not fit, so nothing can be served.")
    try:
        max_load = _point(m, gpu, fmt, s, MaxLoad(), price)
    except ValueError:
        return Serving(isl, osl, None, None, "Not one conversation of these lengths fits beside the weights.")
    at_batch = _point(m, gpu, fmt, s, Concurrency(s.batch), price)
    message = (f"At max load the engine keeps {max_load.batch:,.0f} conversations going "
               f"(limited by the {max_load.batch_limit}), reading new questions between answer tokens.")
    return Serving(isl, osl, max_load, at_batch, message)
