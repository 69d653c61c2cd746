from django.contrib import admin

from memory_engine.models import (
    Assistant,
    ConsolidationRun,
    EntryVersion,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    MidTermSession,
    Page,
)


@admin.register(MemoryUser)
class MemoryUserAdmin(admin.ModelAdmin):
    list_display = ["external_id", "display_name", "created_at"]
    search_fields = ["external_id", "display_name"]


@admin.register(Assistant)
class AssistantAdmin(admin.ModelAdmin):
    list_display = ["external_id", "name", "created_at"]
    search_fields = ["external_id", "name"]


@admin.register(MemorySpace)
class MemorySpaceAdmin(admin.ModelAdmin):
    list_display = ["__str__", "stm_capacity", "mtm_capacity", "heat_threshold", "last_seq", "vector_version"]
    list_select_related = ["user", "assistant"]
    readonly_fields = ["last_seq", "vector_version", "embedding_model", "thread_summary"]


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ["seq", "space", "tier", "session", "analyzed", "timestamp"]
    list_filter = ["tier", "analyzed"]
    search_fields = ["user_input", "agent_response"]
    readonly_fields = ["space", "seq", "tier", "session", "embedding", "vector_version"]


@admin.register(MidTermSession)
class MidTermSessionAdmin(admin.ModelAdmin):
    list_display = ["pk", "space", "status", "heat", "n_visit", "l_interaction", "last_visit_at"]
    list_filter = ["status"]
    search_fields = ["summary"]
    readonly_fields = ["embedding", "vector_version"]


class EntryVersionInline(admin.TabularInline):
    model = EntryVersion
    extra = 0
    can_delete = False
    readonly_fields = ["at", "cause", "actor", "before", "after", "status_after"]
    exclude = ["source_pages"]


@admin.register(LongTermEntry)
class LongTermEntryAdmin(admin.ModelAdmin):
    list_display = ["pk", "space", "kind", "key", "value", "status", "updated_at"]
    list_filter = ["kind", "status"]
    search_fields = ["key", "value"]
    readonly_fields = ["embedding", "vector_version", "superseded_by"]
    inlines = [EntryVersionInline]


@admin.register(HeatEvent)
class HeatEventAdmin(admin.ModelAdmin):
    list_display = ["at", "session", "cause", "heat", "n_visit", "l_interaction", "recency"]
    list_filter = ["cause"]


@admin.register(ConsolidationRun)
class ConsolidationRunAdmin(admin.ModelAdmin):
    list_display = ["started_at", "space", "kind", "status", "attempts", "pages_moved", "llm_calls", "duration_ms"]
    list_filter = ["status", "kind"]
    search_fields = ["error", "task_id"]
    readonly_fields = [field.name for field in ConsolidationRun._meta.fields]
