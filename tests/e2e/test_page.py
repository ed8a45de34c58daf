"""The page in a real browser: the top bar drives every step, sliders move readouts, the simulation,
permalinks, fallbacks for bad links, the narrow layout, and no console errors anywhere."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from .conftest import COURSE_URL, wait_drawn

pytestmark = pytest.mark.browser

LLAMA_8B_CONFIG = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
}

# What each step shows; a change "reaches" a step when any of these texts changes.
STEP_READOUTS = {
    "step 1": ["s1-ttft", "s1-write", "s1-tps", "s1-read-tps"],
    "step 2": ["s2-per-token", "s2-conv", "s2-fit", "s2-grid-summary", "s2-paged"],
    "step 3": ["s3-total", "s3-user", "s3-limit", "s3-summary"],
    "step 4": ["s4-speedup", "s4-per-pass", "s4-with", "s4-quant", "s4-without"],
    "step 5": ["s5-out", "s5-in", "s5-answer", "s5-basis"],
}


def readouts(page) -> dict[str, tuple[str, ...]]:
    texts = page.evaluate("""(ids) => Object.fromEntries(ids.map((id) => [id, document.getElementById(id).textContent]))""",
                          [i for ids in STEP_READOUTS.values() for i in ids])
    return {step: tuple(texts[i] for i in ids) for step, ids in STEP_READOUTS.items()}


def text(page, element_id: str) -> str:
    return page.locator(f"#{element_id}").text_content()


def scenario(page) -> dict:
    return page.evaluate("window.infercost.state.get()")


# ---- loading -------------------------------------------------------------------------------------

def test_page_loads_every_step_with_numbers_and_course_links(make_page):
    page = make_page()
    for step, values in readouts(page).items():
        assert all(v and v != "–" for v in values), (step, values)
    assert text(page, "s2-per-token") == "320" and text(page, "s2-per-token-unit") == "KB"
    assert text(page, "s2-conv") == "2.62" and text(page, "s2-conv-unit") == "GB"
    assert page.locator("#s2-grid .cell").count() == 100
    assert page.locator("#s3-chart canvas").count() >= 1
    hrefs = page.eval_on_selector_all(".module-link", "links => links.map(a => a.getAttribute('href'))")
    assert f"{COURSE_URL}/06/" in hrefs and f"{COURSE_URL}/09/" in hrefs and f"{COURSE_URL}/10/" in hrefs and f"{COURSE_URL}/12/" in hrefs
    assert page.locator("#s3-chart").get_attribute("role") == "img"
    assert "Memory is full at a batch of 55" in text(page, "s3-summary")
    assert "Weights take" in text(page, "s2-grid-summary")


def test_every_control_has_a_label(make_page):
    page = make_page()
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('input:not([type=file]), select, button')]
        .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.textContent.trim()
                        && !el.getAttribute('aria-labelledby'))
        .map((el) => el.id || el.outerHTML.slice(0, 60))""")
    assert unlabelled == []


# ---- the top bar drives every step ---------------------------------------------------------------

def changed_steps(before, after):
    return {step for step in before if before[step] != after[step]}


@pytest.mark.parametrize("action", ["model", "precision", "gpu", "gpus"])
def test_each_top_bar_control_changes_every_step(make_page, action):
    page = make_page()
    before = readouts(page)
    if action == "model":
        page.select_option("#tb-model", "llama-3.1-8b")
    elif action == "precision":
        page.locator("#prec-16bit").focus()
        page.keyboard.press("ArrowRight")  # radios move by keyboard: 16-bit -> 8-bit
    elif action == "gpu":
        page.select_option("#tb-gpu", "h200")
    else:
        page.locator("#tb-gpus-plus").click()
        page.locator("#tb-gpus-plus").click()
    wait_drawn(page)
    assert changed_steps(before, readouts(page)) == set(STEP_READOUTS), readouts(page)


def test_gpu_count_by_keyboard_and_typing(make_page):
    page = make_page()
    page.locator("#tb-gpus").fill("8")
    page.keyboard.press("Tab")
    wait_drawn(page)
    assert scenario(page)["gpus"] == 8
    page.locator("#tb-gpus").focus()
    page.keyboard.press("ArrowUp")
    wait_drawn(page)
    assert scenario(page)["gpus"] == 9
    page.locator("#tb-gpus").fill("0")
    page.keyboard.press("Tab")
    wait_drawn(page)
    assert scenario(page)["gpus"] == 1


def test_banner_names_the_smallest_count_that_fits_and_applies_it(make_page):
    page = make_page()
    assert page.locator("#fit-banner").is_hidden()
    page.select_option("#tb-model", "llama-3.1-405b")
    wait_drawn(page)
    assert page.locator("#fit-banner").is_visible()
    # 811.7 GB needs 12 H100s; 16 is the fewest that split the 128 attention heads evenly
    assert "16" in text(page, "fit-banner-text") and text(page, "fit-apply-n") == "16"
    assert page.eval_on_selector("#s2-fit", "o => o.closest('.readout').classList.contains('is-nofit')")
    assert page.locator("#s2-overflow .cell:not([hidden])").count() > 0
    page.locator("#fit-apply").click()
    wait_drawn(page)
    assert scenario(page)["gpus"] == 16 and page.locator("#fit-banner").is_hidden()


# ---- sliders and inputs move their readouts ------------------------------------------------------

SLIDERS = [
    ("s1-question", ["s1-ttft"]),
    ("s1-answer", ["s1-write"]),
    ("s2-length", ["s2-conv"]),
    ("s2-count", ["s2-grid-summary"]),
    ("s3-batch", ["s3-total", "s3-user"]),
    ("s4-k", ["s4-per-pass"]),
    ("s4-alpha", ["s4-per-pass", "s4-speedup"]),
    ("s4-prefix", ["s4-saved-time", "s4-saved-mem"]),
    ("s5-busy", ["s5-out"]),
    ("as-compute", ["s1-ttft"]),
    ("as-memory", ["s1-write"]),
]


def test_each_slider_moves_its_readouts_by_keyboard(make_page):
    page = make_page()
    for slider, ids in SLIDERS:
        before = [text(page, i) for i in ids]
        label_before = page.locator(f"output[for={slider}]").text_content()
        page.locator(f"#{slider}").focus()
        page.keyboard.press("ArrowRight" if slider != "s4-alpha" else "ArrowLeft")
        page.keyboard.press("ArrowRight" if slider != "s4-alpha" else "ArrowLeft")
        wait_drawn(page)
        after = [text(page, i) for i in ids]
        assert all(a != b for a, b in zip(after, before)), (slider, before, after)
        assert page.locator(f"output[for={slider}]").text_content() != label_before
        assert page.locator(f"#{slider}").get_attribute("aria-valuetext")


def test_kv_precision_price_and_draft_model_move_their_readouts(make_page):
    page = make_page()
    before = text(page, "s2-per-token")
    page.locator("label[for=kv-8bit]").click()
    wait_drawn(page)
    assert text(page, "s2-per-token") == "160" and before == "320"

    before = text(page, "s5-out")
    page.locator("#s5-price").fill("6.98")
    wait_drawn(page)
    assert text(page, "s5-out") != before and scenario(page)["price_per_gpu_hour_usd"] == 6.98
    page.locator("#s5-price-reset").click()
    wait_drawn(page)
    assert text(page, "s5-out") == before and scenario(page)["price_per_gpu_hour_usd"] is None

    before = text(page, "s4-speedup")
    page.select_option("#s4-draft", "llama-3.1-8b")
    wait_drawn(page)
    assert text(page, "s4-speedup") != before and "Llama 3.1 8B" in text(page, "s4-speedup-meaning")


def test_batch_past_memory_is_marked_red(make_page):
    page = make_page("?batch=96")
    assert "does not fit" in text(page, "s3-status")
    assert "is-nofit" in page.locator("#s3-status").get_attribute("class")


# ---- step 1 and step 4 animations ----------------------------------------------------------------

def test_the_answer_streams_after_the_first_token_delay(make_page):
    page = make_page()
    page.locator("#step-1").scroll_into_view_if_needed()
    page.locator("#s1-replay").click()
    page.wait_for_function("() => document.getElementById('s1-stream').textContent.split(' ').length > 5", timeout=5000)
    assert "Sunlight" in text(page, "s1-stream")


def test_simulate_shows_three_colours_and_ends_identical(make_page):
    page = make_page()
    page.locator("#s4-simulate").click()
    page.wait_for_selector("#s4-check:not([hidden])", timeout=15_000)
    kinds = page.eval_on_selector_all(".tok", "toks => [...new Set(toks.map(t => t.dataset.kind))].sort()")
    assert kinds == ["accepted", "rejected", "target"]
    colours = {k: page.eval_on_selector(f".tok--{k}", "t => getComputedStyle(t).backgroundColor") for k in kinds}
    assert len(set(colours.values())) == 3
    rgb = {k: tuple(int(x) for x in re.findall(r"\d+", v)[:3]) for k, v in colours.items()}
    assert rgb["accepted"][1] > rgb["accepted"][0] and rgb["accepted"][1] > rgb["accepted"][2]  # green
    assert rgb["rejected"][0] > rgb["rejected"][1] and rgb["rejected"][0] > rgb["rejected"][2]  # red
    assert rgb["target"][2] > rgb["target"][0] and rgb["target"][2] > rgb["target"][1]  # blue
    assert text(page, "s4-out") == text(page, "s4-alone")
    assert "Identical" in text(page, "s4-verdict")
    # the big model's colour is the one total output has in the chart legend
    legend = page.eval_on_selector(".key--total", "k => getComputedStyle(k).backgroundColor")
    assert legend == colours["target"]


def test_reduced_motion_shows_results_at_once(make_page):
    page = make_page(reduced_motion="reduce")
    assert "reduced motion" in text(page, "s1-stream-status")
    page.locator("#s4-simulate").click()
    page.wait_for_selector("#s4-check:not([hidden])", timeout=3000)
    assert page.eval_on_selector(".tok", "t => getComputedStyle(t).animationName") == "none"


# ---- the URL holds the state ---------------------------------------------------------------------

def test_permalink_round_trips(make_page):
    page = make_page()
    page.select_option("#tb-model", "qwen3-32b")
    page.locator("label[for=prec-4bit]").click()
    page.select_option("#tb-gpu", "a100-80gb")
    for slider, presses in (("s1-answer", 2), ("s2-count", 3), ("s3-batch", -2), ("s5-busy", 4)):
        page.locator(f"#{slider}").focus()
        for _ in range(abs(presses)):
            page.keyboard.press("ArrowRight" if presses > 0 else "ArrowLeft")
    page.locator("#s5-price").fill("2.25")
    wait_drawn(page)
    page.evaluate("window.infercost.state.writeUrl()")
    url = page.url
    query = parse_qs(urlsplit(url).query)
    assert query["model"] == ["qwen3-32b"] and query["precision"] == ["4bit"] and query["price_per_gpu_hour_usd"] == ["2.25"]
    state, shown = scenario(page), readouts(page)
    again = make_page("?" + urlsplit(url).query)
    assert scenario(again) == state
    assert readouts(again) == shown
    assert again.locator("#tb-model").input_value() == "qwen3-32b"
    assert again.locator("#prec-4bit").is_checked()
    assert again.locator("#s5-price").input_value() == "2.25"


def test_bad_url_values_fall_back_with_a_note(make_page):
    page = make_page("?gpus=abc&model=no-such-model&batch=-5&busy_share=NaN&precision=3bit&mystery=1&question_tokens=2000")
    s = scenario(page)
    defaults = page.evaluate("window.infercost.state.getDefaults()")
    for field in ("gpus", "model", "batch", "busy_share", "precision"):
        assert s[field] == defaults[field], field
    assert s["question_tokens"] == 2000
    notes = page.locator("#notes").text_content()
    for words in ("number of GPUs", "“abc”", "model", "batch size", "server busy", "precision", "mystery"):
        assert words in notes, words
    assert "gpus=abc" not in page.url  # the address now holds what the page shows
    page.locator("#notes .note button").first.click()
    assert page.locator("#notes .note").count() == 5


def test_a_value_the_model_cannot_hold_is_adjusted_with_a_note(make_page):
    page = make_page("?conversation_tokens=128000")
    page.select_option("#tb-model", "mistral-7b")
    wait_drawn(page)
    assert scenario(page)["conversation_tokens"] == 32768
    assert "32,768" in page.locator("#toasts").text_content()


# ---- importing a model ---------------------------------------------------------------------------

def test_import_config_json(make_page, tmp_path):
    page = make_page()
    good = tmp_path / "config.json"
    good.write_text(json.dumps(LLAMA_8B_CONFIG))
    page.set_input_files("#tb-import", str(good))
    page.wait_for_function("() => window.infercost.state.get().custom_model !== null")
    wait_drawn(page)
    assert page.locator("#tb-model").input_value() == "custom"
    assert text(page, "s2-per-token") == "128"
    assert "custom_model" in page.evaluate("window.infercost.state.writeUrl(), location.search")


def test_import_refuses_a_wrong_file(make_page, tmp_path):
    page = make_page(expect_errors=True)  # the refused upload is a 422 the console reports
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"model_type": "bert", "hidden_size": 768}))
    page.set_input_files("#tb-import", str(bad))
    page.wait_for_selector("#toasts .note--error")
    assert "model_type" in page.locator("#toasts").text_content()
    assert page.evaluate("window.infercost.state.get().custom_model") is None


# ---- layout: phone width, dark mode --------------------------------------------------------------

def test_phone_width_has_no_horizontal_scroll(make_page):
    page = make_page(width=375, height=812)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.select_option("#tb-model", "llama-3.1-405b")
    wait_drawn(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    box = page.locator("#topbar").bounding_box()
    assert box["height"] < 260
    page.mouse.wheel(0, 3000)
    page.wait_for_timeout(100)
    assert page.locator("#topbar").bounding_box()["y"] == 0  # sticky


def test_dark_mode_follows_the_system(make_page):
    light = make_page(color_scheme="light")
    dark = make_page(color_scheme="dark")
    bg = "getComputedStyle(document.body).backgroundColor"
    assert light.evaluate(bg) != dark.evaluate(bg)
    assert readouts(light) == readouts(dark)


def test_api_docs_work_offline(make_page, server_url):
    page = make_page()
    page.goto(server_url + "docs")
    page.wait_for_selector(".opblock-summary-path", timeout=10_000)
    assert "/api/estimate" in page.locator("#swagger-ui").text_content()


# ---- nothing jumps while dragging ----------------------------------------------------------------

ALL_SLIDERS = [s for s, _ in SLIDERS]


@pytest.mark.parametrize("width", [1280, 375])
def test_sliders_stay_put_while_their_values_change(make_page, width):
    """Moving a slider from end to end never moves the slider itself (no layout jump above it)."""
    page = make_page(width=width)
    truncated = page.evaluate("""() => [...document.querySelectorAll('.control > label')]
        .filter((l) => l.scrollWidth > l.clientWidth + 1).map((l) => l.textContent)""")
    assert truncated == []
    for slider in ALL_SLIDERS:
        page.locator(f"#{slider}").focus()
        tops = []
        for key in ("Home", "ArrowRight", "End", "ArrowLeft", "Home"):
            page.keyboard.press(key)
            wait_drawn(page)
            tops.append(page.evaluate(f"document.getElementById('{slider}').getBoundingClientRect().top + scrollY"))
        assert max(tops) - min(tops) <= 1, (slider, tops)


def test_a_link_the_server_refuses_falls_back_with_a_note(make_page):
    bad_model = json.dumps({"id": "broken", "name": "Broken", "layers": 2})  # fields missing
    page = make_page("?custom_model=" + bad_model, expect_errors=True)  # the 422 shows in the console
    assert scenario(page)["custom_model"] is None
    assert "imported model" in page.locator("#notes").text_content()
    assert page.locator("#tb-model").input_value() == "llama-3.1-70b"


# ---- measure it yourself: a benchmark result ------------------------------------------------------

BENCH_FIXTURE = __import__("pathlib").Path(__file__).parent.parent / "fixtures" / "bench_result_quick.json"


def test_loading_a_benchmark_result_adds_this_machine(make_page):
    if not BENCH_FIXTURE.exists():
        pytest.skip("no benchmark result fixture")
    page = make_page()
    page.set_input_files("#bench-file", str(BENCH_FIXTURE))
    page.wait_for_selector("#bench-result:not([hidden])")
    original = json.loads(BENCH_FIXTURE.read_text())
    assert page.locator("#bench-rows tr").count() == len(original["runs"])
    first = page.locator("#bench-rows tr").first.text_content()
    assert original["runs"][0]["precision"] in first
    options = page.eval_on_selector_all("#tb-gpu option", "os => os.map(o => o.value)")
    machine_id = original["limits"][0]["gpu_spec"]["id"]
    assert f"measured:{machine_id}" in options
    before = readouts(page)
    page.select_option("#tb-gpu", f"measured:{machine_id}")
    wait_drawn(page)
    assert page.evaluate("window.infercost.estimate.hardware.measured") is True
    assert changed_steps(before, readouts(page)) >= {"step 1", "step 2", "step 3"}
    page.locator("#bench-use button").last.click()  # this machine with the benchmarked model
    wait_drawn(page)
    s = scenario(page)
    assert s["custom_gpu"]["id"] == machine_id and s["custom_model"] is not None and s["gpus"] == 1
    assert all(v and v != "–" for v in readouts(page)["step 1"])
    # a permalink keeps the machine
    page.evaluate("window.infercost.state.writeUrl()")
    again = make_page("?" + urlsplit(page.url).query)
    assert again.locator("#tb-gpu").input_value() == f"measured:{machine_id}"
    assert again.evaluate("window.infercost.estimate.hardware.measured") is True


def test_a_wrong_benchmark_file_is_refused(make_page, tmp_path):
    page = make_page(expect_errors=True)  # the refused upload is a 422 the console reports
    wrong = tmp_path / "result.json"
    wrong.write_text(json.dumps(LLAMA_8B_CONFIG))
    page.set_input_files("#bench-file", str(wrong))
    page.wait_for_selector("#bench-status.is-error")
    assert "schema" in page.locator("#bench-status").text_content()
    assert page.locator("#bench-result").is_hidden()
    assert not any(v.startswith("measured:") for v in page.eval_on_selector_all("#tb-gpu option", "os => os.map(o => o.value)"))
