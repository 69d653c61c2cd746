from django.contrib import admin
from django.contrib.auth.views import LoginView, LogoutView, PasswordChangeDoneView, PasswordChangeView
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
    # No password reset by mail: the playground sends no mail (an operator resets a password in the admin or
    # with `manage.py changepassword`), so its unthrottled form would only be a door for nothing.
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("accounts/password_change/", PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password_change/done/", PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("admin/", admin.site.urls),
    path("api/", include("memory_engine.interfaces.api.urls")),
    path("ops/process/", ops.process_stats, name="ops-process"),
    # Browsers ask for /favicon.ico on every page, the admin's and the API docs' included.
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
]
