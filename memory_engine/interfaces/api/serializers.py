"""What the API reads and writes. Input serializers check shape and size; output serializers render
rows. Neither writes anything: the views call the engine's services."""

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from memory_engine.documents import RetrievalDoc
from memory_engine.interfaces.word_diff import word_changes
from memory_engine.models import (
    SPACE_PARAMETERS,
    BackgroundJob,
    ConsolidationRun,
    EntryVersion,
    Experiment,
    HeatEvent,
    ImportJob,
    ImportUpload,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    MidTermSession,
    Page,
    ParameterChange,
    StatementMark,
)
from memory_engine.services.consolidation import RunCounts, has_pending_work
from memory_engine.services.curation import entry_card, page_marks
from memory_engine.services.imports import FORMAT_LABELS, import_activity
from memory_engine.services.lab import side_summary
from memory_engine.services.spaces import space_counts
from memory_engine.services.usage import used_counts


class EngineTextField(serializers.CharField):
    """Text that the engine checks (memory_engine/inputs.py: length, NUL, broken unicode), so a refusal
    reads the same through the API, MCP and the library; kept exactly as sent. DRF's own NUL and
    surrogate checks are left out: they would answer differently."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_blank", True)
        super().__init__(trim_whitespace=False, **kwargs)
        self.validators = [
            v
            for v in self.validators
            if not isinstance(v, ProhibitNullCharactersValidator | ProhibitSurrogateCharactersValidator)
        ]


# --- Input -----------------------------------------------------------------------------------------


_PAGES: dict[str, type] = {}


def paginated(serializer_class) -> type:
    """The shape of one page of `serializer_class` rows, as a list view answers (views.MemoryApiView.page_of):
    how many rows in all, the links to the next and previous pages, and this page's rows."""
    name = f"Paginated{serializer_class.__name__}List"
    if name not in _PAGES:
        fields = {
            "count": serializers.IntegerField(help_text="Rows in all."),
            "next": serializers.URLField(allow_null=True, help_text="The next page; null on the last."),
            "previous": serializers.URLField(allow_null=True, help_text="The previous page; null on the first."),
            "results": serializer_class(many=True),
        }
        _PAGES[name] = type(name, (serializers.Serializer,), {"__module__": __name__, **fields})
    return _PAGES[name]


class MemoryUserIn(serializers.Serializer):
    # Checked by the engine (spaces.account_user_id), which stores it as `<your username>:<user_id>`.
    user_id = serializers.CharField(max_length=255, help_text="Stored as `<your username>:<user_id>`.")
    display_name = serializers.CharField(max_length=200, required=False, default="")


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
    """A file brought to import, checked whole: its format and what it holds, to choose from (its first
    conversations; GET .../imports/files/<id>/conversations/ lists them all, a page at a time)."""

    label = serializers.SerializerMethodField()
    conversations = serializers.SerializerMethodField(
        help_text=f"Its first {LISTED_AT_ONCE} conversations, in the file's order."
    )
    conversations_total = serializers.IntegerField(source="conversation_count")

    class Meta:
        model = ImportUpload
        fields = [
            "id", "name", "size", "kept_bytes", "format", "label", "conversations", "conversations_total",
            "facts", "turns", "cut", "created_at",
        ]  # fmt: skip

    def get_label(self, upload) -> str:
        return FORMAT_LABELS[upload.format]

    @extend_schema_field(ListedConversationOut(many=True))
    def get_conversations(self, upload) -> list:
        return ListedConversationOut(upload.conversations.order_by("place")[:LISTED_AT_ONCE], many=True).data


@extend_schema_field(
    {
        "anyOf": [{"$ref": "#/components/schemas/SpaceExport"}, {"$ref": "#/components/schemas/UserExport"}],
        "description": "A space's export (GET .../export/), or a user's holding it: memory_engine/export_format.py, "
        "published as docs/export.schema.json. Checked whole by the restore, which says where a value is wrong.",
    }
)
class ExportField(serializers.DictField):
    """An export document, taken as JSON: the restore checks it (export_format.parse_space), so that a bad
    value is refused with where it is, as at every other door."""


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


class RestoreIn(serializers.Serializer):
    export = ExportField(help_text="A space's export (GET .../export/), or a user's holding it.")


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


class SpaceParametersIn(serializers.ModelSerializer):
    class Meta:
        model = MemorySpace
        fields = list(SPACE_PARAMETERS)
        extra_kwargs = {name: {"required": False} for name in SPACE_PARAMETERS}
        # Types only here; the ranges are checked by the engine (inputs.space_parameters) for every door.


# --- Output ----------------------------------------------------------------------------------------


class MemoryUserOut(serializers.ModelSerializer):
    user_id = serializers.CharField(source="external_id")
    assistants = serializers.SerializerMethodField()

    class Meta:
        model = MemoryUser
        fields = ["user_id", "display_name", "created_at", "assistants"]

    def get_assistants(self, user) -> list[str]:
        return sorted(space.assistant.external_id for space in user.spaces.all())


class ReplyRecordOut(serializers.Serializer):
    model = serializers.CharField(help_text="The model that wrote the reply.")
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    memory_tokens = serializers.IntegerField(help_text="Tokens of memory in the prompt.")
    token_budget = serializers.IntegerField()
    used = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="How many items of each kind the prompt held: short_term, pages, profile, knowledge.",
    )


class MarkOut(serializers.Serializer):
    kind = serializers.ChoiceField(choices=StatementMark.Kind.choices)
    field = serializers.ChoiceField(choices=["user_input", "agent_response"])
    sentence = serializers.CharField(help_text="The statement as it was said.")
    replacement = serializers.CharField(help_text="What stands in its place (corrected); empty when forgotten.")
    entry_id = serializers.IntegerField(help_text="The entry whose delete or edit held it out.")
    at = serializers.DateTimeField()


class PageOut(serializers.ModelSerializer):
    said = serializers.JSONField(
        read_only=True,
        help_text="The words as said, while some are forgotten or corrected: user_input and agent_response hold "
        "what the memory holds now. Null for a turn as it was said.",
    )
    marks = serializers.SerializerMethodField(help_text="The statements of the turn held out, and why.")
    reply = serializers.SerializerMethodField(
        help_text="What the reply used and cost, for a turn written by this space's chat (GET .../turns/{id}/used/ "
        "gives the items); null for a turn given whole."
    )

    class Meta:
        model = Page
        fields = [
            "id",
            "seq",
            "tier",
            "session_id",
            "user_input",
            "agent_response",
            "timestamp",
            "meta",
            "keywords",
            "analyzed",
            "reply_withheld",
            "reply_source",
            "reply",
            "said",
            "marks",
        ]

    @extend_schema_field(MarkOut(many=True))
    def get_marks(self, page) -> list[dict]:
        return page_marks(page)

    @extend_schema_field(ReplyRecordOut(allow_null=True))
    def get_reply(self, page) -> dict | None:
        record = getattr(page, "reply_record", None)
        if record is None:
            return None
        return {
            "model": record.model,
            "prompt_tokens": record.prompt_tokens,
            "completion_tokens": record.completion_tokens,
            "memory_tokens": record.memory_tokens,
            "token_budget": record.token_budget,
            "used": used_counts(record),
        }


class HeatEventOut(serializers.ModelSerializer):
    class Meta:
        model = HeatEvent
        fields = ["id", "session", "at", "cause", "heat", "n_visit", "l_interaction", "recency"]


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
            *RunCounts.names(),
            "items_rejected",
            "duration_ms",
            "error",
            "started_at",
            "finished_at",
        ]


class ImportJobOut(serializers.ModelSerializer):
    activity = serializers.SerializerMethodField(
        help_text="What it is doing: waiting (behind what), storing a turn, or consolidating; empty once ended."
    )

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "source",
            "total",
            "done",
            "skipped",
            "status",
            "activity",
            "error",
            "created_at",
            "finished_at",
        ]

    def get_activity(self, job) -> str:
        return import_activity(job)


class JobProgressOut(serializers.Serializer):
    done = serializers.IntegerField()
    of = serializers.IntegerField()


class BackgroundJobOut(serializers.ModelSerializer):
    """A restore or comparison a worker does (services/background.py): poll it until `status` is succeeded or
    failed; `result` is then what the work returned (RestoredOut's counts, or ComparisonOut). Meanwhile
    `progress` says how far it is: texts embedded, or probes compared, of how many."""

    result = serializers.SerializerMethodField(help_text="When succeeded: the counts, or the comparison.")
    progress = serializers.SerializerMethodField()

    class Meta:
        model = BackgroundJob
        fields = ["id", "kind", "status", "progress", "result", "error", "created_at", "finished_at"]

    @extend_schema_field(serializers.JSONField(allow_null=True))
    def get_result(self, job):
        return job.result if job.status == BackgroundJob.Status.SUCCEEDED else None

    @extend_schema_field(JobProgressOut(allow_null=True))
    def get_progress(self, job):
        if job.status == BackgroundJob.Status.SUCCEEDED or not isinstance(job.result, dict) or "of" not in job.result:
            return None
        return {"done": job.result["done"], "of": job.result["of"]}


class EraseIn(serializers.Serializer):
    sentence = EngineTextField(
        required=False, allow_blank=True, help_text="Only this sentence of the turn; the whole turn when absent."
    )


class ErasedOut(serializers.Serializer):
    erased = serializers.BooleanField()
    turns_changed = serializers.IntegerField(help_text="Turns whose words changed (the space's and its forks').")


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
    source_page_ids = serializers.SerializerMethodField()
    changes = serializers.SerializerMethodField(
        help_text='The change word by word, as [kind, words] runs: "same", "del" or "ins" (the admin\'s diff).'
    )

    class Meta:
        model = EntryVersion
        fields = ["id", "before", "after", "status_after", "cause", "actor", "at", "source_page_ids", "changes"]

    def get_changes(self, version) -> list[list[str]]:
        return word_changes(version.before, version.after)

    def get_source_page_ids(self, version) -> list[int]:
        return sorted(page.pk for page in version.source_pages.all())


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


@extend_schema_field(RetrievalDoc)
class RetrievalField(serializers.DictField):
    """A retrieval inside another answer (a chat reply, an inspection): documents.RetrievalDoc's payload."""


class UsageKindOut(serializers.Serializer):
    calls = serializers.IntegerField(help_text="LLM calls (for replies: replies).")
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
    prices = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField()),
        help_text="model -> [price per million prompt tokens, per million completion tokens]",
    )
    unpriced_models = serializers.ListField(child=serializers.CharField())


class PromptPartOut(serializers.Serializer):
    name = serializers.CharField(help_text="A section of the system message, 'earlier turn' or 'the message'.")
    role = serializers.CharField()
    text = serializers.CharField()
    tokens = serializers.IntegerField(help_text="Estimated as the token budget counts them (4 characters each).")


class QuotedOut(serializers.Serializer):
    page_id = serializers.IntegerField()
    seq = serializers.IntegerField()
    text = serializers.CharField(help_text="The person's sentence, as they said it.")
    said_at = serializers.DateTimeField()


class AnswerFromMemoryOut(serializers.Serializer):
    text = serializers.CharField(help_text="The reply, made of the person's own words.")
    quoted = QuotedOut(many=True)


class InspectionOut(serializers.Serializer):
    retrieval = RetrievalField()
    messages = serializers.ListField(
        child=serializers.DictField(), help_text="The prompt, exactly as it would be sent."
    )
    parts = PromptPartOut(many=True)
    prompt_tokens = serializers.IntegerField()
    compact = serializers.BooleanField(help_text="The shorter prompt given to a weak model (the offline one).")
    answer_from_memory = AnswerFromMemoryOut(
        allow_null=True,
        help_text="A weak model is not asked a question about the person: this is the reply it would get instead, "
        "quoting what they said. Null: the model would be asked (small talk, or a capable model).",
    )


class ChatOut(serializers.Serializer):
    response = serializers.CharField()
    reply_withheld = serializers.BooleanField(
        help_text="The model's reply degenerated twice: `response` is an apology, and the stored turn keeps "
        "only the user's words."
    )
    quoted = QuotedOut(
        many=True,
        help_text="With a weak model (the bundled one), a question about the person is answered with their own "
        "words: the statements `response` quotes (none: it says nothing it was told answers the question). "
        "`page.reply_source` says who wrote the reply.",
    )
    page = PageOut()
    retrieval = RetrievalField()
    usage = serializers.DictField(child=serializers.IntegerField())


class ProfileOut(serializers.Serializer):
    profile = serializers.DictField(child=serializers.CharField(), help_text="attribute -> value")
    entries = EntryOut(many=True)


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


class SidesOut(serializers.Serializer):
    source = SideSummaryOut()
    experiment = SideSummaryOut()


class ExperimentOut(serializers.ModelSerializer):
    parameters = serializers.SerializerMethodField()
    changed = serializers.SerializerMethodField(help_text="name -> [the source's value, the experiment's]")
    replay = ImportJobOut(
        allow_null=True, help_text="The replay of the source's turns; null for a space restored from an export."
    )
    restore = BackgroundJobOut(allow_null=True, help_text="The restore of an export; null for a replay.")

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


class ComparisonOut(serializers.Serializer):
    k = serializers.IntegerField()
    source = SideSummaryOut()
    experiment = SideSummaryOut()
    warnings = serializers.ListField(
        child=serializers.CharField(), help_text="Sentences saying which side was unfinished when compared."
    )
    probes = ProbeOut(many=True)
    recall = serializers.DictField(help_text="Mean recall@k per side over the probes with evidence, and how many.")
    curve = CurveOut(
        help_text="Each side's evidence shown against its prompt context's tokens, at budgets from 250 to 4,000, "
        "over the probes with evidence (empty lists when none has any)."
    )


class HeatPointOut(serializers.Serializer):
    turn = serializers.IntegerField(help_text="Turns the space had stored when the heat changed.")
    session_id = serializers.IntegerField()
    heat = serializers.FloatField()
    cause = serializers.CharField()


class HeatSideOut(serializers.Serializer):
    threshold = serializers.FloatField()
    points = HeatPointOut(many=True)


class ExperimentHeatOut(serializers.Serializer):
    source = HeatSideOut()
    experiment = HeatSideOut()


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
