"""The package's shape: one stage per folder, imports pointing one way, no loop, light start paths.

Imports are read from the source (every ``import`` statement, also those inside functions, which is
where the heavy ones hide), except those under ``if TYPE_CHECKING:``, which never run.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

import pytest

import tb_aggregate_plugin

PACKAGE = "tb_aggregate_plugin"
ROOT = os.path.dirname(tb_aggregate_plugin.__file__)
# Each stage may import only stages of its own rank or below.
RANKS = {"query": 0, "version": 0, "series": 1, "read": 2, "compute": 3, "write": 4}
ADAPTER_RANK = 5  # plugin, cli and the package's own __init__ (the Python API)


def _modules() -> dict[str, str]:
    """``{module name: path}`` of every module of the package (the tab's static folder aside)."""
    found = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, name), ROOT)[:-3].replace(os.sep, ".")
                module = PACKAGE if rel == "__init__" else f"{PACKAGE}.{rel.removesuffix('.__init__')}"
                found[module] = os.path.join(folder, name)
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str) -> set[str]:
    """Every module ``module`` imports (absolute names), at any depth of its code."""
    with open(MODULES[module], encoding="utf-8") as f:
        tree = ast.parse(f.read())
    is_package = MODULES[module].endswith("__init__.py")
    base = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                parent = node.module or ""
            for alias in node.names:
                child = f"{parent}.{alias.name}"
                found.add(child if child in MODULES else parent)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


GRAPH = {module: {m for m in _imports(module) if m in MODULES and m != module} for module in MODULES}


def _rank(module: str) -> int:
    parts = module.split(".")
    return RANKS.get(parts[1], ADAPTER_RANK) if len(parts) > 1 else ADAPTER_RANK


def test_no_import_loop_inside_the_package():
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("import loop: " + " -> ".join(path[path.index(module) :] + [module]))
        if module in done:
            return
        for imported in sorted(GRAPH[module]):
            walk(imported, path + [module])
        done.add(module)

    for module in sorted(GRAPH):
        walk(module, [])


def test_the_loop_check_finds_a_loop():
    """The check above can fail: a graph with a loop makes it raise."""
    global GRAPH
    saved = GRAPH
    GRAPH = {**saved, f"{PACKAGE}.series": saved[f"{PACKAGE}.series"] | {f"{PACKAGE}.compute.align"}}
    try:
        with pytest.raises(AssertionError, match="import loop"):
            test_no_import_loop_inside_the_package()
    finally:
        GRAPH = saved


def test_imports_point_one_way_adapters_write_compute_read_series_query():
    upward = [
        f"{module} imports {imported}"
        for module, imports in GRAPH.items()
        for imported in imports
        if _rank(imported) > _rank(module)
    ]
    assert not upward, upward


def _closure(module: str) -> set[str]:
    """Every module ``module`` may import, following the package's own imports."""
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for imported in _imports(current):
            if imported in MODULES:
                todo.append(imported)
            else:
                seen.add(imported)
    return seen


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(f"{PACKAGE}.compute")))
def test_compute_imports_neither_tensorboard_nor_werkzeug(module):
    """Pure numpy/scipy stages: testable alone, usable without a TensorBoard."""
    heavy = sorted(m for m in _closure(module) if m.split(".")[0] in ("tensorboard", "werkzeug", "grpc"))
    assert not heavy, f"{module} reaches {heavy}"


def test_compute_check_sees_an_import_inside_a_function(tmp_path):
    """The check reads imports at any depth: a lazy import in a function counts."""
    source = "def f():\n    from tensorboard import errors\n"
    tree = ast.parse(source)
    names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert names == {"tensorboard"}
    MODULES[f"{PACKAGE}.compute._probe"] = str(tmp_path / "probe.py")
    (tmp_path / "probe.py").write_text(source)
    try:
        with pytest.raises(AssertionError):
            test_compute_imports_neither_tensorboard_nor_werkzeug(f"{PACKAGE}.compute._probe")
    finally:
        del MODULES[f"{PACKAGE}.compute._probe"]


def test_subpackages_are_empty_and_every_module_says_its_job():
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if path.endswith("__init__.py") and module != PACKAGE:
            assert text.strip() == "", f"{module}: a stage's __init__ stays empty"
        else:
            assert ast.get_docstring(ast.parse(text)), f"{module} has no docstring saying its job"


def test_one_lru_for_every_cache():
    """The size-bounded LRU lives in read/cache.py; nothing else keeps its own ordered cache."""
    owners = []
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as f:
            if "OrderedDict" in f.read():
                owners.append(module)
    assert owners == [f"{PACKAGE}.read.cache"]


def test_the_api_function_compute_is_not_hidden_by_the_compute_stage():
    """``tba.compute`` is the function, also once every module of the compute/ folder is loaded."""
    code = textwrap.dedent(
        f"""
        import importlib, {PACKAGE} as tba
        for name in {sorted(MODULES)!r}:
            importlib.import_module(name)
        print(callable(tba.compute), tba.compute.__module__)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", PACKAGE]


# What the command line may have loaded when it starts TensorBoard's data server: the standard
# library, the few modules of the package on that path, and the regex module (Query's patterns).
CLI_START = {
    PACKAGE,
    f"{PACKAGE}.cli",
    f"{PACKAGE}.version",
    f"{PACKAGE}.query",
    f"{PACKAGE}.compute",
    f"{PACKAGE}.read",
    f"{PACKAGE}.read.fed",
    f"{PACKAGE}.read.logdir",
    f"{PACKAGE}.read.server_process",
    f"{PACKAGE}.read.sliced",
    f"{PACKAGE}.read.walk",
    f"{PACKAGE}.write",
    f"{PACKAGE}.write.table_file",
}


def test_the_command_line_starts_the_data_server_before_any_heavy_import(tmp_path):
    """Every module loaded when the first data server starts is light: numpy, pandas, scipy, gRPC and
    TensorBoard's modules load while the server reads the logdir, not before."""
    from tensorboard.summary import Writer

    writer = Writer(str(tmp_path / "logs" / "seed_0"))
    for step in range(3):
        writer.add_scalar("loss", float(step), step)
    writer.close()
    code = textwrap.dedent(
        f"""
        import json, sys
        before = set(sys.modules)  # what the interpreter's start-up loaded (site, .pth files)
        from {PACKAGE} import cli
        from {PACKAGE}.read import logdir
        loaded_at_start = []
        real = logdir.DataServer.__init__
        def start(self, *args, **kwargs):
            loaded_at_start.append(sorted(set(sys.modules) - before))
            real(self, *args, **kwargs)
        logdir.DataServer.__init__ = start
        status = cli.main([{str(tmp_path / "logs")!r}, "-o", {str(tmp_path / "out.csv")!r}, "-q"])
        print(json.dumps([status, loaded_at_start[0]]))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    import json

    status, modules = json.loads(done.stdout.splitlines()[-1])
    assert status == 0
    stdlib = sys.stdlib_module_names
    heavy = [
        m
        for m in modules
        if m.split(".")[0] not in stdlib and m not in CLI_START and m.split(".")[0] != "regex"
    ]
    assert not heavy, f"loaded before the data server starts: {heavy}"
