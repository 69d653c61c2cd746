"""A memory space (a user with an assistant): its parameters, export and restore, background jobs, LLM usage,
and the LLM its replies use."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from memory_engine.config import memory_settings
from memory_engine.documents import BackgroundJobCard
from memory_engine.export_format import SpaceExport
from memory_engine.interfaces.api.access import space_for
from memory_engine.interfaces.api.serializers.spaces import (
    ConnectionTestOut,
    LocalLLMOut,
    RestoreIn,
    SpaceLLMIn,
    SpaceLLMOut,
    SpaceOut,
    SpaceParametersIn,
    UsageOut,
)
from memory_engine.interfaces.api.throttling import (
    CallerRateThrottle,
    HeavyRequestThrottle,
)
from memory_engine.interfaces.api.views.base import MemoryApiView, row_in
from memory_engine.models import (
    BackgroundJob,
)
from memory_engine.services import usage
from memory_engine.services.background import background_job_card
from memory_engine.services.dispatch import restore_start
from memory_engine.services.export import space_export
from memory_engine.services.space_llm import choice_card, choice_set, choice_test, local_servers
from memory_engine.services.spaces import (
    space_delete,
    space_parameters_set,
)

# --- A memory space (a user with an assistant) -------------------------------------------------------


class SpaceView(MemoryApiView):
    @extend_schema(responses=SpaceOut, summary="A memory space: its parameters and what each tier holds")
    def get(self, request, user_id, assistant_id):
        return Response(SpaceOut(space_for(request, user_id, assistant_id)).data)

    @extend_schema(request=SpaceParametersIn, responses=SpaceOut, summary="Change a space's parameters")
    def patch(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        serializer = SpaceParametersIn(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        return Response(SpaceOut(space_parameters_set(space, serializer.validated_data, actor=self.actor())).data)

    @extend_schema(responses={204: None}, summary="Delete all the memory of one space")
    def delete(self, request, user_id, assistant_id):
        space_delete(space=space_for(request, user_id, assistant_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class RestoreView(MemoryApiView):
    body_limit_setting = "api_max_export_bytes"
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]

    @extend_schema(
        request=RestoreIn,
        responses={202: BackgroundJobCard},
        summary="Restore a space's export into this space, which must be empty (made if new): turns, tiers, "
        "entries and their history, re-embedded. Checked at once; a worker restores it: poll the job "
        "(.../jobs/{id}/), whose result counts what was stored",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(RestoreIn)
        space = space_for(request, user_id, assistant_id, create=True)
        job = restore_start(space=space, document=data["export"])
        return Response(background_job_card(job), status=status.HTTP_202_ACCEPTED)


class BackgroundJobView(MemoryApiView):
    @extend_schema(responses=BackgroundJobCard, summary="A restore or comparison: its state, and its result when done")
    def get(self, request, user_id, assistant_id, job_id):
        job = row_in(space_for(request, user_id, assistant_id), BackgroundJob, job_id)
        return Response(background_job_card(job))


class SpaceExportView(MemoryApiView):
    @extend_schema(responses={200: SpaceExport}, summary="Everything one space holds, as JSON")
    def get(self, request, user_id, assistant_id):
        return Response(space_export(space=space_for(request, user_id, assistant_id)))


class UsageView(MemoryApiView):
    @extend_schema(
        parameters=[
            OpenApiParameter("days", int, description=f"how many days, today included (1-{usage.MAX_DAYS}; 30)")
        ],
        responses=UsageOut,
        summary="The space's LLM usage day by day: replies, consolidation, imports, experiments; tokens and cost",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        days = request.query_params.get("days", "30")
        if not days.isdecimal() or not 1 <= int(days) <= usage.MAX_DAYS:
            raise ValidationError({"days": [f"a whole number from 1 to {usage.MAX_DAYS}"]})
        return Response(usage.space_usage(space, days=int(days), prices=memory_settings().llm_prices))


class SpaceLLMView(MemoryApiView):
    @extend_schema(responses=SpaceLLMOut, summary="The LLM this space uses (its key is never sent back)")
    def get(self, request, user_id, assistant_id):
        return Response(choice_card(space_for(request, user_id, assistant_id)))

    @extend_schema(request=SpaceLLMIn, responses=SpaceLLMOut, summary="Choose the LLM this space uses")
    def put(self, request, user_id, assistant_id):
        data = self.valid(SpaceLLMIn)
        space = space_for(request, user_id, assistant_id)
        choice_set(space=space, values=data, actor=self.actor())
        return Response(choice_card(space))


class LocalLLMView(MemoryApiView):
    @extend_schema(
        responses=LocalLLMOut,
        summary="The LLM servers answering on this machine (Ollama, LM Studio, llama.cpp), to choose from",
    )
    def get(self, request, user_id, assistant_id):
        space_for(request, user_id, assistant_id)  # the space's owner asks, as for the rest of its model
        return Response({"servers": local_servers()})


class SpaceLLMTestView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]

    @extend_schema(
        request=SpaceLLMIn,
        responses=ConnectionTestOut,
        summary="Ask the space's LLM (or the one given, before it is saved) for one word; nothing is stored",
    )
    def post(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        values = self.valid(SpaceLLMIn) if request.data else None
        return Response(choice_test(space=space, values=values))
