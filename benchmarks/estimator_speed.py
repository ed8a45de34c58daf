"""How fast is the estimator? A one-point estimate and a full scenario, beside llm-analysis.

One point = step 1 of the module for one configuration (time to first token, writing speed, the
whole answer), the same quantities llm-analysis's `infer` computes. Full scenario = every step of
the page plus the batching curve and the cost levers, which the page requests on every slider move.
Goals: ≥ 10x faster than llm-analysis per point; full scenario ≤ 1 ms.

    python benchmarks/estimator_speed.py
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import print_table, time_per_call_s, write_result  # noqa: E402

from infercost.estimate import estimate, reading  # noqa: E402
from infercost.scenario import Scenario  # noqa: E402
from infercost.specs import ModelSpec  # noqa: E402

QUESTION_TOKENS, ANSWER_TOKENS = 1000, 500
# llm-analysis's own description of Llama 2 7B (model_configs/NousResearch_Llama-2-7b-hf.json): it models
# a two-matrix MLP of width 16384, which holds as many weights as Llama's gated MLP of width 11008.
LLAMA2_7B = ModelSpec(id="llama-2-7b", name="Llama 2 7B (as llm-analysis describes it)", layers=32, hidden_size=4096,
                      heads=32, kv_heads=32, head_dim=128, ffn_size=16384, vocab_size=32000, max_context_tokens=4096,
                      gated_mlp=False)
SCENARIO = Scenario(custom_model=LLAMA2_7B, gpu="h100-sxm", gpus=1, question_tokens=QUESTION_TOKENS,
                    answer_tokens=ANSWER_TOKENS, conversation_tokens=4096)


def llm_analysis_point():
    """llm-analysis's infer on the same model, GPU, lengths and efficiencies; None if it is not installed."""
    try:
        from llm_analysis.analysis import infer
    except ImportError:
        return None
    logging.disable(logging.WARNING)

    def point():
        return infer(model_name="NousResearch_Llama-2-7b-hf", gpu_name="h100-sxm-80gb", dtype_name="w16a16e16", log_level="ERROR",
                     seq_len=QUESTION_TOKENS, num_tokens_to_generate=ANSWER_TOKENS, flops_efficiency=0.5,
                     hbm_memory_efficiency=0.7)
    return point


def main() -> int:
    ours_point = time_per_call_s(lambda: reading(SCENARIO))
    full = time_per_call_s(lambda: estimate(Scenario()))
    r = reading(SCENARIO)
    rows = [["infercost one point", f"{ours_point['median_s'] * 1e6:,.1f}", f"{r.ttft_s * 1e3:.1f}",
             f"{r.answer_s:.2f}"],
            ["infercost full scenario", f"{full['median_s'] * 1e6:,.1f}", "", ""]]
    result = {"infercost_point": ours_point, "infercost_full_scenario": full,
              "infercost_prediction": {"ttft_s": r.ttft_s, "answer_s": r.answer_s}}
    theirs = llm_analysis_point()
    if theirs is None:
        rows.append(["llm-analysis", "not installed (pip install llm-analysis)", "", ""])
    else:
        prediction = theirs()
        timing = time_per_call_s(theirs)
        ratio = timing["median_s"] / ours_point["median_s"]
        rows.append(["llm-analysis one point", f"{timing['median_s'] * 1e6:,.1f}",
                     f"{prediction['prefill_latency'] * 1e3:.1f}", f"{prediction['total_latency']:.2f}"])
        result |= {"llm_analysis_point": timing, "speed_ratio": ratio,
                   "llm_analysis_prediction": {"ttft_s": prediction["prefill_latency"],
                                               "answer_s": prediction["total_latency"]}}
    print(f"Llama 2 7B, 1 x H100 SXM, 16-bit, question {QUESTION_TOKENS} / answer {ANSWER_TOKENS} tokens\n")
    print_table(["estimator", "time per call (us)", "TTFT (ms)", "answer (s)"], rows)
    if "speed_ratio" in result:
        print(f"\ninfercost is {result['speed_ratio']:.1f}x faster than llm-analysis per point (goal >= 10x)")
    print(f"full scenario: {full['median_s'] * 1e3:.3f} ms (goal <= 1 ms)")
    print(f"wrote {write_result('estimator_speed', result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
