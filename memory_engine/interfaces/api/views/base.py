"""The REST API's common parts: the view every endpoint derives from (body limit, throttles, actor and cause
of a change, input checked by a serializer, pages of a list) and the lookups of a space's rows."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter
from rest_framework.pagination import PageNumberPagination
from rest_framework.views import APIView

from memory_engine.config import memory_settings
from memory_engine.interfaces.api.errors import PayloadTooLarge, Prechecked
from memory_engine.interfaces.api.parsers import UnicodeJSONParser
from memory_engine.interfaces.api.throttling import (
    CallerRateThrottle,
)
from memory_engine.interfaces.asgi import is_precheck, was_prechecked
from memory_engine.models import (
    EntryVersion,
    LongTermEntry,
    MemorySpace,
)
from memory_engine.services import spaces

Kind = LongTermEntry.Kind
PROFILE = (Kind.PROFILE,)
KNOWLEDGE = (Kind.USER_KNOWLEDGE, Kind.ASSISTANT_KNOWLEDGE)


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


PAGING = [
    OpenApiParameter("page", int, description="Which page of the list (from 1)."),
    OpenApiParameter(
        "page_size",
        int,
        description=f"Rows a page (default {Pagination.page_size}, at most {Pagination.max_page_size}).",
    ),
]


class MemoryApiView(APIView):
    """Refuses a body over MEMORYOS_API_MAX_BODY_BYTES (or the view's `body_limit_setting`) with 413
    before reading it. Under the production server a large body is read only once the request passed
    these checks on its headers alone (interfaces/asgi.py: its first, bodiless run ends here)."""

    throttle_classes = [CallerRateThrottle]
    parser_classes = [UnicodeJSONParser]
    body_limit_setting = "api_max_body_bytes"

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = self.body_limit()
        if length > limit:
            raise PayloadTooLarge(f"the body is {length} bytes; the limit is {limit}")
        if is_precheck(request):
            raise Prechecked()

    def check_throttles(self, request):
        if not was_prechecked(request):  # its first, bodiless run counted it
            super().check_throttles(request)

    @classmethod
    def body_limit(cls) -> int:
        return getattr(memory_settings(), cls.body_limit_setting)

    def actor(self) -> str:
        """Who made a change, for its history: a program by its token, a person by their account's name
        (the chat page calls the API with its signed-in session)."""
        token = getattr(self.request.user, "token", None)
        return f"api token {token.prefix}" if token is not None else self.request.user.get_username()

    def cause(self) -> str:
        """Why an entry changed, for its history: a program's token is the API; a signed-in account is the
        space's owner, editing on the chat page."""
        token = getattr(self.request.user, "token", None)
        return EntryVersion.Cause.API if token is not None else EntryVersion.Cause.OWNER

    def valid(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def page_of(self, queryset, serializer_class=None, *, cards=None):
        """One page of `queryset`'s rows: each as `serializer_class` gives it, or as `cards(rows)` does (a
        door's cards, services.curation.page_cards, read for the page at once)."""
        paginator = Pagination()
        rows = paginator.paginate_queryset(queryset, self.request, view=self)
        data = cards(rows) if cards is not None else serializer_class(rows, many=True).data
        return paginator.get_paginated_response(data)


def row_in(space: MemorySpace, model, row_id: int):
    """The space's row of `model` with this id; 404 when there is none (or the id is beyond any database's
    ids)."""
    row = spaces.row_of(space, model, row_id)
    if row is None:
        raise Http404(f"no such {model._meta.verbose_name}")
    return row
