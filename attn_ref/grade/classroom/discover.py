"""Finding a class's submissions: a folder of notebooks, zips or folders, or Gradescope's "Export
Submissions" (zip or unpacked, with submission_metadata.yml naming each submission's students)."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..inkernel.text import plain_text
from ..intake import ExportError, metadata, zips
from ..intake.metadata import ExportEntry
from ..intake.submission import MAX_ZIP, files, is_notebook_or_zip
from ..owned import private_folder
from ..results import Outcome
from ..scoring.autograder import AutograderError
from .unpack import MAX_EXPORT_MEMBERS, METADATA, export_prefix, hash_into, unpack_export


@dataclass(frozen=True)
class Student:
    """One of a submission's students, as the export names them (each field plain text, "" when not given)."""

    name: str = ""
    sid: str = ""
    email: str = ""

    @classmethod
    def of(cls, person: dict) -> Student:
        return cls(person.get("name", ""), person.get("sid", ""), person.get("email", ""))

    def row(self) -> dict[str, str]:
        """Its cells of a row (grades.csv, the score sheet, canvas-*.csv): name, sid, email."""
        return {"name": self.name, "sid": self.sid, "email": self.email}


@dataclass
class Submission:
    key: str  # unique, file-name safe: names results/<key>.json
    path: Path
    students: list[dict] = field(default_factory=list)  # {"name", "sid", "email"} from Gradescope, each plain text
    problem: str = ""  # a reason it cannot be graded at all, found while listing
    gradescope: dict = field(default_factory=dict)  # what the export says Gradescope scored: {"score", "tests"}
    from_export: bool = False  # listed by a Gradescope export: ``students`` is the platform's list of its submitters
    fault: Outcome = Outcome.NOT_GRADED  # whose doing ``problem`` is: the export's (no grade) or the student's (0)
    content: str = ""  # the hash of its files (content_hash), where the batch has read them
    label: str = ""  # how it is shown where its plain name is another submission's too (set by ``label``)
    name: str = ""  # its name as shown, where not its file or folder name: section1/ada, inside a folder of folders

    @property
    def people(self) -> list[Student]:
        """Its students, typed (none where the export names none)."""
        return [Student.of(p) for p in self.students]

    @property
    def members(self) -> list[Student]:
        """Whom its rows are for: its students, one without a name shown by the submission's own name, or where
        it names none, one row of that name alone."""
        return [Student(p.name or self.shown_name, p.sid, p.email) for p in self.people] or [Student(self.shown_name)]

    @property
    def shown_name(self) -> str:
        """The name a person gave it, as plain text (José Núñez for José Núñez.ipynb; section1/ada), where its key
        keeps only characters safe in a file name (Jos_N_ez)."""
        own = self.path.stem if is_notebook_or_zip(self.path) else self.path.name
        return plain_text(self.name or own) or self.key

    @property
    def file_name(self) -> str:
        """Its file or folder name as shown (CSVs, pages, the score sheet's key): plain text, whatever bytes the
        name holds, and one submission's alone (``label``)."""
        return self.label or plain_text(self.name or self.path.name)


def label(subs: list[Submission]) -> list[Submission]:
    """Two names that read the same once plain (sub\x01, sub\x02: both sub?; José composed or decomposed, as
    macOS and Windows save it) are shown with their keys, which differ: a row of grades.csv or of the score sheet
    never stands for two submissions."""
    names = [plain_text(sub.name or sub.path.name) for sub in subs]
    shown = Counter(unicodedata.normalize("NFKC", name) for name in names)
    for sub, name in zip(subs, names):
        sub.label = f"{name} ({sub.key})" if shown[unicodedata.normalize("NFKC", name)] > 1 else ""
    return subs


def alike(name: str) -> str:
    """A file name as a person reads it: its case, Unicode form and extension aside (Ada.ipynb, ada.zip and Ada/
    are alike: perhaps one student's two uploads)."""
    return unicodedata.normalize("NFKC", plain_text(Path(name).stem if is_notebook_or_zip(Path(name)) else name)).casefold()


def _safe(name: str) -> str:
    """A file-name key of plain characters that no shell reads as an option (no leading '-': `rm *` in results/)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip("-._").rstrip("._") or "submission"


def _unique(name: str, seen: set[str]) -> str:
    """A key no other submission of the class has, its case aside: two names that read alike (a b, a_b) never
    share results, nor do Ada and ada on a TA's disk that ignores case (macOS, Windows: results/Ada.json is
    results/ada.json there)."""
    key = _safe(name)
    if key.casefold() in seen:
        key = f"{key}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    while key.casefold() in seen:
        key += "_"
    seen.add(key.casefold())
    return key


def export_folder(path: Path) -> Path | None:
    """The folder of an unpacked export that holds its metadata, by unpack.export_prefix's rule (the folder
    itself, or its one top folder), or None: a folder with a notebook at its top is one submission."""
    try:
        paths = _entries(path)
        tops = [p for p in paths if not p[0].startswith(".") and p[0] != "__MACOSX"]
        if len(tops) == 1 and (path / tops[0][0]).is_dir() and not (path / tops[0][0]).is_symlink():
            paths += [(tops[0][0], *inner) for inner in _entries(path / tops[0][0])]
    except OSError:
        return None
    prefix = export_prefix(paths)
    return None if prefix is None else path.joinpath(*prefix)


def _entries(folder: Path) -> list[tuple[str, ...]]:
    """A folder's entries as one-part paths; links left out but the metadata's (told apart where it is read)."""
    return [(e.name,) for e in folder.iterdir() if not e.is_symlink() or e.name == METADATA]


def is_gradescope_export(path: Path) -> bool:
    if path.is_dir():
        return export_folder(path) is not None
    if path.suffix.lower() == ".zip" and path.is_file():
        try:
            archive = zips.open_checked(path, path.name, AutograderError, MAX_EXPORT_MEMBERS, overlap=False)
        except AutograderError:  # not a zip that could be an export: one submission, whose grading says why
            return False
        with archive:
            return export_prefix([zips.loose_parts(m) for m in archive.infolist() if not m.is_dir()]) is not None
    return False


def is_batch(path: Path) -> bool:
    """A class (folder of submissions or Gradescope export), not one submission."""
    return is_gradescope_export(path) or (path.is_dir() and any(
        is_notebook_or_zip(p) or p.is_dir() for p in path.iterdir() if not p.name.startswith(".")))


def has_notebook(path: Path) -> bool:
    """A notebook or zip, or a folder that holds one (or more files than are walked: graded, and told why)."""
    if path.is_file():
        return is_notebook_or_zip(path)
    try:
        found, more = files(path)
    except OSError:  # an unreadable folder holds nothing the grader can read: not a submission (as rglob had it)
        return False
    return more or any(is_notebook_or_zip(p) for p in found)


def _metadata(path: Path) -> list[ExportEntry]:
    try:
        return metadata.read(path / METADATA)
    except ExportError as err:
        raise AutograderError(str(err)) from None


def _folder_name(name) -> bool:
    """Whether an export's key names a folder inside it: one plain path part the system takes (at most 255 bytes),
    never absolute nor ".."."""
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        return False
    try:
        return len(os.fsencode(name)) <= 255
    except UnicodeError:  # a lone surrogate no file name holds
        return False


def _from_export(path: Path, refused: dict[str, str]) -> list[Submission]:
    found, seen = [], set()
    listed = _metadata(path)
    for entry in listed:
        folder = entry.folder
        sub = Submission(_unique(folder, seen), path / (folder if _folder_name(folder) else "-"), entry.students,
                         gradescope={"score": entry.score, "tests": entry.tests}, from_export=True)
        if not _folder_name(folder):
            sub.problem = f"the export lists {plain_text(folder)[:100]!r}, which is not the name of a folder inside it"
        elif entry.problem:
            sub.problem = entry.problem
        elif sub.path.is_symlink():
            sub.problem = f"the export's {plain_text(folder)} is a link, which is never followed"
        elif folder in refused:
            sub.problem, sub.fault = f"the submission was not unpacked: {refused[folder]}", Outcome.STUDENT
        elif not sub.path.is_dir():
            sub.problem = f"the export lists {plain_text(folder)} but has no such folder"
        elif entry.too_many:
            sub.problem = entry.too_many
        found.append(sub)
    names = {entry.folder for entry in listed}
    for extra in sorted(path.iterdir()):  # a submission's folder the metadata forgot: a row that says so, not silence
        if (extra.name not in names and not extra.name.startswith(".") and not extra.is_symlink() and extra.is_dir()
                and has_notebook(extra)):
            sub = Submission(_unique(extra.name, seen), extra, from_export=True)
            sub.problem = (f"the export's {METADATA} does not list the folder {plain_text(extra.name)}, so no student is "
                           "named for it: grade its notebook alone (attn-ref grade FILE) if it is a student's")
            found.append(sub)
    return label(found)


def _export_root(path: Path, out: Path) -> tuple[Path, dict[str, str]]:
    """Where an export's metadata lies (a zip unpacked under ``out``/.export, or the one top folder of a folder),
    with the submissions its unpacking refused; ``path`` itself for anything else."""
    if path.is_file() and is_gradescope_export(path):
        unpacked = unpack_export(path, private_folder(out / ".export"))
        return unpacked.folder, unpacked.refused
    if path.is_dir() and (inside := export_folder(path)) is not None:
        return inside, {}
    return path, {}


def discover(path: Path, out: Path) -> list[Submission]:
    path, refused = _export_root(Path(path), Path(out))
    if (path / METADATA).is_file() and not (path / METADATA).is_symlink():
        return _from_export(path, refused)
    if (path / METADATA).exists() or (path / METADATA).is_symlink():
        raise AutograderError(f"{path / METADATA} is not a file (a folder or a link): not a Gradescope export as it stands")
    if not path.is_dir():
        raise AutograderError(f"{path} is neither a folder of submissions nor a Gradescope export")
    found, seen = [], set()
    for entry in sorted(path.iterdir()):
        if entry.name.startswith(".") or entry.is_symlink() or not (entry.is_dir() or (entry.is_file() and is_notebook_or_zip(entry))):
            continue  # a link is never followed: it could name any of the TA's files; a FIFO never opened
        if entry.is_dir() and not has_notebook(entry):
            continue  # not a submission (notes, caches): `skipped` lists it
        if entry.is_dir() and (inner := section(entry)):
            found += [Submission(_unique(f"{entry.name}/{sub.name}", seen), sub, name=f"{entry.name}/{sub.name}") for sub in inner]
            continue
        found.append(Submission(_unique(entry.stem if entry.is_file() else entry.name, seen), entry))
    return label(found)


def section(folder: Path) -> list[Path]:
    """The submissions of a folder that is a section of the class, not one submission (section1/ada/lab.ipynb,
    section1/bob/lab.ipynb: a class folder given one level too high), or [] for a folder that is one submission.
    A section holds no notebook or zip of its own and at least two folders that each hold a notebook, at any depth
    (section1/frank/deep/lab.ipynb beside section1/gina/lab.ipynb: else one deep folder made the whole section one
    submission with several notebooks, and its 0 every student's); a zip does not count there (a student's data);
    each of its folders that holds a notebook or zip at any depth is a submission (`skipped` lists the others)."""
    try:
        entries = [e for e in sorted(folder.iterdir()) if not e.name.startswith(".") and not e.is_symlink()]
        if any(e.is_file() and is_notebook_or_zip(e) for e in entries):
            return []
        folders = [e for e in entries if e.is_dir()]
        students = [f for f in folders if _holds_a_notebook_file(f)]
    except OSError:  # a folder that cannot be read is graded as one submission, and its grading says why
        return []
    return [f for f in folders if has_notebook(f)] if len(students) >= 2 else []


def _holds_a_notebook_file(folder: Path) -> bool:
    """Whether an .ipynb file lies anywhere under ``folder`` (no link followed; none under a hidden folder such as
    .ipynb_checkpoints, nor a hidden file)."""
    found, _ = files(folder)
    return any(p.suffix.lower() == ".ipynb" and not any(part.startswith(".") for part in p.relative_to(folder).parts)
               for p in found)


def skipped(path: Path, own: frozenset[Path] = frozenset()) -> list[str]:
    """What a plain class folder holds that is not graded, each with why (printed for the TA): a folder with no
    notebook, a link, a file that is no notebook or zip (eve.pdf), a hidden notebook (.ada.ipynb). Hidden folders
    (.ipynb_checkpoints) and hidden files of other kinds (.DS_Store) are a computer's, not a student's, and ``own``
    (the run's --out, or what it writes there, where that is inside the class folder) the run's: not listed."""
    path = Path(path)
    if not path.is_dir() or export_folder(path) is not None:
        return []
    entries = [e for e in path.iterdir() if e.absolute() not in own]
    inside = [e for folder in entries if folder.is_dir() and not folder.is_symlink() and has_notebook(folder)
              for e in (sorted(folder.iterdir()) if section(folder) else []) if e.is_dir() and not e.name.startswith(".")]
    return sorted(plain_text(e.relative_to(path).as_posix()) + why for e in entries + inside if (why := _not_graded(e)) is not None)


def _not_graded(entry: Path) -> str | None:
    """Why ``discover`` leaves this entry of a class folder out, or None where it is graded or not worth a word."""
    if entry.is_symlink():
        return None if entry.name.startswith(".") else " (a link, never followed)"
    if entry.name.startswith("."):
        return " (hidden: its name starts with '.')" if entry.is_file() and is_notebook_or_zip(entry) else None
    if entry.is_dir():
        return None if has_notebook(entry) else " (a folder with no notebook)"
    if not entry.is_file():
        return " (not a regular file: a FIFO, socket or device is never opened)"
    return None if is_notebook_or_zip(entry) else " (not a notebook, a zip or a folder)"


def content_hash(path: Path) -> str:
    """A submission's files, names and bytes, read in chunks: a results file graded from the same ones need not
    be graded again. A folder past the bound of files is hashed on the first of them (its grading refuses it)."""
    digest = hashlib.sha256()
    try:
        found = [path] if path.is_file() else files(path)[0]
    except OSError:
        found = []
    for file in found:
        digest.update(os.fsencode(file.relative_to(path) if path.is_dir() else file.name) + b"\0")  # any bytes
        try:
            size = file.stat().st_size
            if size > MAX_ZIP:  # refused whatever its bytes (submission.py reads none of them): a sparse
                digest.update(b"\2too large %d" % size)  # terabyte is not read here either
            else:
                hash_into(digest, file)
        except OSError:
            digest.update(b"\1unreadable")
    return digest.hexdigest()


def already_graded(results_path: Path, content_digest: str, version: str) -> bool:
    """Whether these results stand for this submission and autograder; results with no grade (the grader
    or its kernel failed) never do, so a rerun tries again instead of keeping the hole."""
    from ..results import CONTENT_HASH, Results

    try:
        results = Results.read(results_path)
    except (OSError, ValueError):  # none, or not results (ResultsError is a ValueError)
        return False
    if not results.has_grade:
        return False
    return results.recorded_hash(CONTENT_HASH) == content_digest and results.autograder_version == version


# ---- the class ---------------------------------------------------------------------------------------
