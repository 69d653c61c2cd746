"""The REST API: thin views that check input, find what the caller may see (access.py), call one
engine service and render the result. Every URL below /api/v1/users/<user_id>/ answers 404 for a user
the caller may not see."""

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from memory_engine import inputs
from memory_engine.config import memory_settings
from memory_engine.documents import RetrievalDoc, UsedDoc
from memory_engine.errors import MemoryInputError
from memory_engine.export_format import SpaceExport, UserExport
from memory_engine.interfaces.api import serializers as s
from memory_engine.interfaces.api.access import entry_for, space_for, user_for, visible_users
from memory_engine.interfaces.api.errors import PayloadTooLarge, Prechecked, TooManyFeeds, exception_handler
from memory_engine.interfaces.api.memory_feed import SpaceFeed, feed_slots
from memory_engine.interfaces.api.parsers import RawBodyParser, UnicodeJSONParser
from memory_engine.interfaces.api.reply_stream import ReplyStream
from memory_engine.interfaces.api.sse import EventStreamRenderer, event_stream, give_connections_back
from memory_engine.interfaces.api.throttling import (
    CallerRateThrottle,
    ChatRateThrottle,
    HeavyRequestThrottle,
    caller_key,
)
from memory_engine.interfaces.api.work import one_at_a_time, work_check
from memory_engine.interfaces.asgi import client_gone, is_precheck, was_prechecked
from memory_engine.models import (
    SPACE_PARAMETERS,
    BackgroundJob,
    ConsolidationRun,
    EntryVersion,
    Experiment,
    HeatEvent,
    ImportJob,
    ImportUpload,
    LongTermEntry,
    MemorySpace,
    MidTermSession,
    Page,
)
from memory_engine.services import consolidation, conversation, curation, imports, lab, spaces, usage
from memory_engine.services.conversation import inspect, reply, retrieve, turn_add
from memory_engine.services.dispatch import import_start, restore_start, upload_import_start
from memory_engine.services.export import space_export, user_export
from memory_engine.services.imports import locomo_turns, transcript_turns
from memory_engine.services.lab import (
    Probe,
    comparison_start,
    experiment_create,
    experiment_delete,
    heat_by_turn,
    locomo_probes,
)
from memory_engine.services.space_llm import (
    can_keep_secrets,
    choice_of,
    choice_set,
    choice_test,
    llm_for,
    local_servers_answering,
    provider_name,
    weak_model,
)
from memory_engine.services.spaces import (
    holder_key,
    owned_user_create,
    space_delete,
    space_parameters_set,
    user_memory_delete,
)
from memory_engine.services.uploads import upload_delete, upload_room_check, upload_save

Kind = LongTermEntry.Kind
PROFILE = (Kind.PROFILE,)
KNOWLEDGE = (Kind.USER_KNOWLEDGE, Kind.ASSISTANT_KNOWLEDGE)


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


PAGING = [
    OpenApiParameter("page", int, description="Which page of the list (from 1)."),
    OpenApiParameter(
        "page_size",
        int,
        description=f"Rows a page (default {Pagination.page_size}, at most {Pagination.max_page_size}).",
    ),
]


class MemoryApiView(APIView):
    """Refuses a body over MEMORYOS_API_MAX_BODY_BYTES (or the view's `body_limit_setting`) with 413
    before reading it. Under the production server a large body is read only once the request passed
    these checks on its headers alone (interfaces/asgi.py: its first, bodiless run ends here)."""

    throttle_classes = [CallerRateThrottle]
    parser_classes = [UnicodeJSONParser]
    body_limit_setting = "MEMORYOS_API_MAX_BODY_BYTES"

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = self.body_limit()
        if length > limit:
            raise PayloadTooLarge(f"the body is {length} bytes; the limit is {limit}")
        if is_precheck(request):
            raise Prechecked()

    def check_throttles(self, request):
        if not was_prechecked(request):  # its first, bodiless run counted it
            super().check_throttles(request)

    @classmethod
    def body_limit(cls) -> int:
        return getattr(settings, cls.body_limit_setting)

    def actor(self) -> str:
        """Who made a change, for its history: a program by its token, a person by their account's name
        (the chat page calls the API with its signed-in session)."""
        token = getattr(self.request.user, "token", None)
        return f"api token {token.prefix}" if token is not None else self.request.user.get_username()

    def cause(self) -> str:
        """Why an entry changed, for its history: a program's token is the API; a signed-in account is the
        space's owner, editing on the chat page."""
        token = getattr(self.request.user, "token", None)
        return EntryVersion.Cause.API if token is not None else EntryVersion.Cause.OWNER

    def valid(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def page_of(self, queryset, serializer_class):
        paginator = Pagination()
        rows = paginator.paginate_queryset(queryset, self.request, view=self)
        return paginator.get_paginated_response(serializer_class(rows, many=True).data)


# --- Memory users ----------------------------------------------------------------------------------


class UsersView(MemoryApiView):
    @extend_schema(
        parameters=PAGING, responses=s.paginated(s.MemoryUserOut), summary="List the memory users you may see"
    )
    def get(self, request):
        return self.page_of(spaces.with_spaces(visible_users(request)).order_by("external_id"), s.MemoryUserOut)

    @extend_schema(request=s.MemoryUserIn, responses={201: s.MemoryUserOut}, summary="Create a memory user")
    def post(self, request):
        if getattr(request.user, "token", None) is not None:
            raise PermissionDenied("a token acts for its own memory user only; sign in to create users")
        data = self.valid(s.MemoryUserIn)
        try:
            user = owned_user_create(
                owner=request.user, user_id=data["user_id"], display_name=data["display_name"], exist_ok=False
            )
        except MemoryInputError as exc:  # not a valid id, or taken
            raise ValidationError({"user_id": [str(exc)]}) from None
        return Response(s.MemoryUserOut(user).data, status=status.HTTP_201_CREATED)


class UserView(MemoryApiView):
    @extend_schema(responses=s.MemoryUserOut, summary="A memory user and the assistants it talks to")
    def get(self, request, user_id):
        user = user_for(request, user_id)
        return Response(s.MemoryUserOut(spaces.with_spaces(spaces.visible_users(memory_user_id=user.pk)).get()).data)

    @extend_schema(responses={204: None}, summary="Delete all the memory of a user, and the user")
    def delete(self, request, user_id):
        user_memory_delete(user=user_for(request, user_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class UserExportView(MemoryApiView):
    @extend_schema(responses={200: UserExport}, summary="Everything a user's memory holds, as JSON")
    def get(self, request, user_id):
        return Response(user_export(user=user_for(request, user_id)))


# --- A memory space (a user with an assistant) -------------------------------------------------------


class SpaceView(MemoryApiView):
    @extend_schema(responses=s.SpaceOut, summary="A memory space: its parameters and what each tier holds")
    def get(self, request, user_id, assistant_id):
        return Response(s.SpaceOut(space_for(request, user_id, assistant_id)).data)

    @extend_schema(request=s.SpaceParametersIn, responses=s.SpaceOut, summary="Change a space's parameters")
    def patch(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        serializer = s.SpaceParametersIn(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        return Response(s.SpaceOut(space_parameters_set(space, serializer.validated_data, actor=self.actor())).data)

    @extend_schema(responses={204: None}, summary="Delete all the memory of one space")
    def delete(self, request, user_id, assistant_id):
        space_delete(space=space_for(request, user_id, assistant_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class RestoreView(MemoryApiView):
    body_limit_setting = "MEMORYOS_API_MAX_EXPORT_BYTES"
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]

    @extend_schema(
        request=s.RestoreIn,
        responses={202: s.BackgroundJobOut},
        summary="Restore a space's export into this space, which must be empty (made if new): turns, tiers, "
        "entries and their history, re-embedded. Checked at once; a worker restores it: poll the job "
        "(.../jobs/{id}/), whose result counts what was stored",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.RestoreIn)
        space = space_for(request, user_id, assistant_id, create=True)
        job = restore_start(space=space, document=data["export"])
        return Response(s.BackgroundJobOut(job).data, status=status.HTTP_202_ACCEPTED)


class BackgroundJobView(MemoryApiView):
    @extend_schema(responses=s.BackgroundJobOut, summary="A restore or comparison: its state, and its result when done")
    def get(self, request, user_id, assistant_id, job_id):
        job = _row_in(space_for(request, user_id, assistant_id), BackgroundJob, job_id)
        return Response(s.BackgroundJobOut(job).data)


class SpaceExportView(MemoryApiView):
    @extend_schema(responses={200: SpaceExport}, summary="Everything one space holds, as JSON")
    def get(self, request, user_id, assistant_id):
        return Response(space_export(space=space_for(request, user_id, assistant_id)))


TIER = OpenApiParameter("tier", str, enum=[t.value for t in Page.Tier], description="Only pages of this tier.")
NEWEST = OpenApiParameter("newest", bool, description="Newest first (default: oldest first).")


class TurnsView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, TIER, NEWEST], responses=s.paginated(s.PageOut), summary="The stored turns, in order"
    )
    def get(self, request, user_id, assistant_id):
        asked = request.query_params
        pages = conversation.turns(
            space_for(request, user_id, assistant_id),
            tier=asked.get("tier"),
            newest_first=asked.get("newest") in ("1", "true"),
        )
        return self.page_of(pages, s.PageOut)

    @extend_schema(request=s.TurnIn, responses={201: s.PageOut}, summary="Add a turn (the space is made on first use)")
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.TurnIn)
        page = turn_add(space=space_for(request, user_id, assistant_id, create=True), **data)
        return Response(s.PageOut(page).data, status=status.HTTP_201_CREATED)


def _row_in(space: MemorySpace, model, row_id: int):
    """The space's row of `model` with this id; 404 when there is none (or the id is beyond any database's
    ids)."""
    row = spaces.row_of(space, model, row_id)
    if row is None:
        raise Http404(f"no such {model._meta.verbose_name}")
    return row


class TurnView(MemoryApiView):
    @extend_schema(responses=s.PageOut, summary="One stored turn, in whatever tier it is")
    def get(self, request, user_id, assistant_id, page_id):
        page = _row_in(space_for(request, user_id, assistant_id), Page, page_id)
        return Response(s.PageOut(page).data)


class TurnEraseView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]  # it rewrites turns and vacuums tables

    @extend_schema(
        request=s.EraseIn,
        responses=s.ErasedOut,
        summary="Erase a turn's words for good (or one sentence of it), wherever they are: irreversible",
    )
    def post(self, request, user_id, assistant_id, page_id):
        data = self.valid(s.EraseIn)
        page = _row_in(space_for(request, user_id, assistant_id), Page, page_id)
        sentence = data.get("sentence")
        changed = curation.erase_statement(page, sentence) if sentence else curation.erase_turn(page)
        return Response({"erased": True, "turns_changed": changed})


class TurnUsedView(MemoryApiView):
    @extend_schema(
        responses=UsedDoc,
        summary='What a stored reply used (its "What it used"), as the memory holds those items now',
    )
    def get(self, request, user_id, assistant_id, page_id):
        page = _row_in(space_for(request, user_id, assistant_id), Page, page_id)
        record = usage.record_of(page)
        if record is None:
            raise Http404("this turn was not written by the space's chat: nothing recorded of what it used")
        return Response(usage.used_now(record))


class UsageView(MemoryApiView):
    @extend_schema(
        parameters=[
            OpenApiParameter("days", int, description=f"how many days, today included (1-{usage.MAX_DAYS}; 30)")
        ],
        responses=s.UsageOut,
        summary="The space's LLM usage day by day: replies, consolidation, imports, experiments; tokens and cost",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        days = request.query_params.get("days", "30")
        if not days.isdecimal() or not 1 <= int(days) <= usage.MAX_DAYS:
            raise ValidationError({"days": [f"a whole number from 1 to {usage.MAX_DAYS}"]})
        return Response(usage.space_usage(space, days=int(days), prices=memory_settings().llm_prices))


def _chat_body(response) -> dict:
    return {
        "response": response.text,
        "reply_withheld": response.withheld,
        "quoted": [said.as_dict() for said in response.quoted],
        "page": s.PageOut(response.page).data,
        "retrieval": RetrievalDoc.of(response.retrieval).payload(),
        "usage": {"prompt_tokens": response.prompt_tokens, "completion_tokens": response.completion_tokens},
    }


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
        request=s.ChatIn,
        responses={
            (200, "application/json"): OpenApiResponse(s.ChatOut, description=CHAT_REPLY),
            (200, "text/event-stream"): OpenApiResponse(CHAT_EVENTS, description=CHAT_REPLY),
        },
        summary="Get a reply from memory; the exchange is stored",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.ChatIn)
        space = space_for(request, user_id, assistant_id, create=True)
        if not data["stream"]:
            return Response(_chat_body(reply(space=space, query=data["query"], llm=llm_for(space))))
        query, llm = inputs.query(data["query"]), llm_for(space)  # a bad query is a 400, before any event

        def work(on_text):
            return _chat_body(reply(space=space, query=query, llm=llm, on_text=on_text, stopped=stream.should_stop))

        stream = ReplyStream(work, _failure, gone=lambda: client_gone(request))
        return event_stream(stream.asynchronous() if isinstance(request._request, ASGIRequest) else stream.sync())


def _llm_body(space: MemorySpace) -> dict:
    choice = choice_of(space)
    deployment = {"provider": provider_name(), "model": memory_settings().llm_model}
    if deployment["provider"] == "offline":
        deployment["model"] = memory_settings().offline_llm_model
    return {
        "provider": choice.provider if choice else "default",
        "base_url": choice.base_url if choice else "",
        "model": choice.model if choice else "",
        "has_key": bool(choice and choice.api_key_encrypted),
        "key_hint": choice.key_hint if choice else "",
        "updated_by": choice.updated_by if choice else "",
        "deployment": deployment,
        "can_keep_keys": can_keep_secrets(),
        "weak": weak_model(space),
    }


class SpaceLLMView(MemoryApiView):
    @extend_schema(responses=s.SpaceLLMOut, summary="The LLM this space uses (its key is never sent back)")
    def get(self, request, user_id, assistant_id):
        return Response(_llm_body(space_for(request, user_id, assistant_id)))

    @extend_schema(request=s.SpaceLLMIn, responses=s.SpaceLLMOut, summary="Choose the LLM this space uses")
    def put(self, request, user_id, assistant_id):
        data = self.valid(s.SpaceLLMIn)
        space = space_for(request, user_id, assistant_id)
        choice_set(space=space, values=data, actor=self.actor())
        return Response(_llm_body(space))


class LocalLLMView(MemoryApiView):
    @extend_schema(
        responses=s.LocalLLMOut,
        summary="The LLM servers answering on this machine (Ollama, LM Studio, llama.cpp), to choose from",
    )
    def get(self, request, user_id, assistant_id):
        space_for(request, user_id, assistant_id)  # the space's owner asks, as for the rest of its model
        return Response({"servers": local_servers_answering()})


class SpaceLLMTestView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]

    @extend_schema(
        request=s.SpaceLLMIn,
        responses=s.ConnectionTestOut,
        summary="Ask the space's LLM (or the one given, before it is saved) for one word; nothing is stored",
    )
    def post(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        values = self.valid(s.SpaceLLMIn) if request.data else None
        return Response(choice_test(space=space, values=values))


def _feed_owner(request) -> str:
    """Whose feeds count together: the signed-in account, or for a token the account owning its memory
    user (the memory user, when no account owns it)."""
    token = getattr(request.user, "token", None)
    if token is None:
        return holder_key(owner_id=request.user.pk, memory_user_id=None)
    owner = spaces.owner_of(token.memory_user_id)
    return holder_key(owner_id=owner, memory_user_id=token.memory_user_id)


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
                "space": s.SpaceOut(current).data,
                "run": s.ConsolidationRunOut(run).data if run else None,
                "import": s.ImportJobOut(job).data if job else None,
            }

        lifetime = settings.MEMORYOS_EVENTS_STREAM_SECONDS
        slot = feed_slots.take(
            _feed_owner(request),
            total=settings.MEMORYOS_EVENTS_MAX_STREAMS,
            per_account=settings.MEMORYOS_EVENTS_MAX_STREAMS_PER_ACCOUNT,
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
    @extend_schema(request=s.RetrieveIn, responses=RetrievalDoc, summary="What memory holds for a query")
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.RetrieveIn)
        space = space_for(request, user_id, assistant_id)
        return Response(RetrievalDoc.of(retrieve(space, data.pop("query"), **data)).payload())


class InspectView(MemoryApiView):
    @extend_schema(
        request=s.InspectIn,
        responses=s.InspectionOut,
        summary="What a chat turn would retrieve and send for a message, and why; nothing is stored or heated",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.InspectIn)
        space = space_for(request, user_id, assistant_id)
        return Response(inspect(space, data.pop("query"), compact=weak_model(space), **data).as_dict())


class SessionsView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, OpenApiParameter("status", str, enum=[v for v in MidTermSession.Status.values])],
        responses=s.paginated(s.SessionOut),
        summary="Mid-term sessions with their heat, hottest first",
    )
    def get(self, request, user_id, assistant_id):
        found = spaces.sessions(space_for(request, user_id, assistant_id), status=request.query_params.get("status"))
        return self.page_of(found, s.SessionOut)


class ParameterChangesView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, OpenApiParameter("name", str, enum=list(SPACE_PARAMETERS))],
        responses=s.paginated(s.ParameterChangeOut),
        summary="Changes to the space's parameters, oldest first: what it was set to, when, and by whom",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        changes = spaces.parameter_changes(space, name=request.query_params.get("name"))
        return self.page_of(changes, s.ParameterChangeOut)


class HeatView(MemoryApiView):
    @extend_schema(
        parameters=[
            *PAGING,
            OpenApiParameter("session", int, description="only this session's points"),
            OpenApiParameter("cause", str, enum=[v for v in HeatEvent.Cause.values]),
        ],
        responses=s.paginated(s.HeatEventOut),
        summary="The heat timeline: a point each time a session's heat changed, oldest first",
    )
    def get(self, request, user_id, assistant_id):
        asked = request.query_params
        events = spaces.heat_events(
            space_for(request, user_id, assistant_id), session=asked.get("session"), cause=asked.get("cause")
        )
        return self.page_of(events, s.HeatEventOut)


class ImportsView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]  # an import queues hundreds of turns

    @extend_schema(
        parameters=PAGING, responses=s.paginated(s.ImportJobOut), summary="Imports into the space, newest first"
    )
    def get(self, request, user_id, assistant_id):
        return self.page_of(imports.jobs(space_for(request, user_id, assistant_id)), s.ImportJobOut)

    @extend_schema(
        request=s.ImportIn,
        responses={202: s.ImportJobOut},
        summary="Import a conversation (a transcript or a LoCoMo sample), turn by turn, with progress",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.ImportIn)
        space = space_for(request, user_id, assistant_id, create=True)
        if "upload" in data:
            upload = _row_in(space, ImportUpload, data["upload"])
            job = upload_import_start(upload=upload, chosen=data.get("conversations"))
            return Response(s.ImportJobOut(job).data, status=status.HTTP_202_ACCEPTED)
        if "transcript" in data:
            turns, source = transcript_turns(data["transcript"]), "transcript"
        else:
            turns, source = locomo_turns(data["locomo_sample"]), f"LoCoMo {data['locomo_sample']}"
        job = import_start(space=space, turns=turns, source=source)
        return Response(s.ImportJobOut(job).data, status=status.HTTP_202_ACCEPTED)


class UploadsView(MemoryApiView):
    """A file to import, sent as the request's body (not a form): read a chunk at a time as it arrives, to
    disk, never held whole, and checked whole before the answer. What the account may keep, and whether
    it has another file arriving, is decided before the body is read."""

    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]
    parser_classes = [RawBodyParser]
    streams_body = True  # interfaces/asgi.py hands it the connection, not a body read ahead

    @classmethod
    def body_limit(cls) -> int:
        return memory_settings().max_import_bytes

    @extend_schema(
        request={"application/octet-stream": {"type": "string", "format": "binary"}},
        parameters=[OpenApiParameter("name", str, description="The file's name, as the person knows it.")],
        responses={201: s.ImportUploadOut},
        summary="Bring a file to import (a ChatGPT or Claude export, chat messages, memories): checked and listed",
    )
    def post(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id, create=True)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        upload_room_check(space=space, size=length)
        with one_at_a_time(f"upload:{caller_key(request)}", "a file of yours is still arriving or being checked"):
            body = request._request  # Django's request, read as it arrives (DRF would read a chunked body as empty)
            upload = upload_save(
                space=space,
                chunks=iter(lambda: body.read(1 << 16), b""),
                name=request.query_params.get("name", ""),
                check=work_check(request, memory_settings().upload_check_seconds, "checking the file"),
            )
        return Response(s.ImportUploadOut(upload).data, status=status.HTTP_201_CREATED)


class UploadView(MemoryApiView):
    def upload(self, request, user_id, assistant_id, upload_id) -> ImportUpload:
        return _row_in(space_for(request, user_id, assistant_id), ImportUpload, upload_id)

    @extend_schema(responses=s.ImportUploadOut, summary="A file brought to import, and what it holds")
    def get(self, request, user_id, assistant_id, upload_id):
        return Response(s.ImportUploadOut(self.upload(request, user_id, assistant_id, upload_id)).data)

    @extend_schema(responses={204: None}, summary="Delete a file brought to import (an import reading it fails)")
    def delete(self, request, user_id, assistant_id, upload_id):
        upload_delete(upload=self.upload(request, user_id, assistant_id, upload_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class UploadConversationsView(MemoryApiView):
    @extend_schema(
        parameters=PAGING,
        responses=s.paginated(s.ListedConversationOut),
        summary="The conversations of a file brought to import, in the file's order",
    )
    def get(self, request, user_id, assistant_id, upload_id):
        upload = _row_in(space_for(request, user_id, assistant_id), ImportUpload, upload_id)
        return self.page_of(upload.conversations.order_by("place"), s.ListedConversationOut)


class ImportView(MemoryApiView):
    @extend_schema(responses=s.ImportJobOut, summary="An import's progress")
    def get(self, request, user_id, assistant_id, job_id):
        job = _row_in(space_for(request, user_id, assistant_id), ImportJob, job_id)
        return Response(s.ImportJobOut(job).data)


RUN_STATUS = OpenApiParameter("status", str, enum=list(ConsolidationRun.Status.values))


class RunsView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, RUN_STATUS],
        responses=s.paginated(s.ConsolidationRunOut),
        summary="Consolidation runs, newest first",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        found = consolidation.runs(space, status=request.query_params.get("status"))
        return self.page_of(found, s.ConsolidationRunOut)


# --- Long-term memory: profile and knowledge ----------------------------------------------------------


ENTRY_STATUS = OpenApiParameter(
    "status", str, enum=[*LongTermEntry.Status.values, "all"], description="Default: active."
)


class ProfileView(MemoryApiView):
    @extend_schema(
        responses=s.ProfileOut,
        summary="The user profile: attribute -> value, and its entries",
        operation_id="v1_users_spaces_profile_list",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        entries = list(curation.entries(space, kinds=PROFILE).order_by("key"))
        profile = {entry.key: entry.value for entry in entries}
        return Response({"profile": profile, "entries": s.EntryOut(entries, many=True).data})

    @extend_schema(request=s.ProfileIn, responses={201: s.EntryOut}, summary="Set a profile attribute")
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.ProfileIn)
        space = space_for(request, user_id, assistant_id, create=True)
        entry = curation.profile_entry_add(
            space=space, attribute=data["key"], value=data["value"], actor=self.actor(), cause=self.cause()
        )
        return Response(s.EntryOut(entry).data, status=status.HTTP_201_CREATED)


KNOWLEDGE_KIND = OpenApiParameter("kind", str, enum=[k.value for k in KNOWLEDGE], description="Default: both.")


class KnowledgeView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, KNOWLEDGE_KIND, ENTRY_STATUS], responses=s.paginated(s.EntryOut), summary="Knowledge"
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        kind = request.query_params.get("kind")
        if kind and kind not in KNOWLEDGE:
            raise ValidationError({"kind": ["user_knowledge or assistant_knowledge"]})
        wanted = request.query_params.get("status", LongTermEntry.Status.ACTIVE)
        entries = curation.entries(space, kinds=(kind,) if kind else KNOWLEDGE, status=wanted)
        return self.page_of(entries, s.EntryOut)

    @extend_schema(request=s.KnowledgeIn, responses={201: s.EntryOut}, summary="Add a fact")
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.KnowledgeIn)
        space = space_for(request, user_id, assistant_id, create=True)
        entry = curation.knowledge_entry_add(
            space=space,
            kind=data["kind"],
            topic=data["key"],
            fact=data["value"],
            actor=self.actor(),
            cause=self.cause(),
        )
        return Response(s.EntryOut(entry).data, status=status.HTTP_201_CREATED)


class EntryView(MemoryApiView):
    """One profile entry (kinds = PROFILE) or knowledge entry (kinds = KNOWLEDGE)."""

    kinds: tuple[str, ...] = PROFILE

    def entry(self, user_id, assistant_id, entry_id):
        return entry_for(space_for(self.request, user_id, assistant_id), entry_id, self.kinds)

    @extend_schema(responses=s.EntryOut, summary="One entry")
    def get(self, request, user_id, assistant_id, entry_id):
        return Response(s.EntryOut(self.entry(user_id, assistant_id, entry_id)).data)

    @extend_schema(request=s.EntryEditIn, responses=s.EntryOut, summary="Change an entry's value (recorded)")
    def patch(self, request, user_id, assistant_id, entry_id):
        data = self.valid(s.EntryEditIn)
        entry = self.entry(user_id, assistant_id, entry_id)
        entry = curation.entry_edit(entry=entry, value=data["value"], actor=self.actor(), cause=self.cause())
        return Response(s.EntryOut(entry).data)

    @extend_schema(responses={204: None}, summary="Delete an entry (its history stays)")
    def delete(self, request, user_id, assistant_id, entry_id):
        entry = self.entry(user_id, assistant_id, entry_id)
        curation.entry_delete(entry=entry, actor=self.actor(), cause=self.cause())
        return Response(status=status.HTTP_204_NO_CONTENT)


class KnowledgeEntryView(EntryView):
    kinds = KNOWLEDGE


class EntryRevertView(MemoryApiView):
    kinds: tuple[str, ...] = PROFILE

    @extend_schema(
        request=s.RevertIn,
        responses=s.EntryOut,
        summary="Give an entry a value it had again, active, with the statements it was drawn from (undo a delete)",
    )
    def post(self, request, user_id, assistant_id, entry_id):
        data = self.valid(s.RevertIn)
        entry = entry_for(space_for(request, user_id, assistant_id), entry_id, self.kinds)
        version = curation.version_to_revert_to(entry, data.get("version_id"))
        if version is None:
            raise Http404("no version of this entry with a value to revert to")
        entry = curation.entry_revert(entry=entry, version=version, actor=self.actor(), cause=self.cause())
        return Response(s.EntryOut(entry).data)


class KnowledgeRevertView(EntryRevertView):
    kinds = KNOWLEDGE


class EntryEraseView(MemoryApiView):
    kinds: tuple[str, ...] = PROFILE
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]  # it rewrites turns and vacuums tables

    @extend_schema(
        request=None,
        responses=s.ErasedOut,
        summary="Erase an entry, its history and the statements it was drawn from, for good: irreversible",
    )
    def post(self, request, user_id, assistant_id, entry_id):
        entry = entry_for(space_for(request, user_id, assistant_id), entry_id, self.kinds)
        return Response({"erased": True, "turns_changed": curation.erase_entry(entry)})


class KnowledgeEraseView(EntryEraseView):
    kinds = KNOWLEDGE


class EntryHistoryView(MemoryApiView):
    kinds: tuple[str, ...] = PROFILE

    @extend_schema(
        parameters=PAGING, responses=s.paginated(s.EntryVersionOut), summary="Every version of an entry, oldest first"
    )
    def get(self, request, user_id, assistant_id, entry_id):
        entry = entry_for(space_for(request, user_id, assistant_id), entry_id, self.kinds)
        return self.page_of(curation.versions(entry), s.EntryVersionOut)


class KnowledgeHistoryView(EntryHistoryView):
    kinds = KNOWLEDGE


# --- Experiments: a space forked, replayed with other parameters, compared ---------------------------


def _experiment_of(request, user_id: str, assistant_id: str, experiment_id: int) -> Experiment:
    experiment = lab.experiment_of(space_for(request, user_id, assistant_id), experiment_id)
    if experiment is None:
        raise Http404(f"no experiment {experiment_id} here")
    return experiment


class ExperimentsView(MemoryApiView):
    body_limit_setting = "MEMORYOS_API_MAX_EXPORT_BYTES"  # a fork may carry a space's export
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]

    @extend_schema(
        parameters=PAGING, responses=s.paginated(s.ExperimentOut), summary="The space's experiments, newest first"
    )
    def get(self, request, user_id, assistant_id):
        return self.page_of(lab.experiments(space_for(request, user_id, assistant_id)), s.ExperimentOut)

    @extend_schema(
        request=s.ExperimentIn,
        responses={202: s.ExperimentOut},
        summary="Fork the space: replay its turns, in a worker, into a shadow space with other parameters",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(s.ExperimentIn)
        source = space_for(request, user_id, assistant_id)
        experiment = experiment_create(
            source=source, name=data["name"], parameters=data["parameters"], export=data.get("export")
        )
        if experiment.replay is not None:
            experiment.replay.refresh_from_db(fields=["done", "status", "error", "finished_at"])
        return Response(s.ExperimentOut(experiment).data, status=status.HTTP_202_ACCEPTED)


class ExperimentView(MemoryApiView):
    @extend_schema(responses=s.ExperimentDetailOut, summary="An experiment, with its replay's progress")
    def get(self, request, user_id, assistant_id, experiment_id):
        return Response(s.ExperimentDetailOut(_experiment_of(request, user_id, assistant_id, experiment_id)).data)

    @extend_schema(responses={204: None}, summary="Delete an experiment and its shadow space (the source stays)")
    def delete(self, request, user_id, assistant_id, experiment_id):
        experiment_delete(experiment=_experiment_of(request, user_id, assistant_id, experiment_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ComparisonView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]

    @extend_schema(
        request=s.ComparisonIn,
        responses={202: s.BackgroundJobOut},
        summary="The source and the experiment side by side, and what each ranks for probe questions: a worker "
        "compares; poll the job (.../jobs/{id}/ of the source), whose result is a ComparisonOut",
    )
    def post(self, request, user_id, assistant_id, experiment_id):
        data = self.valid(s.ComparisonIn)
        experiment = _experiment_of(request, user_id, assistant_id, experiment_id)
        if "questions" in data:
            probes = [Probe(question) for question in data["questions"]]
        else:
            found = locomo_probes(data["locomo_sample"], limit=data["limit"])
            probes = [Probe(p["question"], tuple(p["evidence"]), p["category"]) for p in found]
        job = comparison_start(experiment=experiment, probes=probes, k=data["k"])
        return Response(s.BackgroundJobOut(job).data, status=status.HTTP_202_ACCEPTED)


class ExperimentHeatView(MemoryApiView):
    @extend_schema(
        responses=s.ExperimentHeatOut,
        summary="Both sides' heat timelines by turn (their 12 hottest sessions each), to overlay",
    )
    def get(self, request, user_id, assistant_id, experiment_id):
        experiment = _experiment_of(request, user_id, assistant_id, experiment_id)
        sides = {"source": experiment.source, "experiment": experiment.space}
        return Response(
            {name: {"threshold": space.heat_threshold, "points": heat_by_turn(space)} for name, space in sides.items()}
        )
