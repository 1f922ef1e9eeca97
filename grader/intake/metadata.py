"""Gradescope's submission metadata, read with PyYAML: who submitted, when, and the due dates that apply to them.

Two files carry it, and this module reads both into the same Submission:
  - on the autograder, /autograder/submission_metadata.json (read_runner), one submission: "created_at", the
    assignment's "due_date" and "late_due_date", and "users", each with "name", "email", "sid" where the course
    records one and, for a student given an extension, an "assignment" of their own dates;
  - in an export of an assignment's submissions ("Export Submissions"), submission_metadata.yml (read_export):
    one key per submission folder (submission_123456), each with Ruby-style keys: `:submitters:` (a list of
    `:name:`, `:sid:`, `:email:`), `:created_at:` (a YAML timestamp) and more (`:score:`, `:results:`) that this
    module does not use.
Field names follow https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/ and the exports
Gradescope writes; a field missing from the file is empty (a name "", a date None), never guessed.

JSON is YAML, so one reader (PyYAML's safe loader) reads both: names with quotes (Conan O'Brien, written
'Conan O''Brien' in YAML), letters outside ASCII and group submissions come out as Gradescope wrote them. Ruby tags
an export may carry (!ruby/object:...) are read as the plain data under them; nothing in the file runs.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

RUNNER_FILE = "submission_metadata.json"  # /autograder/submission_metadata.json on Gradescope's runner
EXPORT_FILE = "submission_metadata.yml"  # at the top of an export of submissions
MAX_BYTES = 64 << 20  # a metadata file larger than this is refused (an export of a whole course is a few MiB)


class MetadataError(ValueError):
    """A metadata file cannot be read: the message names the file and what is wrong with it."""


@dataclass(frozen=True)
class Person:
    """One submitter. due and late_due: their own dates where Gradescope gave them an extension, else None."""

    name: str = ""
    sid: str = ""
    email: str = ""
    due: dt.datetime | None = None
    late_due: dt.datetime | None = None


@dataclass(frozen=True)
class Submission:
    """One submission: when it was made (created_at, timezone-aware), by whom (people: several for a group), and
    the assignment's due dates (due, late_due) where the file gives them. key: the export's folder name, "" on the
    runner."""

    key: str = ""
    created_at: dt.datetime | None = None
    people: tuple = ()
    due: dt.datetime | None = None
    late_due: dt.datetime | None = None
    notes: tuple = field(default=(), compare=False)  # what was odd in the file (a date that is not one), for people

    @property
    def name(self) -> str:
        """The submitters' names, joined with "; " for a group."""
        return "; ".join(p.name for p in self.people if p.name)

    @property
    def sid(self) -> str:
        return "; ".join(p.sid for p in self.people if p.sid)

    @property
    def email(self) -> str:
        return "; ".join(p.email for p in self.people if p.email)

    def own_dates(self) -> tuple:
        """(due, late_due) of the submitters' own extension: the latest personal due date among them (a group is
        due when its most extended member is), or (None, None) when nobody has dates of their own."""
        dues = [p for p in self.people if p.due is not None]
        if not dues:
            return None, None
        person = max(dues, key=lambda p: p.due)
        return person.due, person.late_due


# ---- reading ----

class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, which also reads an unknown tag (Ruby's !ruby/object:..., !ruby/hash:...) as the
    plain mapping, list or text under it."""


def _untagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Loader.add_multi_constructor("!", _untagged)
_Loader.add_multi_constructor("tag:", _untagged)


def load(path) -> object:
    """The parsed content of a YAML or JSON file at path. MetadataError when it is missing, too large, not text or
    not valid YAML (the message gives the line)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise MetadataError(f"{path}: {size >> 20} MiB, more than the {MAX_BYTES >> 20} MiB a metadata file may "
                                f"be; is it the right file?")
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise MetadataError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise MetadataError(f"{path}: not UTF-8 text (byte {e.start}); Gradescope writes UTF-8: is it the "
                            f"right file?") from None
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a safe loader: _Loader derives from SafeLoader)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        problem = getattr(e, "problem", None) or str(e)
        raise MetadataError(f"{path}: not valid YAML{at}: {problem}") from None


def parse_time(value) -> dt.datetime | None:
    """A timezone-aware datetime from a metadata date: a YAML timestamp (already a datetime), or ISO 8601 text
    ("2018-07-01T14:22:32.365935-07:00", "2026-04-26 17:34:00.861687000 Z"). None for an empty value. A date
    without a timezone is taken as UTC, which is what Gradescope's servers write. ValueError for anything else."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        when = value
    elif isinstance(value, str):
        text = re.sub(r"\s+(Z|[+-]\d\d(?::?\d\d)?)$", r"\1", value.strip())  # Ruby: "... 17:34:00 -07:00"
        head, dot, rest = text.partition(".")
        if dot:  # Python reads at most 6 digits of a fraction; Ruby writes 9
            digits = len(rest) - len(rest.lstrip("0123456789"))
            rest = rest[:min(digits, 6)] + rest[digits:]
            text = f"{head}.{rest}"
        try:
            when = dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{value!r} is not a date and time (expected ISO 8601, like "
                             f"2026-12-01T23:59:00-05:00)") from None
    else:
        raise ValueError(f"{value!r} is not a date and time")
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def _text(value) -> str:
    """A field as text: numbers (an sid YAML read as an integer) in their plain form, nothing for null."""
    if value is None or isinstance(value, (dict, list)):
        return ""
    return str(value).strip()


def _field(table: dict, name: str):
    """table[name], or the export's Ruby-symbol spelling table[":" + name]."""
    if not isinstance(table, dict):
        return None
    return table[name] if name in table else table.get(":" + name)


def _time(table: dict, name: str, notes: list, where: str) -> dt.datetime | None:
    try:
        return parse_time(_field(table, name))
    except ValueError as e:
        notes.append(f"{where}{name}: {e}; taken as not given")
        return None


def _people(raw, notes: list, where: str) -> tuple:
    people = []
    for k, entry in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(entry, dict):
            continue
        own = _field(entry, "assignment")
        at = f"{where}users[{k}].assignment."
        people.append(Person(name=_text(_field(entry, "name")), sid=_text(_field(entry, "sid")),
                             email=_text(_field(entry, "email")),
                             due=_time(own, "due_date", notes, at) if isinstance(own, dict) else None,
                             late_due=_time(own, "late_due_date", notes, at) if isinstance(own, dict) else None))
    return tuple(people)


def submission_from(data: dict, key: str = "", where: str = "") -> Submission:
    """A Submission from one submission's table, in either file's spelling (created_at or :created_at:, users or
    :submitters:, the assignment's dates under "assignment" or at the top)."""
    notes = []
    assignment = _field(data, "assignment")
    dates = assignment if isinstance(assignment, dict) else data
    people_raw = _field(data, "users")
    if people_raw is None:
        people_raw = _field(data, "submitters")
    return Submission(key=key, created_at=_time(data, "created_at", notes, where),
                      people=_people(people_raw, notes, where),
                      due=_time(dates, "due_date", notes, where + ("assignment." if dates is assignment else "")),
                      late_due=_time(dates, "late_due_date", notes,
                                     where + ("assignment." if dates is assignment else "")),
                      notes=tuple(notes))


def read_runner(path) -> Submission:
    """The submission being graded, from the runner's submission_metadata.json; MetadataError when the file cannot
    be read or is not a table."""
    data = load(path)
    if not isinstance(data, dict):
        raise MetadataError(f"{path}: expected a table of the submission's fields, got {type(data).__name__}")
    return submission_from(data)


def read_export(path) -> dict:
    """{submission folder: Submission} from an export's submission_metadata.yml; MetadataError when it cannot be
    read or is not a table of submissions. An entry that is not a table is left out (and named in no Submission)."""
    data = load(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise MetadataError(f"{path}: expected one entry per submission folder (submission_123456: ...), got "
                            f"{type(data).__name__}")
    return {str(key): submission_from(entry, str(key), f"{key}: ") for key, entry in data.items()
            if isinstance(entry, dict)}
