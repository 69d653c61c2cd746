"""The playground's pages: sign up, the list of one's memory spaces, one's API tokens, and the chat page.
The chat page is a shell: its script talks to the REST API (memory_engine/interfaces/api/) with the
signed-in session."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import Http404
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from memory_engine.config import memory_settings
from memory_engine.errors import MemoryInputError
from memory_engine.interfaces import signin
from memory_engine.models import PARAMETER_LABELS, SPACE_PARAMETERS, MemorySpace
from memory_engine.services import tokens as api_tokens
from memory_engine.services.imports import locomo_sample_ids
from memory_engine.services.lab import experiment_of
from memory_engine.services.space_llm import uses_bundled_model
from memory_engine.services.spaces import assistant_create, owned_spaces, owned_user_create, space_get, space_named


def home(request):
    """Signed in: one's memory spaces, tier by tier, and a form to start another. Otherwise: what this is."""
    spaces = owned_spaces(request.user) if request.user.is_authenticated else []
    return render(request, "memory_engine/home.html", {"spaces": spaces})


@csrf_exempt  # checked below, after the refusal: an address over its limit hears 429 whatever it sent
def signup(request):
    """Make an account and sign in with it, unless sign-up is closed or this address made too many
    (interfaces/signin.py)."""
    refusal = signin.signup_refusal(request)
    if refusal is not None:
        status = 403 if not memory_settings().signup_open else 429 if request.method == "POST" else 200
        return render(request, "registration/signup.html", {"refusal": refusal}, status=status)
    if request.method == "POST" and (forged := CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})):
        return forged
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


@login_required
@never_cache  # the answer to the form shows a secret: no cache may keep it
def tokens(request):
    """The account's API tokens, for programs that use its memory users through the REST API or the MCP
    server: made here (the secret shown once, on the answer to the form), listed, revoked."""
    made = None
    status = 200
    if request.method == "POST":
        try:
            if request.POST.get("action") == "revoke":
                revoked = api_tokens.account_token_revoke(request.user, token_id=request.POST.get("token", ""))
                messages.success(request, f"Revoked {revoked.prefix}…: it no longer works.")
                return redirect("tokens")
            made = api_tokens.account_token_create(
                request.user,
                user_id=request.POST.get("user_id", ""),
                name=request.POST.get("name", ""),
                expires_in_days=request.POST.get("expires_in_days", ""),
            )
            status = 201
        except MemoryInputError as exc:
            messages.error(request, str(exc))
            status = 400
    context = {
        "made": made,
        "tokens": [(token, api_tokens.token_state(token)) for token in api_tokens.account_tokens(request.user)],
        "memory_users": request.user.memory_users.order_by("external_id"),
    }
    return render(request, "memory_engine/tokens.html", context, status=status)


# The number inputs of the parameters the pages offer (the eviction policy is not offered), with the bounds
# inputs.space_parameters checks.
PARAMETER_INPUTS = {
    "stm_capacity": {"min": 1, "step": 1},
    "mtm_capacity": {"min": 1, "step": 1},
    "knowledge_capacity": {"min": 1, "step": 1},
    "merge_theta": {"step": "any"},
    "heat_threshold": {"step": "any"},
    "heat_alpha": {"step": "any"},
    "heat_beta": {"step": "any"},
    "heat_gamma": {"step": "any"},
    "recency_mu_seconds": {"min": 1, "step": "any"},
    "top_pages": {"min": 1, "max": 100, "step": 1},
    "top_knowledge": {"min": 1, "max": 100, "step": 1},
    "context_token_budget": {"min": 1, "max": 100000, "step": 1},
    "lexical_weight": {"min": 0, "max": 1, "step": "any"},
    "chain_weight": {"min": 0, "max": 1, "step": "any"},
    "reranker_weight": {"min": 0, "max": 1, "step": "any"},
}


def _own_space(request, user_id: str, assistant_id: str) -> MemorySpace:
    space = space_named(user_id=user_id, assistant_id=assistant_id, owner=request.user)
    if space is None:
        raise Http404("no such memory space of yours")
    return space


@login_required
def chat(request, user_id: str, assistant_id: str):
    space = _own_space(request, user_id, assistant_id)
    parameters = [
        (name, PARAMETER_LABELS[name], PARAMETER_INPUTS[name]) for name in SPACE_PARAMETERS if name in PARAMETER_INPUTS
    ]
    context = {
        "space": space,
        "locomo_samples": locomo_sample_ids(),
        "offline": uses_bundled_model(space),
        "parameters": parameters,
    }
    return render(request, "memory_engine/chat.html", context)


@login_required
def lab(request, user_id: str, assistant_id: str):
    """The space's experiments: fork it with other parameters, watch the replays, open a comparison."""
    space = _own_space(request, user_id, assistant_id)
    parameters = [
        (name, PARAMETER_LABELS[name], getattr(space, name)) for name in SPACE_PARAMETERS if name in PARAMETER_INPUTS
    ]
    return render(request, "memory_engine/lab.html", {"space": space, "parameters": parameters})


@login_required
def experiment(request, user_id: str, assistant_id: str, experiment_id: int):
    """One experiment beside its source: what each holds and cost, their heat, and probe questions."""
    space = _own_space(request, user_id, assistant_id)
    found = experiment_of(space, experiment_id)
    if found is None:
        raise Http404("no such experiment of yours")
    context = {
        "space": space,
        "experiment": found,
        "locomo_samples": locomo_sample_ids(),
        "parameter_labels": PARAMETER_LABELS,
    }
    return render(request, "memory_engine/experiment.html", context)
