"""A space's mid-term sessions, their heat timeline, its parameters' history and its consolidation runs."""

from drf_spectacular.utils import OpenApiParameter, extend_schema

from memory_engine.interfaces.api.access import space_for
from memory_engine.interfaces.api.serializers.fields import paginated
from memory_engine.interfaces.api.serializers.sessions import (
    ConsolidationRunOut,
    HeatPointField,
    ParameterChangeOut,
    SessionOut,
)
from memory_engine.interfaces.api.views.base import PAGING, MemoryApiView
from memory_engine.models import (
    SPACE_PARAMETERS,
    ConsolidationRun,
    HeatEvent,
    MidTermSession,
)
from memory_engine.services import consolidation, spaces

RUN_STATUS = OpenApiParameter("status", str, enum=list(ConsolidationRun.Status.values))


class SessionsView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, OpenApiParameter("status", str, enum=[v for v in MidTermSession.Status.values])],
        responses=paginated(SessionOut),
        summary="Mid-term sessions with their heat, hottest first",
    )
    def get(self, request, user_id, assistant_id):
        found = spaces.sessions(space_for(request, user_id, assistant_id), status=request.query_params.get("status"))
        return self.page_of(found, SessionOut)


class ParameterChangesView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, OpenApiParameter("name", str, enum=list(SPACE_PARAMETERS))],
        responses=paginated(ParameterChangeOut),
        summary="Changes to the space's parameters, oldest first: what it was set to, when, and by whom",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        changes = spaces.parameter_changes(space, name=request.query_params.get("name"))
        return self.page_of(changes, ParameterChangeOut)


class HeatView(MemoryApiView):
    @extend_schema(
        parameters=[
            *PAGING,
            OpenApiParameter("session", int, description="only this session's points"),
            OpenApiParameter("cause", str, enum=[v for v in HeatEvent.Cause.values]),
        ],
        responses=paginated(HeatPointField),
        summary="The heat timeline: a point each time a session's heat changed, oldest first",
    )
    def get(self, request, user_id, assistant_id):
        asked = request.query_params
        events = spaces.heat_events(
            space_for(request, user_id, assistant_id), session=asked.get("session"), cause=asked.get("cause")
        )
        return self.page_of(events, cards=spaces.heat_point_cards)


class RunsView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, RUN_STATUS],
        responses=paginated(ConsolidationRunOut),
        summary="Consolidation runs, newest first",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        found = consolidation.runs(space, status=request.query_params.get("status"))
        return self.page_of(found, ConsolidationRunOut)
