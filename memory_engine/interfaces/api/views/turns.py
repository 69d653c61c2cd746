"""A space's turns: stored, read, erased, what a reply used; the chat reply (plain or streamed), the memory
feed, retrieval and the inspector."""

from django.core.handlers.asgi import ASGIRequest
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.settings import api_settings

from memory_engine.config import memory_settings
from memory_engine.documents import BackgroundJobCard, RetrievalDoc, TurnCard, UsedDoc
from memory_engine.interfaces.api.access import space_for
from memory_engine.interfaces.api.errors import TooManyFeeds, exception_handler
from memory_engine.interfaces.api.memory_feed import SpaceFeed, feed_slots
from memory_engine.interfaces.api.reply_stream import ReplyStream
from memory_engine.interfaces.api.serializers.fields import paginated
from memory_engine.interfaces.api.serializers.sessions import ConsolidationRunOut
from memory_engine.interfaces.api.serializers.spaces import SpaceOut
from memory_engine.interfaces.api.serializers.turns import (
    ChatIn,
    ChatOut,
    EraseIn,
    ErasePreviewOut,
    InspectIn,
    InspectionOut,
    RetrieveIn,
    TurnField,
    TurnIn,
)
from memory_engine.interfaces.api.sse import EventStreamRenderer, event_stream, give_connections_back
from memory_engine.interfaces.api.throttling import (
    CallerRateThrottle,
    ChatRateThrottle,
    HeavyRequestThrottle,
)
from memory_engine.interfaces.api.views.base import PAGING, MemoryApiView, row_in
from memory_engine.interfaces.asgi import client_gone
from memory_engine.models import (
    Page,
)
from memory_engine.services import consolidation, conversation, curation, imports, spaces, usage
from memory_engine.services.background import background_job_card
from memory_engine.services.conversation import inspect, search, turn_add
from memory_engine.services.dispatch import turn_erase_start

TIER = OpenApiParameter("tier", str, enum=[t.value for t in Page.Tier], description="Only pages of this tier.")
NEWEST = OpenApiParameter("newest", bool, description="Newest first (default: oldest first).")


class TurnsView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, TIER, NEWEST], responses=paginated(TurnField), summary="The stored turns, in order"
    )
    def get(self, request, user_id, assistant_id):
        asked = request.query_params
        pages = conversation.turns(
            space_for(request, user_id, assistant_id),
            tier=asked.get("tier"),
            newest_first=asked.get("newest") in ("1", "true"),
        )
        return self.page_of(pages, cards=curation.page_cards)

    @extend_schema(request=TurnIn, responses={201: TurnCard}, summary="Add a turn (the space is made on first use)")
    def post(self, request, user_id, assistant_id):
        data = self.valid(TurnIn)
        page = turn_add(space=space_for(request, user_id, assistant_id, create=True), **data)
        return Response(curation.page_card(page), status=status.HTTP_201_CREATED)


class TurnView(MemoryApiView):
    @extend_schema(responses=TurnCard, summary="One stored turn, in whatever tier it is")
    def get(self, request, user_id, assistant_id, page_id):
        page = row_in(space_for(request, user_id, assistant_id), Page, page_id)
        return Response(curation.page_card(page))


class TurnEraseView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]  # it rewrites turns and vacuums tables

    @extend_schema(
        request=EraseIn,
        responses={202: BackgroundJobCard, 200: ErasePreviewOut},
        summary="Erase a turn's words for good (or one whole sentence of it), wherever they are: irreversible. "
        "202: a worker erases them (poll .../jobs/<id>/); with dry_run, 200: what it would take",
    )
    def post(self, request, user_id, assistant_id, page_id):
        data = self.valid(EraseIn)
        page = row_in(space_for(request, user_id, assistant_id), Page, page_id)
        sentence, index = data.get("sentence") or None, data.get("sentence_index")
        if data["dry_run"]:
            return Response(ErasePreviewOut(curation.erase_preview(page=page, sentence=sentence, index=index)).data)
        job = turn_erase_start(page=page, sentence=sentence, index=index)
        return Response(background_job_card(job), status=status.HTTP_202_ACCEPTED)


class TurnUsedView(MemoryApiView):
    @extend_schema(
        responses=UsedDoc,
        summary='What a stored reply used (its "What it used"), as the memory holds those items now',
    )
    def get(self, request, user_id, assistant_id, page_id):
        page = row_in(space_for(request, user_id, assistant_id), Page, page_id)
        record = usage.record_of(page)
        if record is None:
            raise Http404("this turn was not written by the space's chat: nothing recorded of what it used")
        return Response(usage.used_now(record))


def _chat_body(response) -> dict:
    return ChatOut(response).data


def _failure(exc: Exception) -> tuple[int, dict]:
    """What a request unstreamed would have answered for `exc`: its status and body."""
    answer = exception_handler(exc, {})
    if answer is None:
        return 500, {"detail": "the server failed to answer; nothing was stored"}
    return answer.status_code, dict(answer.data)


CHAT_REPLY = (
    'The reply; with "stream": true, text/event-stream: `delta` events with the words as they are written, '
    "`restart` when the words so far were dropped for a retry, then `reply` with this body or `error` with "
    "`status` and `detail` (nothing stored)."
)
# One event of a reply to a client that accepts text/event-stream, as the stream carries it: its name, and its
# data, JSON: the answer's body (reply; or message, with its status, for a reply not streamed), the words so
# far (delta), nothing (restart), or why it failed (error: its status, with the detail or the fields wrong).
CHAT_EVENTS = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["delta", "restart", "reply", "message", "error"]},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {
                "anyOf": [
                    {"$ref": "#/components/schemas/ChatOut"},
                    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                    {"type": "object", "maxProperties": 0},
                    {"type": "object", "properties": {"status": {"type": "integer"}}, "required": ["status"]},
                ]
            },
        },
    },
}


class ChatView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, ChatRateThrottle]
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, EventStreamRenderer]

    @extend_schema(
        request=ChatIn,
        responses={
            (200, "application/json"): OpenApiResponse(ChatOut, description=CHAT_REPLY),
            (200, "text/event-stream"): OpenApiResponse(CHAT_EVENTS, description=CHAT_REPLY),
        },
        summary="Get a reply from memory; the exchange is stored",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(ChatIn)
        space = space_for(request, user_id, assistant_id, create=True)
        answer = conversation.replier(space, data["query"])  # a bad query is a 400, before any event
        if not data["stream"]:
            return Response(_chat_body(answer()))

        def work(on_text):
            return _chat_body(answer(on_text=on_text, stopped=stream.should_stop))

        stream = ReplyStream(work, _failure, gone=lambda: client_gone(request))
        return event_stream(stream.asynchronous() if isinstance(request._request, ASGIRequest) else stream.sync())


def _feed_owner(request) -> str:
    """Whose feeds count together: the signed-in account, or for a token the account owning its memory
    user (the memory user, when no account owns it)."""
    token = getattr(request.user, "token", None)
    if token is None:
        return spaces.holder_of(account_id=request.user.pk)
    return spaces.holder_of(memory_user_id=token.memory_user_id)


class MemoryEventsView(MemoryApiView):
    renderer_classes = [EventStreamRenderer, *api_settings.DEFAULT_RENDERER_CLASSES]

    @extend_schema(
        responses={
            200: OpenApiResponse(
                description="text/event-stream: a `memory` event each time the memory changes (`changed`: which "
                "parts; `space`, `run`, `import`: the space with its counts, the newest consolidation run and "
                "import), its id the revision; send it back as Last-Event-ID (or `?last_event_id=`) to be told at "
                "once what changed since. `gone` when the space is deleted. A stream ends after "
                "MEMORYOS_EVENTS_STREAM_SECONDS; reconnect."
            )
        },
        summary="The memory's changes, pushed as they happen",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        seen = request.headers.get("Last-Event-ID") or request.query_params.get("last_event_id")

        def snapshot(changed: list[str]) -> dict:
            current = spaces.space_now(space)
            run, job = consolidation.runs(current).first(), imports.jobs(current).first()
            return {
                "space": SpaceOut(current).data,
                "run": ConsolidationRunOut(run).data if run else None,
                "import": imports.import_job_card(job) if job else None,
            }

        lifetime = memory_settings().events_stream_seconds
        slot = feed_slots.take(
            _feed_owner(request),
            total=memory_settings().events_max_streams,
            per_account=memory_settings().events_max_streams_per_account,
            lifetime=lifetime,
        )
        if slot is None:
            raise TooManyFeeds()
        feed = SpaceFeed(space.pk, seen, snapshot, lifetime=lifetime, slot=slot)
        # The connection that signed the request in goes back to the pool now, not when the stream ends
        # (Django closes a request's connections when its response is finished, minutes from now).
        give_connections_back()
        return event_stream(feed.asynchronous() if isinstance(request._request, ASGIRequest) else feed.sync())


class RetrieveView(MemoryApiView):
    @extend_schema(request=RetrieveIn, responses=RetrievalDoc, summary="What memory holds for a query")
    def post(self, request, user_id, assistant_id):
        data = self.valid(RetrieveIn)
        space = space_for(request, user_id, assistant_id)
        return Response(RetrievalDoc.of(search(space, data.pop("query"), **data)).payload())


class InspectView(MemoryApiView):
    @extend_schema(
        request=InspectIn,
        responses=InspectionOut,
        summary="What a chat turn would retrieve and send for a message, and why; nothing is stored or heated",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(InspectIn)
        space = space_for(request, user_id, assistant_id)
        return Response(inspect(space, data.pop("query"), **data).as_dict())
