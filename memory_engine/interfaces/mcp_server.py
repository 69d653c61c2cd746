"""The MCP server (official `mcp` SDK): the memory as tools for an agent.

The reference's three tools keep their names and parameters: add_memory, retrieve_memory and
get_user_profile. Beyond them, curation the reference lacks: list, edit and delete profile entries and
knowledge, an entry's history with the turns it came from, and an export of the whole memory.

Whose memory a call touches:
- over stdio (a desktop client starts `manage.py mcp_server`), the user fixed by `--user`
  (MEMORYOS_MCP_USER_ID), which the command requires;
- over streamable HTTP, the memory user of the API token the client sends as `Authorization: Bearer`,
  with the REST API's body limit and rates (mcp_http.py): a heavy tool (erase_entry, as REST's erase)
  counts against the caller's MEMORYOS_API_CHAT_RATE as well (interfaces/rates.py).
A call that names another user is refused.
The assistant is the server's (`--assistant`, MEMORYOS_MCP_ASSISTANT_ID) unless a call names one.

Tools are thin: they resolve the space and call the same services as the REST API.
"""

from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from memory_engine import inputs
from memory_engine.documents import RetrievalDoc
from memory_engine.errors import MemoryInputError
from memory_engine.interfaces.rates import HEAVY, admit, caller_key
from memory_engine.models import EntryVersion, LongTermEntry, MemorySpace
from memory_engine.services import conversation, curation, spoken_curation
from memory_engine.services.conversation import search, turn_add
from memory_engine.services.export import user_export
from memory_engine.services.spaces import assistant_create, space_get, user_create, user_named
from memory_engine.services.tokens import token_for_secret

Kind = LongTermEntry.Kind
ACTOR = "mcp"


@dataclass(frozen=True)
class Who:
    """Whose memory the server serves: a fixed user (stdio --user, or the HTTP token's); and the default
    assistant."""

    fixed_user: str | None
    assistant: str

    def user(self, asked: str | None) -> str:
        token = get_access_token()
        fixed = token.subject if token is not None else self.fixed_user
        if fixed is not None:
            if asked and asked != fixed:
                raise ToolError(f"this server serves the memory of {fixed!r} only, not {asked!r}")
            return fixed
        raise ToolError("this server serves no memory user: start it with --user, or send an API token")


class ApiTokenVerifier:
    """Accepts the project's API tokens (api/tokens.py) as MCP bearer tokens."""

    async def verify_token(self, token: str) -> AccessToken | None:
        found = await sync_to_async(token_for_secret)(token)
        if found is None:
            return None
        return AccessToken(
            token=token,
            client_id=f"api-token-{found.pk}",
            scopes=[],
            subject=found.memory_user.external_id,
            claims={"caller": caller_key(token=found)},  # whose rates a heavy tool counts against
        )


# --- Services behind the tools (sync: they use the ORM) ----------------------------------------------


async def run_orm(fn, *args, **kwargs):
    """Run an ORM function off the event loop, on a live database connection (this process lives long:
    a connection the database dropped is replaced, as Django does between requests). The engine's input
    errors (MemoryInputError) become the tool's error, with the same words REST gives."""

    def call():
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        except MemoryInputError as exc:  # what the caller sent: said as the tool's error, as REST says a 4xx
            raise ToolError(str(exc)) from None

    return await sync_to_async(call)()


async def held_to_heavy_rate() -> None:
    """Counts this tool call against its caller's heavy rate (MEMORYOS_API_CHAT_RATE), in the count REST's
    heavy requests add to; over it, raises ToolError and the tool does nothing. Over stdio there is no
    caller to count: the operator runs that process for one user."""
    token = get_access_token()
    if token is None:
        return
    wait = await run_orm(admit, token.claims["caller"], HEAVY)
    if wait:
        raise ToolError(
            "Request was throttled: this heavy call is over your MEMORYOS_API_CHAT_RATE. "
            f"Expected available in {wait} seconds."
        )


def _space(user_id: str, assistant_id: str, *, create: bool) -> MemorySpace:
    """The space of the user with the assistant. With `create`, an operator user new to the database
    (stdio) and the assistant are made; a token's user always exists."""
    known = user_named(user_id) is not None
    if not known and not create:
        raise ToolError(f"no memory for user {user_id!r} yet")
    if create:
        if not known:
            user_create(user_id=user_id)
        assistant_create(assistant_id=assistant_id)
    return space_get(user_id=user_id, assistant_id=assistant_id, create=create)


def _entry(space: MemorySpace, entry_id: int, kinds: tuple[str, ...]) -> LongTermEntry:
    entry = curation.entry_of(space, entry_id, kinds)
    if entry is None:
        raise ToolError(f"no entry {entry_id} in this memory")
    return entry


def _add_memory(space, user_input, agent_response, timestamp, meta_data) -> dict:
    page = turn_add(
        space=space, user_input=user_input, agent_response=agent_response, timestamp=timestamp, meta=meta_data
    )
    # A turn asking the memory to forget something had it forgotten (services/spoken_curation.py): what went.
    forgotten = [
        {"entry": curation.entry_card(f.entry), "undo_to": f.undo_to} for f in spoken_curation.forgotten_by(page)
    ]
    return {
        "status": "success",
        "message": "stored in short-term memory",
        "page_id": page.pk,
        "seq": page.seq,
        "forgotten": forgotten,
    }


def _retrieve_memory(space, query, relationship_with_user, style_hint, max_results) -> dict:
    relationship_with_user = inputs.hint(relationship_with_user, "relationship_with_user")
    style_hint = inputs.hint(style_hint, "style_hint")
    found = search(space, query, top_pages=max_results, top_knowledge=max_results, fill_pages=0)
    items = RetrievalDoc.of(found).payload()
    return {
        "status": "success",
        "query": query,
        "relationship_with_user": relationship_with_user,
        "style_hint": style_hint,
        "user_profile": curation.user_profile(space),
        "short_term_memory": items["short_term"],
        "retrieved_pages": items["pages"],
        "retrieved_user_knowledge": items["user_knowledge"],
        "retrieved_assistant_knowledge": items["assistant_knowledge"],
        "total_pages_found": len(found.pages),
        "tokens_used": found.tokens_used,
    }


def _get_user_profile(space, include_knowledge, include_assistant_knowledge) -> dict:
    out: dict[str, Any] = {"status": "success", "user_profile": curation.user_profile(space)}
    if include_knowledge:
        out["user_knowledge"] = [e.value for e in curation.knowledge_entries(space, Kind.USER_KNOWLEDGE)]
    if include_assistant_knowledge:
        out["assistant_knowledge"] = [e.value for e in curation.knowledge_entries(space, Kind.ASSISTANT_KNOWLEDGE)]
    return out


def _list_entries(space, kinds, status) -> list[dict]:
    return [curation.entry_card(e) for e in curation.entries(space, kinds=kinds, status=status)]


def _edit_entry(space, entry_id, kinds, value) -> dict:
    entry = curation.entry_edit(
        entry=_entry(space, entry_id, kinds), value=value, actor=ACTOR, cause=EntryVersion.Cause.API
    )
    return curation.entry_card(entry)


def _delete_entry(space, entry_id, kinds) -> dict:
    entry = curation.entry_delete(entry=_entry(space, entry_id, kinds), actor=ACTOR, cause=EntryVersion.Cause.API)
    return curation.entry_card(entry)


def _revert_entry(space, entry_id, version_id) -> dict:
    entry = _entry(space, entry_id, tuple(Kind.values))
    version = curation.version_to_revert_to(entry, version_id)
    if version is None:
        raise ToolError(f"no version of entry {entry_id} with a value to revert to")
    entry = curation.entry_revert(entry=entry, version=version, actor=ACTOR, cause=EntryVersion.Cause.API)
    return curation.entry_card(entry)


def _erase_entry(space, entry_id) -> dict:
    entry = _entry(space, entry_id, tuple(Kind.values))
    return curation.entry_erase(entry=entry)


def _entry_history(space, entry_id) -> dict:
    entry = _entry(space, entry_id, tuple(Kind.values))
    versions = [curation.version_card(v) for v in curation.versions(entry)]
    pages = conversation.turns_with_ids(space, {i for v in versions for i in v["source_page_ids"]})
    return {
        "entry": curation.entry_card(entry),
        "history": versions,
        "source_pages": curation.page_cards(pages),
    }


# --- The server ------------------------------------------------------------------------------------


def build_server(*, user_id: str | None, assistant_id: str, http_url: str | None = None) -> MCPServer:
    """The MCP server for a fixed user (stdio) and the given default assistant. With `http_url`
    (streamable HTTP), every request must carry an API token, whose user it serves."""
    auth = {}
    if http_url:
        auth = {
            "token_verifier": ApiTokenVerifier(),
            "auth": AuthSettings(issuer_url=http_url, resource_server_url=http_url, required_scopes=[]),
        }
    server = MCPServer(
        "memoryos",
        instructions="Long-term memory for this conversation: store each exchange with add_memory, "
        "and call retrieve_memory before answering.",
        **auth,
    )
    who = Who(fixed_user=user_id, assistant=assistant_id)

    def space(user: str | None, assistant: str | None, *, create: bool = False):
        return run_orm(_space, who.user(user), assistant or who.assistant, create=create)

    @server.tool()
    async def add_memory(
        user_input: str,
        agent_response: str,
        timestamp: str | None = None,
        meta_data: dict | None = None,
        user_id: str | None = None,
        assistant_id: str | None = None,
    ) -> dict:
        """Store one exchange (what the user said, what the assistant answered) in short-term memory.
        timestamp: ISO 8601, now if left out. meta_data: your own data, kept with the turn."""
        found = await space(user_id, assistant_id, create=True)
        return await run_orm(_add_memory, found, user_input, agent_response, timestamp, meta_data)

    @server.tool()
    async def retrieve_memory(
        query: str,
        relationship_with_user: str = "friend",
        style_hint: str = "",
        max_results: int = 10,
        user_id: str | None = None,
        assistant_id: str | None = None,
    ) -> dict:
        """What memory holds for a query: recent turns, the best older pages, the user's profile and
        knowledge, each with scores and where it came from. The sessions used get hotter."""
        if not 1 <= max_results <= 100:
            raise ToolError("max_results must be between 1 and 100")
        found = await space(user_id, assistant_id)
        return await run_orm(_retrieve_memory, found, query, relationship_with_user, style_hint, max_results)

    @server.tool()
    async def get_user_profile(
        include_knowledge: bool = True,
        include_assistant_knowledge: bool = False,
        user_id: str | None = None,
        assistant_id: str | None = None,
    ) -> dict:
        """The user's profile (attribute -> value), and optionally the facts known about the user and
        the assistant's own knowledge."""
        found = await space(user_id, assistant_id)
        return await run_orm(_get_user_profile, found, include_knowledge, include_assistant_knowledge)

    @server.tool()
    async def list_profile_entries(
        status: str = "active", user_id: str | None = None, assistant_id: str | None = None
    ) -> list[dict]:
        """The profile entries, with ids for editing; status: active, superseded, evicted, deleted or all."""
        found = await space(user_id, assistant_id)
        return await run_orm(_list_entries, found, (Kind.PROFILE,), status)

    @server.tool()
    async def list_knowledge(
        kind: str = "user_knowledge",
        status: str = "active",
        user_id: str | None = None,
        assistant_id: str | None = None,
    ) -> list[dict]:
        """Knowledge entries with ids; kind: user_knowledge or assistant_knowledge."""
        if kind not in (Kind.USER_KNOWLEDGE, Kind.ASSISTANT_KNOWLEDGE):
            raise ToolError("kind must be user_knowledge or assistant_knowledge")
        found = await space(user_id, assistant_id)
        return await run_orm(_list_entries, found, (kind,), status)

    @server.tool()
    async def edit_profile_entry(
        entry_id: int, value: str, user_id: str | None = None, assistant_id: str | None = None
    ) -> dict:
        """Change a profile entry's value; the old value stays in its history."""
        found = await space(user_id, assistant_id)
        return await run_orm(_edit_entry, found, entry_id, (Kind.PROFILE,), value)

    @server.tool()
    async def edit_knowledge(
        entry_id: int, value: str, user_id: str | None = None, assistant_id: str | None = None
    ) -> dict:
        """Change a knowledge entry's text; retrieval sees the new text at once."""
        found = await space(user_id, assistant_id)
        return await run_orm(_edit_entry, found, entry_id, (Kind.USER_KNOWLEDGE, Kind.ASSISTANT_KNOWLEDGE), value)

    @server.tool()
    async def delete_profile_entry(entry_id: int, user_id: str | None = None, assistant_id: str | None = None) -> dict:
        """Delete a profile entry (its history stays), and the statements it was drawn from: no reply uses
        them until it is reverted."""
        found = await space(user_id, assistant_id)
        return await run_orm(_delete_entry, found, entry_id, (Kind.PROFILE,))

    @server.tool()
    async def delete_knowledge(entry_id: int, user_id: str | None = None, assistant_id: str | None = None) -> dict:
        """Delete a knowledge entry (its history stays); retrieval stops finding it, and the statements it
        was drawn from, at once."""
        found = await space(user_id, assistant_id)
        return await run_orm(_delete_entry, found, entry_id, (Kind.USER_KNOWLEDGE, Kind.ASSISTANT_KNOWLEDGE))

    @server.tool()
    async def revert_entry(
        entry_id: int, version_id: int | None = None, user_id: str | None = None, assistant_id: str | None = None
    ) -> dict:
        """Give an entry the value it had after one of its versions (by default its last that left a value:
        undo a delete), active again, with the statements it was drawn from."""
        found = await space(user_id, assistant_id)
        return await run_orm(_revert_entry, found, entry_id, version_id)

    @server.tool()
    async def erase_entry(entry_id: int, user_id: str | None = None, assistant_id: str | None = None) -> dict:
        """Erase an entry for good, for privacy: it, its history and the statements it was drawn from leave
        every turn, reply, entry, summary and index file. Irreversible."""
        await held_to_heavy_rate()  # it rewrites turns and vacuums tables, as REST's erase
        found = await space(user_id, assistant_id)
        return await run_orm(_erase_entry, found, entry_id)

    @server.tool()
    async def entry_history(entry_id: int, user_id: str | None = None, assistant_id: str | None = None) -> dict:
        """Where an entry came from: every version (who changed it, when, why) and the turns it was
        learnt from."""
        found = await space(user_id, assistant_id)
        return await run_orm(_entry_history, found, entry_id)

    @server.tool()
    async def export_memory(user_id: str | None = None) -> dict:
        """Everything this user's memory holds, with every assistant, as JSON."""
        name = who.user(user_id)

        def export() -> dict:
            user = user_named(name)
            if user is None:
                raise ToolError(f"no memory for user {name!r} yet")
            return user_export(user=user)

        return await run_orm(export)

    return server
