"""Experiments: a fork's parameters, its sides, the comparison, the curve and the heat timelines."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory_engine.interfaces.api.serializers.fields import EngineTextField, ExportField
from memory_engine.interfaces.api.serializers.imports import ImportJobField
from memory_engine.interfaces.api.serializers.sessions import HeatPointField
from memory_engine.interfaces.api.serializers.spaces import BackgroundJobField
from memory_engine.models import (
    SPACE_PARAMETERS,
    Experiment,
)
from memory_engine.services.comparison import side_summary


class ExperimentIn(serializers.Serializer):
    name = EngineTextField(help_text="What to call it (1-100 characters, unique in the space).")
    parameters = serializers.DictField(
        required=False,
        default=dict,
        help_text='The parameters the shadow space has other than the source\'s, e.g. {"heat_threshold": 3}.',
    )
    export = ExportField(
        required=False,
        help_text="A space's export (GET .../export/): the experiment's space is that space restored, not a replay.",
    )


class ComparisonIn(serializers.Serializer):
    questions = serializers.ListField(
        child=EngineTextField(), required=False, max_length=200, help_text="Probe questions of your own."
    )
    locomo_sample = serializers.CharField(
        required=False, max_length=100, help_text="Probe with this LoCoMo sample's questions (categories 1-4)."
    )
    limit = serializers.IntegerField(
        required=False, default=200, min_value=1, max_value=200, help_text="At most this many of the sample's."
    )
    k = serializers.IntegerField(required=False, default=10, min_value=1, max_value=25, help_text="recall@k")

    def validate(self, attrs):
        if ("questions" in attrs) == ("locomo_sample" in attrs):
            raise serializers.ValidationError("give either questions or a locomo_sample")
        if "questions" in attrs and not attrs["questions"]:
            raise serializers.ValidationError({"questions": ["give at least one question"]})
        return attrs


class ComparedItemOut(serializers.Serializer):
    kind = serializers.CharField()
    text = serializers.CharField()
    score = serializers.FloatField()
    scores = serializers.DictField(child=serializers.FloatField())
    turns = serializers.ListField(child=serializers.CharField(), help_text="The dialogue turns it shows.")
    shared = serializers.BooleanField(help_text="The other side's first k hold it too.")


class ProbeSideOut(serializers.Serializer):
    items = ComparedItemOut(many=True)
    recall = serializers.FloatField(allow_null=True, help_text="recall@k of the evidence; null: none known")


class ProbeOut(serializers.Serializer):
    question = serializers.CharField()
    category = serializers.CharField()
    evidence = serializers.ListField(child=serializers.CharField())
    source = ProbeSideOut()
    experiment = ProbeSideOut()
    overlap = serializers.IntegerField(help_text="Items both sides' first k hold.")


class UnfinishedImportOut(serializers.Serializer):
    source = serializers.CharField(help_text="What is imported: a transcript, a LoCoMo sample, a replay of a space.")
    status = serializers.ChoiceField(choices=["queued", "running"])
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class SideSummaryOut(serializers.Serializer):
    turns = serializers.IntegerField()
    tiers = serializers.DictField(child=serializers.IntegerField())
    sessions_promoted = serializers.IntegerField()
    sessions_ever = serializers.IntegerField()
    runs_failed = serializers.IntegerField(
        help_text="Consolidation runs that failed (a promotion the LLM did not give)."
    )
    llm_calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    pages_moved = serializers.IntegerField()
    items_stored = serializers.IntegerField()
    unfinished = UnfinishedImportOut(
        many=True, help_text="Imports and replays into this side not yet finished: it is still being built."
    )
    token_budget = serializers.IntegerField(help_text="Its chat's prompt context budget (tokens of memory).")


class SidesOut(serializers.Serializer):
    source = SideSummaryOut()
    experiment = SideSummaryOut()


class ExperimentOut(serializers.ModelSerializer):
    parameters = serializers.SerializerMethodField()
    changed = serializers.SerializerMethodField(help_text="name -> [the source's value, the experiment's]")
    replay = ImportJobField(
        allow_null=True, help_text="The replay of the source's turns; null for a space restored from an export."
    )
    restore = BackgroundJobField(allow_null=True, help_text="The restore of an export; null for a replay.")

    class Meta:
        model = Experiment
        fields = ["id", "name", "created_at", "parameters", "changed", "replay", "restore"]

    def get_parameters(self, experiment) -> dict:
        return {name: getattr(experiment.space, name) for name in SPACE_PARAMETERS}

    def get_changed(self, experiment) -> dict:
        pairs = {name: [getattr(experiment.source, name), getattr(experiment.space, name)] for name in SPACE_PARAMETERS}
        return {name: pair for name, pair in pairs.items() if pair[0] != pair[1]}


class ExperimentDetailOut(ExperimentOut):
    """One experiment: with what each side holds and cost, which the list (polled while replays run) leaves
    out."""

    sides = serializers.SerializerMethodField(help_text="What each side holds and what building it cost.")

    class Meta(ExperimentOut.Meta):
        fields = [*ExperimentOut.Meta.fields, "sides"]

    @extend_schema_field(SidesOut)
    def get_sides(self, experiment) -> dict:
        return {"source": side_summary(experiment.source), "experiment": side_summary(experiment.space)}


class CurvePointOut(serializers.Serializer):
    budget = serializers.IntegerField(help_text="The prompt context's budget, in tokens.")
    tokens = serializers.FloatField(help_text="The tokens the context took (mean over the probes).")
    evidence = serializers.FloatField(help_text="The share of a probe's evidence turns the context showed (mean).")


class CurveOut(serializers.Serializer):
    source = CurvePointOut(many=True)
    experiment = CurvePointOut(many=True)


class ParameterDifferenceOut(serializers.Serializer):
    parameter = serializers.CharField()
    label = serializers.CharField(help_text="What the pages call it.")
    source = serializers.JSONField()
    experiment = serializers.JSONField()


class ComparisonOut(serializers.Serializer):
    k = serializers.IntegerField()
    source = SideSummaryOut()
    experiment = SideSummaryOut()
    warnings = serializers.ListField(
        child=serializers.CharField(), help_text="Sentences saying which side was unfinished when compared."
    )
    parameters = ParameterDifferenceOut(many=True, help_text="The parameters on which the two sides differ.")
    same_figures = serializers.BooleanField(help_text="Whether every figure is the same on both sides.")
    verdict = serializers.CharField(help_text="Which parameters differ, and whether they changed anything.")
    probes = ProbeOut(many=True)
    recall = serializers.DictField(help_text="Mean recall@k per side over the probes with evidence, and how many.")
    curve = CurveOut(
        help_text="Each side's evidence shown against its prompt context's tokens, at budgets from 250 to 4,000 "
        "and at each side's own (its token_budget), over the probes with evidence (empty lists when none has any)."
    )


class HeatSideOut(serializers.Serializer):
    threshold = serializers.FloatField()
    points = serializers.ListField(
        child=HeatPointField(),
        help_text="Each at the turn that made it (`turn`; a point kept before turns were: the turns stored then).",
    )


class ExperimentHeatOut(serializers.Serializer):
    source = HeatSideOut()
    experiment = HeatSideOut()
