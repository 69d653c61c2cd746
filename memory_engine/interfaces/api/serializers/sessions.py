"""Mid-term sessions, their heat timeline, parameter changes and consolidation runs."""

from rest_framework import serializers

from memory_engine.documents import HeatPointCard
from memory_engine.interfaces.api.serializers.fields import card_field
from memory_engine.models import (
    ConsolidationRun,
    MidTermSession,
    ParameterChange,
)
from memory_engine.services.consolidation import RUN_COUNTS
from memory_engine.services.spaces import heat_point_card

# A point of the heat timeline as every door gives it (documents.HeatPointCard).
HeatPointField = card_field(HeatPointCard, heat_point_card)


class ParameterChangeOut(serializers.ModelSerializer):
    before = serializers.JSONField(help_text="The value before (a number; the eviction policy's a string).")
    after = serializers.JSONField(help_text="The value set.")

    class Meta:
        model = ParameterChange
        fields = ["id", "at", "name", "before", "after", "actor"]


class SessionOut(serializers.ModelSerializer):
    class Meta:
        model = MidTermSession
        fields = [
            "id",
            "status",
            "summary",
            "keywords",
            "heat",
            "n_visit",
            "l_interaction",
            "total_visits",
            "last_visit_at",
            "created_at",
            "promoted_at",
            "evicted_at",
        ]


class ConsolidationRunOut(serializers.ModelSerializer):
    class Meta:
        model = ConsolidationRun
        fields = [
            "id",
            "kind",
            "status",
            "attempts",
            *RUN_COUNTS,
            "items_rejected",
            "duration_ms",
            "error",
            "started_at",
            "finished_at",
        ]
