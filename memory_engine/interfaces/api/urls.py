"""/api/v1/: memory users, and below each user the spaces it has with assistants. /api/schema/ is the
OpenAPI document and /api/docs/ a page to read and try it."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from memory_engine.interfaces.api import views

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
    path("v1/users/", views.UsersView.as_view(), name="api-users"),
    path("v1/users/<str:user_id>/", views.UserView.as_view(), name="api-user"),
    path("v1/users/<str:user_id>/export/", views.UserExportView.as_view(), name="api-user-export"),
    path(space, views.SpaceView.as_view(), name="api-space"),
    path(space + "export/", views.SpaceExportView.as_view(), name="api-space-export"),
    path(space + "restore/", views.RestoreView.as_view(), name="api-space-restore"),
    path(space + "turns/", views.TurnsView.as_view(), name="api-turns"),
    path(space + "turns/<int:page_id>/", views.TurnView.as_view(), name="api-turn"),
    path(space + "turns/<int:page_id>/erase/", views.TurnEraseView.as_view(), name="api-turn-erase"),
    path(space + "turns/<int:page_id>/used/", views.TurnUsedView.as_view(), name="api-turn-used"),
    path(space + "usage/", views.UsageView.as_view(), name="api-usage"),
    path(space + "chat/", views.ChatView.as_view(), name="api-chat"),
    path(space + "events/", views.MemoryEventsView.as_view(), name="api-events"),
    path(space + "llm/", views.SpaceLLMView.as_view(), name="api-space-llm"),
    path(space + "llm/test/", views.SpaceLLMTestView.as_view(), name="api-space-llm-test"),
    path(space + "llm/local/", views.LocalLLMView.as_view(), name="api-space-llm-local"),
    path(space + "retrieve/", views.RetrieveView.as_view(), name="api-retrieve"),
    path(space + "inspect/", views.InspectView.as_view(), name="api-inspect"),
    path(space + "sessions/", views.SessionsView.as_view(), name="api-sessions"),
    path(space + "heat/", views.HeatView.as_view(), name="api-heat"),
    path(space + "parameters/history/", views.ParameterChangesView.as_view(), name="api-parameter-changes"),
    path(space + "runs/", views.RunsView.as_view(), name="api-runs"),
    path(space + "imports/", views.ImportsView.as_view(), name="api-imports"),
    path(space + "imports/<int:job_id>/", views.ImportView.as_view(), name="api-import"),
    path(space + "imports/files/", views.UploadsView.as_view(), name="api-uploads"),
    path(space + "imports/files/<int:upload_id>/", views.UploadView.as_view(), name="api-upload"),
    path(
        space + "imports/files/<int:upload_id>/conversations/",
        views.UploadConversationsView.as_view(),
        name="api-upload-conversations",
    ),
    path(space + "jobs/<int:job_id>/", views.BackgroundJobView.as_view(), name="api-background-job"),
    path(space + "experiments/", views.ExperimentsView.as_view(), name="api-experiments"),
    path(space + "experiments/<int:experiment_id>/", views.ExperimentView.as_view(), name="api-experiment"),
    path(
        space + "experiments/<int:experiment_id>/compare/",
        views.ComparisonView.as_view(),
        name="api-experiment-compare",
    ),
    path(
        space + "experiments/<int:experiment_id>/heat/", views.ExperimentHeatView.as_view(), name="api-experiment-heat"
    ),
    path(space + "profile/", views.ProfileView.as_view(), name="api-profile"),
    path(space + "profile/<int:entry_id>/", views.EntryView.as_view(), name="api-profile-entry"),
    path(space + "profile/<int:entry_id>/revert/", views.EntryRevertView.as_view(), name="api-profile-revert"),
    path(space + "profile/<int:entry_id>/erase/", views.EntryEraseView.as_view(), name="api-profile-erase"),
    path(space + "profile/<int:entry_id>/history/", views.EntryHistoryView.as_view(), name="api-profile-history"),
    path(space + "knowledge/", views.KnowledgeView.as_view(), name="api-knowledge"),
    path(space + "knowledge/<int:entry_id>/", views.KnowledgeEntryView.as_view(), name="api-knowledge-entry"),
    path(space + "knowledge/<int:entry_id>/revert/", views.KnowledgeRevertView.as_view(), name="api-knowledge-revert"),
    path(space + "knowledge/<int:entry_id>/erase/", views.KnowledgeEraseView.as_view(), name="api-knowledge-erase"),
    path(
        space + "knowledge/<int:entry_id>/history/", views.KnowledgeHistoryView.as_view(), name="api-knowledge-history"
    ),
]
