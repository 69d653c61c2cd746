"""The project shell: settings from the environment, the home page, the admin pages."""

import json
import re

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape
from rest_framework.throttling import SimpleRateThrottle

from bench.fake_llm_server import status
from memory_engine.config import memory_settings
from memory_engine.interfaces.word_diff import word_diff
from memory_engine.models import ConsolidationRun, LongTermEntry, MemoryUser, MidTermSession, Page, ParameterChange
from memory_engine.services import curation
from memory_engine.services.tokens import token_create
from playground import settings as project_settings
from playground.databases import database_from_url
from tests.memory_helpers import CAT_TALK, add_turns, extraction, nothing_extracted


def test_a_malformed_setting_fails_loudly(monkeypatch):
    monkeypatch.setenv("X_INT", "seven")
    monkeypatch.setenv("X_BOOL", "perhaps")
    monkeypatch.setenv("X_CHOICE", "random")
    with pytest.raises(ImproperlyConfigured, match="X_INT"):
        project_settings.envint("X_INT", 7)
    with pytest.raises(ImproperlyConfigured, match="X_BOOL"):
        project_settings.envbool("X_BOOL", True)
    with pytest.raises(ImproperlyConfigured, match="heat, lfu"):
        project_settings.envchoice("X_CHOICE", "heat", ("heat", "lfu"))


def test_unset_settings_take_their_defaults(monkeypatch):
    monkeypatch.delenv("X_UNSET", raising=False)
    assert project_settings.envint("X_UNSET", 7) == 7
    assert project_settings.envfloat("X_UNSET", 0.6) == 0.6
    assert project_settings.envbool("X_UNSET", False) is False


def test_database_urls_are_understood():
    pg = database_from_url("postgres://u:p%40ss@db.local:5433/mem")
    assert (pg["ENGINE"], pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == (
        "django.db.backends.postgresql",
        "mem",
        "u",
        "p@ss",
        "db.local",
        "5433",
    )
    assert str(database_from_url("sqlite:////tmp/x.sqlite3")["NAME"]) == "/tmp/x.sqlite3"
    # The query string is the connection's options, beside the pool (TLS to a managed PostgreSQL)
    options = database_from_url("postgres://u:p@db.local/mem?sslmode=require", pool_size=4)["OPTIONS"]
    assert options == {"pool": {"min_size": 1, "max_size": 4, "timeout": 30}, "sslmode": "require"}
    for unsupported in ("mysql://x/y", "nonsense", ""):
        with pytest.raises(ImproperlyConfigured, match="is not supported: sqlite or postgres"):
            database_from_url(unsupported)
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL cannot be read"):
        database_from_url("postgres://u:p@db.local:54x2/mem")  # a port that is no number


@pytest.fixture
def filled(memory, alice_space, fake_llm):
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 3.5
    alice_space.save()
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK + [("<script>alert('x')</script>", "ok")])
    token_create(memory_user=alice_space.user, name="notebook")
    return alice_space


def test_the_home_page_counts_each_tier_of_the_accounts_own_spaces_only(client, filled, django_user_model):
    account = django_user_model.objects.create_user("ann", password="pw-ann-12345")
    MemoryUser.objects.filter(external_id="alice").update(owner=account)
    assert "alice" not in client.get(reverse("home")).content.decode()  # nobody signed in: no memory shown
    client.force_login(account)
    page = client.get(reverse("home")).content.decode()
    assert "alice" in page and "helper" in page and "bob" not in page
    assert "<td>1</td><td>3</td><td>1</td><td>1</td>" in page.replace("\n", "").replace(" ", "")


def test_the_home_page_counts_each_tier_on_its_own_never_over_their_product(client, filled, django_user_model):
    """The counts were joined over the pages, sessions and entries at once: their product, 227 million rows
    for a space of 1,320 pages, 92 sessions and 1,869 entries (the page ran 52 s, then the database's disk
    was full). Each is a subquery of its own now."""
    account = django_user_model.objects.create_user("ann", password="pw-ann-12345")
    MemoryUser.objects.filter(external_id="alice").update(owner=account)
    client.force_login(account)
    tiers = [model._meta.db_table for model in (Page, MidTermSession, LongTermEntry)]
    with CaptureQueriesContext(connection) as seen:
        assert client.get(reverse("home")).status_code == 200
    for query in seen.captured_queries:
        joined = [table for table in tiers if f'JOIN "{table}"' in query["sql"]]
        assert len(joined) < 2, f"one query joins {joined}: {query['sql']}"


def test_an_account_starts_a_space_and_only_its_owner_opens_its_chat_page(client, memory, django_user_model):
    ann = django_user_model.objects.create_user("ann", password="pw-ann-12345")
    ben = django_user_model.objects.create_user("ben", password="pw-ben-12345")
    client.force_login(ann)
    made = client.post(reverse("space-create"), {"user_id": "demo", "display_name": "Ann", "assistant_id": "tutor"})
    assert made.status_code == 302 and made["Location"] == reverse("chat", args=["ann:demo", "tutor"])
    assert client.get(made["Location"]).status_code == 200
    own = client.post(reverse("space-create"), {"user_id": "alice", "assistant_id": "helper"})
    assert own["Location"] == reverse("chat", args=["ann:alice", "helper"])  # not the operator's alice
    assert MemoryUser.objects.get(external_id="alice").owner is None
    bad = client.post(reverse("space-create"), {"user_id": "a b", "assistant_id": "helper"}, follow=True)
    assert "is not valid" in bad.content.decode()
    client.force_login(ben)
    assert client.get(reverse("chat", args=["ann:demo", "tutor"])).status_code == 404


@pytest.mark.parametrize(
    "name",
    ["page", "midtermsession", "longtermentry", "heatevent", "memoryspace", "memoryuser", "assistant", "apitoken"],
)
def test_every_admin_list_and_detail_page_shows_its_rows(admin_client, filled, name):
    listed = admin_client.get(reverse(f"admin:memory_engine_{name}_changelist"))
    changelist = listed.context["cl"]
    model = changelist.model
    assert changelist.result_count == model.objects.count() > 0
    first = model.objects.first()
    assert first in changelist.result_list
    shown = admin_client.get(reverse(f"admin:memory_engine_{name}_change", args=[first.pk]))
    assert shown.context["original"] == first
    assert escape(str(first)) in shown.content.decode()  # the title and breadcrumbs name the row


def test_stored_html_is_escaped_in_the_admin(admin_client, filled):
    stored = Page.objects.get(user_input__startswith="<script>")
    page = admin_client.get(reverse("admin:memory_engine_page_change", args=[stored.pk])).content.decode()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "<script>alert" not in page


def test_the_admin_is_for_staff_only(client, admin_client, django_user_model, filled):
    url = reverse("admin:memory_engine_page_changelist")
    assert client.get(url).status_code == 302  # signed out: sent to sign in
    client.force_login(django_user_model.objects.create_user("member", password="pw-member-12345"))
    assert client.get(url).status_code == 302  # signed in, not staff: the same
    assert admin_client.get(url).status_code == 200  # staff


def test_an_admin_edit_or_delete_is_recorded_and_retrieval_sees_it_at_once(admin_client, memory, filled):
    entry = LongTermEntry.objects.get(kind="profile", key="occupation")
    url = reverse("admin:memory_engine_longtermentry_change", args=[entry.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields} | {"value": "surgeon"}
    data |= {"versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "0"}
    assert admin_client.post(url, data).status_code == 302
    last = entry.versions.order_by("-at", "-pk").first()
    assert (last.before, last.after, last.cause, last.actor) == ("nurse", "surgeon", "admin", "admin admin")
    found = memory.retrieve(user_id="alice", assistant_id="helper", query="job", count_hits=False)
    assert [i.text for i in found.profile] == ["occupation: surgeon"]
    delete = reverse("admin:memory_engine_longtermentry_delete", args=[entry.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 302
    entry.refresh_from_db()
    assert entry.status == "deleted" and entry.versions.order_by("-at", "-pk").first().cause == "admin"
    assert memory.retrieve(user_id="alice", assistant_id="helper", query="job", count_hits=False).profile == []


def test_the_entry_history_shows_each_version_as_a_diff_and_reverts_to_one(admin_client, memory, filled):
    entry = LongTermEntry.objects.get(kind="profile", key="occupation")
    curation.entry_edit(entry=entry, value="night <b>nurse</b>", actor="api token x")
    curation.entry_delete(entry=entry, actor="api token x")
    page = admin_client.get(reverse("admin:memory_engine_longtermentry_versions", args=[entry.pk])).content.decode()
    assert "<del>nurse</del>" in page and "<ins>night &lt;b&gt;nurse&lt;/b&gt;</ins>" in page
    assert page.count('class="version') == 3 and "api token x" in page and "#1" in page  # the source page
    # The status where it changed (created active, edited: unchanged, deleted), and which version is now.
    assert page.count("unchanged") == 1 and page.count("· current") == 1
    first = entry.versions.order_by("at", "pk").first()
    revert = reverse("admin:memory_engine_longtermentry_revert", args=[entry.pk, first.pk])
    assert admin_client.get(revert).status_code == 403  # changes only by POST
    assert admin_client.post(revert).status_code == 302
    entry.refresh_from_db()
    assert (entry.status, entry.value) == ("active", "nurse")
    last = entry.versions.order_by("-at", "-pk").first()
    assert (last.before, last.after, last.cause) == (None, "nurse", "admin")
    # the version it is now offers no revert to itself: only the two earlier ones with a value do
    again = admin_client.get(reverse("admin:memory_engine_longtermentry_versions", args=[entry.pk])).content.decode()
    assert again.count("Revert to this") == 2 and again.count("· current") == 1
    found = memory.retrieve(user_id="alice", assistant_id="helper", query="job", count_hits=False)
    assert [i.text for i in found.profile] == ["occupation: nurse"]


def test_deleting_an_entry_in_the_admin_says_it_is_marked_deleted_and_its_history_kept(admin_client, filled):
    entry = LongTermEntry.objects.get(kind="profile", key="occupation")
    page = admin_client.get(reverse("admin:memory_engine_longtermentry_delete", args=[entry.pk])).content.decode()
    assert "marked deleted" in page and "history" in page
    assert "related items will be deleted" not in page and "Entry version" not in page
    changelist = reverse("admin:memory_engine_longtermentry_changelist")
    chosen = admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [entry.pk]})
    assert "marked deleted" in chosen.content.decode() and "related items" not in chosen.content.decode()
    admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"})
    entry.refresh_from_db()
    assert entry.status == "deleted" and entry.versions.count() == 2


def test_records_the_engine_writes_cannot_be_added_or_changed_in_the_admin(admin_client, filled):
    for name in ("heatevent", "consolidationrun", "parameterchange"):
        listed = admin_client.get(reverse(f"admin:memory_engine_{name}_changelist")).content.decode()
        assert reverse(f"admin:memory_engine_{name}_add") not in listed
        assert admin_client.get(reverse(f"admin:memory_engine_{name}_add")).status_code == 403
    entry = LongTermEntry.objects.get(kind="profile", key="occupation")
    page = admin_client.get(reverse("admin:memory_engine_longtermentry_change", args=[entry.pk])).content.decode()
    assert 'name="versions-MAX_NUM_FORMS" value="0"' in page  # the inline offers no row to add


def test_the_admin_heat_timeline_has_the_threshold_as_it_was_at_each_time(admin_client, filled):
    space = filled
    url = reverse("admin:memory_engine_memoryspace_change", args=[space.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields} | {"heat_threshold": "3.0"}
    data = {name: value for name, value in data.items() if value is not None}
    assert admin_client.post(url, data).status_code == 302
    heat = admin_client.get(reverse("admin:memory_engine_memoryspace_heat", args=[space.pk])).context["heat"]
    assert heat["threshold"] == 3.0
    assert [(c["before"], c["after"]) for c in heat["threshold_changes"]] == [(3.5, 3.0)]
    assert ParameterChange.objects.get().actor == "admin admin"


def test_the_admins_parameter_labels_read_as_written_not_in_greek_capitals(admin_client, filled):
    # the admin capitalises a label's first letter: "α (visits)" read "Α (visits)", a Greek capital like an A
    page = admin_client.get(reverse("admin:memory_engine_memoryspace_change", args=[filled.pk])).content.decode()
    labels = re.findall(r"<label[^>]*>([^<]+)</label>", page)
    assert "Visits weight α:" in labels and "Recency weight γ:" in labels
    assert not [label for label in labels if label[:1] in "ΑΒΓΘΤΜ"]


def test_a_word_diff_escapes_what_it_shows():
    assert word_diff("likes tea", "likes <i>coffee</i>") == "likes <del>tea</del> <ins>&lt;i&gt;coffee&lt;/i&gt;</ins>"
    assert word_diff(None, "new") == "<ins>new</ins>"


def test_reverting_a_deleted_attribute_that_another_entry_now_holds_is_refused(memory, filled):
    entry = LongTermEntry.objects.get(kind="profile", key="occupation")
    curation.entry_delete(entry=entry, actor="test")
    curation.profile_entry_add(space=filled, attribute="occupation", value="pilot", actor="test")
    with pytest.raises(ValueError, match="another entry now holds"):
        curation.entry_revert(entry=entry, version=entry.versions.order_by("at", "pk").first(), actor="test")
    assert LongTermEntry.objects.filter(key="occupation", status="active").get().value == "pilot"


def test_deleting_a_memory_user_in_the_admin_removes_all_of_its_memory_only(admin_client, memory, filled, bob_space):
    memory.add_memory(user_id="bob", assistant_id="helper", user_input="I sail.", agent_response="Nice!")
    folder = settings.MEMORYOS["INDEX_DIR"] / f"space-{filled.pk}"
    memory.retrieve(user_id="alice", assistant_id="helper", query="cat")
    assert folder.exists()
    alice = MemoryUser.objects.get(external_id="alice")
    url = reverse("admin:memory_engine_memoryuser_delete", args=[alice.pk])
    assert "Are you sure" in admin_client.get(url).content.decode()  # the confirmation comes first
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not MemoryUser.objects.filter(external_id="alice").exists()
    assert not Page.objects.filter(space_id=filled.pk).exists() and not folder.exists()
    assert Page.objects.filter(space=bob_space).count() == 1


def test_the_admin_exports_a_users_memory_as_json(admin_client, filled):
    alice = MemoryUser.objects.get(external_id="alice")
    changelist = reverse("admin:memory_engine_memoryuser_changelist")
    response = admin_client.post(changelist, {"action": "export_json", "_selected_action": [alice.pk]})
    assert response["Content-Disposition"] == 'attachment; filename="memoryos-export.json"'
    document = json.loads(response.content)
    assert [u["user"]["id"] for u in document["users"]] == ["alice"]
    assert document["users"][0]["spaces"][0]["entries"][0]["history"]


@pytest.fixture
def failed_run(memory, alice_space, fake_llm) -> ConsolidationRun:
    """alice's consolidation run that failed (the LLM refused), with an LLM that extracts her occupation."""
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 1.5
    alice_space.save()
    fake_llm.responder = lambda request: status(400)  # refused: a permanent failure
    add_turns(memory, CAT_TALK[:2])
    failed = ConsolidationRun.objects.get(space=alice_space, status="failed")
    fake_llm.responder = lambda request: extraction(profile=[("occupation", "nurse", 1)])
    return failed


def test_a_failed_consolidation_run_is_retried_from_the_admin(admin_client, alice_space, failed_run):
    changelist = reverse("admin:memory_engine_consolidationrun_changelist")
    admin_client.post(changelist, {"action": "retry", "_selected_action": [failed_run.pk]})
    latest = ConsolidationRun.objects.filter(space=alice_space).order_by("-started_at", "-pk").first()
    assert latest.status == "succeeded" and latest.sessions_promoted >= 1
    assert LongTermEntry.objects.filter(space=alice_space, key="occupation", status="active").exists()


def test_a_retry_counts_against_the_staff_accounts_heavy_rate_with_its_erases(
    admin_client, alice_space, failed_run, monkeypatch
):
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"api": "100/min", "chat": "1/min"})
    entry = curation.profile_entry_add(space=alice_space, attribute="city", value="Porto", actor="test")
    erase = {"action": "erase_selected", "_selected_action": [entry.pk], "post": "yes"}
    erased = admin_client.post(reverse("admin:memory_engine_longtermentry_changelist"), erase, follow=True)
    assert "Erased 1 entry" in erased.content.decode()
    retry = {"action": "retry", "_selected_action": [failed_run.pk]}
    retried = admin_client.post(reverse("admin:memory_engine_consolidationrun_changelist"), retry, follow=True)
    assert retried.status_code == 200 and "Nothing was done" in retried.content.decode()
    assert list(ConsolidationRun.objects.filter(space=alice_space)) == [failed_run]


def test_the_admin_shows_each_users_tiers_at_a_glance_with_sizes(admin_client, memory, filled):
    alice = MemoryUser.objects.get(external_id="alice")
    memory.retrieve(user_id="alice", assistant_id="helper", query="cat")  # index files written
    page = admin_client.get(reverse("admin:memory_engine_memoryuser_change", args=[alice.pk])).content.decode()
    row = page[page.index('<table class="user-memory">') :].replace("\n", "").replace(" ", "")
    assert "<td>1</td><td>3</td><td>0</td>" in row  # short-term, mid-term, archived pages
    turn_text = sum(len(p.user_input) + len(p.agent_response) for p in Page.objects.filter(space=filled))
    assert f"{turn_text}chars" in row and "KB</td>" in row
    hrefs = [
        h.replace("&amp;", "&")
        for h in re.findall(r'href="([^"]+)"', page[page.index('<table class="user-memory">') :])
    ]
    for model in (Page, LongTermEntry):
        [link] = [h for h in hrefs if h.startswith(f"/admin/memory_engine/{model._meta.model_name}/?space__id__exact=")]
        listed = admin_client.get(link).context["cl"]
        assert listed.model is model and set(listed.result_list) == set(model.objects.filter(space=filled))
    [heat_link] = [h for h in hrefs if h.endswith("/heat/")]
    heat = admin_client.get(heat_link)
    assert heat.context["space"] == filled and "heat" in heat.content.decode().lower()


def test_locomo_samples_are_listed_once_their_file_appears_and_the_page_says_how_before(
    client, memory, django_user_model, settings, tmp_path
):
    """A fresh clone has no LoCoMo data beside it: the list was empty and stayed empty after the data was
    added, until a restart, and nothing said where to get it."""

    published, data = memory_settings().locomo_file, tmp_path / "locomo.json"
    settings.MEMORYOS = {**settings.MEMORYOS, "LOCOMO_FILE": str(data)}
    ann = django_user_model.objects.create_user("ann", password="pw-ann-12345")
    client.force_login(ann)
    made = client.post(reverse("space-create"), {"user_id": "demo", "assistant_id": "tutor"})
    before = client.get(made["Location"]).content.decode()
    assert "No LoCoMo samples here yet" in before and "snap-research/locomo" in before
    assert "<option>conv-26</option>" not in before
    data.write_text(published.read_text())  # the data arrives while the server runs
    after = client.get(made["Location"]).content.decode()
    assert "<option>conv-26</option>" in after and "No LoCoMo samples here yet" not in after
    job = client.post(
        "/api/v1/users/ann:demo/spaces/tutor/imports/", {"locomo_sample": "conv-26"}, content_type="application/json"
    )
    assert job.status_code == 202, job.content


def test_the_admin_names_a_spaces_parameters_as_the_pages_do(admin_client, filled):
    """The admin said "Stm capacity" where the page says "Short-term capacity"."""
    listing = admin_client.get(reverse("admin:memory_engine_memoryspace_changelist")).content.decode()
    detail = admin_client.get(reverse("admin:memory_engine_memoryspace_change", args=[filled.pk])).content.decode()
    for label in ("Short-term capacity", "Mid-term capacity (sessions)", "Promotion threshold τ"):
        assert label in listing or label in detail, label
    assert "Short-term capacity" in detail and "Stm capacity" not in listing + detail


def test_deleting_an_entry_in_the_admin_says_what_it_held_out_in_words(admin_client, filled):
    entry = LongTermEntry.objects.get(kind="profile", key="occupation")
    delete = reverse("admin:memory_engine_longtermentry_delete", args=[entry.pk])
    said = admin_client.post(delete, {"post": "yes"}, follow=True).content.decode()
    assert f"Entry {entry.pk} was marked deleted, with 1 statement of turn #1;" in said
    assert "statement(s)" not in said and "[1]" not in said


def test_an_entrys_versions_in_the_admin_are_read_only_every_field(admin_client, filled):
    entry = LongTermEntry.objects.get(kind="profile", key="occupation")
    page = admin_client.get(reverse("admin:memory_engine_longtermentry_change", args=[entry.pk])).content.decode()
    assert "versions-0-with_entry" not in page and "<select" not in page.split('id="versions-group"')[1]


def test_the_chat_page_offers_its_owner_the_space_as_a_file_and_no_one_else(client, memory, django_user_model):
    ann = django_user_model.objects.create_user("ann", password="pw-ann-12345")
    client.force_login(ann)
    client.post(reverse("space-create"), {"user_id": "demo", "display_name": "Ann", "assistant_id": "tutor"})
    memory.add_memory(user_id="ann:demo", assistant_id="tutor", user_input="I keep bees.", agent_response="Lovely.")
    page = client.get(reverse("chat", args=["ann:demo", "tutor"])).content.decode()
    href = reverse("api-space-export", args=["ann:demo", "tutor"])
    assert f'id="export-link" href="{href}" download="memory-anndemo-tutor.json"' in page
    exported = client.get(href)
    assert exported.status_code == 200 and exported.json()["pages"][0]["user_input"] == "I keep bees."
    client.force_login(django_user_model.objects.create_user("ben", password="pw-ben-12345"))
    assert client.get(href).status_code in (403, 404)
