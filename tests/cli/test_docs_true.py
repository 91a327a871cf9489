"""Claims in the docs that a test can hold them to."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def test_fixed_defects_note_names_test_files_that_exist_and_none_is_xfail():
    note = _read("docs", "fixed-defects.md")
    named = sorted(set(re.findall(r"`(tests/[\w/]+\.py)`", note)))
    assert len(named) >= 25
    missing = [p for p in named if not os.path.exists(os.path.join(ROOT, p))]
    assert missing == []
    tests = "".join(_read(p) for p in named)
    assert re.search(r"^\s*(@|pytestmark\s*=\s*)pytest\.mark\.xfail", tests, re.M) is None
    assert "## Left for the arrays owner (xfail" not in note


def test_docs_name_only_files_that_exist():
    """Every repository path a doc names in backticks (scripts, examples, tests) exists."""
    missing = []
    for doc in ["README.md"] + [os.path.join("docs", n) for n in os.listdir(os.path.join(ROOT, "docs"))
                                if n.endswith(".md")]:
        text = _read(doc)
        for path in re.findall(r"`((?:shared|examples|benchmarks|tests|docs|cujit)/[\w./-]+\.(?:py|sh|md))`", text):
            if path.startswith("shared/") or not os.path.exists(os.path.join(ROOT, path)):
                missing.append((doc, path))
    assert missing == []


def test_readme_development_section_runs_mutation_testing():
    readme = _read("README.md")
    dev = readme[readme.index("## Development"):]
    assert "mutmut run" in dev and "docs/testing.md" in dev
    assert "[tool.mutmut]" in _read("pyproject.toml")
