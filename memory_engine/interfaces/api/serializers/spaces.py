"""A space's parameters, export and restore, background jobs, LLM usage and the LLM its replies use."""

from rest_framework import serializers

from memory_engine.documents import BackgroundJobCard
from memory_engine.interfaces.api.serializers.fields import ExportField, card_field
from memory_engine.models import (
    SPACE_PARAMETERS,
    MemorySpace,
)
from memory_engine.services.background import background_job_card
from memory_engine.services.consolidation import has_pending_work
from memory_engine.services.export import space_counts


class RestoreIn(serializers.Serializer):
    export = ExportField(help_text="A space's export (GET .../export/), or a user's holding it.")


class SpaceParametersIn(serializers.ModelSerializer):
    class Meta:
        model = MemorySpace
        fields = list(SPACE_PARAMETERS)
        extra_kwargs = {name: {"required": False} for name in SPACE_PARAMETERS}


# A restore, comparison, check or erasure as every door gives it (documents.BackgroundJobCard).
BackgroundJobField = card_field(BackgroundJobCard, background_job_card)


class SpaceOut(serializers.ModelSerializer):
    user_id = serializers.CharField(source="user.external_id")
    assistant_id = serializers.CharField(source="assistant.external_id")
    parameters = serializers.SerializerMethodField()
    counts = serializers.SerializerMethodField()

    class Meta:
        model = MemorySpace
        fields = ["user_id", "assistant_id", "created_at", "embedding_model", "parameters", "counts"]

    def get_parameters(self, space) -> dict:
        return {name: getattr(space, name) for name in SPACE_PARAMETERS}

    def get_counts(self, space) -> dict:
        return {**space_counts(space=space), "consolidation_pending": has_pending_work(space)}


class UsageKindOut(serializers.Serializer):
    calls = serializers.IntegerField(help_text="LLM calls (for replies: the replies the model wrote).")
    quoted = serializers.IntegerField(help_text="Replies quoted from memory: no model ran (0 for the other kinds).")
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.FloatField(allow_null=True, help_text="At MEMORYOS_LLM_PRICES; null: a model has no price.")


class UsageDayOut(serializers.Serializer):
    day = serializers.DateField()
    replies = UsageKindOut()
    consolidation = UsageKindOut(help_text="Consolidation after chat turns.")
    imports = UsageKindOut(help_text="Consolidation during imports.")
    experiments = UsageKindOut(help_text="Consolidation of the experiments' replays.")


class UsageTotalsOut(serializers.Serializer):
    replies = UsageKindOut()
    consolidation = UsageKindOut()
    imports = UsageKindOut()
    experiments = UsageKindOut()


class UsageOut(serializers.Serializer):
    days = UsageDayOut(many=True, help_text="Oldest first, today (UTC) last.")
    totals = UsageTotalsOut()
    currency = serializers.CharField(help_text="The currency of the costs (MEMORYOS_LLM_PRICE_CURRENCY).")
    prices = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField()),
        help_text="model -> [price per million prompt tokens, per million completion tokens]",
    )
    unpriced_models = serializers.ListField(child=serializers.CharField())


class RestoredOut(serializers.Serializer):
    pages = serializers.IntegerField()
    sessions = serializers.IntegerField()
    heat_points = serializers.IntegerField()
    entries = serializers.IntegerField()
    versions = serializers.IntegerField()


class SpaceLLMIn(serializers.Serializer):
    provider = serializers.ChoiceField(
        choices=["default", "offline", "openai"],
        help_text="default: the deployment's LLM (MEMORYOS_LLM_*); offline: the bundled model; openai: an "
        "OpenAI-compatible endpoint.",
    )
    base_url = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    model = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    api_key = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        trim_whitespace=False,
        default=None,
        write_only=True,
        help_text="Kept encrypted and never sent back. Left out: the stored key stays; empty: it is removed.",
    )


class SpaceLLMOut(serializers.Serializer):
    provider = serializers.CharField(help_text="default, offline or openai")
    base_url = serializers.CharField()
    model = serializers.CharField()
    has_key = serializers.BooleanField()
    key_hint = serializers.CharField(help_text="The stored key's last four characters, or empty.")
    updated_by = serializers.CharField()
    deployment = serializers.DictField(help_text="The deployment's LLM, which `default` means.")
    can_keep_keys = serializers.BooleanField(help_text="Whether this server has a key to encrypt API keys with.")
    weak = serializers.BooleanField(
        help_text="The model is a weak one (the bundled offline model): questions about the person are answered "
        "with their own words, quoted, and its replies never become memory."
    )


class LocalServerOut(serializers.Serializer):
    name = serializers.CharField()
    base_url = serializers.CharField()
    models = serializers.ListField(child=serializers.CharField())


class LocalLLMOut(serializers.Serializer):
    servers = LocalServerOut(many=True, help_text="Those of MEMORYOS_LLM_LOCAL_SERVERS answering now.")


class ConnectionTestOut(serializers.Serializer):
    ok = serializers.BooleanField()
    provider = serializers.CharField(required=False)
    model = serializers.CharField(required=False)
    seconds = serializers.FloatField(required=False)
    answer = serializers.CharField(required=False)
    detail = serializers.CharField(required=False)
