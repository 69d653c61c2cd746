from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from memory_engine import inputs
from memory_engine.config import memory_settings
from memory_engine.errors import InvalidParameter, MemoryInputError
from memory_engine.interfaces.rates import API, HEAVY, admit, caller_key
from memory_engine.interfaces.signin import AdminSignInForm
from memory_engine.interfaces.word_diff import word_diff
from memory_engine.models import (
    SPACE_PARAMETERS,
    ApiToken,
    Assistant,
    ConsolidationRun,
    EntryVersion,
    Experiment,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    MidTermSession,
    OwnerChange,
    Page,
    ParameterChange,
    ReplyRecord,
)
from memory_engine.services import curation, usage
from memory_engine.services.dispatch import request_retry
from memory_engine.services.export import space_counts, space_sizes, user_export
from memory_engine.services.lab import experiment_delete
from memory_engine.services.spaces import heat_points_newest, space_delete, space_parameters_set, user_memory_delete
from memory_engine.services.tokens import token_revoke

Cause = EntryVersion.Cause

admin.site.login_form = AdminSignInForm  # sign-in attempts are limited here as on the playground's page


class OwnerChangeInline(admin.TabularInline):
    model = OwnerChange
    fields = readonly_fields = ["at", "previous_owner", "owner", "by"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(MemoryUser)
class MemoryUserAdmin(admin.ModelAdmin):
    """Deleting a memory user (after Django's confirmation page, which lists what goes) removes all of
    its memory through the engine: every space's rows, history, heat timeline, runs and index files.

    The id and the owner are read-only: memory users are made by accounts (in their namespace), by
    commands and by the library, and an operator takes one over with `api_token create --take-over`,
    which is recorded (the owner changes below)."""

    list_display = ["external_id", "display_name", "owner", "created_at"]
    search_fields = ["external_id", "display_name"]
    list_select_related = ["owner"]
    actions = ["export_json"]
    readonly_fields = ["external_id", "owner", "memory"]
    inlines = [OwnerChangeInline]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="memory, tier by tier")
    def memory(self, user):
        spaces = MemorySpace.objects.filter(user=user).select_related("assistant").order_by("assistant__external_id")
        rows = [(space, space_counts(space=space), space_sizes(space=space)) for space in spaces]
        return render_to_string("admin/memory_engine/user_memory.html", {"rows": rows})

    def delete_model(self, request, obj):
        user_memory_delete(user=obj)

    def get_deleted_objects(self, objs, request):
        return _deleted_by_the_engine(super().get_deleted_objects(objs, request))

    def delete_queryset(self, request, queryset):
        for user in queryset:
            user_memory_delete(user=user)

    @admin.action(description="Export the selected users' memory as JSON")
    def export_json(self, request, queryset):
        document = {"users": [user_export(user=user) for user in queryset.order_by("external_id")]}
        response = JsonResponse(document, json_dumps_params={"indent": 2, "ensure_ascii": False})
        response["Content-Disposition"] = 'attachment; filename="memoryos-export.json"'
        return response


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are made with `manage.py api_token create` (the secret is shown only there); here they can
    be seen and revoked."""

    list_display = ["prefix", "memory_user", "name", "created_at", "last_used_at", "expires_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "memory_user__external_id"]
    readonly_fields = ["memory_user", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at", "expires_at"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset:
            token_revoke(token=token)


@admin.register(Assistant)
class AssistantAdmin(admin.ModelAdmin):
    list_display = ["external_id", "name", "created_at"]
    search_fields = ["external_id", "name"]


class SpaceForm(forms.ModelForm):
    """A space's parameters, checked as the engine checks them for every door (inputs.space_parameters)."""

    class Meta:
        model = MemorySpace
        fields = list(SPACE_PARAMETERS)

    def clean(self):
        data = super().clean()
        try:
            inputs.space_parameters({name: data[name] for name in SPACE_PARAMETERS if name in data})
        except InvalidParameter as exc:
            self.add_error(exc.field, exc.reason)
        return data


@admin.register(MemorySpace)
class MemorySpaceAdmin(admin.ModelAdmin):
    """A space's parameters can be tuned, through the engine (spaces.space_parameters_set: only those
    columns, under the space's lock); the rest of the row is the engine's state, shown read-only. Spaces
    are made by the engine when a user first talks to an assistant."""

    form = SpaceForm
    list_display = ["__str__", "stm_capacity", "mtm_capacity", "heat_threshold", "last_seq", "timeline"]
    list_select_related = ["user", "assistant"]
    search_fields = ["user__external_id", "assistant__external_id"]

    def delete_model(self, request, obj):
        space_delete(space=obj)

    def get_deleted_objects(self, objs, request):
        return _deleted_by_the_engine(super().get_deleted_objects(objs, request))

    def delete_queryset(self, request, queryset):
        for space in queryset:
            space_delete(space=space)

    readonly_fields = [
        "user",
        "assistant",
        "last_seq",
        "vector_version",
        "embedding_model",
        "thread_summary",
        "consolidation_owner",
        "consolidation_lease_until",
        "timeline",
        "usage_30_days",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="LLM use, last 30 days")
    def usage_30_days(self, space):
        """Calls, tokens and cost by kind, as GET .../usage/ gives them (services/usage.py)."""
        totals = usage.space_usage(space, days=30, prices=memory_settings().llm_prices)["totals"]
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    kind,
                    t["calls"],
                    t["prompt_tokens"],
                    t["completion_tokens"],
                    "no price" if t["cost"] is None else f"{t['cost']:.4f}",
                )
                for kind, t in totals.items()
            ),
        )
        head = "<tr><th>kind</th><th>calls</th><th>prompt tokens</th><th>completion tokens</th><th>cost</th></tr>"
        return format_html('<table id="usage">{}{}</table>', mark_safe(head), rows)

    def save_model(self, request, obj, form, change):
        changed = {name: form.cleaned_data[name] for name in form.changed_data if name in SPACE_PARAMETERS}
        space_parameters_set(obj, changed, actor=_actor(request))

    def get_urls(self):
        view = self.admin_site.admin_view(self.heat_timeline_view)
        return [path("<int:space_id>/heat/", view, name="memory_engine_memoryspace_heat"), *super().get_urls()]

    @admin.display(description="heat timeline")
    def timeline(self, space):
        return format_html('<a href="{}">chart</a>', reverse("admin:memory_engine_memoryspace_heat", args=[space.pk]))

    def heat_timeline_view(self, request, space_id: int):
        space = get_object_or_404(MemorySpace.objects.select_related("user", "assistant"), pk=space_id)
        if not self.has_view_permission(request, space):
            raise PermissionDenied
        # The newest points, as many as the chat page draws; the chart is the chat page's (static/js/charts.js).
        points = heat_points_newest(space, HEAT_POINTS_SHOWN)  # each as every door gives it
        changes = ParameterChange.objects.filter(space=space, name="heat_threshold").order_by("at", "pk")
        threshold_changes = [
            {"at": at.isoformat(), "before": before, "after": after}
            for at, before, after in changes.values_list("at", "before", "after")
        ]
        context = {
            **self.admin_site.each_context(request),
            "title": f"Heat timeline: {space}",
            "space": space,
            "heat": {"points": points, "threshold": space.heat_threshold, "threshold_changes": threshold_changes},
        }
        return TemplateResponse(request, "admin/memory_engine/heat_timeline.html", context)


HEAT_POINTS_SHOWN = 2000


class PageForm(forms.ModelForm):
    """A turn's words, checked as the engine checks them (curation.page_words)."""

    class Meta:
        model = Page
        fields = ["user_input", "agent_response"]

    def clean(self):
        data = super().clean()
        try:
            data["user_input"], data["agent_response"] = curation.page_words(
                self.instance, data.get("user_input", ""), data.get("agent_response", "")
            )
        except MemoryInputError as exc:
            raise forms.ValidationError(str(exc)) from None
        return data


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    """A turn's words can be corrected, through the engine (curation.page_edit): the page is re-embedded
    and its session's summary recomputed, so retrieval ranks the new words at once. What the engine
    derived stays read-only; turns are not added or deleted one by one (delete the space or the user)."""

    form = PageForm
    list_display = ["seq", "space", "tier", "session", "analyzed", "reply_source", "timestamp"]
    list_filter = ["tier", "analyzed", "reply_source"]
    search_fields = ["user_input", "agent_response"]
    readonly_fields = [
        "space",
        "seq",
        "timestamp",
        "meta",
        "tier",
        "session",
        "continues_previous",
        "thread_summary",
        "keywords",
        "analyzed",
        "reply_withheld",
        "reply_source",
        "vector_version",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change):
        if change and form.changed_data:
            curation.page_edit(
                page=Page.objects.get(pk=obj.pk), user_input=obj.user_input, agent_response=obj.agent_response
            )


class SessionForm(forms.ModelForm):
    """A session's summary, checked as the engine checks it (curation.summary_text)."""

    class Meta:
        model = MidTermSession
        fields = ["summary"]

    def clean_summary(self):
        try:
            return curation.summary_text(self.cleaned_data.get("summary", ""))
        except MemoryInputError as exc:
            raise forms.ValidationError(str(exc)) from None


@admin.register(MidTermSession)
class MidTermSessionAdmin(admin.ModelAdmin):
    """A session's summary can be corrected, through the engine (curation.session_edit: re-embedded, seen
    by retrieval at once) until new pages merge in and it is recomputed. Heat, counters and status are
    the engine's; sessions are not added or deleted one by one."""

    form = SessionForm
    list_display = ["pk", "space", "status", "heat", "n_visit", "l_interaction", "last_visit_at"]
    list_filter = ["status"]
    search_fields = ["summary"]
    readonly_fields = [
        "space",
        "status",
        "keywords",
        "heat",
        "n_visit",
        "l_interaction",
        "total_visits",
        "last_visit_at",
        "promoted_at",
        "evicted_at",
        "vector_version",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change):
        if change and form.changed_data:
            curation.session_edit(session=MidTermSession.objects.get(pk=obj.pk), summary=obj.summary)


class EntryVersionInline(admin.TabularInline):
    """An entry's versions, as recorded: written by the engine's services only."""

    model = EntryVersion
    fk_name = "entry"
    extra = 0
    can_delete = False
    # every field read-only (the entry it went with too: a list of every entry to choose from made the page
    # 1,637 px wide, and let a version be rewritten)
    fields = readonly_fields = ["at", "cause", "actor", "before", "after", "status_after", "with_entry"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class EntryForm(forms.ModelForm):
    """An entry's value, checked as the engine checks it (inputs.entry_value)."""

    class Meta:
        model = LongTermEntry
        fields = ["value"]

    def clean_value(self):
        if self.instance.status != LongTermEntry.Status.ACTIVE and "value" in self.changed_data:
            raise forms.ValidationError(f"this entry is {self.instance.status}: revert it from its history first")
        try:
            return inputs.entry_value(self.cleaned_data.get("value", ""))
        except MemoryInputError as exc:
            raise forms.ValidationError(str(exc)) from None


@admin.register(LongTermEntry)
class LongTermEntryAdmin(admin.ModelAdmin):
    """Only the value can be edited, and an edit or a delete goes through the engine's services: it is
    recorded in the entry's history (cause "admin", the staff member as actor) and retrieval sees it at
    once. Deleting marks the entry deleted, with the statements it was drawn from (engine/statement_marks.py);
    its history stays, and the banner says so, as the confirmation did."""

    list_display = ["pk", "space", "kind", "key", "value", "status", "updated_at"]
    list_filter = ["kind", "status"]
    search_fields = ["key", "value", "space__user__external_id"]
    list_select_related = ["space__user", "space__assistant"]
    form = EntryForm
    readonly_fields = ["space", "kind", "key", "status", "superseded_by", "hits", "last_hit_at", "vector_version"]
    inlines = [EntryVersionInline]
    actions = ["erase_selected"]

    @admin.action(
        description="Erase for good (irreversible): the entries, their history and the words they were drawn from",
        permissions=["delete"],
    )
    def erase_selected(self, request, queryset):
        if request.POST.get("post") != "yes":  # irreversible: asked first, as a delete is
            context = {
                **self.admin_site.each_context(request),
                "title": "Erase for good?",
                "queryset": list(queryset),
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                "opts": self.model._meta,
            }
            return TemplateResponse(
                request, "admin/memory_engine/longtermentry/erase_selected_confirmation.html", context
            )
        ids = list(queryset.values_list("pk", flat=True))
        if not _within_heavy_rate(request, len(ids), "erasing an entry"):
            return
        for entry in LongTermEntry.objects.filter(pk__in=ids):
            curation.erase_entry(entry)
        self.message_user(request, f"Erased {len(ids)} entr{'y' if len(ids) == 1 else 'ies'}, their history and words.")

    def has_add_permission(self, request) -> bool:
        return False

    def get_readonly_fields(self, request, obj=None):
        return [*self.readonly_fields, "history"]

    @admin.display(description="history")
    def history(self, entry):
        url = reverse("admin:memory_engine_longtermentry_versions", args=[entry.pk])
        return format_html('<a href="{}">every version, with diffs and revert</a>', url)

    def get_urls(self):
        versions = self.admin_site.admin_view(self.versions_view)
        revert = self.admin_site.admin_view(self.revert_view)
        return [
            path("<int:entry_id>/versions/", versions, name="memory_engine_longtermentry_versions"),
            path("<int:entry_id>/versions/<int:version_id>/revert/", revert, name="memory_engine_longtermentry_revert"),
            *super().get_urls(),
        ]

    def versions_view(self, request, entry_id: int):
        entry = get_object_or_404(LongTermEntry.objects.select_related("space__user", "space__assistant"), pk=entry_id)
        if not self.has_view_permission(request, entry):
            raise PermissionDenied
        versions = list(entry.versions.prefetch_related("source_pages").order_by("at", "pk"))
        rows = []
        for number, version in enumerate(versions):
            # The status where it changed, not "active" on every edit; the last version is the entry now.
            changed = number == 0 or version.status_after != versions[number - 1].status_after
            rows.append((version, word_diff(version.before, version.after), changed, number == len(versions) - 1))
        context = {
            **self.admin_site.each_context(request),
            "title": f"History of {entry.kind} entry {entry.pk}",
            "entry": entry,
            "rows": rows,
            "covers": curation.coverage(entry),
            "can_revert": self.has_change_permission(request, entry),
        }
        return TemplateResponse(request, "admin/memory_engine/entry_versions.html", context)

    def revert_view(self, request, entry_id: int, version_id: int):
        entry = get_object_or_404(LongTermEntry, pk=entry_id)
        if request.method != "POST" or not self.has_change_permission(request, entry):
            raise PermissionDenied
        version = get_object_or_404(EntryVersion, pk=version_id, entry=entry)
        try:
            curation.entry_revert(entry=entry, version=version, actor=_actor(request), cause=Cause.ADMIN)
            messages.success(request, f"Entry {entry.pk} is back to: {version.after}")
        except MemoryInputError as exc:  # another entry holds the attribute; a version with no value
            messages.error(request, str(exc))
        return redirect("admin:memory_engine_longtermentry_versions", entry_id=entry.pk)

    def save_model(self, request, obj, form, change):
        if change and "value" in form.changed_data:
            curation.entry_edit(
                entry=LongTermEntry.objects.get(pk=obj.pk), value=obj.value, actor=_actor(request), cause=Cause.ADMIN
            )

    def delete_model(self, request, obj):
        curation.entry_delete(entry=obj, actor=_actor(request), cause=Cause.ADMIN)

    def delete_queryset(self, request, queryset):
        for entry in queryset:
            curation.entry_delete(entry=entry, actor=_actor(request), cause=Cause.ADMIN)

    def response_delete(self, request, obj_display, obj_id):
        covers = curation.coverage(LongTermEntry.objects.get(pk=obj_id))
        held = ""
        if covers.statements:
            statements = "1 statement" if covers.statements == 1 else f"{covers.statements} statements"
            seqs = [f"#{seq}" for seq in covers.seqs]
            turns = seqs[0] if len(seqs) == 1 else f"{', '.join(seqs[:-1])} and {seqs[-1]}"
            held = f", with {statements} of turn{'' if len(seqs) == 1 else 's'} {turns}"
        self.message_user(request, f"Entry {obj_id} was marked deleted{held}; its history is kept (revert it there).")
        return redirect("admin:memory_engine_longtermentry_changelist")

    def message_user(self, request, message, *args, **kwargs):
        if str(message).startswith("Successfully deleted"):  # the "delete selected" action's banner
            message = str(message).replace("Successfully deleted", "Marked deleted", 1) + " Their history is kept."
        super().message_user(request, message, *args, **kwargs)


def _deleted_by_the_engine(found):
    """What deleting a user or a space removes, for the confirmation page: the engine's service removes
    its turns and sessions too, which cannot be deleted one by one here, so their permission is not
    asked for."""
    deleted, model_count, _perms_needed, protected = found
    return deleted, model_count, set(), protected


def _within_heavy_rate(request, count: int, each: str) -> bool:
    """Counts `count` heavy requests (one for each entry erased or space consolidated, as REST and MCP count
    one such request) against the staff account's rates (interfaces/rates.py). When they do not fit,
    counts nothing, says so in an error message and answers False: the action then does nothing."""
    wait = admit(caller_key(account_id=request.user.pk), API, HEAVY, cost=count)
    if wait:
        messages.error(
            request,
            f"Nothing was done: {each} counts as one heavy request, and {count} more are over your account's "
            f"rate (MEMORYOS_API_CHAT_RATE). Try again in {wait} seconds, or select fewer.",
        )
    return not wait


def _actor(request) -> str:
    return f"admin {request.user.get_username()}"


class RecordAdmin(admin.ModelAdmin):
    """Records the engine writes as things happen: read here, never added or changed by hand."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(HeatEvent)
class HeatEventAdmin(RecordAdmin):
    list_display = ["at", "session", "cause", "heat", "n_visit", "l_interaction", "recency"]
    list_filter = ["cause"]


@admin.register(ReplyRecord)
class ReplyRecordAdmin(RecordAdmin):
    list_display = ["at", "space", "page", "model", "prompt_tokens", "completion_tokens", "memory_tokens"]
    list_filter = ["model"]
    list_select_related = ["space__user", "space__assistant", "page"]
    search_fields = ["space__user__external_id", "model"]


@admin.register(ParameterChange)
class ParameterChangeAdmin(RecordAdmin):
    list_display = ["at", "space", "name", "before", "after", "actor"]
    list_filter = ["name"]
    list_select_related = ["space__user", "space__assistant"]
    search_fields = ["space__user__external_id", "actor"]


@admin.register(ConsolidationRun)
class ConsolidationRunAdmin(RecordAdmin):
    list_display = ["started_at", "space", "kind", "status", "attempts", "pages_moved", "llm_calls", "duration_ms"]
    list_filter = ["status", "kind"]
    search_fields = ["error", "task_id", "space__user__external_id"]
    readonly_fields = [field.name for field in ConsolidationRun._meta.fields]
    actions = ["retry"]

    @admin.action(description="Retry the selected failed runs")
    def retry(self, request, queryset):
        """Consolidate each failed run's space again, without waiting out the failure cooldown: in a
        worker (or here, when consolidation is inline)."""
        spaces = {run.space for run in queryset.filter(status=ConsolidationRun.Status.FAILED).select_related("space")}
        if not _within_heavy_rate(request, len(spaces), "consolidating a space"):
            return
        for space in spaces:
            request_retry(space)
        messages.info(request, f"Consolidation asked again for {len(spaces)} space(s).")


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    """Experiments are made and compared on the lab pages and over REST; here staff see them, and delete
    one through the engine (services.lab.experiment_delete: its shadow space and memory user go too)."""

    list_display = ["name", "source", "space", "replay_status", "created_at"]
    list_select_related = ["source__user", "source__assistant", "space__user", "space__assistant", "replay"]
    search_fields = ["name", "source__user__external_id"]
    readonly_fields = ["name", "source", "space", "replay", "created_at"]

    @admin.display(description="replay")
    def replay_status(self, experiment):
        job = experiment.replay
        return f"{job.done}/{job.total} {job.status}" if job else "restored from an export"

    def has_add_permission(self, request) -> bool:
        return False

    def delete_model(self, request, obj):
        experiment_delete(experiment=obj)

    def get_deleted_objects(self, objs, request):
        return _deleted_by_the_engine(super().get_deleted_objects(objs, request))

    def delete_queryset(self, request, queryset):
        for experiment in queryset.select_related("space"):
            experiment_delete(experiment=experiment)
