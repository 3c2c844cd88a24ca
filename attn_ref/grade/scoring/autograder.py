"""An autograder, as the grader reads it: checks.json validated against the protocol, and the reference
functions its probes name, loaded from the autograder's own files (never from the current folder)."""

from __future__ import annotations

import importlib
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from ..checks_json import Checks, FunctionUnit, InvalidChecks, Unit, read_checks
from ..inkernel.errors import GraderError
from . import comparators as scoring
from . import inputs

CHECKS_FILE = "checks.json"
# An autograder zip is the instructor's, but it is read with bounds all the same (a zip can declare one size
# and inflate to another): a built one holds about 60 files and 1 MB inflated
MAX_MEMBER = 64 << 20  # one file of the zip, inflated
MAX_UNPACKED = 256 << 20  # the whole zip, inflated (a worker unpacks its grader)
MAX_MEMBERS = 10_000
CHUNK = 1 << 20


class AutograderError(GraderError):
    """The --autograder argument is not a usable autograder; stops before grading."""


@dataclass
class Autograder:
    """checks.json (validated) and where its files are: a zip made by `attn-ref build`, or its unpacked folder."""

    path: Path
    checks: Checks
    _modules: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.checks.assignment

    @property
    def units(self) -> tuple[Unit, ...]:
        return self.checks.units

    def read(self, name: str) -> bytes:
        if self.path.is_dir():
            return (self.path / name).read_bytes()
        with zipfile.ZipFile(self.path) as archive:
            return read_member(archive, name, self.path)

    def reference(self, spec: str) -> Callable:
        """The function "module:function" names: attn_ref's (the grader's own, bundled in the zip) or a
        module the zip carries under references/, loaded from those bytes under a private name."""
        module_name, _, function = spec.partition(":")
        if module_name not in self._modules:
            path = self.checks.references.get(module_name, "missing")
            if path is None and module_name.split(".")[0] == "attn_ref":
                self._modules[module_name] = importlib.import_module(module_name)
            elif isinstance(path, str) and path.startswith("references/"):
                module = ModuleType(f"_autograder_reference_{module_name}")
                exec(compile(self.read(path), f"{self.path}:{path}", "exec"), module.__dict__)
                self._modules[module_name] = module
            else:
                raise AutograderError(f"{self.path}: the reference {spec!r} is not shipped with the autograder")
        fn = getattr(self._modules[module_name], function, None)
        if not callable(fn):
            raise AutograderError(f"{self.path}: the reference {spec!r} does not exist")
        return fn


def load_autograder(path: str | Path) -> Autograder:
    """An autograder made by `attn-ref build`; AutograderError (with what is wrong) for anything else."""
    path = Path(path)
    try:
        if path.is_dir():
            text = (path / CHECKS_FILE).read_text()
        else:
            with zipfile.ZipFile(path) as archive:
                text = read_member(archive, CHECKS_FILE, path).decode()
        data = json.loads(text)
    except FileNotFoundError:
        raise AutograderError(f"{path}: no such autograder (expected a zip made by `attn-ref build`)") from None
    except (zipfile.BadZipFile, IsADirectoryError):
        raise AutograderError(f"{path} is not a zip file; expected autograder/<name>-autograder.zip") from None
    except KeyError:
        raise AutograderError(f"{path} has no {CHECKS_FILE}: it was not made by `attn-ref build`") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise AutograderError(f"{path}: {CHECKS_FILE} is damaged") from None
    try:
        checks = read_checks(data, generators=inputs.GENERATORS, comparators=scoring.CHECKS)
    except InvalidChecks as err:
        raise AutograderError(f"{path}: {CHECKS_FILE} is not valid: {err}") from None
    autograder = Autograder(path, checks)
    for unit in autograder.units:
        if isinstance(unit, FunctionUnit):
            autograder.reference(unit.reference)  # fail now, not submission by submission
    return autograder


def read_member(archive: zipfile.ZipFile, name: str, where: Path | str, limit: int = MAX_MEMBER) -> bytes:
    """One file of an autograder zip, never more than ``limit`` bytes inflated (KeyError if it has none)."""
    with archive.open(name) as member:
        data = member.read(limit + 1)
    if len(data) > limit:
        raise AutograderError(f"{where}: {name} inflates past {limit >> 20} MB: not an autograder `attn-ref build` made")
    return data


def unpack(zip_path: Path, into: Path) -> None:
    """An autograder zip's files under ``into`` (a folder of its owner's), within MAX_MEMBERS files and
    MAX_UNPACKED bytes inflated, each file streamed and counted as it inflates; a name that would land outside
    ``into`` (absolute, "..") refuses the zip."""
    with zipfile.ZipFile(zip_path) as archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        if len(members) > MAX_MEMBERS:
            raise AutograderError(f"{zip_path}: more than {MAX_MEMBERS} files: not an autograder `attn-ref build` made")
        total = 0
        for member in members:
            parts = Path(member.filename).parts
            if not parts or Path(member.filename).is_absolute() or ".." in parts:
                raise AutograderError(f"{zip_path}: the file name {member.filename!r} would land outside its folder")
            target = into.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, open(target, "xb") as out:
                while chunk := source.read(CHUNK):
                    total += len(chunk)
                    if total > MAX_UNPACKED:
                        raise AutograderError(f"{zip_path} inflates past {MAX_UNPACKED >> 20} MB: "
                                              "not an autograder `attn-ref build` made")
                    out.write(chunk)
