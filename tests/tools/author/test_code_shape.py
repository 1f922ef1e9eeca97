"""Rules on the shape of the kit's own code (issue 22 item 5): no product function is over FUNCTION_LIMIT lines, and
no Python module of grader/ or tools/ takes part in an import cycle.

The product is the kit's C, CUDA, C++ and Python under harness/, sim/, grader/ and tools/; labs/ and solutions/ are
the students' material and tests/ is not product. Functions are measured by lizard (requirements.txt), which reads C,
C++ (a .cu file as C++) and Python: a function's length is its lines from the signature to the closing brace or last
statement, comments and blank lines included. Imports are read with ast, those inside functions too: a cycle hidden
in a function is still a cycle.
"""
import ast
import sys
import unittest
from pathlib import Path

from grader.patterns import KIT

_PATH = list(sys.path)
import lizard  # noqa: E402 - lizard 1.24 puts the folder of sys.argv[0] (tests/ under tests/timing.py) first on
sys.path[:] = _PATH  # sys.path, where tests/grader and tests/tools would hide the kit's packages: taken back here

FUNCTION_LIMIT = 150
PRODUCT_DIRS = ("harness", "sim", "grader", "tools")
SOURCE_SUFFIXES = (".c", ".h", ".cu", ".cuh", ".cpp", ".py")
PYTHON_PACKAGES = ("grader", "tools")

# Functions still over the limit, each with its length when it was listed: it may shrink, never grow, and leaves this
# list once it is under the limit (the test says when an entry is stale). Empty when the rule holds everywhere.
OVER_LIMIT = {
}


def product_files():
    """The product's source files, relative to the kit's root, in a stable order."""
    files = []
    for top in PRODUCT_DIRS:
        for path in sorted((KIT / top).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                files.append(path.relative_to(KIT))
    return files


def long_functions(limit):
    """(file:line, function name, length) of every product function longer than limit lines."""
    found = []
    for rel in product_files():
        for fn in lizard.analyze_file(str(KIT / rel)).function_list:
            if fn.length > limit:
                found.append((f"{rel}:{fn.start_line}", fn.name, fn.length))
    return found


class FunctionLength(unittest.TestCase):
    def test_no_product_function_is_over_the_limit(self):
        too_long, stale = [], dict(OVER_LIMIT)
        for where, name, length in long_functions(FUNCTION_LIMIT):
            key = f"{where.split(':')[0]}:{name}"
            allowed = stale.pop(key, None)
            if allowed is None or length > allowed:
                too_long.append(f"  {where}: {name} is {length} lines"
                                + (f" (listed at {allowed} in OVER_LIMIT: it grew)" if allowed else ""))
        if too_long:
            self.fail(f"functions over the limit of {FUNCTION_LIMIT} lines (split them into smaller ones, or dispatch "
                      f"through a table, as sim/interp_alu.c's ALU_OPS):\n" + "\n".join(too_long))
        if stale:
            self.fail("OVER_LIMIT lists functions that are now under the limit or gone: remove them: "
                      + ", ".join(sorted(stale)))

    def test_the_measure_sees_c_cuda_and_python(self):
        # The rule is only as good as its parser: each language's functions are found, with plausible lengths.
        for rel, name in (("sim/interp_alu.c", "sim_alu"), ("harness/device/backend_gpu.cu", "ppl_backend_params"),
                          ("grader/config.py", "load_config")):
            found = {fn.name.split("::")[-1]: fn.length for fn in lizard.analyze_file(str(KIT / rel)).function_list}
            self.assertIn(name, found, f"lizard found no function {name} in {rel}")
            self.assertGreater(found[name], 2, f"{rel}: {name}")


def module_name(path: Path) -> str:
    """grader/sanitize/cli.py -> grader.sanitize.cli; a package's __init__.py -> the package."""
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_modules():
    """{module name: path relative to the kit} of every module of grader/ and tools/."""
    modules = {}
    for top in PYTHON_PACKAGES:
        for path in sorted((KIT / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                rel = path.relative_to(KIT)
                modules[module_name(rel)] = rel
    return modules


def imports_of(name: str, rel: Path, modules) -> list:
    """(module imported, line) for each import in the module, at any depth, of one of the kit's modules."""
    package = name if rel.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse((KIT / rel).read_text(), str(rel))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # from P import m: the submodule P.m where there is one, else the module P itself
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # import a.b.c of a module a.b (c a name in it)
                target = target.rpartition(".")[0]
            if target and target != name:
                found.append((target, node.lineno))
    return found


def import_cycles():
    """Each import cycle among grader/ and tools/: a list of (module, line, module it imports there), in order."""
    modules = python_modules()
    graph = {name: {} for name in modules}
    for name, rel in modules.items():
        for target, line in imports_of(name, rel, modules):
            graph[name].setdefault(target, line)
    # Tarjan's strongly connected components; each component of two or more modules holds a cycle
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for u in graph[v]:
            if u not in index:
                visit(u)
                low[v] = min(low[v], low[u])
            elif u in on_stack:
                low[v] = min(low[v], index[u])
        if low[v] == index[v]:
            component = []
            while True:
                u = stack.pop()
                on_stack.discard(u)
                component.append(u)
                if u == v:
                    break
            if len(component) > 1:
                components.append(set(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [shortest_cycle(graph, component, modules) for component in components]


def shortest_cycle(graph, component, modules):
    """One cycle through the component's first module (breadth first), as (file:line, module, module imported)."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for u in sorted(graph[v]):
                if u == start:
                    ring = paths[v] + [start]
                    return [(f"{modules[a]}:{graph[a][b]}", a, b) for a, b in zip(ring, ring[1:])]
                if u in component and u not in paths:
                    paths[u] = paths[v] + [u]
                    following.append(u)
        frontier = following
    return []


class ImportCycles(unittest.TestCase):
    def test_no_import_cycle_among_grader_and_tools(self):
        lines = []
        for cycle in import_cycles():
            lines.append("  " + " -> ".join([cycle[0][1]] + [b for _, _, b in cycle]) + ":")
            lines += [f"    {where}: {a} imports {b}" for where, a, b in cycle]
        if lines:
            self.fail("import cycles (move what both need into the module it belongs in; an import inside a function "
                      "still counts):\n" + "\n".join(lines))

    def test_the_reader_sees_imports_in_functions_and_relative_ones(self):
        modules = python_modules()
        self.assertIn("grader.sanitize.cli", modules)
        self.assertIn("grader", modules)
        imported = {target for target, _ in imports_of("grader.sanitize.cli", modules["grader.sanitize.cli"],
                                                       modules)}
        self.assertTrue(imported & {m for m in modules if m.startswith("grader.sanitize.")},
                        f"grader.sanitize.cli imports none of its package's modules: {sorted(imported)}")


if __name__ == "__main__":
    unittest.main()
