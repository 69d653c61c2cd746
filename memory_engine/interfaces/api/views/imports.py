"""Imports: files brought (uploads and the conversations they hold), and the imports made from them or from
transcripts and LoCoMo samples."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from memory_engine.config import memory_settings
from memory_engine.documents import ImportJobCard
from memory_engine.interfaces.api.access import space_for
from memory_engine.interfaces.api.parsers import RawBodyParser
from memory_engine.interfaces.api.serializers.fields import paginated
from memory_engine.interfaces.api.serializers.imports import (
    ImportIn,
    ImportJobField,
    ImportUploadOut,
    ListedConversationOut,
)
from memory_engine.interfaces.api.throttling import (
    CallerRateThrottle,
    HeavyRequestThrottle,
    request_caller,
)
from memory_engine.interfaces.api.views.base import PAGING, MemoryApiView, row_in
from memory_engine.interfaces.api.work import one_at_a_time, work_wait
from memory_engine.models import (
    ImportJob,
    ImportUpload,
)
from memory_engine.services import imports
from memory_engine.services.dispatch import import_start, upload_import_start, upload_start
from memory_engine.services.imports import locomo_turns, transcript_turns
from memory_engine.services.uploads import upload_checks_room, upload_delete, upload_room_check


def _import_cards(jobs) -> list[dict]:
    return [imports.import_job_card(job) for job in jobs]


class ImportsView(MemoryApiView):
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]  # an import queues hundreds of turns

    @extend_schema(
        parameters=PAGING, responses=paginated(ImportJobField), summary="Imports into the space, newest first"
    )
    def get(self, request, user_id, assistant_id):
        return self.page_of(imports.jobs(space_for(request, user_id, assistant_id)), cards=_import_cards)

    @extend_schema(
        request=ImportIn,
        responses={202: ImportJobCard},
        summary="Import a conversation (a transcript or a LoCoMo sample), turn by turn, with progress",
    )
    def post(self, request, user_id, assistant_id):
        data = self.valid(ImportIn)
        space = space_for(request, user_id, assistant_id, create=True)
        if "upload" in data:
            upload = row_in(space, ImportUpload, data["upload"])
            job = upload_import_start(upload=upload, chosen=data.get("conversations"))
            return Response(imports.import_job_card(job), status=status.HTTP_202_ACCEPTED)
        if "transcript" in data:
            turns, source = transcript_turns(data["transcript"]), "transcript"
        else:
            turns, source = locomo_turns(data["locomo_sample"]), f"LoCoMo {data['locomo_sample']}"
        job = import_start(space=space, turns=turns, source=source)
        return Response(imports.import_job_card(job), status=status.HTTP_202_ACCEPTED)


class UploadsView(MemoryApiView):
    """A file to import, sent as the request's body (not a form): read a chunk at a time as it arrives, to
    disk, never held whole, then checked in the background (202; poll the upload until it is `ready` or
    `refused`). What the account may keep, and whether it has another file arriving or being checked, is
    decided before the body is read."""

    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]
    parser_classes = [RawBodyParser]
    streams_body = True  # interfaces/asgi.py hands it the connection, not a body read ahead

    @classmethod
    def body_limit(cls) -> int:
        return memory_settings().max_import_bytes

    @extend_schema(
        request={"application/octet-stream": {"type": "string", "format": "binary"}},
        parameters=[OpenApiParameter("name", str, description="The file's name, as the person knows it.")],
        responses={202: ImportUploadOut, 201: ImportUploadOut},
        summary="Bring a file to import (a ChatGPT or Claude export, chat messages, memories): 202, being checked "
        "(201: the same file, brought before)",
    )
    def post(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id, create=True)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        upload_room_check(space=space, size=length)
        upload_checks_room(space)
        with one_at_a_time(f"upload:{request_caller(request)}", "a file of yours is still arriving"):
            body = request._request  # Django's request, read as it arrives (DRF would read a chunked body as empty)
            upload = upload_start(
                space=space,
                chunks=iter(lambda: body.read(1 << 16), b""),
                name=request.query_params.get("name", ""),
                check=work_wait(request, memory_settings().upload_wait_seconds, "bringing the file"),
            )
        checking = upload.status == ImportUpload.Status.CHECKING
        return Response(ImportUploadOut(upload).data, status=202 if checking else status.HTTP_201_CREATED)


class UploadView(MemoryApiView):
    def upload(self, request, user_id, assistant_id, upload_id) -> ImportUpload:
        return row_in(space_for(request, user_id, assistant_id), ImportUpload, upload_id)

    @extend_schema(responses=ImportUploadOut, summary="A file brought to import, and what it holds")
    def get(self, request, user_id, assistant_id, upload_id):
        return Response(ImportUploadOut(self.upload(request, user_id, assistant_id, upload_id)).data)

    @extend_schema(responses={204: None}, summary="Delete a file brought to import (an import reading it fails)")
    def delete(self, request, user_id, assistant_id, upload_id):
        upload_delete(upload=self.upload(request, user_id, assistant_id, upload_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class UploadConversationsView(MemoryApiView):
    @extend_schema(
        parameters=PAGING,
        responses=paginated(ListedConversationOut),
        summary="The conversations of a file brought to import, in the file's order",
    )
    def get(self, request, user_id, assistant_id, upload_id):
        upload = row_in(space_for(request, user_id, assistant_id), ImportUpload, upload_id)
        return self.page_of(upload.conversations.order_by("place"), ListedConversationOut)


class ImportView(MemoryApiView):
    @extend_schema(responses=ImportJobCard, summary="An import's progress")
    def get(self, request, user_id, assistant_id, job_id):
        job = row_in(space_for(request, user_id, assistant_id), ImportJob, job_id)
        return Response(imports.import_job_card(job))


class ImportCancelView(MemoryApiView):
    @extend_schema(
        request=None,
        responses=ImportJobCard,
        summary="Stop an unfinished import (what it stored stays); 409 once it has ended",
    )
    def post(self, request, user_id, assistant_id, job_id):
        job = row_in(space_for(request, user_id, assistant_id), ImportJob, job_id)
        return Response(imports.import_job_card(imports.import_cancel(job=job)))
