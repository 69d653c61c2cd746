from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from memory_engine.interfaces import ops, views
from memory_engine.interfaces.signin import SignInForm

urlpatterns = [
    path("", views.home, name="home"),
    path("spaces/new/", views.space_create, name="space-create"),
    path("chat/<str:user_id>/<str:assistant_id>/", views.chat, name="chat"),
    path("lab/<str:user_id>/<str:assistant_id>/", views.lab, name="lab"),
    path("lab/<str:user_id>/<str:assistant_id>/<int:experiment_id>/", views.experiment, name="experiment"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/tokens/", views.tokens, name="tokens"),
    path("accounts/login/", LoginView.as_view(authentication_form=SignInForm), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("memory_engine.interfaces.api.urls")),
    path("ops/process/", ops.process_stats, name="ops-process"),
    # Browsers ask for /favicon.ico on every page, the admin's and the API docs' included.
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
]
