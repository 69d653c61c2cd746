"""Mid-term sessions, their heat timeline, parameter changes and consolidation runs."""

from rest_framework import serializers

from memory_engine.models import (
    ConsolidationRun,
    HeatEvent,
    MidTermSession,
    ParameterChange,
)
from memory_engine.services.consolidation import RUN_COUNTS


class HeatEventOut(serializers.ModelSerializer):
    topic = serializers.CharField(
        source="session.topic", read_only=True, help_text="What its session is about: its summary's first words."
    )

    class Meta:
        model = HeatEvent
        fields = [
            *("id", "session", "topic", "at", "cause", "heat", "n_visit", "l_interaction", "recency"),
            *("turn", "turn_at"),
        ]


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
