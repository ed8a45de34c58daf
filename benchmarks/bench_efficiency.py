"""How close `infercost bench` gets to this machine's limits, against transformers' `generate` and
llama.cpp on the same model.

For each CPU precision (fp32, int8, bf16) it runs the benchmark's own timing loop on the default
model (or --quick's tiny one) and reports decode bandwidth as a share of the measured read
bandwidth, prefill FLOP/s as a share of the measured matmul peak, the run-to-run spread, and how
much faster the benchmark's loop writes the answer than transformers' default `generate`. When
llama-cpp-python and gguf are installed it writes the same random weights as a GGUF file (F32,
then F16 and Q8_0 through llama.cpp's quantizer) and times llama.cpp in the same run.

    python benchmarks/bench_efficiency.py [--quick] [--no-llamacpp] [--out PATH]

Prints a table and writes benchmarks/results/bench_efficiency.json.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from infercost.bench.devices import transparent_huge_pages

if transparent_huge_pages() in ("always", "madvise"):
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # before torch allocates anything

import torch  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from infercost.bench.cli import FULL, QUICK  # noqa: E402
from infercost.bench.convert import convert  # noqa: E402
from infercost.bench.devices import cpu_device  # noqa: E402
from infercost.bench.limits import measure_limits  # noqa: E402
from infercost.bench.loading import build_model  # noqa: E402
from infercost.bench.models import model_spec, resolve_source  # noqa: E402
from infercost.bench.runner import RunSettings, make_prompt, measure  # noqa: E402
from infercost.bench.schema import write_result  # noqa: E402
from infercost.bench.stats import Stat  # noqa: E402
from infercost.physics.latency import prefill_flop  # noqa: E402

OUT = Path(__file__).parent / "results" / "bench_efficiency.json"
# Same bytes per weight: the comparison the goal asks for.
PAIRS = {"fp32": "F32", "bf16": "F16", "int8": "Q8_0"}
LLAMA_FTYPE = {"F16": 1, "Q8_0": 7}  # llama_ftype: MOSTLY_F16, MOSTLY_Q8_0
GOALS = {"decode_share": 0.70, "prefill_share": 0.75, "spread": 0.05, "total_s": 240.0}


def spread(st: Stat) -> float:
    return (st.max - st.min) / st.median


def time_generate(model, prompt, new_tokens: int, repeats: int) -> Stat:
    """transformers' default generate, greedy, exactly new_tokens tokens, whole answer."""
    kwargs = {"do_sample": False, "min_new_tokens": new_tokens, "max_new_tokens": new_tokens,
              "pad_token_id": 0, "attention_mask": torch.ones_like(prompt)}
    with torch.inference_mode():
        model.generate(prompt, **{**kwargs, "min_new_tokens": 2, "max_new_tokens": 2})
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            model.generate(prompt, **kwargs)
            samples.append(time.perf_counter() - start)
    return Stat.of(samples)


# --------------------------------------------------------------------------------------------
# llama.cpp side: the same weights as GGUF, timed with the same prompt and lengths.

def _permute(w, heads: int):
    """HF rotary layout -> GGUF's (as llama.cpp's convert_hf_to_gguf.py does for q and k)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf(model, config: dict, path: Path) -> None:
    import gguf

    c = config
    heads, kv_heads = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("infercost random-weight llama")
    w.add_context_length(c["max_position_embeddings"])
    w.add_embedding_length(c["hidden_size"])
    w.add_block_count(c["num_hidden_layers"])
    w.add_feed_forward_length(c["intermediate_size"])
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(c["hidden_size"] // heads)
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_rope_freq_base(c["rope_theta"])
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    vocab = c["vocab_size"]  # a placeholder SentencePiece vocabulary: ids are all we feed
    tokens = [b"<unk>", b"<s>", b"</s>"] + [f"<0x{i:02X}>".encode() for i in range(256)]
    tokens += [f"\u2581t{i}".encode() for i in range(vocab - len(tokens))]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens[:vocab])
    w.add_token_scores([0.0] * vocab)
    w.add_token_types(([2, 3, 3] + [6] * 256 + [1] * vocab)[:vocab])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    top = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
           "lm_head.weight": "output.weight"}
    per_layer = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
                 "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
                 "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
                 "mlp.down_proj": "ffn_down"}
    for name, t in model.state_dict().items():
        array = t.detach().float().numpy()
        if name in top:
            w.add_tensor(top[name], array)
            continue
        parts = name.split(".")
        sub = per_layer[".".join(parts[3:-1])]
        if sub == "attn_q":
            array = _permute(array, heads)
        elif sub == "attn_k":
            array = _permute(array, kv_heads)
        w.add_tensor(f"blk.{parts[2]}.{sub}.weight", array)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def quantize_gguf(src: Path, dst: Path, ftype: int, threads: int) -> None:
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = threads
    if llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params)) != 0:
        raise RuntimeError(f"llama.cpp could not quantize {src.name}")


def time_llamacpp(path: Path, prompt: list[int], s: RunSettings, threads: int, vocab: int) -> dict:
    import llama_cpp
    import numpy as np

    llm = llama_cpp.Llama(str(path), n_ctx=s.prompt_tokens + s.new_tokens + 8, n_batch=max(32, s.prompt_tokens),
                          n_threads=threads, n_threads_batch=threads, verbose=False)

    def greedy() -> int:
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(vocab,))
        return int(logits.argmax())

    def once() -> tuple[float, float, list[int]]:
        llm.reset()  # the next eval drops the cached positions after n_tokens = 0
        start = time.perf_counter()
        llm.eval(prompt)
        tok = greedy()
        first = time.perf_counter()
        out = [tok]
        for _ in range(s.new_tokens - 1):
            llm.eval([tok])
            tok = greedy()
            out.append(tok)
        return first - start, (time.perf_counter() - first) / (s.new_tokens - 1), out

    once()  # warm-up: pages the weights in
    runs = [once() for _ in range(s.repeats)]
    result = {"ttft_s": Stat.of([r[0] for r in runs]), "decode_step_s": Stat.of([r[1] for r in runs]),
              "tokens": runs[0][2], "file_bytes": path.stat().st_size}
    del llm
    return result


# --------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the tiny model and short lengths")
    ap.add_argument("--no-llamacpp", action="store_true", help="skip llama.cpp even when installed")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    console = Console()
    start = time.perf_counter()
    base = QUICK if args.quick else FULL
    s = RunSettings(base["prompt_tokens"], base["new_tokens"], base["batch_sizes"][:1], base["batch_steps"],
                    args.repeats, 0)
    device = cpu_device(torch)
    threads = torch.get_num_threads()
    source = resolve_source(None, None, args.quick)
    spec = model_spec(source)
    probe = {"probe_bytes": base["probe_mib"] * 2**20, "probe_matmul": base["probe_matmul"], "tf32": False}
    console.print(f"Measuring limits of {device.name} ({threads} threads) ...")
    limit, _, _ = measure_limits(torch, device, ["fp32", "int8", "bf16"], probe, lambda _: None)
    console.print(f"Building {source.label} ...")
    master = build_model(source, 0)
    vocab = source.config["vocab_size"]
    prompt = make_prompt(torch, vocab, s.prompt_tokens, 0, "cpu")
    flop = prefill_flop(spec, s.prompt_tokens)

    llama_note, gguf_dir, gguf_paths = "", None, {}
    if not args.no_llamacpp:
        try:
            import gguf  # noqa: F401
            import llama_cpp  # noqa: F401
        except ImportError:
            llama_note = "llama.cpp absent: pip install llama-cpp-python gguf to time it side by side"
        else:
            gguf_dir = tempfile.TemporaryDirectory(prefix="infercost-gguf-")
            console.print("Writing the same weights as GGUF (F32, then F16 and Q8_0 by llama.cpp) ...")
            f32 = Path(gguf_dir.name) / "model-f32.gguf"
            write_gguf(master, source.config, f32)
            gguf_paths["F32"] = f32
            for name, ftype in LLAMA_FTYPE.items():
                gguf_paths[name] = Path(gguf_dir.name) / f"model-{name.lower()}.gguf"
                quantize_gguf(f32, gguf_paths[name], ftype, threads)
    else:
        llama_note = "llama.cpp skipped (--no-llamacpp)"

    rows, measured = [], []
    order = ["fp32", "int8", "bf16"]
    for i, precision in enumerate(order):
        console.print(f"PyTorch {precision}: the benchmark's loop, then transformers' generate ...")
        conv = convert(torch, master, device, precision, in_place=precision == "fp32" or i == len(order) - 1)
        m = measure(torch, conv.model, "cpu", prompt, s)
        answer = Stat.of([t + (s.new_tokens - 1) * d for t, d in zip(m.ttft_s.samples, m.decode_step_s.samples)])
        gen = time_generate(conv.model, prompt, s.new_tokens, s.repeats)
        step_bytes = conv.read_bytes + m.kv_cache_bytes * (s.prompt_tokens + s.new_tokens / 2) / (s.prompt_tokens + s.new_tokens)
        row = {
            "backend": "pytorch", "precision": precision, "path": conv.path,
            "bytes_per_weight": conv.read_bytes / max(1, int(sum(p.numel() for p in master.parameters()))),
            "ttft_s": m.ttft_s.to_dict(), "decode_step_s": m.decode_step_s.to_dict(),
            "decode_tokens_per_s": 1 / m.decode_step_s.median,
            "spread": max(spread(m.ttft_s), spread(m.decode_step_s)),
            "generate_answer_s": gen.to_dict(), "answer_s": answer.to_dict(),
            "speedup_over_generate": gen.median / answer.median,
        }
        rows.append(row)
        measured.append((row, m, step_bytes))
        del conv
    del master
    # Other work on a shared machine lowers whichever probe it overlaps: probe again at the end and
    # take the higher median of each limit as what the machine can do.
    console.print("Measuring limits again ...")
    again, _, _ = measure_limits(torch, device, ["fp32", "int8", "bf16"], probe, lambda _: None)
    limit = _best_limits(limit, again)
    read_bw = limit["memory_read_bytes_per_s"]["median"]
    for row, m, step_bytes in measured:
        peak = limit["matmul_flop_per_s"][row["precision"]]["median"]
        row["decode_share_of_read_bandwidth"] = step_bytes / m.decode_step_s.median / read_bw
        row["prefill_share_of_matmul_peak"] = flop / m.ttft_s.median / peak

    for name, path in gguf_paths.items():
        console.print(f"llama.cpp {name} ...")
        r = time_llamacpp(path, prompt[0].tolist(), s, threads, vocab)
        rows.append({
            "backend": "llama.cpp", "precision": name, "path": f"llama-cpp-python, {name} GGUF, {threads} threads",
            "ttft_s": r["ttft_s"].to_dict(), "decode_step_s": r["decode_step_s"].to_dict(),
            "decode_tokens_per_s": 1 / r["decode_step_s"].median,
            # the file is nearly all weights; its token embedding is read one row a step (over-counts ~6%)
            "decode_share_of_read_bandwidth": r["file_bytes"] / r["decode_step_s"].median / read_bw,
            "prefill_share_of_matmul_peak": None,
            "spread": max(spread(r["ttft_s"]), spread(r["decode_step_s"])),
            "file_bytes": r["file_bytes"],
        })
    if gguf_dir is not None:
        gguf_dir.cleanup()

    by = {(r["backend"], r["precision"]): r for r in rows}
    comparisons = []
    for ours, theirs in PAIRS.items():
        a, b = by.get(("pytorch", ours)), by.get(("llama.cpp", theirs))
        if a and b:
            comparisons.append({"pytorch": ours, "llamacpp": theirs,
                                "decode_speed_ratio": a["decode_tokens_per_s"] / b["decode_tokens_per_s"],
                                "prefill_speed_ratio": b["ttft_s"]["median"] / a["ttft_s"]["median"]})
    total_s = time.perf_counter() - start
    best = max((r for r in rows if r["backend"] == "pytorch"), key=lambda r: r["decode_share_of_read_bandwidth"])
    result = {
        "benchmark": "bench_efficiency", "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "model": source.label,
        "prompt_tokens": s.prompt_tokens, "new_tokens": s.new_tokens, "repeats": s.repeats, "threads": threads,
        "load_average": list(os.getloadavg()),
        "limits": {"memory_read_bytes_per_s": read_bw, "memory_pages": limit["memory_pages"],
                   "memory_read_4k_bytes_per_s": (limit["memory_read_4k_bytes_per_s"] or {}).get("median"),
                   "matmul_flop_per_s": {k: v["median"] for k, v in limit["matmul_flop_per_s"].items()}},
        "rows": rows, "llamacpp_comparison": comparisons, "llamacpp_note": llama_note,
        "goals": {
            "best_decode_share": {"value": best["decode_share_of_read_bandwidth"], "goal": GOALS["decode_share"],
                                  "precision": best["precision"]},
            "prefill_share": {p["precision"]: p["prefill_share_of_matmul_peak"] for p in rows if p["backend"] == "pytorch"},
            "max_spread": max(r["spread"] for r in rows),
            "at_least_llamacpp": {c["pytorch"]: c["decode_speed_ratio"] >= 1.0 for c in comparisons},
        },
        "total_s": total_s,
    }
    write_result(result, args.out)
    console.print(_table(rows, read_bw, limit))
    for c in comparisons:
        verdict = "as fast or faster" if c["decode_speed_ratio"] >= 1 else "SLOWER"
        console.print(f"PyTorch {c['pytorch']} decodes at {c['decode_speed_ratio']:.2f}x llama.cpp {c['llamacpp']} "
                      f"({verdict}); reads the prompt {c['prefill_speed_ratio']:.2f}x as fast.")
    if llama_note:
        console.print(llama_note)
    console.print(f"Best PyTorch decode: {best['precision']} at {100 * best['decode_share_of_read_bandwidth']:.0f}% of the "
                  f"measured read bandwidth (goal {100 * GOALS['decode_share']:.0f}%). Load average "
                  f"{os.getloadavg()[1]:.1f} on {os.cpu_count()} CPUs. Total {total_s:.0f} s. Wrote {args.out}")
    return 0


def _best_limits(a: dict, b: dict) -> dict:
    """Each limit from whichever of the two probes saw the higher median."""
    best = dict(a)
    pick = lambda x, y: x if x and (not y or x["median"] >= y["median"]) else y  # noqa: E731
    for key in ("memory_read_bytes_per_s", "memory_read_4k_bytes_per_s"):
        best[key] = pick(a.get(key), b.get(key))
    best["matmul_flop_per_s"] = {k: pick(v, b["matmul_flop_per_s"].get(k)) for k, v in a["matmul_flop_per_s"].items()}
    return best


def _table(rows, read_bw: float, limit: dict) -> Table:
    t = Table(title=f"Benchmark efficiency (read {read_bw / 1e9:.1f} GB/s on {limit['memory_pages']}; "
                    f"matmul fp32 {limit['matmul_flop_per_s']['fp32']['median'] / 1e9:.0f} GFLOP/s)",
              title_justify="left")
    for col in ("backend", "prec", "TTFT ms", "ms/token", "tok/s", "read share", "prefill share", "spread",
                "x generate"):
        t.add_column(col, justify="left" if col in ("backend", "prec") else "right")
    for r in rows:
        share = r["prefill_share_of_matmul_peak"]
        t.add_row(r["backend"], r["precision"], f"{r['ttft_s']['median'] * 1e3:,.0f}",
                  f"{r['decode_step_s']['median'] * 1e3:,.1f}", f"{r['decode_tokens_per_s']:.1f}",
                  f"{100 * r['decode_share_of_read_bandwidth']:.0f}%", "-" if share is None else f"{100 * share:.0f}%",
                  f"{100 * r['spread']:.0f}%",
                  f"{r['speedup_over_generate']:.2f}" if "speedup_over_generate" in r else "-")
    return t


if __name__ == "__main__":
    sys.exit(main())
