"""The memory tiers as database rows. The database is the source of truth; FAISS files are sidecars.

A memory space is one user talking to one assistant. Everything below belongs to exactly one space,
so deleting a space deletes all of it and nothing of any other space.

Rows that have vectors carry `vector_version`: the space's version at which the row last changed in
a way an index must see (added, re-embedded, removed). An index that knows it is current up to version
V catches up by reading only the rows with a higher version, through an index on (space, vector_version):
without it, catching up after each consolidation read every page of the space. See index.py.
"""

import re
import uuid

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

external_id_validator = RegexValidator(
    r"^[A-Za-z0-9_.@-]{1,100}$",
    "Use 1-100 letters, digits, '_', '.', '@' or '-'.",
)

# Memory-user ids come in two namespaces that cannot meet. The operator's (commands, the library, MCP
# over stdio) are plain ids; a playground account's are `<username>:<name>` (spaces.account_user_id).
# An operator id never contains ':', so no account can take an id before the operator uses it.
ACCOUNT_SEPARATOR = ":"
memory_user_id_validator = RegexValidator(
    r"^([A-Za-z0-9_.@+-]{1,150}:)?[A-Za-z0-9_.@-]{1,100}$",
    "Use 1-100 letters, digits, '_', '.', '@' or '-', after an account's 'username:'.",
)


class MemoryUser(models.Model):
    external_id = models.CharField(max_length=255, unique=True, validators=[memory_user_id_validator])
    display_name = models.CharField(max_length=200, blank=True)
    # The playground account that may see this memory through the API and the chat page; a memory
    # user made by the library or a command has none, and only API tokens made for it can reach it.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="memory_users"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.external_id


class OwnerChange(models.Model):
    """A memory user an operator took over from a playground account (`api_token create ID
    --take-over`): who held it, who holds it now, who did it and when. Never adopted silently."""

    user = models.ForeignKey(MemoryUser, on_delete=models.CASCADE, related_name="owner_changes")
    previous_owner = models.CharField(max_length=150, blank=True, help_text="The account's username then.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    by = models.CharField(max_length=200)
    at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user} taken from {self.previous_owner or 'nobody'} by {self.by}"


class Assistant(models.Model):
    external_id = models.CharField(max_length=100, unique=True, validators=[external_id_validator])
    name = models.CharField(max_length=200, blank=True)
    persona = models.TextField(blank=True, help_text="How the assistant describes itself in prompts.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.external_id


# What may be tuned on each space (inputs.space_parameters checks new values, spaces.space_parameters_set
# writes them); the rest of a space's row is the engine's state.
SPACE_PARAMETERS = (
    "stm_capacity",
    "mtm_capacity",
    "knowledge_capacity",
    "merge_theta",
    "heat_threshold",
    "heat_alpha",
    "heat_beta",
    "heat_gamma",
    "recency_mu_seconds",
    "eviction_policy",
    "top_pages",
    "top_knowledge",
    "context_token_budget",
    "lexical_weight",
    "chain_weight",
    "reranker_weight",
)
# What the pages call each parameter (the chat page's parameters form, the lab's fork form).
PARAMETER_LABELS = {
    "stm_capacity": "Short-term capacity",
    "mtm_capacity": "Mid-term capacity (sessions)",
    "knowledge_capacity": "Knowledge capacity",
    "merge_theta": "Merge threshold θ",
    "heat_threshold": "Promotion threshold τ",
    "heat_alpha": "Visits weight α",
    "heat_beta": "Interaction length weight β",
    "heat_gamma": "Recency weight γ",
    "recency_mu_seconds": "Recency scale μ (seconds)",
    "eviction_policy": "Eviction policy",
    "top_pages": "Pages ranked (top-k)",
    "top_knowledge": "Knowledge ranked (top-k)",
    "context_token_budget": "Prompt budget (tokens)",
    "lexical_weight": "Lexical weight (BM25 against cosine)",
    "chain_weight": "Neighbours' weight",
    "reranker_weight": "Reranker's weight on pages (0: not reranked)",
}


class MemorySpace(models.Model):
    class Eviction(models.TextChoices):
        HEAT = "heat", "lowest heat (paper)"
        LFU = "lfu", "least frequently used (reference code)"

    user = models.ForeignKey(MemoryUser, on_delete=models.CASCADE, related_name="spaces")
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="spaces")

    # Parameters: the paper's values here; spaces.space_get copies the MEMORYOS_* settings into a new
    # space, and each space can then be tuned on its own. Named as the pages name them, in the admin too.
    stm_capacity = models.PositiveIntegerField(PARAMETER_LABELS["stm_capacity"], default=7)
    mtm_capacity = models.PositiveIntegerField(PARAMETER_LABELS["mtm_capacity"], default=200)
    knowledge_capacity = models.PositiveIntegerField(PARAMETER_LABELS["knowledge_capacity"], default=100)
    merge_theta = models.FloatField(PARAMETER_LABELS["merge_theta"], default=0.6)
    heat_threshold = models.FloatField(PARAMETER_LABELS["heat_threshold"], default=5.0)
    heat_alpha = models.FloatField(PARAMETER_LABELS["heat_alpha"], default=1.0)
    heat_beta = models.FloatField(PARAMETER_LABELS["heat_beta"], default=1.0)
    heat_gamma = models.FloatField(PARAMETER_LABELS["heat_gamma"], default=1.0)
    recency_mu_seconds = models.FloatField(PARAMETER_LABELS["recency_mu_seconds"], default=1e7)
    eviction_policy = models.CharField(
        PARAMETER_LABELS["eviction_policy"], max_length=10, choices=Eviction.choices, default=Eviction.HEAT
    )
    # Retrieval (engine/retriever.py): how many pages and knowledge entries it ranks, the tokens of memory
    # a prompt may hold, the share of BM25 against the cosine in a match, the neighbours' share, and the
    # reranker's on pages (engine/reranker.py, when MEMORYOS_RERANKER names one: 0 leaves the pages as ranked;
    # recall's quotes are reranked whenever it is on).
    top_pages = models.PositiveIntegerField(PARAMETER_LABELS["top_pages"], default=10)
    top_knowledge = models.PositiveIntegerField(PARAMETER_LABELS["top_knowledge"], default=10)
    context_token_budget = models.PositiveIntegerField(PARAMETER_LABELS["context_token_budget"], default=1500)
    lexical_weight = models.FloatField(PARAMETER_LABELS["lexical_weight"], default=0.5)
    chain_weight = models.FloatField(PARAMETER_LABELS["chain_weight"], default=0.2)
    reranker_weight = models.FloatField(PARAMETER_LABELS["reranker_weight"], default=0.0)

    # State.
    last_seq = models.BigIntegerField(default=0, help_text="Sequence number of the newest page.")
    thread_summary = models.TextField(blank=True, help_text="Running summary of the current thread.")
    vector_version = models.BigIntegerField(default=0)
    embedding_model = models.CharField(max_length=300, blank=True)
    # Who the space's index files belong to: written into their headers, and a file with another key (a
    # space of a reset or restored database that had this number) is rebuilt, never read (store/index.py).
    index_key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    # Consolidation lease: the worker that holds it is the only one consolidating this space.
    consolidation_owner = models.CharField(max_length=100, blank=True)
    consolidation_lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "assistant"], name="one_space_per_pair")]

    def __str__(self) -> str:
        return f"{self.user.external_id} / {self.assistant.external_id}"


TOPIC_WORDS = 6


def session_topic(summary: str) -> str:
    """A session's summary cut to its first TOPIC_WORDS words ("…" when cut): what a chart calls it. A note in
    brackets that opens it ("[shares a photo: a photo of a dog] ...", how LoCoMo writes what was shown) is left
    out when words follow it."""
    words = (re.sub(r"^\s*\[[^\]]*\]\s*", "", summary) or summary).split()
    return " ".join(words[:TOPIC_WORDS]) + ("\u2026" if len(words) > TOPIC_WORDS else "")


class MidTermSession(models.Model):
    """A topic segment of older conversation (the paper's mid-term memory unit)."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        EVICTED = "evicted"

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="sessions")
    summary = models.TextField()
    keywords = models.JSONField(default=list)
    embedding = models.BinaryField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    n_visit = models.PositiveIntegerField(default=0, help_text="Retrieval hits since the last promotion.")
    l_interaction = models.PositiveIntegerField(default=0, help_text="Pages added since the last promotion.")
    last_visit_at = models.DateTimeField()
    heat = models.FloatField(default=0.0, help_text="Heat when last recorded; recency decays it since.")
    total_visits = models.PositiveIntegerField(default=0, help_text="All retrieval hits, never reset.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    promoted_at = models.DateTimeField(null=True, blank=True)
    evicted_at = models.DateTimeField(null=True, blank=True)
    vector_version = models.BigIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["space", "status"]), models.Index(fields=["space", "vector_version"])]

    def __str__(self) -> str:
        return f"session {self.pk}: {self.summary[:60]}"

    @property
    def topic(self) -> str:
        """What the session is about, in a few words: its summary's first, for a chart's legend."""
        return session_topic(self.summary)


class Page(models.Model):
    """One QA turn: the user's input and the assistant's response. It is in exactly one tier."""

    class Tier(models.TextChoices):
        SHORT = "short", "short-term"
        MID = "mid", "mid-term"
        ARCHIVED = "archived", "archived (its session was evicted)"

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="pages")
    seq = models.BigIntegerField(help_text="Order of the turn within its space, from 1.")
    user_input = models.TextField(blank=True)
    agent_response = models.TextField(blank=True)
    timestamp = models.DateTimeField(help_text="When the turn happened.")
    meta = models.JSONField(default=dict, blank=True, help_text="The caller's own data, e.g. source ids.")
    created_at = models.DateTimeField(auto_now_add=True)
    tier = models.CharField(max_length=10, choices=Tier.choices, default=Tier.SHORT)
    session = models.ForeignKey(MidTermSession, null=True, blank=True, on_delete=models.RESTRICT, related_name="pages")
    # Continuity, decided when the page leaves short-term memory and kept in the database.
    continues_previous = models.BooleanField(null=True, blank=True)
    thread_summary = models.TextField(blank=True, help_text="Summary of the thread up to this page.")
    keywords = models.JSONField(default=list)
    embedding = models.BinaryField(null=True, blank=True)
    analyzed = models.BooleanField(default=False, help_text="Already mined for long-term memory.")
    vector_version = models.BigIntegerField(default=0)
    # The assistant's reply to this turn degenerated (a loop, the prompt echoed) and was not kept: the
    # user's words are memory, the reply is not, so it is never indexed, summarised or promoted.
    reply_withheld = models.BooleanField(
        default=False, help_text="The assistant's reply was degenerate; only the user's words were kept."
    )

    class ReplySource(models.TextChoices):
        GIVEN = "given", "given with the turn (add_memory, an import, a restore)"
        MODEL = "model", "written here by the space's LLM"
        WEAK_MODEL = "weak_model", "written here by a weak LLM (the bundled one): shown, never memory"
        QUOTED = "quoted", "the person's own words quoted back (engine/recall.py): not memory twice"
        CURATION = "curation", "what the memory did when asked in the conversation: not memory"
        PLAIN = "plain", "the memory's plain voice, for no model (engine/plain_voice.py): not memory"

    # Who wrote the reply. A weak model's reply is kept so the conversation reads as it happened, but its
    # words are not memory: a 135M model invents, and an invention must not become a fact about the person.
    reply_source = models.CharField(
        max_length=12,
        choices=ReplySource.choices,
        default=ReplySource.GIVEN,
        help_text="Who wrote the reply; a weak model's reply is never indexed, summarised or promoted.",
    )
    # The turn's words as they were said, while curation holds some of them out (engine/statement_marks.py): then
    # user_input and agent_response are what the memory holds now, which every reader uses, and this is
    # {"user_input": ..., "agent_response": ...} for the conversation shown as it happened. None otherwise.
    said = models.JSONField(
        null=True, blank=True, help_text="The words as said, while some are forgotten or corrected."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "seq"], name="one_page_per_seq"),
            models.CheckConstraint(
                condition=(models.Q(tier="short", session__isnull=True))
                | (models.Q(tier__in=["mid", "archived"], session__isnull=False)),
                name="page_in_exactly_one_tier",
            ),
        ]
        indexes = [
            models.Index(fields=["space", "tier", "seq"]),
            models.Index(fields=["space", "vector_version"]),
            # The pages still to be mined, by session: what a check of pending promotion looks for among
            # every page of the hot sessions, nearly all of which were mined long ago.
            models.Index(
                fields=["session"], condition=models.Q(tier="mid", analyzed=False), name="page_mid_unanalysed"
            ),
        ]
        ordering = ["seq"]

    def __str__(self) -> str:
        return f"page {self.seq} of space {self.space_id}"

    @property
    def memory_reply(self) -> str:
        """The reply as memory: its words, or "" when they are not memory (withheld, or a weak model's)."""
        return reply_as_memory(self.agent_response, withheld=self.reply_withheld, source=self.reply_source)

    @property
    def text(self) -> str:
        """The page as memory: what its embedding, keywords, lexical index and summaries are made of."""
        return page_text(self.user_input, self.memory_reply)


# Replies whose words are never memory: a weak model's, the person's own quoted back, the memory's own.
NOT_MEMORY = frozenset(
    [Page.ReplySource.WEAK_MODEL, Page.ReplySource.QUOTED, Page.ReplySource.CURATION, Page.ReplySource.PLAIN]
)


def reply_as_memory(agent_response: str, *, withheld: bool, source: str) -> str:
    """The one rule for what of a reply is memory: the person's words always are (see page_text's
    caller); the assistant's only when they were given with the turn or written by a capable model."""
    if withheld or source in NOT_MEMORY:
        return ""
    return agent_response


def page_text(user_input: str, agent_response: str) -> str:
    parts = []
    if user_input:
        parts.append(f"User: {user_input}")
    if agent_response:
        parts.append(f"Assistant: {agent_response}")
    return "\n".join(parts)


class ReplyRecord(models.Model):
    """What one reply used and cost, beside the turn that stored it: its model and tokens (for what a space
    costs over time) and the memory it was given, as references (kind, id, score) rather than words, so
    that a forgotten entry is not kept here; the chat page shows "What it used" again after a reload
    from these (services/usage.py)."""

    page = models.OneToOneField(Page, on_delete=models.CASCADE, related_name="reply_record")
    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="reply_records")
    at = models.DateTimeField(default=timezone.now)
    model = models.CharField(max_length=200, blank=True, help_text="The model that wrote the reply.")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    memory_tokens = models.PositiveIntegerField(default=0, help_text="Tokens of memory in the prompt.")
    token_budget = models.PositiveIntegerField(default=0)
    used = models.JSONField(default=list, help_text="[[kind, id, score], ...] of what the prompt held.")

    class Meta:
        indexes = [models.Index(fields=["space", "at"])]

    def __str__(self) -> str:
        return f"reply of page {self.page_id}: {self.prompt_tokens} + {self.completion_tokens} tokens"


class StatementMark(models.Model):
    """A statement of a turn that the memory no longer holds as it was said (engine/statement_marks.py): forgotten
    with the entry drawn from it, or corrected to the entry's edited value. The turn keeps its words in
    `Page.said`; its user_input and agent_response are rewritten without the statement, or with the
    correction in its place. Reverting the entry removes its marks and gives the words back."""

    class Kind(models.TextChoices):
        FORGOTTEN = "forgotten"
        CORRECTED = "corrected"

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="statement_marks")
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="marks")
    entry = models.ForeignKey("LongTermEntry", on_delete=models.CASCADE, related_name="marks")
    field = models.CharField(max_length=20, help_text="user_input or agent_response")
    sentence = models.TextField(help_text="The statement as it was said.")
    replacement = models.TextField(blank=True, help_text="What stands in its place now (corrected).")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["page"]), models.Index(fields=["entry"])]
        ordering = ["page_id", "pk"]

    def __str__(self) -> str:
        return f"{self.kind} in page {self.page_id}: {self.sentence[:60]}"


class HeatEvent(models.Model):
    """A point of a session's heat timeline, written whenever its heat changes."""

    class Cause(models.TextChoices):
        CREATED = "created"
        MERGED = "merged"
        RETRIEVED = "retrieved"
        PROMOTED = "promoted"  # at the heat that crossed the threshold
        COOLED = "cooled"  # right after a promotion: its visits and turns counted again from zero
        EVICTED = "evicted"

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="heat_events")
    session = models.ForeignKey(MidTermSession, on_delete=models.CASCADE, related_name="heat_events")
    at = models.DateTimeField()
    cause = models.CharField(max_length=10, choices=Cause.choices)
    heat = models.FloatField()
    n_visit = models.PositiveIntegerField()
    l_interaction = models.PositiveIntegerField()
    recency = models.FloatField()
    # The turn that made the point (a Page.seq) and its time, the conversation's own: an imported history's turns
    # are months apart though stored in a minute, and a consolidation run places many turns at one `at`. A visit
    # is made by the turn that asks (the next one stored). None on points recorded before they were kept.
    turn = models.BigIntegerField(null=True, blank=True, help_text="The turn (page seq) that made this point.")
    turn_at = models.DateTimeField(null=True, blank=True, help_text="That turn's time, as the conversation dates it.")

    class Meta:
        indexes = [models.Index(fields=["space", "at"])]
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"session {self.session_id} {self.cause} at {self.at:%Y-%m-%d %H:%M}: heat {self.heat:.2f}"


class ParameterChange(models.Model):
    """A change to one of a space's parameters (services/spaces.space_parameters_set), so that what the space
    did can be read against the parameters it had then: the heat timeline draws the promotion threshold
    as it was at each time."""

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="parameter_changes")
    at = models.DateTimeField(default=timezone.now)
    name = models.CharField(max_length=40)
    before = models.JSONField()
    after = models.JSONField()
    actor = models.CharField(max_length=150, blank=True, help_text="Who changed it: an account, a token, an admin.")

    class Meta:
        indexes = [models.Index(fields=["space", "name", "at"])]
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.name}: {self.before} -> {self.after} at {self.at:%Y-%m-%d %H:%M}"


class LongTermEntry(models.Model):
    """A profile attribute, a user fact or a piece of assistant knowledge, with provenance."""

    class Kind(models.TextChoices):
        PROFILE = "profile"
        USER_KNOWLEDGE = "user_knowledge", "user knowledge"
        ASSISTANT_KNOWLEDGE = "assistant_knowledge", "assistant knowledge"

    class Status(models.TextChoices):
        ACTIVE = "active"
        SUPERSEDED = "superseded"
        EVICTED = "evicted"
        DELETED = "deleted"

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="entries")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    key = models.CharField(max_length=200, help_text="The profile attribute, or the topic of a fact.")
    value = models.TextField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    source_pages = models.ManyToManyField(Page, blank=True, related_name="entries")
    embedding = models.BinaryField(null=True, blank=True)
    hits = models.PositiveIntegerField(default=0)
    last_hit_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    vector_version = models.BigIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(fields=["space", "kind", "status"]),
            models.Index(fields=["space", "vector_version"]),
        ]
        verbose_name_plural = "long-term entries"

    def __str__(self) -> str:
        return f"{self.kind} {self.key}: {self.value[:60]}"


class EntryVersion(models.Model):
    """One change to a long-term entry: the diff history and its provenance."""

    class Cause(models.TextChoices):
        CONSOLIDATION = "consolidation", "consolidation (LLM extraction)"
        WORDS = "words", "consolidation (the person's own words, no LLM)"
        MERGED = "merged", "duplicate merged"
        SUPERSEDED = "superseded", "superseded by a newer fact"
        EVICTED = "evicted", "evicted at capacity"
        ADMIN = "admin", "admin"
        OWNER = "owner", "owner edit"  # the space's owner, on the chat page (a signed-in session)
        API = "api", "API"
        LIBRARY = "library", "library call"
        IMPORTED = "imported", "imported from another memory system"
        CONVERSATION = "conversation", "asked in the conversation"

    entry = models.ForeignKey(LongTermEntry, on_delete=models.CASCADE, related_name="versions")
    # None, not "", means "no value": before an entry existed, after it was deleted.
    before = models.TextField(null=True, blank=True)  # noqa: DJ001
    after = models.TextField(null=True, blank=True)  # noqa: DJ001
    status_after = models.CharField(max_length=12, choices=LongTermEntry.Status.choices)
    cause = models.CharField(max_length=15, choices=Cause.choices)
    actor = models.CharField(max_length=200)
    at = models.DateTimeField()
    source_pages = models.ManyToManyField(Page, blank=True, related_name="entry_versions")
    # The entry whose forgetting or correction this change was part of: an entry drawn from the same
    # statement (engine/statement_marks.py), which comes back when that entry is reverted.
    with_entry = models.ForeignKey(
        "LongTermEntry", null=True, blank=True, on_delete=models.SET_NULL, related_name="changed_with"
    )

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"entry {self.entry_id} {self.cause} by {self.actor} at {self.at:%Y-%m-%d %H:%M}"

    @property
    def change(self) -> str:
        """What the version did, as the history says it: "added", "edited", "deleted", "superseded",
        "evicted", "sources merged", "restored"; "... with entry #N" when it went with another entry's forget
        or edit (engine/statement_marks.py)."""
        Status = LongTermEntry.Status
        if self.status_after in (Status.DELETED, Status.SUPERSEDED, Status.EVICTED):
            what = str(self.status_after)
        elif self.before is None:
            what = "added" if self.cause not in (self.Cause.ADMIN, self.Cause.OWNER, self.Cause.API) else "restored"
        elif self.before == self.after:
            what = "sources merged" if self.cause == self.Cause.MERGED else "unchanged"
        else:
            what = "edited"
        return f"{what} with entry #{self.with_entry_id}" if self.with_entry_id else what


class ConsolidationRun(models.Model):
    """One consolidation job of a space: what it did, what it cost, how it ended."""

    class Kind(models.TextChoices):
        CONSOLIDATE = "consolidate", "consolidate (tier moves due)"
        IMPORT = "import", "consolidate during an import or a replay"
        ANALYSIS = "analysis", "forced mid-term analysis"

    class Status(models.TextChoices):
        RUNNING = "running"
        RETRYING = "retrying", "waiting to retry"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        SUPERSEDED = "superseded", "done by another job"  # its retry found the work already done

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="consolidation_runs")
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.CONSOLIDATE)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    task_id = models.CharField(max_length=100, blank=True, db_index=True)
    attempts = models.PositiveIntegerField(default=1)
    pages_moved = models.PositiveIntegerField(default=0)
    sessions_promoted = models.PositiveIntegerField(default=0)
    sessions_evicted = models.PositiveIntegerField(default=0)
    items_stored = models.PositiveIntegerField(default=0)
    items_rejected = models.PositiveIntegerField(default=0)  # extracted by the LLM, refused by validation
    llm_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=200, blank=True, help_text="The model asked (for the cost of its tokens).")
    duration_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["space", "status"])]
        ordering = ["-started_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.kind} of space {self.space_id}: {self.status}"


class ApiToken(models.Model):
    """A secret that lets a program use the REST API and the MCP server for one memory user, and no
    other. Only a hash of the secret is stored: it is shown once, when made (services/tokens.token_create)."""

    memory_user = models.ForeignKey(MemoryUser, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, help_text="What the token is for.")
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12, help_text="The secret's first characters, to tell tokens apart.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Stops working then; empty: never.")

    def __str__(self) -> str:
        return f"{self.prefix}... for {self.memory_user_id} ({self.name or 'unnamed'})"


class JobStatus(models.TextChoices):
    """Where a worker's job stands (an import, a restore, a comparison)."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"  # stopped by its owner (an import); what it did before stays


class WorkerJob(models.Model):
    """What a worker's job records, whatever the work: where it stands, why it failed, when."""

    Status = JobStatus

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The last sign of work on the job (made, sent, started, a turn stored); empty when its message
    # could not be sent. The workers' sweep sends an unfinished job again when this is empty or old
    # (services/imports.imports_stalled, services/background.background_stalled): its worker died, or the broker
    # was down.
    touched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-pk"]


class ImportUpload(models.Model):
    """A file a person brought to import (another assistant's export, chat messages, a memory system's
    facts: memory_engine/formats), checked whole in the background once it arrived (`status`). What is kept,
    under MEMORYOS_IMPORT_DIR while it is chosen from and imported, is its working copy (`path`): a line a
    turn or fact, as the import stores them (formats.Record); its conversations are listed in
    UploadConversation. A refused file keeps only its row, saying why, until the sweep removes it."""

    class Status(models.TextChoices):
        CHECKING = "checking"
        READY = "ready"
        REFUSED = "refused"

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="uploads")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.READY)
    error = models.TextField(blank=True, help_text="Why the file was refused.")
    refusal = models.CharField(
        max_length=10, blank=True, help_text="What refused it: format, too_large (a bound) or busy (try again later)."
    )
    name = models.CharField(max_length=200, help_text="The file's own name.")
    path = models.CharField(max_length=300, help_text="Its working copy's name, under MEMORYOS_IMPORT_DIR.")
    size = models.PositiveBigIntegerField(help_text="Bytes brought.")
    kept_bytes = models.PositiveBigIntegerField(
        default=0, help_text="Bytes of its working copy (while it is checked, of the file brought)."
    )
    sha256 = models.CharField(max_length=64)
    format = models.CharField(max_length=20)
    conversation_count = models.PositiveIntegerField(default=0)
    facts = models.PositiveIntegerField(default=0, help_text="Memories to store as knowledge.")
    turns = models.PositiveIntegerField(default=0)
    cut = models.PositiveIntegerField(default=0, help_text="Turns with a message shortened to the limit.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.format}) for space {self.space_id}"


class UploadConversation(models.Model):
    """A conversation of a file brought to import, as the person chooses among them, and where its turns
    are in the upload's working copy."""

    upload = models.ForeignKey(ImportUpload, on_delete=models.CASCADE, related_name="conversations")
    place = models.PositiveIntegerField(help_text="Its place in the file, from 0.")
    key = models.CharField(max_length=200, help_text="Its id in the file, or its place there.")
    title = models.CharField(max_length=200, blank=True)
    created = models.DateTimeField(null=True, blank=True)
    last = models.DateTimeField(null=True, blank=True)
    messages = models.PositiveIntegerField()
    turns = models.PositiveIntegerField()
    start = models.PositiveBigIntegerField(help_text="Its turns' first byte in the working copy.")
    end = models.PositiveBigIntegerField(help_text="The byte after its last turn.")

    class Meta:
        ordering = ["upload", "place"]
        constraints = [
            models.UniqueConstraint(fields=["upload", "place"], name="upload_conversation_place"),
            models.UniqueConstraint(fields=["upload", "key"], name="upload_conversation_key"),
        ]

    def __str__(self) -> str:
        return f"{self.title or self.key} in upload {self.upload_id}"


class ImportJob(WorkerJob):
    """A conversation being imported into a space, turn by turn, with progress. The turns wait in
    `turns`, or in an upload's file (the conversations `chosen` from it); `done` says how many are
    stored, so a job taken over after a crash goes on from there."""

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="imports")
    source = models.CharField(max_length=200, help_text="Where the turns came from, e.g. 'LoCoMo conv-26'.")
    turns = models.JSONField(help_text="[{user_input, agent_response, timestamp, meta?, reply_withheld?}], in order.")
    upload = models.ForeignKey(ImportUpload, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs")
    chosen = models.JSONField(
        null=True, blank=True, help_text="The upload's conversations to import (keys); all when empty."
    )
    total = models.PositiveIntegerField()
    done = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0, help_text="Turns and facts an earlier import had stored.")
    offset = models.PositiveBigIntegerField(
        default=0, help_text="Where the next turn is in its upload's working copy: each chunk starts there."
    )
    started_at = models.DateTimeField(null=True, blank=True, help_text="When a worker first took it.")
    settled_at = models.DateTimeField(
        null=True, blank=True, help_text="When the history it stored moved from short-term to mid-term memory (once)."
    )

    def __str__(self) -> str:
        return f"import {self.pk} into space {self.space_id}: {self.done}/{self.total} {self.status}"


class ImportedTurn(models.Model):
    """Turn `number` of an import job is stored: written in the transaction that stores its page, under a
    unique key, so two workers (or a redelivered message) running one job store each turn once."""

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="stored_turns")
    number = models.PositiveIntegerField(help_text="The turn's place in the job, from 0.")
    page = models.ForeignKey(Page, null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "number"], name="import_turn_stored_once")]

    def __str__(self) -> str:
        return f"turn {self.number} of import {self.job_id}"


class ImportedKey(models.Model):
    """A turn or fact of an imported source that the space holds (a hash of the format, the conversation's
    id and its messages' ids; for turns given to an import, of them and the turns before them): written with
    what it stored, under a unique key, so that importing the same file or turns again stores nothing twice."""

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["space", "key"], name="imported_once_a_space")]

    def __str__(self) -> str:
        return f"{self.key[:12]} in space {self.space_id}"


class BackgroundJob(WorkerJob):
    """Work too heavy for a web request, run by a worker (services/background.py): a space's export restored
    (into the space, or into an experiment's shadow space), a comparison of an experiment with its source,
    the check of a file brought to import, or a turn's words erased. The request answers 202 with the job
    (or, for a check, the upload); its page or client polls it for the result."""

    class Kind(models.TextChoices):
        RESTORE = "restore"
        COMPARISON = "comparison"
        CHECK = "check"
        ERASE = "erase"

    space = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="background_jobs")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    request = models.JSONField(
        help_text="What to do: the export and parameters, the experiment, probes and k, the upload to check, or "
        "the turn and sentence to erase. Emptied when the job ends."
    )
    result = models.JSONField(null=True, blank=True, help_text="The restore's counts, or the comparison.")

    def __str__(self) -> str:
        return f"{self.kind} {self.pk} of space {self.space_id}: {self.status}"


class Experiment(models.Model):
    """A fork of a memory space: the source's turns replayed, by an import job, into a shadow space with
    other parameters, to compare what each remembers (services/lab.py, services/comparison.py).

    The shadow space belongs to a memory user of its own that no account owns, so it is in no list and
    behind no door but the experiment's; nothing of the experiment is ever written to the source."""

    source = models.ForeignKey(MemorySpace, on_delete=models.CASCADE, related_name="experiments")
    space = models.OneToOneField(MemorySpace, on_delete=models.CASCADE, related_name="experiment")
    name = models.CharField(max_length=100)
    replay = models.ForeignKey(ImportJob, null=True, on_delete=models.SET_NULL, related_name="+")
    restore = models.ForeignKey(BackgroundJob, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "name"], name="one_experiment_per_name")]
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"experiment {self.name!r} of space {self.source_id}"


class SpaceLLM(models.Model):
    """The LLM a space's owner chose for it, instead of the deployment's (MEMORYOS_LLM_*): the bundled
    offline model or an OpenAI-compatible endpoint. The endpoint's API key is kept encrypted with a key
    from the environment (store/secrets.py) and is never sent back: only its last four characters."""

    class Provider(models.TextChoices):
        OFFLINE = "offline", "the bundled offline model"
        OPENAI = "openai", "an OpenAI-compatible endpoint"

    space = models.OneToOneField(MemorySpace, on_delete=models.CASCADE, related_name="llm_choice")
    provider = models.CharField(max_length=10, choices=Provider.choices)
    base_url = models.CharField(max_length=500, blank=True)
    model = models.CharField(max_length=200, blank=True)
    api_key_encrypted = models.TextField(blank=True, help_text="Fernet token; see store/secrets.py.")
    key_hint = models.CharField(max_length=8, blank=True, help_text="The key's last four characters.")
    updated_by = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.provider} {self.model or ''} for space {self.space_id}".strip()
