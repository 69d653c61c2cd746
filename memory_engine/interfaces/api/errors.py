"""How the API answers what goes wrong: a JSON body with `detail` (and field messages for a 400), and a
status that says whose fault it is. Nothing is changed by a request that gets an error."""

from django.core.exceptions import RequestDataTooBig
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memory_engine.errors import (
    EntryHeldByAnother,
    EntryNotActive,
    ExperimentConflict,
    InputTooLarge,
    InvalidParameter,
    JobEnded,
    LLMError,
    LLMUnavailable,
    MachineTooBusy,
    MemoryInputError,
    SecretsUnavailable,
    TooMuchBulkWork,
)
from memory_engine.interfaces.asgi import PRECHECK_PASSED, ClientGone, RequestTooLarge


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "the request is too large"
    default_code = "too_large"


class Prechecked(APIException):
    """The answer to a request's bodiless first run when every check before its body passed (never sent:
    interfaces/asgi.py then reads the body and runs it)."""

    status_code = PRECHECK_PASSED
    default_detail = "checked"
    default_code = "checked"


class TooManyFeeds(APIException):
    """A memory feed more than the process or the account may keep open (MEMORYOS_EVENTS_MAX_STREAMS,
    MEMORYOS_EVENTS_MAX_STREAMS_PER_ACCOUNT)."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = "too many memory feeds are open; close a page showing this memory, or try again soon"
    default_code = "too_many_feeds"


def exception_handler(exc, context):
    """DRF's handler, plus the engine's errors: bad input 400, an edit of an entry no longer active, a fork
    whose name is taken or an API key the server cannot encrypt 409, too large 413, LLM failures 502/503."""
    if isinstance(exc, (InputTooLarge, RequestDataTooBig, RequestTooLarge)):
        exc = PayloadTooLarge(str(exc) or None)
    if isinstance(exc, ClientGone):  # nobody reads the answer; nothing was stored
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is not None:
        return response
    if isinstance(exc, TooMuchBulkWork):
        return Response({"detail": str(exc)}, status=status.HTTP_429_TOO_MANY_REQUESTS, headers={"Retry-After": "60"})
    if isinstance(exc, MachineTooBusy):
        return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "60"})
    # The state is in the way: the same request may pass once it has changed.
    in_the_way = EntryNotActive | EntryHeldByAnother | ExperimentConflict | JobEnded | SecretsUnavailable
    if isinstance(exc, in_the_way):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, InvalidParameter):  # a field message, as DRF gives for a field it checks
        return Response({exc.field: [exc.reason], "detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, MemoryInputError):
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, LLMUnavailable):
        return Response(
            {"detail": f"the language model is unavailable; try again later ({exc})"},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "30"},
        )
    if isinstance(exc, LLMError):
        return Response(
            {"detail": f"the language model gave no usable answer ({exc})"}, status=status.HTTP_502_BAD_GATEWAY
        )
    return None
