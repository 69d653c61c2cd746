"""Helpers for tests of the REST API: a client holding a memory user's token."""

from rest_framework.test import APIClient

from memory_engine.models import MemoryUser
from memory_engine.services.tokens import token_create

SPACE = "/api/v1/users/{user}/spaces/helper/"


def client_for(user_id: str) -> APIClient:
    """An API client that sends a fresh token of the memory user `user_id`."""
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id=user_id), name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client
