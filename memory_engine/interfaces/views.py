"""The playground's pages: sign up, the list of one's memory spaces, and the chat page. The chat page is
a shell: its script talks to the REST API (memory_engine/interfaces/api/) with the signed-in session."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory_engine.errors import MemoryInputError
from memory_engine.interfaces import signin
from memory_engine.models import SPACE_PARAMETERS, Experiment, MemorySpace, Page
from memory_engine.services.space_llm import weak_model
from memory_engine.services.spaces import assistant_create, owned_user_create, space_get
from memory_engine.services.transfer import locomo_sample_ids


def home(request):
    """Signed in: one's memory spaces, tier by tier, and a form to start another. Otherwise: what this is."""
    spaces = []
    if request.user.is_authenticated:
        spaces = (
            MemorySpace.objects.filter(user__owner=request.user)
            .select_related("user", "assistant")
            .annotate(
                short_term=Count("pages", filter=Q(pages__tier=Page.Tier.SHORT), distinct=True),
                mid_term=Count("pages", filter=Q(pages__tier=Page.Tier.MID), distinct=True),
                sessions_active=Count("sessions", filter=Q(sessions__status="active"), distinct=True),
                entries_active=Count("entries", filter=Q(entries__status="active"), distinct=True),
            )
            .order_by("user__external_id", "assistant__external_id")
        )
    return render(request, "memory_engine/home.html", {"spaces": spaces})


def signup(request):
    """Make an account and sign in with it, unless sign-up is closed or this address made too many
    (interfaces/signin.py)."""
    refusal = signin.signup_refusal(request)
    if refusal is not None:
        status = 403 if not settings.MEMORYOS_SIGNUP_OPEN else 429 if request.method == "POST" else 200
        return render(request, "registration/signup.html", {"refusal": refusal}, status=status)
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        signin.record_signup(request)
        login(request, form.save())
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


@login_required
@require_POST
def space_create(request):
    """Start a memory space: a memory user of one's own with an assistant (both made if new)."""
    user_id = request.POST.get("user_id", "").strip()
    assistant_id = request.POST.get("assistant_id", "").strip() or "helper"
    try:
        user = owned_user_create(
            owner=request.user, user_id=user_id, display_name=request.POST.get("display_name", "").strip()
        )
        assistant_create(assistant_id=assistant_id)
        space_get(user_id=user.external_id, assistant_id=assistant_id)
    except MemoryInputError as exc:
        messages.error(request, str(exc))
        return redirect("home")
    return redirect("chat", user_id=user.external_id, assistant_id=assistant_id)


def _own_space(request, user_id: str, assistant_id: str) -> MemorySpace:
    space = (
        MemorySpace.objects.select_related("user", "assistant")
        .filter(user__owner=request.user, user__external_id=user_id, assistant__external_id=assistant_id)
        .first()
    )
    if space is None:
        raise Http404("no such memory space of yours")
    return space


@login_required
def chat(request, user_id: str, assistant_id: str):
    space = _own_space(request, user_id, assistant_id)
    context = {"space": space, "locomo_samples": locomo_sample_ids(), "offline": weak_model(space)}
    return render(request, "memory_engine/chat.html", context)


@login_required
def lab(request, user_id: str, assistant_id: str):
    """The space's experiments: fork it with other parameters, watch the replays, open a comparison."""
    space = _own_space(request, user_id, assistant_id)
    parameters = [(name, getattr(space, name)) for name in SPACE_PARAMETERS if name != "eviction_policy"]
    return render(request, "memory_engine/lab.html", {"space": space, "parameters": parameters})


@login_required
def experiment(request, user_id: str, assistant_id: str, experiment_id: int):
    """One experiment beside its source: what each holds and cost, their heat, and probe questions."""
    space = _own_space(request, user_id, assistant_id)
    found = Experiment.objects.filter(source=space, pk=experiment_id).first()
    if found is None:
        raise Http404("no such experiment of yours")
    context = {"space": space, "experiment": found, "locomo_samples": locomo_sample_ids()}
    return render(request, "memory_engine/experiment.html", context)
