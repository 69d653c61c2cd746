"""Choose a context setting by leave-one-out over LoCoMo and LongMemEval together (bench/loo.py).

    manage.py choose_context --run PAGE_TOKENS=150 var/locomo-after/locomo.json var/lme-after/longmemeval.json \
                             --run PAGE_TOKENS=60 var/locomo-p60/locomo.json var/lme-p60/longmemeval.json

Each --run names a setting and the reports evaluate_locomo and evaluate_longmemeval wrote with it. The units
left out in turn are LoCoMo's conversations and LongMemEval's question types, so no setting is chosen on
the questions that score it, nor on one benchmark alone. A question's score is the mean share of its evidence
the memory's context shows over the budgets 250 to 4,000 tokens (LoCoMo categories 1-4, LongMemEval's
questions with evidence). Prints each setting's score per unit, the folds and the held-out mean.
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench.locomo_run import MEMORY
from bench.loo import Score, held_out_mean, leave_one_out


def _question_score(curve: dict, evidence: list) -> float:
    return sum(shown / len(evidence) for _, shown in curve.values()) / len(curve)


def unit_scores(locomo: dict, longmemeval: dict) -> dict[str, Score]:
    """unit -> the summed question scores of the memory's curve, from the two reports. Pure."""
    units: dict[str, Score] = {}
    for sample in locomo["samples"]:
        for q in sample["questions"]:
            if q["category"] in (1, 2, 3, 4) and q["evidence"]:
                unit = f"locomo {sample['sample_id']}"
                units[unit] = units.get(unit, Score(0.0, 0)) + Score(
                    _question_score(q["curve"][MEMORY], q["evidence"]), 1
                )
    for q in longmemeval["questions"]:
        if q["evidence"] and not q["abstention"]:
            unit = f"longmemeval {q['question_type']}"
            units[unit] = units.get(unit, Score(0.0, 0)) + Score(_question_score(q["curve"][MEMORY], q["evidence"]), 1)
    return units


class Command(BaseCommand):
    help = "Choose a context setting by leave-one-out over LoCoMo conversations and LongMemEval question types."

    def add_arguments(self, parser):
        parser.add_argument(
            "--run", nargs=3, action="append", metavar=("SETTING", "LOCOMO_JSON", "LONGMEMEVAL_JSON"), required=True
        )

    def handle(self, *args, run, **options):
        table = {}
        for setting, locomo, longmemeval in run:
            try:
                table[setting] = unit_scores(
                    json.loads(Path(locomo).read_text()), json.loads(Path(longmemeval).read_text())
                )
            except (OSError, ValueError, KeyError) as error:
                raise CommandError(f"cannot read the reports of {setting}: {error}") from error
        folds = leave_one_out(table)
        units = sorted(next(iter(table.values())))
        self.stdout.write("| setting | " + " | ".join(units) + " |")
        self.stdout.write("| --- |" + " --- |" * len(units))
        for setting, scores in table.items():
            self.stdout.write(f"| {setting} | " + " | ".join(f"{scores[u].mean:.3f}" for u in units) + " |")
        self.stdout.write("")
        for fold in folds:
            self.stdout.write(
                f"left out {fold.held_out}: chose {fold.chosen} ({fold.chosen_on_others:.3f} on the others), "
                f"{fold.held_out_score:.3f} on it"
            )
        self.stdout.write(f"held-out mean: {held_out_mean(table, folds):.3f}")
