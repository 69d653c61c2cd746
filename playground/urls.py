from django.contrib import admin
from django.urls import include, path

from memory_engine import views

urlpatterns = [
    path("", views.home, name="home"),
    path("admin/", admin.site.urls),
    path("api/", include("memory_engine.api.urls")),
]
