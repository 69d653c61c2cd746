"""Many users at once: the production stack under a multi-tenant Locust load (see bench/tenants.py).

    manage.py bench_tenants                                   # 1,000 spaces; 1, 4, 16 clients
    manage.py bench_tenants --spaces 100 --seconds 20 --clients 1 4 --json var/bench-tenants/figures.json

Prints throughput and p50/p95/p99 per operation for each client count, with the index cache bounded and
not, the cache's hit rate and evictions, each process's peak RSS (and plots RSS over time to --plot), the
warm requests' p99 beside cold loads, and the turns stored against the turns accepted.
"""

import argparse
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench import tenants
from bench.tenants import TenantOptions


class Command(BaseCommand):
    help = "Load the production stack with many tenants through Locust; throughput, latency, memory, cache."

    def add_arguments(self, parser):
        defaults = TenantOptions()
        parser.add_argument("--spaces", type=int, default=defaults.spaces)
        parser.add_argument("--max-pages", type=int, default=defaults.max_pages)
        parser.add_argument("--median-pages", type=int, default=defaults.median_pages)
        parser.add_argument("--clients", type=int, nargs="+", default=defaults.clients)
        parser.add_argument("--seconds", type=int, default=defaults.seconds)
        parser.add_argument("--warmup-seconds", type=int, default=defaults.warmup_seconds)
        parser.add_argument("--cache-mb", type=float, default=defaults.cache_mb, help="the bounded runs' bound")
        parser.add_argument("--web-workers", type=int, default=defaults.web_workers)
        parser.add_argument("--seed", type=int, default=defaults.seed)
        parser.add_argument("--work-dir", default=defaults.work_dir)
        parser.add_argument("--postgres-url", default=defaults.postgres_url)
        parser.add_argument("--json", dest="json_path", default=None, help="also write every figure to this file")
        parser.add_argument("--plot", default="docs/bench-tenants-rss.png", help="RSS over time, as a PNG")
        # Internal: the steps run in a child process on the benchmark database.
        parser.add_argument("--role", choices=("populate", "count"), default=None, help=argparse.SUPPRESS)
        parser.add_argument("--options-json", default=None, help=argparse.SUPPRESS)
        parser.add_argument("--result", default=None, help=argparse.SUPPRESS)

    def handle(self, *args, role, options_json, result, json_path, plot, **opts):
        if role == "populate":
            plan = tenants.populate(TenantOptions(**json.loads(options_json)), self.stderr.write)
            Path(result).write_text(json.dumps(plan))
            return
        if role == "count":
            self.stdout.write(json.dumps(tenants.database_counts(json.loads(options_json) if options_json else None)))
            return
        if opts["spaces"] < 20 or min(opts["clients"]) < 1 or opts["seconds"] < 5:
            raise CommandError("--spaces must be at least 20, --clients at least 1, --seconds at least 5")
        options = TenantOptions(
            spaces=opts["spaces"],
            max_pages=opts["max_pages"],
            median_pages=opts["median_pages"],
            clients=opts["clients"],
            seconds=opts["seconds"],
            warmup_seconds=opts["warmup_seconds"],
            cache_mb=opts["cache_mb"],
            web_workers=opts["web_workers"],
            seed=opts["seed"],
            work_dir=str(Path(opts["work_dir"]).resolve()),
            postgres_url=opts["postgres_url"],
        )
        try:
            results = tenants.run_benchmark(options, self.stderr.write)
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(tenants.render_report(results))
        if plot:
            tenants.plot_rss(results, Path(plot))
            self.stdout.write(f"\nRSS over time plotted to {plot}")
        if json_path:
            Path(json_path).write_text(json.dumps(results, indent=2))
            self.stdout.write(f"figures written to {json_path}")
