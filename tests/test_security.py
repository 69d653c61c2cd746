"""Issue 15's findings, each reproduced first: what a hostile account, a crash or a reset finds."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_engine.engine import long_term
from memory_engine.errors import EntryNotActive
from memory_engine.models import ApiToken, LongTermEntry
from tests.api_helpers import SPACE, client_for


@pytest.fixture
def nurse(alice_space):
    return long_term.profile_entry_add(space=alice_space, attribute="occupation", value="nurse", actor="test")


def test_an_edit_of_an_entry_deleted_meanwhile_is_refused_and_changes_nothing(nurse):
    seen = LongTermEntry.objects.get(pk=nurse.pk)  # an editor's request read it while it was active
    long_term.entry_delete(entry=nurse, actor="someone else", cause="admin")

    with pytest.raises(EntryNotActive, match="deleted"):
        long_term.entry_edit(entry=seen, value="surgeon", actor="editor")

    stored = LongTermEntry.objects.get(pk=nurse.pk)
    assert (stored.status, stored.value) == ("deleted", "nurse")
    assert [v.after for v in stored.versions.order_by("at", "pk")] == ["nurse", None]


def test_the_api_answers_409_to_an_edit_of_a_deleted_entry(nurse):
    api = client_for("alice")
    url = SPACE.format(user="alice") + f"profile/{nurse.pk}/"
    assert api.delete(url).status_code == 204

    answer = api.patch(url, {"value": "surgeon"}, format="json")

    assert answer.status_code == 409 and "deleted" in answer.data["detail"]
    assert LongTermEntry.objects.get(pk=nurse.pk).value == "nurse"


def test_a_token_in_steady_use_writes_its_last_use_once_a_minute(memory):
    api = client_for("alice")
    token = ApiToken.objects.get(memory_user__external_id="alice")

    def writes_of_the_token_row() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert api.get("/api/v1/users/alice/").status_code == 200
        return sum(q["sql"].startswith("UPDATE") and "api" in q["sql"].lower() for q in queries.captured_queries)

    assert writes_of_the_token_row() == 1  # first use
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert [writes_of_the_token_row() for _ in range(3)] == [0, 0, 0]
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    assert writes_of_the_token_row() == 1  # a minute on: recorded again
