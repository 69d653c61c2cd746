"""Property-based run of the REST API against its own OpenAPI schema (schemathesis): generated bodies,
query strings and ids for every operation, sent with alice's token into alice's memory, must never get a
server error. Bounded: a fixed number of examples per operation, no deadline per example."""

import itertools

import pytest
import schemathesis
from django.core import signals
from django.core.cache import cache
from django.db import close_old_connections
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from bench.fake_llm_server import reply
from memory_engine.models import MemoryUser
from memory_engine.services import curation
from memory_engine.services.tokens import token_create
from playground.wsgi import application
from tests.memory_helpers import CAT_TALK, add_turns, nothing_extracted

EXAMPLES_PER_OPERATION = 25


schema = schemathesis.openapi.from_wsgi("/api/schema/", application)


@pytest.fixture
def connections_kept_open():
    """The test's database transaction must outlive each request, as Django's own test client ensures:
    a WSGI request ends by closing the connection otherwise."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def alice(connections_kept_open, memory, alice_space, fake_llm):
    """alice has a space with the `helper` assistant, a few turns, a profile entry, a fact, and a token.
    Returns the token's secret and the real values of each path parameter."""
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("Noted.")
    alice_space.stm_capacity = 2
    alice_space.save()
    page = add_turns(memory, CAT_TALK)[0]
    profile = curation.profile_entry_add(space=alice_space, attribute="occupation", value="nurse", actor="test")
    fact = curation.knowledge_entry_add(
        space=alice_space, kind="user_knowledge", topic="pet", fact="The user has a cat named Milo", actor="test"
    )
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    return secret, {
        "user_id": "alice",
        "assistant_id": "helper",
        "profile": profile.pk,
        "knowledge": fact.pk,
        "page_id": page.pk,
    }


_alternate = itertools.count()


# One test per operation, named by it. (schemathesis's own `schema.parametrize()` gives all 46 items one
# node id, and pytest-xdist, which schedules a file's tests by node id, then ran one of them.)
OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
def test_no_generated_request_gets_a_server_error(operation, alice, settings):
    secret, real = alice
    settings.MEMORYOS = {
        **settings.MEMORYOS,
        "EVENTS_STREAM_SECONDS": 0.5,
    }  # the memory feed's stream ends soon, so the test reads it whole

    @given(case=operation.as_strategy())
    @hypothesis_settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )
    def check(case):
        # Every other request goes to alice's real space and entries, so that bodies reach the engine rather
        # than stopping at a 404.
        if case.path_parameters and next(_alternate) % 2 == 0:
            entry = real["profile"] if "/profile/" in case.path else real["knowledge"]
            values = {**real, "entry_id": entry}
            case.path_parameters = {name: values.get(name, value) for name, value in case.path_parameters.items()}
        cache.clear()  # rate limits would answer 429 to most of the run
        response = case.call(headers={"Authorization": f"Bearer {secret}"})
        # and the answer has the shape the OpenAPI document gives it for its status, so the document cannot drift
        case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])

    check()


def test_a_forget_is_documented_as_answering_the_entry_with_what_it_covered(client):
    """A DELETE with one response class is documented as 204 with no body: the entry's is 200 and its card."""
    document = client.get("/api/schema/", {"format": "json"}).json()
    for kind in ("profile", "knowledge"):
        answers = document["paths"][f"/api/v1/users/{{user_id}}/spaces/{{assistant_id}}/{kind}/{{entry_id}}/"]
        responses = answers["delete"]["responses"]
        assert set(responses) == {"200"}, responses
        assert responses["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/EntryCard"}
