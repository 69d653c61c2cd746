"""A memory user's body and answer."""

from rest_framework import serializers

from memory_engine.models import (
    MemoryUser,
)


class MemoryUserIn(serializers.Serializer):
    # Checked by the engine (spaces.account_user_id), which stores it as `<your username>:<user_id>`.
    user_id = serializers.CharField(max_length=255, help_text="Stored as `<your username>:<user_id>`.")
    display_name = serializers.CharField(max_length=200, required=False, default="")


class MemoryUserOut(serializers.ModelSerializer):
    user_id = serializers.CharField(source="external_id")
    assistants = serializers.SerializerMethodField()

    class Meta:
        model = MemoryUser
        fields = ["user_id", "display_name", "created_at", "assistants"]

    def get_assistants(self, user) -> list[str]:
        return sorted(space.assistant.external_id for space in user.spaces.all())
