"""The JSON API the page uses (and scripts can): catalog, estimate, speculative simulation, model import."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from .. import catalog
from ..codec import to_jsonable
from ..errors import ConfigError, ScenarioError
from ..estimate import estimate
from ..hf_config import model_from_json_bytes
from ..physics import memory, params, speculative
from ..scenario import INT_BOUNDS, Scenario
from .encode import estimate_json, json_bytes
from ..results import Estimate
from ..specs import ModelSpec
from .errors import ERROR_RESPONSES, ApiError, field_loc
from .schemas import ScenarioIn, SimulateIn
from .uploads import read_upload

MAX_CONFIG_UPLOAD_BYTES = 256 * 1024
ESTIMATE_CACHE_SIZE = 1024  # ~25 KB each: at most ~25 MB
COURSE_MODULES = (("06", "Attention"), ("09", "Memory"), ("10", "Training"), ("11", "The cost of serving AI"),
                  ("12", "Looking things up"))

router = APIRouter(prefix="/api")


class JSONBytes(JSONResponse):
    """JSON already encoded (cached bytes); a JSONResponse so the OpenAPI schema documents its model."""

    def render(self, content: Any) -> bytes:
        return content


@router.get("/health", summary="Is the server up")
def health() -> dict[str, str]:
    return {"status": "ok"}


def _model_entry(m) -> dict[str, Any]:
    return {"id": m.id, "name": m.name, "family": m.family, "params_total": params.total_params(m),
            "params_active": params.active_params(m), "is_moe": m.is_moe,
            "kv_bytes_per_token_16bit": memory.kv_bytes_per_token(m, 2.0),
            "max_context_tokens": m.max_context_tokens, "drafts": [d.id for d in catalog.drafts_for(m)], "source": m.source}


def _gpu_entry(g) -> dict[str, Any]:
    return {"id": g.id, "name": g.name, "vendor": g.vendor, "memory_bytes": g.memory_bytes,
            "memory_bandwidth_bytes_per_s": g.memory_bandwidth_bytes_per_s,
            "bf16_flop_per_s": g.peak.bf16_flop_per_s, "link_name": g.link_name,
            "price_per_gpu_hour_usd": g.price_per_gpu_hour_usd, "price_source": g.price_source,
            "price_as_of": g.price_as_of, "measured": g.measured}


def course_links(base_url: str) -> list[dict[str, str | None]]:
    """Links to the course's modules: `{module}` in the base is replaced by "06", else "<base>/06/"."""
    links = []
    for number, title in COURSE_MODULES:
        if not base_url:
            href = None
        elif "{module}" in base_url:
            href = base_url.replace("{module}", number)
        else:
            href = base_url.rstrip("/") + f"/{number}/"
        links.append({"number": number, "title": title, "href": href})
    return links


def _bench_load_available() -> bool:
    try:
        from . import bench  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=8)
def _catalog_bytes(base_url: str) -> bytes:
    from ..assumptions import assumptions

    a = assumptions()
    return json_bytes({
        "models": [_model_entry(m) for m in catalog.models().values()],
        "gpus": [_gpu_entry(g) for g in catalog.gpus().values()],
        "defaults": Scenario().to_dict(),
        "bounds": {name: list(bounds) for name, bounds in INT_BOUNDS.items()},
        "assumptions": {"compute_efficiency": a.compute_efficiency, "memory_efficiency": a.memory_efficiency,
                        "memory_reserve_share": a.memory_reserve_share, "kv_block_tokens": a.kv_block_tokens,
                        "prefill_chunk_tokens": a.prefill_chunk_tokens, "sources": a.sources},
        "course": {"base_url": base_url or None, "modules": course_links(base_url)},
        "features": {"bench_load": _bench_load_available()},
    })


CATALOG_SCHEMA = {"type": "object", "required": ["models", "gpus", "defaults", "bounds", "assumptions", "course"],
                  "properties": {"models": {"type": "array", "items": {"type": "object"}},
                                 "gpus": {"type": "array", "items": {"type": "object"}},
                                 "defaults": {"type": "object"}, "bounds": {"type": "object"},
                                 "assumptions": {"type": "object"}, "course": {"type": "object"},
                                 "features": {"type": "object"}}}


@router.get("/catalog", summary="Models, accelerators, defaults, bounds, assumptions and course links",
            response_class=JSONBytes,
            responses={200: {"content": {"application/json": {"schema": CATALOG_SCHEMA}}}})
def get_catalog(request: Request) -> Response:
    return JSONBytes(_catalog_bytes(request.app.state.course_base_url))


@lru_cache(maxsize=ESTIMATE_CACHE_SIZE)
def _estimate_bytes(scenario: Scenario) -> bytes:
    try:
        result = estimate(scenario)
    except (ArithmeticError, ValueError) as exc:  # absurd custom shapes overflow: a client mistake, not a crash
        if isinstance(exc, ScenarioError):
            raise
        raise ScenarioError("scenario", f"these values are outside what the estimate can compute ({exc})") from None
    try:
        return estimate_json(result)
    except ValueError:  # a time or rate overflowed to infinity
        raise ScenarioError("scenario", "these values are outside what the estimate can compute "
                                        "(a result is not finite)") from None


def _scenario(body: ScenarioIn) -> Scenario:
    full = body.model_dump()  # nested models with their defaults; top-level fields only as sent
    data = {name: full[name] for name in body.model_fields_set}
    draft = data.get("draft_model")
    if draft is not None and draft not in catalog.models():
        raise ScenarioError("draft_model", f"unknown model {draft!r}; known: {', '.join(catalog.models())}")
    return Scenario.from_dict(data)


@router.post("/estimate", summary="Every number of the page for one scenario", response_class=JSONBytes,
             response_model=Estimate, responses=ERROR_RESPONSES)
async def post_estimate(body: ScenarioIn) -> Response:
    return JSONBytes(_estimate_bytes(_scenario(body)))


@router.post("/simulate/speculative", summary="A seeded run of speculative decoding, token by token",
             responses=ERROR_RESPONSES)
async def post_simulate(body: SimulateIn) -> dict[str, Any]:
    trace = speculative.simulate(body.acceptance_rate, body.draft_tokens, body.output_tokens, body.seed)
    return {"events": to_jsonable(list(trace.events)), "output": list(trace.output),
            "target_output": list(trace.target_output), "identical": trace.identical,
            "target_passes": trace.target_passes, "accepted": trace.accepted, "proposed": trace.proposed}


UPLOAD_BODY = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {"type": "object", "required": ["file"],
                                       "properties": {"file": {"type": "string", "format": "binary"}}}},
    "application/json": {"schema": {"type": "object", "description": "the config.json itself"}}}}}


@router.post("/models/import", summary="A model from a Hugging Face config.json (at most 256 KB)",
             openapi_extra=UPLOAD_BODY, response_model=ModelSpec, responses=ERROR_RESPONSES)
async def import_model(request: Request) -> dict[str, Any]:
    data, _ = await read_upload(request, "file", MAX_CONFIG_UPLOAD_BYTES)
    try:
        spec = model_from_json_bytes(data)
    except ConfigError as exc:
        raise ApiError(field_loc(f"file.{exc.field}"), exc.message) from None
    problem = catalog.model_problem(spec)
    if problem is not None:
        raise ApiError(field_loc(f"file.{problem[0]}"), problem[1])
    return to_jsonable(spec)
