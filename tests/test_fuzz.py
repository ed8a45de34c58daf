"""Fuzz the API from its own OpenAPI schema (schemathesis): no server error, every response as documented.

A bounded, deterministic run: FUZZ_EXAMPLES cases per operation, derandomized, so a failure
reproduces. Each case goes through schemathesis's checks: no 5xx, only documented status codes,
content types and headers, bodies matching the documented response schema, invalid input refused.
One check is left out: "schema-valid data must be accepted". Some limits span fields or data the
schema cannot state (question plus answer within the model's context, a shared prefix no longer
than the question, a custom accelerator too slow to compute), and the API rightly answers those
with a 422 naming the field.
"""

import schemathesis
from hypothesis import HealthCheck, settings

from infercost.server import create_app

FUZZ_EXAMPLES = 250  # per operation; with the API's operations this is well over 1,000 cases

schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())
CASES_RUN = []


@schema.parametrize()
@settings(max_examples=FUZZ_EXAMPLES, derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_api_never_fails_on_generated_input(case):
    CASES_RUN.append(case.operation.label)
    case.call_and_validate(excluded_checks=[schemathesis.checks.positive_data_acceptance])


def test_the_fuzz_run_was_large_enough():
    """Runs after the parametrized test in file order: the cases above add up to at least 1,000."""
    assert len(CASES_RUN) >= 1000, f"only {len(CASES_RUN)} cases ran"
