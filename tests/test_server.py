"""The JSON API and the static page, through FastAPI's TestClient."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from infercost.estimate import estimate
from infercost.scenario import Scenario
from infercost.server import CSP, create_app, is_loopback, safe_course_url

LLAMA_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app("https://course.example/ai"), raise_server_exceptions=False) as c:
        yield c


def problems(response):
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, list) and detail
    for item in detail:
        assert set(item) >= {"loc", "msg"}
        assert "Traceback" not in item["msg"]
    return detail


def fields(response):
    return [".".join(str(p) for p in item["loc"] if p != "body") for item in problems(response)]


# ---- health, catalog, docs, page -----------------------------------------------------------------

def test_health(client):
    r = client.get("/api/health")
    assert r.status_code == 200 and r.json() == {"status": "ok"}


def test_catalog_lists_models_gpus_defaults_and_course_links(client):
    data = client.get("/api/catalog").json()
    llama = next(m for m in data["models"] if m["id"] == "llama-3.1-70b")
    assert llama["kv_bytes_per_token_16bit"] == 327_680
    assert abs(llama["params_total"] - 70.55e9) < 0.01e9
    assert "llama-3.2-1b" in llama["drafts"] and "llama-3.1-405b" not in llama["drafts"]
    h100 = next(g for g in data["gpus"] if g["id"] == "h100-sxm")
    assert h100["price_per_gpu_hour_usd"] > 0 and h100["price_source"] and h100["price_as_of"]
    assert data["defaults"] == Scenario().to_dict()
    assert data["assumptions"]["compute_efficiency"] == 0.5 and data["assumptions"]["memory_efficiency"] == 0.7
    links = {m["number"]: m["href"] for m in data["course"]["modules"]}
    assert links["06"] == "https://course.example/ai/06/" and set(links) >= {"06", "09", "10", "12"}


def test_course_links_are_left_out_without_a_base_url_and_refuse_scripts():
    with TestClient(create_app("javascript:alert(1)")) as c:
        modules = c.get("/api/catalog").json()["course"]["modules"]
    assert all(m["href"] is None for m in modules)
    assert safe_course_url("/course/") == "/course/"
    assert safe_course_url("//evil.example") == ""
    assert safe_course_url("https://x.example/c/{module}") == "https://x.example/c/{module}"


def test_course_url_placeholder():
    with TestClient(create_app("https://x.example/m{module}.html")) as c:
        modules = c.get("/api/catalog").json()["course"]["modules"]
    assert {m["number"]: m["href"] for m in modules}["09"] == "https://x.example/m09.html"


def test_page_and_assets_are_served_with_a_strict_policy(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert page.headers["content-security-policy"] == CSP
    assert "<script>" not in page.text and " style=" not in page.text and " onclick" not in page.text
    for path in ("/style.css", "/js/main.js", "/vendor/uplot/uPlot.esm.js", "/vendor/uplot/LICENSE", "/favicon.svg"):
        assert client.get(path).status_code == 200, path
    assert "http" not in client.get("/style.css").text.replace("https://", "")  # no web fonts or remote assets


def test_openapi_states_bounds_and_docs_work_offline(client):
    schema = client.get("/openapi.json").json()
    scenario = schema["components"]["schemas"]["ScenarioIn"]["properties"]
    assert scenario["gpus"]["minimum"] == 1 and scenario["gpus"]["maximum"] == 1024
    assert scenario["busy_share"]["minimum"] == 0.001 and scenario["busy_share"]["maximum"] == 1
    assert "llama-3.1-70b" in scenario["model"]["enum"]
    assert {"/api/estimate", "/api/catalog", "/api/simulate/speculative", "/api/models/import", "/api/health"} <= set(schema["paths"])
    docs = client.get("/docs")
    assert docs.status_code == 200 and "/vendor/swagger-ui/swagger-ui-bundle.js" in docs.text
    assert "cdn" not in docs.text.lower()
    assert client.get("/vendor/swagger-ui/swagger-ui-bundle.js").status_code == 200


# ---- estimate ------------------------------------------------------------------------------------

def test_estimate_matches_the_library(client):
    r = client.post("/api/estimate", json={})
    assert r.status_code == 200
    assert r.json() == json.loads(json.dumps(estimate(Scenario()).to_dict()))


def test_partial_scenario_takes_defaults(client):
    data = client.post("/api/estimate", json={"gpus": 8, "precision": "8bit"}).json()
    assert data["scenario"]["gpus"] == 8 and data["scenario"]["precision"] == "8bit"
    assert data["scenario"]["model"] == Scenario().model
    assert len(data["kv"]["grid"]) == 100 and data["batching"]["curve"]


def test_weights_that_do_not_fit_are_an_answer_not_an_error(client):
    data = client.post("/api/estimate", json={"model": "llama-3.1-405b", "gpus": 1}).json()
    assert data["fit"]["fits"] is False and data["fit"]["min_gpus"] > 1
    assert data["kv"]["overflow_cells"] > 0


@pytest.mark.parametrize("body, field", [
    ({"gpus": -1}, "gpus"),
    ({"gpus": 0}, "gpus"),
    ({"gpus": 10**9}, "gpus"),
    ({"gpus": "4"}, "gpus"),
    ({"gpus": 2.5}, "gpus"),
    ({"gpus": True}, "gpus"),
    ({"busy_share": "NaN"}, "busy_share"),
    ({"busy_share": 0}, "busy_share"),
    ({"busy_share": 1.5}, "busy_share"),
    ({"compute_efficiency": -0.1}, "compute_efficiency"),
    ({"acceptance_rate": 2}, "acceptance_rate"),
    ({"question_tokens": 10**12}, "question_tokens"),
    ({"answer_tokens": 200_000}, "answer_tokens"),
    ({"conversation_tokens": 200_000}, "conversation_tokens"),
    ({"model": "mistral-7b", "conversation_tokens": 64_000}, "conversation_tokens"),
    ({"shared_prefix_tokens": 5000}, "shared_prefix_tokens"),
    ({"model": "no-such-model"}, "model"),
    ({"model": "Llama 3.1 70B"}, "model"),
    ({"gpu": "h900"}, "gpu"),
    ({"draft_model": "nope"}, "draft_model"),
    ({"precision": "3bit"}, "precision"),
    ({"kv_precision": "4bit"}, "kv_precision"),
    ({"price_per_gpu_hour_usd": -3}, "price_per_gpu_hour_usd"),
    ({"price_per_gpu_hour_usd": 1e9}, "price_per_gpu_hour_usd"),
    ({"batch": None}, "batch"),
    ({"surprise": 1}, "surprise"),
    ({"custom_model": {"id": "x"}}, "custom_model.name"),
    ({"custom_gpu": {"id": "x", "name": "x", "vendor": "x", "peak": {}, "memory_bytes": -1,
                     "memory_bandwidth_bytes_per_s": 1e12}}, "custom_gpu.memory_bytes"),
])
def test_bad_scenarios_get_422_naming_the_field(client, body, field):
    r = client.post("/api/estimate", json=body)
    assert field in fields(r)
    message = r.json()["detail"][0]["msg"]
    assert message.startswith(field.split(".")[0])


def test_nan_and_infinity_literals_are_refused(client):
    for literal in ("NaN", "Infinity", "-Infinity"):
        r = client.post("/api/estimate", content=f'{{"busy_share": {literal}}}', headers={"content-type": "application/json"})
        assert fields(r) == ["busy_share"]


def test_malformed_bodies_are_422(client):
    for content in (b"{", b"[1, 2]", b"null", b"\xff\xfe", b'"text"'):
        r = client.post("/api/estimate", content=content, headers={"content-type": "application/json"})
        problems(r)


def test_huge_body_is_refused_before_reading(client):
    r = client.post("/api/estimate", content=b" " * (2 * 1024 * 1024), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_custom_model_round_trip_through_import(client):
    spec = client.post("/api/models/import", json=LLAMA_8B_CONFIG).json()
    assert spec["layers"] == 32 and spec["kv_heads"] == 8
    data = client.post("/api/estimate", json={"custom_model": spec, "gpus": 1}).json()
    assert abs(data["model"]["params_total"] - 8.03e9) < 0.01e9
    assert data["model"]["kv_bytes_per_token"] == 131_072


def test_inconsistent_custom_model_names_the_field(client):
    spec = client.post("/api/models/import", json=LLAMA_8B_CONFIG).json()
    r = client.post("/api/estimate", json={"custom_model": {**spec, "kv_heads": 7}})
    assert fields(r) == ["custom_model.kv_heads"]


def test_this_machine_as_custom_gpu(client):
    machine = {"id": "this-machine", "name": "This machine", "vendor": "measured",
               "peak": {"bf16_flop_per_s": 2e12, "fp32_flop_per_s": 1e12},
               "memory_bytes": 64e9, "memory_bandwidth_bytes_per_s": 50e9, "measured": True}
    data = client.post("/api/estimate", json={"custom_gpu": machine, "model": "smollm2-135m", "gpus": 1,
                                              "conversation_tokens": 2000, "price_per_gpu_hour_usd": 0.1}).json()
    assert data["hardware"]["measured"] is True and data["hardware"]["name"] == "This machine"


def test_responses_are_strict_json(client):
    r = client.post("/api/estimate", json={"model": "smollm2-135m", "gpu": "b200", "conversation_tokens": 1000})
    json.loads(r.text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


# ---- speculative simulation ----------------------------------------------------------------------

def test_simulation_is_seeded_and_identical(client):
    body = {"acceptance_rate": 0.6, "draft_tokens": 5, "output_tokens": 60, "seed": 7}
    a = client.post("/api/simulate/speculative", json=body).json()
    b = client.post("/api/simulate/speculative", json=body).json()
    assert a == b and a["identical"] is True and a["output"] == a["target_output"] and len(a["output"]) == 60
    assert {e["kind"] for e in a["events"]} == {"accepted", "rejected", "target"}


@pytest.mark.parametrize("body, field", [
    ({"acceptance_rate": 1.5}, "acceptance_rate"), ({"acceptance_rate": "NaN"}, "acceptance_rate"),
    ({"draft_tokens": 0}, "draft_tokens"), ({"draft_tokens": 17}, "draft_tokens"),
    ({"output_tokens": 201}, "output_tokens"), ({"output_tokens": -1}, "output_tokens"),
    ({"seed": -1}, "seed"), ({"seed": 2**40}, "seed"), ({"seed": "x"}, "seed"), ({"x": 1}, "x"),
])
def test_bad_simulations_get_422(client, body, field):
    assert field in fields(client.post("/api/simulate/speculative", json=body))


# ---- model import --------------------------------------------------------------------------------

def test_import_multipart(client):
    files = {"file": ("config.json", json.dumps(LLAMA_8B_CONFIG).encode(), "application/json")}
    spec = client.post("/api/models/import", files=files).json()
    assert spec["hidden_size"] == 4096 and spec["max_context_tokens"] == 131072


@pytest.mark.parametrize("content, field", [
    (b"not json at all", "file.config"),
    (b"[1, 2, 3]", "file.config"),
    (json.dumps({**LLAMA_8B_CONFIG, "model_type": "bert"}).encode(), "file.model_type"),
    (json.dumps({k: v for k, v in LLAMA_8B_CONFIG.items() if k != "model_type"}).encode(), "file.model_type"),
    (json.dumps({**LLAMA_8B_CONFIG, "num_hidden_layers": -3}).encode(), "file.num_hidden_layers"),
    (json.dumps({**LLAMA_8B_CONFIG, "hidden_size": "big"}).encode(), "file.hidden_size"),
])
def test_import_refuses_bad_configs(client, content, field):
    files = {"file": ("config.json", content, "application/json")}
    assert field in fields(client.post("/api/models/import", files=files))


def test_import_refuses_large_and_missing_files(client):
    big = {"file": ("config.json", b"{" + b" " * (300 * 1024) + b"}", "application/json")}
    r = client.post("/api/models/import", files=big)
    assert fields(r) == ["file"] and "256 KB" in r.json()["detail"][0]["msg"]
    assert fields(client.post("/api/models/import", files={"other": ("a.json", b"{}", "application/json")})) == ["file"]
    assert fields(client.post("/api/models/import", content=b"", headers={"content-type": "application/json"})) == ["file"]
    r = client.post("/api/models/import", content=b"<xml/>", headers={"content-type": "application/xml"})
    assert r.status_code == 415


# ---- nothing leaks -------------------------------------------------------------------------------

def test_unexpected_errors_do_not_leak(monkeypatch, client):
    from infercost.api import routes

    def boom(_):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(routes.speculative, "simulate", lambda *a: boom(a))
    r = client.post("/api/simulate/speculative", json={})
    assert r.status_code == 500 and "secret" not in r.text and "Traceback" not in r.text


def test_unknown_paths_are_404(client):
    assert client.get("/api/nothing").status_code == 404
    assert client.get("/../../etc/passwd").status_code == 404


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")


def test_every_catalog_model_and_gpu_estimates_through_the_api(client):
    catalog = client.get("/api/catalog").json()
    for m in catalog["models"]:
        for g in catalog["gpus"][:3]:
            body = {"model": m["id"], "gpu": g["id"], "conversation_tokens": min(8000, m["max_context_tokens"])}
            r = client.post("/api/estimate", json=body)
            assert r.status_code == 200, (m["id"], g["id"], r.text)
            assert all(math.isfinite(p["total_tokens_per_s"]) for p in r.json()["batching"]["curve"])


def test_serve_prints_the_address_and_warns_when_exposed(monkeypatch, capsys):
    import uvicorn

    from infercost import server

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(kw))
    assert server.serve("127.0.0.1", 8123, "") == 0
    out = capsys.readouterr()
    assert "http://127.0.0.1:8123/" in out.out and "warning" not in out.err
    assert server.serve("0.0.0.0", 8124, "javascript:alert(1)") == 0
    err = capsys.readouterr().err
    assert "other machines" in err and "--course-url" in err
    assert calls[0] == {"host": "127.0.0.1", "port": 8123, "log_level": "warning"}
    assert server.serve("127.0.0.1", 70000, "") == 2


def test_serve_reports_a_port_in_use(monkeypatch, capsys):
    import uvicorn

    from infercost import server

    def busy(app, **kw):
        raise SystemExit(1)

    monkeypatch.setattr(uvicorn, "run", busy)
    assert server.serve("127.0.0.1", 8125, "") == 1
    assert "--port" in capsys.readouterr().err


# ---- benchmark results ---------------------------------------------------------------------------

BENCH_FIXTURE = Path(__file__).parent / "fixtures" / "bench_result_quick.json"


@pytest.fixture(scope="module")
def bench_bytes():
    if not BENCH_FIXTURE.exists():
        pytest.skip("no benchmark result fixture")
    return BENCH_FIXTURE.read_bytes()


def test_bench_load_gives_this_machine_and_measurements(client, bench_bytes):
    files = {"file": ("result.json", bench_bytes, "application/json")}
    data = client.post("/api/bench/load", files=files).json()
    machine = data["machines"][0]["gpu"]
    assert machine["measured"] is True and machine["memory_bandwidth_bytes_per_s"] > 0
    original = json.loads(bench_bytes)
    assert machine["memory_bandwidth_bytes_per_s"] == original["limits"][0]["gpu_spec"]["memory_bandwidth_bytes_per_s"]
    run = data["runs"][0]
    assert run["measured"]["decode_tokens_per_s"] == original["runs"][0]["decode_tokens_per_s"]["median"]
    assert run["estimate"]["decode_tokens_per_s"] == original["runs"][0]["estimate"]["decode_tokens_per_s"]
    est = client.post("/api/estimate", json={"custom_gpu": machine, "custom_model": data["model"]["spec"], "gpus": 1,
                                             "question_tokens": 100, "answer_tokens": 100, "conversation_tokens": 1000})
    assert est.status_code == 200, est.text
    assert est.json()["hardware"]["measured"] is True
    assert client.get("/api/catalog").json()["features"]["bench_load"] is True


def test_bench_load_refuses_a_wrong_file_listing_the_problems(client, bench_bytes):
    broken = json.loads(bench_bytes)
    del broken["status"]
    broken["runs"][0]["ttft_s"]["median"] = -1
    r = client.post("/api/bench/load", files={"file": ("r.json", json.dumps(broken).encode(), "application/json")})
    found = fields(r)
    assert "file.runs.0.ttft_s.median" in found and any("status" in f for f in found)
    assert all(item["msg"].startswith("file: ") for item in r.json()["detail"])
    other = client.post("/api/bench/load", json={"schema": "something-else"})
    assert fields(other) == ["file.schema"]
    for content in (b"not json", b"[1]", b'{"schema": NaN}', json.dumps(LLAMA_8B_CONFIG).encode()):
        problems(client.post("/api/bench/load", files={"file": ("r.json", content, "application/json")}))
    big = b'{"pad": "' + b"x" * (1100 * 1024) + b'"}'
    assert client.post("/api/bench/load", files={"file": ("r.json", big, "application/json")}).status_code in (413, 422)
