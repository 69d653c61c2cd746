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


# --- Services hold what they give: no name passes through them --------------------------------------
# A door calls a service function, or names a type a service defines. A service that lists a name of the
# engine, the store or the LLM boundary in `__all__` (or a door that takes one through it) would make the
# layering a formality: the door would be calling the engine. Errors every door maps live in
# memory_engine/errors.py; a type a door only names in an annotation is imported under TYPE_CHECKING
# (pyproject.toml: exclude_type_checking_imports).

SERVICES = ROOT / "memory_engine/services"


def top_level_names(source: str) -> tuple[set[str], set[str]]:
    """What a module defines at its top level (functions, classes, assignments) and what it imports."""
    defined: set[str] = set()
    imported: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            # `X = module.X` or `X = imported` gives another module's object a name here: still passed through
            if _names_an_import(node.value, imported):
                imported |= names
            else:
                defined |= names
    return defined, imported


def _names_an_import(value: ast.AST | None, imported: set[str]) -> bool:
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name) and value.id in imported


def exported(source: str) -> list[str]:
    """The names of a module's `__all__`."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return [element.value for element in node.value.elts]
    return []


def passed_through(source: str) -> list[str]:
    """The names a module's `__all__` lists that it imports rather than defines."""
    defined, imported = top_level_names(source)
    return [name for name in exported(source) if name in imported and name not in defined]


def services_taken(source: str) -> list[tuple[str, str]]:
    """(service module, name) for every name a door takes from a service: `from services.x import name`,
    and `x.name` where `x` is a service module it imported."""
    taken, modules = [], {}
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "memory_engine.services":
            modules |= {(a.asname or a.name): a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memory_engine.services."):
            taken += [(node.module.rsplit(".", 1)[1], a.name) for a in node.names]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            taken.append((modules[node.value.id], node.attr))
    return taken


def test_the_checks_find_a_name_passed_through():
    service = "from memory_engine.engine.erasure import erase_entry\n__all__ = ['erase_entry', 'entries']\n"
    service += "def entries(space):\n    return []\n"
    assert passed_through(service) == ["erase_entry"]
    alias = "from memory_engine.engine import updater\nRunCounts = updater.RunCounts\n"
    alias += "NAMES = updater.RunCounts.names()\n__all__ = ['RunCounts', 'NAMES']\n"
    assert passed_through(alias) == ["RunCounts"]
    door = "from memory_engine.services import curation\nfrom memory_engine.services.spaces import space_get\n"
    door += "curation.erase_entry(entry)\n"
    assert services_taken(door) == [("spaces", "space_get"), ("curation", "erase_entry")]


def test_no_service_lists_a_name_it_does_not_define():
    found = {path.name: names for path in sorted(SERVICES.glob("*.py")) if (names := passed_through(path.read_text()))}
    assert found == {}, "a service passes these names through; wrap them in a function of its own"


def test_a_door_takes_from_a_service_only_what_it_defines():
    defined = {path.stem: top_level_names(path.read_text())[0] for path in SERVICES.glob("*.py")}
    found = []
    for folder in DOORS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for module, name in services_taken(path.read_text()):
                if module in defined and name not in defined[module]:
                    found.append(f"{path.relative_to(ROOT)}: services.{module}.{name}")
    assert found == [], "a door takes a name a service only imports; call a service function instead"
