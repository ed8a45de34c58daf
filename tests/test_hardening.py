"""Hostile and malformed requests: the server answers 4xx with a message naming the field, keeps its
files to itself, and sends its security headers on every answer."""

import json

import pytest
from fastapi.testclient import TestClient

from infercost.server import create_app


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(), raise_server_exceptions=False)


def _field_named(response, field):
    problems = response.json()["detail"]
    return any(field in ".".join(map(str, p["loc"])) or field in p["msg"] for p in problems)


# The main table of bad scenarios is in test_server.py; these are the ones the fuzzer and the review found.
BAD_ESTIMATES = [  # (body, field the answer must name)
    ({"memory_efficiency": 1e-300}, "memory_efficiency"),  # overflowed every time to infinity
    ({"compute_efficiency": "NaN"}, "compute_efficiency"),
    ({"question_tokens": 200_000}, "question_tokens"),  # the question alone is past the context
    ({"custom_gpu": {"id": "x", "name": "x", "vendor": "x", "peak": {"bf16_flop_per_s": 1e15}, "memory_bytes": 8e10,
                     "memory_bandwidth_bytes_per_s": 1e-300, "link_name": ""}}, "custom_gpu.memory_bandwidth_bytes_per_s"),
    ({"model": "llama-3.1-8b", "draft_model": "qwen3-8b"}, "draft_model"),  # another tokenizer
]


@pytest.mark.parametrize("body,field", BAD_ESTIMATES)
def test_bad_estimate_input_is_a_422_naming_the_field(client, body, field):
    r = client.post("/api/estimate", json=body)
    assert r.status_code == 422, r.text
    assert _field_named(r, field), r.text


@pytest.mark.parametrize("raw", [b"", b"{", b"[1,2]", b"null", b"\xff\xfe", b'{"gpus": NaN}', b"1" * 5000])
def test_unparseable_bodies_are_422(client, raw):
    r = client.post("/api/estimate", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"]


def test_huge_body_is_refused_before_it_is_read(client):
    r = client.post("/api/estimate", content=b" " * (2 * 1024 * 1024), headers={"content-type": "application/json"})
    assert r.status_code == 413


@pytest.mark.parametrize("payload,field", [
    (b"{" * 10_000 + b"}" * 10_000, "file"),  # deep nesting
    (json.dumps({"model_type": "llama", "num_hidden_layers": "many"}).encode(), "num_hidden_layers"),
    (json.dumps({"model_type": "bert"}).encode(), "model_type"),
    (b"not json at all", "file"),
    (json.dumps({"model_type": "llama", "hidden_size": 4096, "x": "a" * 300_000}).encode(), "file"),  # over 256 KB
])
def test_hostile_config_uploads(client, payload, field):
    r = client.post("/api/models/import", files={"file": ("config.json", payload, "application/json")})
    assert r.status_code in (413, 422), r.text
    assert _field_named(r, field) or r.status_code == 413


def test_ten_megabyte_upload_is_refused(client):
    r = client.post("/api/models/import", files={"file": ("config.json", b"0" * 10_000_000, "application/json")})
    assert r.status_code == 413


@pytest.mark.parametrize("path", [
    "/../pyproject.toml", "/%2e%2e/%2e%2e/etc/passwd", "/vendor/../../server.py", "/..%2fserver.py",
    "/js/..%2f..%2fserver.py", "/%2e%2e%5cserver.py", "/....//server.py",
])
def test_static_files_cannot_escape_their_folder(client, path):
    r = client.get(path)
    assert r.status_code == 404
    assert b"create_app" not in r.content and b"root:" not in r.content


def test_api_paths_answer_as_the_api(client):
    r = client.get("/api/estimate")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert client.get("/api/nothing").status_code == 404


@pytest.mark.parametrize("method,path", [("GET", "/"), ("GET", "/api/catalog"), ("POST", "/api/estimate"),
                                         ("GET", "/api/nothing"), ("GET", "/docs")])
def test_security_headers_on_every_answer(client, method, path):
    r = client.request(method, path, json={"gpus": -1} if method == "POST" else None)
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"


def test_page_has_no_inline_script_or_handlers(client):
    html = client.get("/").text.lower()
    assert "<script>" not in html and " onclick=" not in html and " onload=" not in html and "style=" not in html


def test_page_scripts_never_turn_text_into_markup_or_code():
    from importlib import resources
    scripts = resources.files("infercost").joinpath("web/js")
    for js in scripts.iterdir():
        if js.name.endswith(".js"):
            text = js.read_text("utf-8")
            for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "new Function", "document.write"):
                assert sink not in text, f"{js.name} uses {sink}"


def test_fast_estimate_json_equals_to_dict_and_refuses_non_finite_numbers():
    import dataclasses

    from infercost.api.encode import estimate_json
    from infercost.estimate import estimate
    from infercost.scenario import Scenario

    e = estimate(Scenario(model="mixtral-8x7b", gpu="h200", gpus=2, precision="8bit"))
    assert json.loads(estimate_json(e)) == json.loads(json.dumps(e.to_dict()))
    broken = dataclasses.replace(e, reading=dataclasses.replace(e.reading, answer_s=float("inf")))
    with pytest.raises(ValueError):
        estimate_json(broken)


def test_chunked_body_past_the_cap_is_refused(client):
    def chunks():
        for _ in range(40):
            yield b" " * 100_000

    r = client.post("/api/estimate", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
