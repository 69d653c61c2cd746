"""Experiments: a space forked, replayed with other parameters, compared side by side, with heat timelines."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from memory_engine.documents import BackgroundJobCard
from memory_engine.interfaces.api.access import space_for
from memory_engine.interfaces.api.serializers.experiments import (
    ComparisonIn,
    ExperimentDetailOut,
    ExperimentHeatOut,
    ExperimentIn,
    ExperimentOut,
)
from memory_engine.interfaces.api.serializers.fields import paginated
from memory_engine.interfaces.api.throttling import (
    CallerRateThrottle,
    HeavyRequestThrottle,
)
from memory_engine.interfaces.api.views.base import PAGING, MemoryApiView
from memory_engine.models import (
    Experiment,
)
from memory_engine.services import lab
from memory_engine.services.background import background_job_card
from memory_engine.services.comparison import Probe, heat_by_turn
from memory_engine.services.dispatch import comparison_start
from memory_engine.services.lab import experiment_create, experiment_delete, locomo_probes

# --- Experiments: a space forked, replayed with other parameters, compared ---------------------------


def _experiment_of(request, user_id: str, assistant_id: str, experiment_id: int) -> Experiment:
    experiment = lab.experiment_of(space_for(request, user_id, assistant_id), experiment_id)
    if experiment is None:
        raise Http404(f"no experiment {experiment_id} here")
    return experiment


class ExperimentsView(MemoryApiView):
    body_limit_setting = "api_max_export_bytes"  # a fork may carry a space's export
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]

    @extend_schema(
        parameters=PAGING, responses=paginated(ExperimentOut), summary="The space's experiments, newest first"
    )
    def get(self, request, user_id, assistant_id):
        return self.page_of(lab.experiments(space_for(request, user_id, assistant_id)), ExperimentOut)

    @extend_schema(
        request=ExperimentIn,
        responses={202: ExperimentOut},
        summary="Fork the space: replay its turns, in a worker, into a shadow space with other parameters",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(ExperimentIn)
        source = space_for(request, user_id, assistant_id)
        experiment = experiment_create(
            source=source, name=data["name"], parameters=data["parameters"], export=data.get("export")
        )
        if experiment.replay is not None:
            experiment.replay.refresh_from_db(fields=["done", "status", "error", "finished_at"])
        return Response(ExperimentOut(experiment).data, status=status.HTTP_202_ACCEPTED)


class ExperimentView(MemoryApiView):
    @extend_schema(responses=ExperimentDetailOut, summary="An experiment, with its replay's progress")
    def get(self, request, user_id, assistant_id, experiment_id):
        return Response(ExperimentDetailOut(_experiment_of(request, user_id, assistant_id, experiment_id)).data)

    @extend_schema(responses={204: None}, summary="Delete an experiment and its shadow space (the source stays)")
    def delete(self, request, user_id, assistant_id, experiment_id):
        experiment_delete(experiment=_experiment_of(request, user_id, assistant_id, experiment_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ComparisonView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]

    @extend_schema(
        request=ComparisonIn,
        responses={202: BackgroundJobCard},
        summary="The source and the experiment side by side, and what each ranks for probe questions: a worker "
        "compares; poll the job (.../jobs/{id}/ of the source), whose result is a ComparisonOut",
    )
    def post(self, request, user_id, assistant_id, experiment_id):
        data = self.valid(ComparisonIn)
        experiment = _experiment_of(request, user_id, assistant_id, experiment_id)
        if "questions" in data:
            probes = [Probe(question) for question in data["questions"]]
        else:
            found = locomo_probes(data["locomo_sample"], limit=data["limit"])
            probes = [Probe(p["question"], tuple(p["evidence"]), p["category"]) for p in found]
        job = comparison_start(experiment=experiment, probes=probes, k=data["k"])
        return Response(background_job_card(job), status=status.HTTP_202_ACCEPTED)


class ExperimentHeatView(MemoryApiView):
    @extend_schema(
        responses=ExperimentHeatOut,
        summary="Both sides' heat timelines by turn (their 12 hottest sessions each), to overlay",
    )
    def get(self, request, user_id, assistant_id, experiment_id):
        experiment = _experiment_of(request, user_id, assistant_id, experiment_id)
        sides = {"source": experiment.source, "experiment": experiment.space}
        return Response(
            {name: {"threshold": space.heat_threshold, "points": heat_by_turn(space)} for name, space in sides.items()}
        )
