"""`/ops/process/`: what this process holds, for operators (staff accounts only): its resident memory and
its index cache (spaces and bytes held against the bound, hits, misses, evictions, how long loads took), and
its admission of requests (memory_engine/admission.py: the limit, how many work and wait now, the most that
ever worked at once, how many were turned away or gave their place up while waiting on the LLM), and its
connections (memory_engine/interfaces/connections.py: open now, requests in progress, how many were closed
for sending no request or to make room, how many requests were refused for too many in progress).

Each web process answers for itself (the answer names its pid): the multi-tenant benchmark asks
repeatedly to hear from each of them.
"""

import os
import resource
from dataclasses import asdict

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from memory_engine.admission import admission_stats
from memory_engine.interfaces import connections
from memory_engine.services.operations import index_cache_report


def resident_bytes() -> int:
    """This process's resident memory now (Linux), else its peak."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@require_GET
def process_stats(request):
    if not (request.user.is_authenticated and request.user.is_staff):
        return JsonResponse({"detail": "staff accounts only"}, status=403)
    return JsonResponse(
        {
            "pid": os.getpid(),
            "rss_bytes": resident_bytes(),
            "index_cache": index_cache_report(),
            "admission": asdict(admission_stats()),
            "connections": asdict(connections.stats),
        }
    )
