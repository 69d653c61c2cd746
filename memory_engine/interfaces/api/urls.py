"""/api/v1/: memory users, and below each user the spaces it has with assistants. /api/schema/ is the
OpenAPI document and /api/docs/ a page to read and try it."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from memory_engine.interfaces.api.views import entries, experiments, imports, sessions, spaces, turns, users

space = "v1/users/<str:user_id>/spaces/<str:assistant_id>/"
experiment = space + "experiments/<int:experiment_id>/"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "docs/",
        # Its script served apart, not inline: the Content-Security-Policy runs no inline script.
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="memory_engine/api_docs.html"),
        name="api-docs",
    ),
    path("v1/users/", users.UsersView.as_view(), name="api-users"),
    path("v1/users/<str:user_id>/", users.UserView.as_view(), name="api-user"),
    path("v1/users/<str:user_id>/export/", users.UserExportView.as_view(), name="api-user-export"),
    path(space, spaces.SpaceView.as_view(), name="api-space"),
    path(space + "export/", spaces.SpaceExportView.as_view(), name="api-space-export"),
    path(space + "restore/", spaces.RestoreView.as_view(), name="api-space-restore"),
    path(space + "turns/", turns.TurnsView.as_view(), name="api-turns"),
    path(space + "turns/<int:page_id>/", turns.TurnView.as_view(), name="api-turn"),
    path(space + "turns/<int:page_id>/erase/", turns.TurnEraseView.as_view(), name="api-turn-erase"),
    path(space + "turns/<int:page_id>/used/", turns.TurnUsedView.as_view(), name="api-turn-used"),
    path(space + "usage/", spaces.UsageView.as_view(), name="api-usage"),
    path(space + "chat/", turns.ChatView.as_view(), name="api-chat"),
    path(space + "events/", turns.MemoryEventsView.as_view(), name="api-events"),
    path(space + "llm/", spaces.SpaceLLMView.as_view(), name="api-space-llm"),
    path(space + "llm/test/", spaces.SpaceLLMTestView.as_view(), name="api-space-llm-test"),
    path(space + "llm/local/", spaces.LocalLLMView.as_view(), name="api-space-llm-local"),
    path(space + "retrieve/", turns.RetrieveView.as_view(), name="api-retrieve"),
    path(space + "inspect/", turns.InspectView.as_view(), name="api-inspect"),
    path(space + "sessions/", sessions.SessionsView.as_view(), name="api-sessions"),
    path(space + "heat/", sessions.HeatView.as_view(), name="api-heat"),
    path(space + "parameters/history/", sessions.ParameterChangesView.as_view(), name="api-parameter-changes"),
    path(space + "runs/", sessions.RunsView.as_view(), name="api-runs"),
    path(space + "imports/", imports.ImportsView.as_view(), name="api-imports"),
    path(space + "imports/<int:job_id>/", imports.ImportView.as_view(), name="api-import"),
    path(space + "imports/<int:job_id>/cancel/", imports.ImportCancelView.as_view(), name="api-import-cancel"),
    path(space + "imports/files/", imports.UploadsView.as_view(), name="api-uploads"),
    path(space + "imports/files/<int:upload_id>/", imports.UploadView.as_view(), name="api-upload"),
    path(
        space + "imports/files/<int:upload_id>/conversations/",
        imports.UploadConversationsView.as_view(),
        name="api-upload-conversations",
    ),
    path(space + "jobs/<int:job_id>/", spaces.BackgroundJobView.as_view(), name="api-background-job"),
    path(space + "experiments/", experiments.ExperimentsView.as_view(), name="api-experiments"),
    path(space + "experiments/<int:experiment_id>/", experiments.ExperimentView.as_view(), name="api-experiment"),
    path(
        space + "experiments/<int:experiment_id>/compare/",
        experiments.ComparisonView.as_view(),
        name="api-experiment-compare",
    ),
    path(
        space + "experiments/<int:experiment_id>/heat/",
        experiments.ExperimentHeatView.as_view(),
        name="api-experiment-heat",
    ),
    path(space + "profile/", entries.ProfileView.as_view(), name="api-profile"),
    path(space + "profile/<int:entry_id>/", entries.EntryView.as_view(), name="api-profile-entry"),
    path(space + "profile/<int:entry_id>/revert/", entries.EntryRevertView.as_view(), name="api-profile-revert"),
    path(space + "profile/<int:entry_id>/erase/", entries.EntryEraseView.as_view(), name="api-profile-erase"),
    path(space + "profile/<int:entry_id>/history/", entries.EntryHistoryView.as_view(), name="api-profile-history"),
    path(space + "knowledge/", entries.KnowledgeView.as_view(), name="api-knowledge"),
    path(space + "knowledge/<int:entry_id>/", entries.KnowledgeEntryView.as_view(), name="api-knowledge-entry"),
    path(
        space + "knowledge/<int:entry_id>/revert/", entries.KnowledgeRevertView.as_view(), name="api-knowledge-revert"
    ),
    path(space + "knowledge/<int:entry_id>/erase/", entries.KnowledgeEraseView.as_view(), name="api-knowledge-erase"),
    path(
        space + "knowledge/<int:entry_id>/history/",
        entries.KnowledgeHistoryView.as_view(),
        name="api-knowledge-history",
    ),
]
