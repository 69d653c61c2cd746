from django.db.models import Count, Q
from django.shortcuts import render

from memory_engine.models import MemorySpace, Page


def home(request):
    """The landing page: what the playground holds, tier by tier."""
    spaces = MemorySpace.objects.select_related("user", "assistant").annotate(
        short_term=Count("pages", filter=Q(pages__tier=Page.Tier.SHORT), distinct=True),
        mid_term=Count("pages", filter=Q(pages__tier=Page.Tier.MID), distinct=True),
        sessions_active=Count("sessions", filter=Q(sessions__status="active"), distinct=True),
        entries_active=Count("entries", filter=Q(entries__status="active"), distinct=True),
    )
    return render(request, "memory_engine/home.html", {"spaces": spaces})
