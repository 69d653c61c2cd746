"""Profile entries and knowledge: added, edited, reverted; an entry and its versions."""

from rest_framework import serializers

from memory_engine.interfaces.api.serializers.fields import EngineTextField
from memory_engine.models import (
    EntryVersion,
    LongTermEntry,
)
from memory_engine.services.curation import entry_card, version_card


class ProfileIn(serializers.Serializer):
    key = EngineTextField(help_text="The profile attribute, e.g. 'occupation' (at most 200 characters).")
    value = EngineTextField(help_text="At most 2000 characters.")


class KnowledgeIn(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["user_knowledge", "assistant_knowledge"], default="user_knowledge")
    key = EngineTextField(required=False, default="", help_text="The fact's topic (at most 200 characters).")
    value = EngineTextField(help_text="The fact (at most 2000 characters).")


class EntryEditIn(serializers.Serializer):
    value = EngineTextField(help_text="At most 2000 characters.")


class RevertIn(serializers.Serializer):
    version_id = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**63 - 1,
        help_text="The version whose value the entry takes again; by default its last version that left a value "
        "(undoes a delete).",
    )


class CoverageOut(serializers.Serializer):
    statements = serializers.IntegerField(help_text="Statements of the turns held out (forgotten or corrected).")
    turns = serializers.ListField(child=serializers.IntegerField(), help_text="The turns (seq) they are in.")
    entries = serializers.ListField(
        child=serializers.IntegerField(), help_text="Entries drawn from them that went too."
    )


class EntryOut(serializers.ModelSerializer):
    """An entry as every door gives it: the payload is services.curation.entry_card's, the same document MCP
    gives; these fields document it."""

    source_page_ids = serializers.ListField(child=serializers.IntegerField(), read_only=True)
    covers = CoverageOut(
        read_only=True,
        help_text="What the entry's delete or edit holds out of the turns it was drawn from (engine/curation.py).",
    )

    class Meta:
        model = LongTermEntry
        fields = [
            "id",
            "kind",
            "key",
            "value",
            "status",
            "superseded_by",
            "hits",
            "last_hit_at",
            "created_at",
            "updated_at",
            "source_page_ids",
            "covers",
        ]

    def to_representation(self, entry) -> dict:
        return entry_card(entry)


class EntryVersionOut(serializers.ModelSerializer):
    """A version of an entry as every door gives it: the payload is services.curation.version_card's, the
    same document MCP's entry_history gives; these fields document it."""

    source_page_ids = serializers.ListField(child=serializers.IntegerField(), read_only=True)
    with_entry = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="The entry whose forget or edit this went with, if any."
    )
    changes = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        read_only=True,
        help_text='The change word by word, as [kind, words] runs: "same", "del" or "ins" (the admin\'s diff).',
    )

    class Meta:
        model = EntryVersion
        fields = [
            "id",
            "before",
            "after",
            "status_after",
            "cause",
            "actor",
            "at",
            "source_page_ids",
            "with_entry",
            "changes",
        ]

    def to_representation(self, version) -> dict:
        return version_card(version)


class ProfileOut(serializers.Serializer):
    profile = serializers.DictField(child=serializers.CharField(), help_text="attribute -> value")
    entries = EntryOut(many=True)
