"""Speed and size of the engine as one memory space grows, on SQLite and on PostgreSQL.

    manage.py bench_scale                                   # 1k, 10k, 100k pages on both databases
    manage.py bench_scale --pages 1000 10000 --databases sqlite --json var/bench/scale.json

Prints, per database and size: latency of storing a turn and of retrieval (median, p95, each next to
its target), the peak RSS of a web process, bytes stored per page; and once per database the
consolidation throughput and LLM cost per turn with the offline LLM, with a worker's peak RSS. Each
database runs in a subprocess against its own benchmark database (see bench/scale.py);
the configured database is never touched.
"""

import argparse
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench import scale as scale_bench
from bench.scale import BenchOptions


class Command(BaseCommand):
    help = "Time storing a turn, retrieval and consolidation as one space grows to 1k, 10k and 100k pages."

    def add_arguments(self, parser):
        defaults = BenchOptions()
        parser.add_argument("--pages", type=int, nargs="+", default=list(scale_bench.DEFAULT_SIZES))
        parser.add_argument(
            "--databases", nargs="+", choices=scale_bench.DATABASES, default=list(scale_bench.DATABASES)
        )
        parser.add_argument("--json", dest="json_path", default=None, help="also write every figure to this file")
        parser.add_argument("--store-samples", type=int, default=defaults.store_samples)
        parser.add_argument("--queries", type=int, default=defaults.queries)
        parser.add_argument("--web-probe-turns", type=int, default=defaults.web_probe_turns)
        parser.add_argument(
            "--consolidation-pages", type=int, default=defaults.consolidation_pages, help="0 to skip consolidation"
        )
        parser.add_argument("--locomo-sample", default=None, help="sample_id (default: the first of the dev file)")
        parser.add_argument("--seed", type=int, default=defaults.seed)
        parser.add_argument("--work-dir", default=defaults.work_dir, help="SQLite file, index files, embedding cache")
        parser.add_argument("--postgres-url", default=scale_bench.DEFAULT_POSTGRES_URL)
        # Internal: how the command runs its own subprocesses.
        parser.add_argument("--role", choices=("db", "web", "worker"), default=None, help=argparse.SUPPRESS)
        parser.add_argument("--options-json", default=None, help=argparse.SUPPRESS)
        parser.add_argument("--result", default=None, help=argparse.SUPPRESS)
        parser.add_argument("--space-id", type=int, default=None, help=argparse.SUPPRESS)

    def handle(self, *args, role, options_json, result, space_id, databases, json_path, postgres_url, **opts):
        progress = self.stderr.write
        if role:
            options = BenchOptions.from_json(options_json)
            scale_bench.run_role(role, options, Path(result), space_id=space_id, progress=progress)
            return
        if any(size <= 0 for size in opts["pages"]) or opts["queries"] < 1 or opts["store_samples"] < 1:
            raise CommandError("--pages, --queries and --store-samples must be positive")
        options = BenchOptions(
            sizes=sorted(set(opts["pages"])),
            store_samples=opts["store_samples"],
            queries=opts["queries"],
            web_probe_turns=opts["web_probe_turns"],
            consolidation_pages=opts["consolidation_pages"],
            locomo_sample=opts["locomo_sample"],
            seed=opts["seed"],
            work_dir=str(Path(opts["work_dir"]).resolve()),
        )
        try:
            results = scale_bench.run_benchmark(
                databases=list(dict.fromkeys(databases)), options=options, postgres_url=postgres_url, progress=progress
            )
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(scale_bench.render_report(results))
        if json_path:
            Path(json_path).write_text(json.dumps(results, indent=2))
            self.stdout.write(f"\nfigures written to {json_path}")
