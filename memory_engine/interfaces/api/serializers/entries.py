"""Profile entries and knowledge: added, edited, reverted; an entry and its versions."""

from rest_framework import serializers

from memory_engine.documents import EntryCard, VersionCard
from memory_engine.interfaces.api.serializers.fields import EngineTextField, card_field
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


# An entry and a version of it as every door gives them (documents.EntryCard, documents.VersionCard).
EntryField = card_field(EntryCard, entry_card)
VersionField = card_field(VersionCard, version_card)


class ProfileOut(serializers.Serializer):
    profile = serializers.DictField(child=serializers.CharField(), help_text="attribute -> value")
    entries = serializers.ListField(child=EntryField())
