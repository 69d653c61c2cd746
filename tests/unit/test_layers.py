"""The doors read the memory through selectors: no door queries a model's manager itself.

The doors (memory_engine/interfaces, the management commands, the worker's tasks) call services; a read
is a selector in services (CONTRIBUTING.md, "Where a feature goes"), so that every door lists the same
rows and refuses the same filters. The Django admin is the one exception: a ModelAdmin is the ORM's own
door (its querysets, its change forms). The import contracts in pyproject.toml keep the doors off the
engine and the store; this keeps them off the managers."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOORS = ("memory_engine/interfaces", "memory_engine/management", "memory_engine/jobs")
THE_ADMIN = Path("memory_engine/interfaces/admin.py")


def manager_uses(source: str) -> list[int]:
    """The lines of `source` that reach a model's manager (`X.objects`)."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source)) if _is_manager(node)})


def _is_manager(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "objects"


def test_the_check_finds_a_query_however_it_is_written():
    assert manager_uses("rows = Page.objects.filter(space=space)\n") == [1]
    assert manager_uses("x = 1\nfound = type(user).objects.get(pk=1)\n") == [2]
    assert manager_uses("found = spaces.row_of(space, Page, 3)\nobjects = []\n") == []


def test_no_door_but_the_admin_queries_a_model_itself():
    found = []
    for folder in DOORS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative == THE_ADMIN:
                continue
            found += [f"{relative}:{line}" for line in manager_uses(path.read_text())]
    assert found == [], "a door queries the ORM; add a selector to its service instead"
