"""Files brought to import, the conversations they hold, and imports."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory_engine.documents import ImportJobCard
from memory_engine.interfaces.api.serializers.fields import card_field
from memory_engine.models import (
    ImportUpload,
)
from memory_engine.services.imports import FORMAT_LABELS, import_job_card


class ImportIn(serializers.Serializer):
    transcript = serializers.ListField(
        child=serializers.DictField(), required=False, help_text="[{user_input, agent_response, timestamp?}]"
    )
    locomo_sample = serializers.CharField(required=False, help_text="A sample of the bundled LoCoMo dev split.")
    upload = serializers.IntegerField(required=False, help_text="A file brought to import (POST .../imports/files/).")
    conversations = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        max_length=100_000,
        help_text="The upload's conversations to import, by key (default: all).",
    )

    def validate(self, attrs):
        if sum(name in attrs for name in ("transcript", "locomo_sample", "upload")) != 1:
            raise serializers.ValidationError("give either a transcript, a locomo_sample or an upload")
        if "conversations" in attrs and "upload" not in attrs:
            raise serializers.ValidationError("conversations are chosen from an upload")
        return attrs


class ListedConversationOut(serializers.Serializer):
    key = serializers.CharField(help_text="The conversation's id in the file: what `conversations` names.")
    title = serializers.CharField()
    created = serializers.DateTimeField(allow_null=True)
    last = serializers.DateTimeField(allow_null=True, help_text="Its last message's time.")
    messages = serializers.IntegerField()
    turns = serializers.IntegerField(help_text="The turns it makes: a message of the person and the replies after it.")


LISTED_AT_ONCE = 500  # conversations an upload's answer lists; GET .../conversations/ pages through all


class ImportUploadOut(serializers.ModelSerializer):
    """A file brought to import: being checked (poll it), refused (`error` says why) or ready, with its
    format and what it holds, to choose from (its first conversations; GET .../imports/files/<id>/
    conversations/ lists them all, a page at a time)."""

    label = serializers.SerializerMethodField()
    conversations = serializers.SerializerMethodField(
        help_text=f"Its first {LISTED_AT_ONCE} conversations, in the file's order."
    )
    conversations_total = serializers.IntegerField(source="conversation_count")

    class Meta:
        model = ImportUpload
        fields = [
            "id", "name", "status", "error", "refusal", "size", "kept_bytes", "format", "label", "conversations",
            "conversations_total", "facts", "turns", "cut", "created_at",
        ]  # fmt: skip

    def get_label(self, upload) -> str:
        return FORMAT_LABELS.get(upload.format, "")

    @extend_schema_field(ListedConversationOut(many=True))
    def get_conversations(self, upload) -> list:
        return ListedConversationOut(upload.conversations.order_by("place")[:LISTED_AT_ONCE], many=True).data


# An import as every door gives it (documents.ImportJobCard).
ImportJobField = card_field(ImportJobCard, import_job_card)
