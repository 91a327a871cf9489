"""Claims in the docs that a test can hold them to."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def test_usertrial_note_and_tests_agree_on_xfail():
    note = _read("docs", "design-usertrial.md")
    tests = "".join(_read("tests", "usertrial", n) for n in
                    os.listdir(os.path.join(ROOT, "tests", "usertrial")) if n.endswith(".py"))
    has_xfail = "pytest.mark.xfail" in tests
    assert has_xfail == ("## Left for the arrays owner (xfail" in note)
    assert not has_xfail


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
