"""An account's API tokens page: made for its own memory users (the secret shown once), listed, revoked; and
the same refusals as every door for another account's users, bad input and too many tokens."""

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from memory_engine.models import ApiToken, MemoryUser
from memory_engine.services import tokens
from memory_engine.services.spaces import assistant_create, owned_user_create, space_get


@pytest.fixture
def maria(django_user_model):
    account = django_user_model.objects.create_user("maria", password="pw-maria-12345")
    owned_user_create(owner=account, user_id="me", display_name="Maria")
    assistant_create(assistant_id="helper")
    space_get(user_id="maria:me", assistant_id="helper")
    return account


def secret_shown(page: str) -> str:
    found = re.search(r'id="token-secret"[^>]*value="(mos_[^"]+)"', page)
    assert found, "the page shows no secret"
    return found.group(1)


def api_status(secret: str) -> int:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return api.get("/api/v1/users/maria:me/spaces/helper/").status_code


def test_an_account_makes_a_token_uses_it_sees_it_listed_and_revokes_it(client, maria):
    assert client.get(reverse("tokens")).status_code == 302  # signed out: to the sign-in page
    client.force_login(maria)
    page = client.get(reverse("tokens")).content.decode()
    assert "No tokens yet" in page and "Maria (maria:me)" in page

    made = client.post(reverse("tokens"), {"user_id": "maria:me", "name": "my agent", "expires_in_days": "30"})
    assert made.status_code == 201
    secret = secret_shown(made.content.decode())
    assert api_status(secret) == 200
    token = ApiToken.objects.get()
    assert (token.name, token.prefix, token.memory_user.external_id) == ("my agent", secret[:12], "maria:me")
    assert token.expires_at is not None

    listed = client.get(reverse("tokens")).content.decode()
    assert secret not in listed and f"{token.prefix}…" in listed and "my agent" in listed and "active to" in listed

    revoked = client.post(reverse("tokens"), {"action": "revoke", "token": str(token.pk)}, follow=True)
    assert "no longer works" in revoked.content.decode()
    assert api_status(secret) == 401
    assert "revoked" in client.get(reverse("tokens")).content.decode()


def test_another_account_can_neither_make_nor_revoke_a_token_for_marias_memory(client, maria, django_user_model):
    token, secret = tokens.token_create(memory_user=MemoryUser.objects.get(external_id="maria:me"))
    mallory = django_user_model.objects.create_user("mallory", password="pw-mallory-12345")
    owned_user_create(owner=mallory, user_id="me")
    client.force_login(mallory)

    page = client.get(reverse("tokens")).content.decode()
    assert token.prefix not in page and "Maria" not in page
    made = client.post(reverse("tokens"), {"user_id": "maria:me", "name": "mine now"})
    assert made.status_code == 400 and "no memory user of yours" in made.content.decode()
    revoke = client.post(reverse("tokens"), {"action": "revoke", "token": str(token.pk)})
    assert revoke.status_code == 400 and "no token of yours" in revoke.content.decode()
    assert ApiToken.objects.count() == 1 and api_status(secret) == 200


@pytest.mark.parametrize(
    ("form", "says"),
    [
        ({"expires_in_days": "soon"}, "a number of days"),
        ({"expires_in_days": "0"}, "more than 0"),
        ({"expires_in_days": "1e9"}, "at most 3650"),
        ({"expires_in_days": "nan"}, "more than 0"),
        ({"name": "x" * 101}, "name"),
        ({"user_id": "x" * 5000}, "no memory user of yours"),
    ],
)
def test_bad_input_is_refused_with_what_is_wrong_and_stores_nothing(client, maria, form, says):
    client.force_login(maria)
    answer = client.post(reverse("tokens"), {"user_id": "maria:me", **form})
    assert answer.status_code == 400 and says in answer.content.decode()
    assert not ApiToken.objects.exists()


def test_revoking_needs_a_token_id_and_a_revoked_token_can_be_revoked_again(client, maria):
    client.force_login(maria)
    for bad in ["", "abc", "-1", "9" * 40]:
        assert client.post(reverse("tokens"), {"action": "revoke", "token": bad}).status_code == 400
    token, _ = tokens.token_create(memory_user=MemoryUser.objects.get(external_id="maria:me"))
    for _ in range(2):
        assert client.post(reverse("tokens"), {"action": "revoke", "token": str(token.pk)}).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_an_account_holds_at_most_fifty_working_tokens(client, maria):
    memory_user = MemoryUser.objects.get(external_id="maria:me")
    for _ in range(tokens.ACCOUNT_LIVE_TOKENS):
        tokens.token_create(memory_user=memory_user)
    client.force_login(maria)
    refused = client.post(reverse("tokens"), {"user_id": "maria:me"})
    assert refused.status_code == 400 and "revoke one first" in refused.content.decode()
    tokens.token_revoke(token=ApiToken.objects.first())
    assert client.post(reverse("tokens"), {"user_id": "maria:me"}).status_code == 201


def test_the_home_page_names_a_space_by_its_display_name_and_the_api_docs_lead_back(client, maria):
    client.force_login(maria)
    home = client.get(reverse("home")).content.decode()
    assert '<td>Maria <span class="muted">maria:me</span></td>' in home
    docs = client.get(reverse("api-docs")).content.decode()
    assert f'href="{reverse("home")}"' in docs and f'href="{reverse("tokens")}"' in docs
