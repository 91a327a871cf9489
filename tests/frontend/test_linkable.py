"""The linkable-code classes (numba-cuda's ``CUSource``, ``PTXSource``, ``Cubin``, ``Fatbin``,
``LTOIR``, ``Archive``, ``Object``) and the ``link=`` entries they stand for."""
import io

import pytest

import cujit as cuda
from cujit.frontend.linkable import linkable_of, same_entry


@pytest.mark.parametrize("cls, kind, default", [
    (cuda.CUSource, "cu", "<unnamed-cu>"), (cuda.PTXSource, "PTX", "<unnamed-ptx>"),
    (cuda.Cubin, "CUBIN", "<unnamed-cubin>"), (cuda.Fatbin, "FATBIN", "<unnamed-fatbin>"),
    (cuda.LTOIR, "LTOIR", "<unnamed-ltoir>"), (cuda.Archive, "LIBRARY", "<unnamed-archive>"),
    (cuda.Object, "OBJECT", "<unnamed-object>"),
])
def test_classes_hold_data_name_and_kind(cls, kind, default):
    code = cls(b"\x01\x02", name="mine")
    assert isinstance(code, cuda.LinkableCode)
    assert code.data == b"\x01\x02" and code.name == "mine" and code.kind == kind
    assert cls(b"").name == default


def test_file_objects_are_read_when_used():
    buf = io.StringIO("first")
    code = cuda.CUSource(buf)
    buf.write("second")     # overwrites from position 0: the content is read at use
    assert code.data == "second" and code.data_bytes() == b"second"
    assert cuda.Cubin(io.BytesIO(b"\x7fELF")).data == b"\x7fELF"


def test_key_changes_with_the_data():
    assert cuda.PTXSource("a", name="x").key() != cuda.PTXSource("b", name="x").key()
    assert cuda.PTXSource("a", name="x").key() == cuda.PTXSource("a", name="x").key()


@pytest.mark.parametrize("kw, exc, text", [
    ({"data": 3}, TypeError, "data must be str, bytes"),
    ({"data": "", "setup_callback": 1}, TypeError, "setup_callback must be callable"),
    ({"data": "", "teardown_callback": "x"}, TypeError, "teardown_callback must be callable"),
    ({"data": "", "name": 5}, TypeError, "name must be a str"),
    ({"data": "", "nrt": True}, NotImplementedError, "NRT"),
])
def test_bad_arguments(kw, exc, text):
    with pytest.raises(exc, match=text):
        cuda.CUSource(**kw)


def test_paths_become_the_class_of_their_extension(tmp_path):
    for ext, cls in ((".cu", cuda.CUSource), (".ptx", cuda.PTXSource), (".o", cuda.Object),
                     (".a", cuda.Archive), (".ltoir", cuda.LTOIR), (".cubin", cuda.Cubin),
                     (".fatbin", cuda.Fatbin)):
        p = tmp_path / f"code{ext}"
        p.write_bytes(b"abc")
        code = linkable_of(str(p))
        assert type(code) is cls and code.name == f"code{ext}"
        assert code.data == ("abc" if ext in (".cu", ".ptx") else b"abc")
    obj = cuda.Object(b"")
    assert linkable_of(obj) is obj


def test_bad_entries(tmp_path):
    with pytest.raises(ValueError, match="extension '.txt' is not one of"):
        linkable_of(str(tmp_path / "notes.txt"))
    with pytest.raises(TypeError, match="file paths or linkable-code objects"):
        linkable_of(42)
    with pytest.raises(OSError):
        linkable_of(str(tmp_path / "absent.cu"))


def test_same_entry_compares_paths_and_objects(tmp_path):
    a = cuda.PTXSource("x")
    assert same_entry(a, a) and not same_entry(a, cuda.PTXSource("x"))
    assert same_entry(str(tmp_path / "f.cu"), tmp_path / "f.cu")
    assert not same_entry(str(tmp_path / "f.cu"), str(tmp_path / "g.cu"))


def test_jit_checks_link_entries_at_decoration():
    with pytest.raises(TypeError, match="link: entries must be file paths"):
        cuda.jit(link=[3.5])
    with pytest.raises(ValueError, match="extension '.txt'"):
        cuda.jit(link=["notes.txt"])
