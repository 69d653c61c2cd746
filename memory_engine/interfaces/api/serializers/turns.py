"""A turn stored and read, its marks and what its reply used; a chat reply, a retrieval's and an inspection's
questions and answers."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory_engine.documents import TurnCard
from memory_engine.interfaces.api.serializers.entries import EntryField
from memory_engine.interfaces.api.serializers.fields import (
    AnswerField,
    EngineTextField,
    QuotedField,
    RetrievalField,
    card_field,
)
from memory_engine.services.curation import page_card


class TurnIn(serializers.Serializer):
    user_input = EngineTextField()
    agent_response = EngineTextField()
    timestamp = EngineTextField(
        required=False, help_text="When the turn happened, ISO 8601 with its offset; now if left out."
    )
    meta = serializers.JSONField(
        required=False, help_text="Your own data, kept with the turn: a JSON object (at most 16 KiB as JSON)."
    )


class QueryIn(serializers.Serializer):
    query = EngineTextField(help_text="What the user asked.")


class ChatIn(QueryIn):
    stream = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Answer text/event-stream: the reply's words as they are written, then the stored turn.",
    )


class InspectIn(QueryIn):
    top_pages = serializers.IntegerField(required=False, min_value=0, max_value=100)
    top_knowledge = serializers.IntegerField(required=False, min_value=0, max_value=100)
    token_budget = serializers.IntegerField(required=False, min_value=0, max_value=100_000)


class RetrieveIn(InspectIn):
    count_hits = serializers.BooleanField(
        required=False, default=True, help_text="Whether the sessions and knowledge used get hotter."
    )


# A turn as every door gives it (documents.TurnCard).
TurnField = card_field(TurnCard, page_card)


class EraseIn(serializers.Serializer):
    sentence = EngineTextField(
        required=False,
        allow_blank=True,
        help_text="Only this sentence of the turn, whole and as written (a dry run lists them); the whole turn "
        "when absent.",
    )
    sentence_index = serializers.IntegerField(
        required=False, min_value=0, max_value=100_000, help_text="Only the turn's sentence of this index."
    )
    dry_run = serializers.BooleanField(
        default=False, help_text="Say what the erasure would take out of the memory, changing nothing."
    )

    def validate(self, attrs):
        if attrs.get("sentence") and "sentence_index" in attrs:
            raise serializers.ValidationError("give a sentence or its index, not both")
        return attrs


class EntryEraseIn(serializers.Serializer):
    dry_run = serializers.BooleanField(
        default=False, help_text="Say what the erasure would take out of the memory, changing nothing."
    )


class ErasedEntryOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    key = serializers.CharField()
    value = serializers.CharField()
    after = serializers.CharField(required=False, help_text="Its value once the words are taken out of it.")


class ErasedTurnOut(serializers.Serializer):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    user_input = serializers.CharField(help_text="What the person's words would be after.")
    agent_response = serializers.CharField(help_text="What the reply would be after.")


class TurnSentenceOut(serializers.Serializer):
    index = serializers.IntegerField()
    field = serializers.CharField(help_text="user_input or agent_response")
    text = serializers.CharField()


class ErasePreviewOut(serializers.Serializer):
    """What an erasure would take out of the memory (a dry run: nothing changed)."""

    sentences = TurnSentenceOut(many=True, help_text="The turn's sentences, to erase one of them.")
    erasing = serializers.ListField(child=serializers.CharField(), help_text="The words taken out wherever they are.")
    turns = ErasedTurnOut(many=True, help_text="The turns whose words would change, as they would be after.")
    entries_deleted = ErasedEntryOut(many=True, help_text="Entries drawn from the words: deleted with their history.")
    entries_changed = ErasedEntryOut(many=True, help_text="Entries that hold the words among others: those go.")
    forks = serializers.IntegerField(help_text="The lab's forks of the space, whose copies lose the words too.")


class PromptPartOut(serializers.Serializer):
    name = serializers.CharField(help_text="A section of the system message, 'earlier turn' or 'the message'.")
    role = serializers.CharField()
    text = serializers.CharField()
    tokens = serializers.IntegerField(help_text="Estimated as the token budget counts them (4 characters each).")


class InspectionOut(serializers.Serializer):
    retrieval = RetrievalField()
    messages = serializers.ListField(
        child=serializers.DictField(), help_text="The prompt, exactly as it would be sent."
    )
    parts = PromptPartOut(many=True)
    prompt_tokens = serializers.IntegerField()
    compact = serializers.BooleanField(help_text="The shorter prompt given to a weak model (the offline one).")
    answer_from_memory = AnswerField(
        allow_null=True,
        help_text="A weak model is not asked a question about the person: this is the reply it would get instead, "
        "quoting what they said. Null: the model would be asked (small talk, or a capable model).",
    )


class ForgottenOut(serializers.Serializer):
    """An entry a request to forget changed (services/spoken_curation.py: Forgotten)."""

    entry = EntryField()
    undo_to = serializers.IntegerField(help_text="The version whose value Undo gives back (the entry's revert).")


class ChatOut(serializers.Serializer):
    """A chat reply: built from the reply (services.conversation.reply's Response) and documented here."""

    response = serializers.CharField(source="text")
    reply_withheld = serializers.BooleanField(
        source="withheld",
        help_text="The model's reply degenerated twice: `response` is an apology, and the stored turn keeps "
        "only the user's words.",
    )
    quoted = serializers.ListField(
        child=QuotedField(),
        help_text="With a weak model (the bundled one), a question about the person is answered with their own "
        "words: the statements `response` quotes (none: it says nothing it was told answers the question). "
        "`page.reply_source` says who wrote the reply.",
    )
    forgotten = ForgottenOut(
        many=True,
        help_text='A message that asked to forget something ("please forget my address"): the entries it deleted '
        'or edited, with the statements they were drawn from (`page.reply_source` is "curation"); reverting each '
        "to its `undo_to` version is Undo.",
    )
    page = TurnField()
    retrieval = RetrievalField(
        help_text="What the reply used: the prompt's memory, or for a quoted reply the turns it quotes and the "
        "entries made of them."
    )
    usage = serializers.SerializerMethodField()

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_usage(self, response) -> dict:
        return {"prompt_tokens": response.prompt_tokens, "completion_tokens": response.completion_tokens}
