"""What a request may see. A token sees its own memory user; a signed-in playground account sees the
memory users it owns; nobody sees anything else. Whatever is out of sight answers 404, as if it did not
exist, so that a caller cannot learn which other users exist."""

from django.http import Http404
from rest_framework.request import Request

from memory_engine.models import LongTermEntry, MemorySpace, MemoryUser
from memory_engine.services import curation, spaces
from memory_engine.services.spaces import assistant_create, space_get


def visible_users(request: Request):
    token = getattr(request.user, "token", None)
    if token is not None:
        return spaces.visible_users(memory_user_id=token.memory_user_id)
    return spaces.visible_users(account=request.user)


def user_for(request: Request, user_id: str) -> MemoryUser:
    user = visible_users(request).filter(external_id=user_id).first()
    if user is None:
        raise Http404(f"no memory user {user_id!r}")
    return user


def space_for(request: Request, user_id: str, assistant_id: str, *, create: bool = False) -> MemorySpace:
    """The space of a visible user with the assistant. With `create`, a space (and the assistant) that
    does not exist yet is made, as the first turn of a conversation does; otherwise it is a 404."""
    user = user_for(request, user_id)
    if create:
        assistant_create(assistant_id=assistant_id)  # safe to repeat
        return space_get(user_id=user.external_id, assistant_id=assistant_id)
    space = spaces.space_named(user_id=user.external_id, assistant_id=assistant_id)
    if space is None:
        raise Http404(f"no memory space for user {user_id!r} and assistant {assistant_id!r}")
    return space


def entry_for(space: MemorySpace, entry_id: int, kinds: tuple[str, ...]) -> LongTermEntry:
    """A long-term entry of the space, of one of the kinds (deleted and superseded ones included)."""
    entry = curation.entry_of(space, entry_id, kinds)
    if entry is None:
        raise Http404(f"no entry {entry_id} here")
    return entry
