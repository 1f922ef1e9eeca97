"""grader/intake.py: the students of an export, safe unpacking, each lab's file picked out of an upload."""
import io
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

from grader import intake
from grader.config import load_config
from tests.grader.fakes import SMALL_TOML, write_file


def make_zip(path, files: dict, links: dict = None) -> Path:
    """A zip of files {name: text}; links {name: target} are stored as symbolic links (Unix mode bits)."""
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            z.writestr(info, target)
    return Path(path)


def make_tar(path, files: dict, mode="w:gz", extra=()) -> Path:
    """A tar of files {name: text}, plus extra TarInfo members (links, devices) with no data."""
    with tarfile.open(path, mode) as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra:
            tar.addfile(info)
    return Path(path)


class Temp(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.config = load_config(write_file(self.dir, "cfg/labs.toml", SMALL_TOML))
        self.labs = list(self.config.labs)

    def gather(self, path, kind=None, limits=intake.Limits()):
        kind = kind or ("folder" if Path(path).is_dir() else "archive")
        entry = intake.Entry(intake.student_id(Path(path).name), str(path), kind)
        return intake.gather(entry, self.labs, self.dir / "out" / entry.student, limits)


class Entries(Temp):
    def test_ids_from_names(self):
        self.assertEqual(intake.student_id("alice.tar.gz"), "alice")
        self.assertEqual(intake.student_id("Bob Smith (late).zip"), "Bob_Smith__late_")
        self.assertEqual(intake.student_id("lab-ppl-carol", "lab-ppl-"), "carol")
        self.assertEqual(intake.student_id("..hidden.zip"), "hidden")
        self.assertEqual(intake.archive_suffix("x.TGZ"), ".tgz")
        self.assertEqual(intake.archive_suffix("x.cu"), "")

    def test_folders_and_archives_with_gradescope_metadata(self):
        up = self.dir / "export"
        write_file(up, "submission_101/03.cu", "x")
        make_zip(up / "submission_102.zip", {"a.cu": "x"})
        write_file(up, "notes.txt", "not an upload")
        write_file(up, ".DS_Store", "")
        write_file(up, "submission_metadata.yml", """\
submission_101:
  :submitters:
  - :name: Ada Lovelace
    :sid: '123'
    :email: ada@example.edu
  :created_at: 2026-01-01 10:00:00.000000000 -08:00
submission_102:
  :submitters:
  - :name: "Grace Hopper"
    :sid: '456'
    :email: grace@example.edu
  - :name: Alan Turing
    :sid: '789'
    :email: alan@example.edu
""")
        entries, notes = intake.find_entries(up)
        self.assertEqual([(e.student, e.kind, e.name, e.sid) for e in entries], [
            ("submission_101", "folder", "Ada Lovelace", "123"),
            ("submission_102", "archive", "Grace Hopper; Alan Turing", "456; 789")])
        self.assertEqual(entries[1].email, "grace@example.edu; alan@example.edu")
        self.assertEqual(notes, ["left out notes.txt: neither a folder nor an archive"])

    def test_an_exports_single_top_folder_is_looked_into(self):
        write_file(self.dir, "dl/assignment_9_export/alice/labs/01-first/reduce.cu", "x")
        make_zip(self.dir / "dl/assignment_9_export/bob.zip", {"01-first/reduce.cu": "x"})
        entries, _ = intake.find_entries(self.dir / "dl")
        self.assertEqual([e.student for e in entries], ["alice", "bob"])

    def test_one_students_folder_is_not_taken_for_the_export(self):
        write_file(self.dir, "dl/alice/labs/01-first/reduce.cu", "x")
        write_file(self.dir, "dl/alice/README.md", "x")
        entries, _ = intake.find_entries(self.dir / "dl")
        self.assertEqual([e.student for e in entries], ["alice"])

    def test_clashing_ids_keep_their_whole_names(self):
        write_file(self.dir, "up/alice/01-first.cu", "x")
        make_zip(self.dir / "up/alice.zip", {"01-first.cu": "y"})
        entries, _ = intake.find_entries(self.dir / "up")
        self.assertEqual(sorted(e.student for e in entries), ["alice", "alice.zip"])


class SafeUnpacking(Temp):
    def test_traversal_absolute_and_links_are_left_out(self):
        z = make_zip(self.dir / "evil.zip", {"../../escape.cu": "x", "/abs/path.cu": "x", "ok/01-first.cu": "ok",
                                             "C:/win.cu": "x"}, links={"01-first/reduce.cu": "/etc/passwd"})
        got = self.gather(z)
        self.assertEqual(got.found, ["01-first"])
        self.assertEqual((got.submission / "01-first" / "reduce.cu").read_text(), "ok")
        self.assertFalse((self.dir / "escape.cu").exists())
        self.assertFalse((self.dir / "out" / "escape.cu").exists())
        text = "\n".join(got.problems)
        self.assertIn("unsafe path", text)
        self.assertIn("../../escape.cu", text)
        self.assertIn("link or special file", text)
        self.assertEqual([p for p in (self.dir / "out").rglob("*") if p.is_symlink()], [])

    def test_tar_links_devices_and_traversal(self):
        link = tarfile.TarInfo("01-first/reduce.cu")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        hard = tarfile.TarInfo("02-second/reduce.cu")
        hard.type, hard.linkname = tarfile.LNKTYPE, "../../../etc/passwd"
        dev = tarfile.TarInfo("dev.cu")
        dev.type = tarfile.CHRTYPE
        t = make_tar(self.dir / "evil.tar.gz", {"../up.cu": "x", "02-second.cu": "real"}, extra=(link, hard, dev))
        got = self.gather(t)
        self.assertEqual(got.found, ["02-second"])
        self.assertEqual((got.submission / "02-second" / "reduce.cu").read_text(), "real")
        self.assertIn("link or special file): 01-first/reduce.cu, 02-second/reduce.cu, dev.cu",
                      "\n".join(got.problems))
        self.assertFalse((self.dir / "up.cu").exists())

    def test_a_folder_upload_refuses_links(self):
        write_file(self.dir, "up/alice/01-first/real.cu", "x")
        (self.dir / "up/alice/02-second").mkdir()
        (self.dir / "up/alice/02-second/reduce.cu").symlink_to("/etc/hostname")
        (self.dir / "up/alice/linked").symlink_to(self.dir / "cfg", target_is_directory=True)
        got = self.gather(self.dir / "up/alice")
        self.assertNotIn("02-second", got.found)
        self.assertIn("link or special file): 02-second/reduce.cu", "\n".join(got.problems))

    def test_size_limits(self):
        limits = intake.Limits(max_file_bytes=1000, max_total_bytes=1500)
        big = make_zip(self.dir / "big.zip", {"01-first/reduce.cu": "x" * 2000, "02-second/reduce.cu": "ok"})
        got = self.gather(big, limits=limits)
        self.assertEqual(got.found, ["02-second"])
        self.assertIn("too large", "\n".join(got.problems))
        many = make_zip(self.dir / "many.zip", {f"{k:02d}-first/reduce.cu": "x" * 900 for k in range(2)})
        with self.assertRaisesRegex(intake.IntakeError, "unpacks to more than"):
            self.gather(many, limits=limits)
        self.assertEqual([p for p in (self.dir / "out/many").rglob("*.cu")], [])

    def test_a_tar_that_declares_too_much_is_refused_before_reading_it(self):
        t = make_tar(self.dir / "huge.tar", {"a.txt": "x" * 5000, "01-first/reduce.cu": "x"}, mode="w")
        with self.assertRaisesRegex(intake.IntakeError, "declares more than"):
            self.gather(t, limits=intake.Limits(max_scanned_bytes=4000))

    def test_too_many_members(self):
        z = make_zip(self.dir / "lots.zip", {f"f{k}.txt": "" for k in range(30)})
        with self.assertRaisesRegex(intake.IntakeError, "30 entries"):
            self.gather(z, limits=intake.Limits(max_members=20))

    def test_broken_archives(self):
        (self.dir / "garbage.zip").write_text("not a zip at all")
        with self.assertRaisesRegex(intake.IntakeError, "garbage.zip is not a zip or tar archive"):
            self.gather(self.dir / "garbage.zip")
        data = make_zip(self.dir / "whole.zip", {"01-first/reduce.cu": "x" * 5000}).read_bytes()
        (self.dir / "cut.zip").write_bytes(data[:len(data) // 2])
        with self.assertRaises(intake.IntakeError):
            self.gather(self.dir / "cut.zip")
        tgz = make_tar(self.dir / "whole.tar.gz", {"01-first/reduce.cu": "y" * 100000}).read_bytes()
        (self.dir / "cut.tar.gz").write_bytes(tgz[:len(tgz) // 2])
        with self.assertRaisesRegex(intake.IntakeError, "cut.tar.gz"):
            self.gather(self.dir / "cut.tar.gz")

    def test_an_archive_told_by_its_content_not_its_name(self):
        t = make_tar(self.dir / "alice.zip", {"01-first/reduce.cu": "tar inside"})
        self.assertEqual(self.gather(t).found, ["01-first"])


class Layouts(Temp):
    def test_one_top_folder_and_a_kit_copy(self):
        z = make_zip(self.dir / "bob.zip", {"bob-repo/labs/01-first/reduce.cu": "one",
                                            "bob-repo/labs/01-first/build/old.cu": "stale",
                                            "bob-repo/README.md": "x", "bob-repo/.git/x.cu": "git"})
        got = self.gather(z)
        self.assertEqual(got.found, ["01-first"])
        self.assertEqual((got.submission / "01-first" / "reduce.cu").read_text(), "one")
        self.assertIn("01-first/reduce.cu <- bob-repo/labs/01-first/reduce.cu", "\n".join(got.notes))
        self.assertIn("02-second: no file found", "\n".join(got.notes))

    def test_loose_files_and_a_nested_archive(self):
        write_file(self.dir, "up/carol/01-first.cu", "loose")
        make_zip(self.dir / "up/carol/upload.zip", {"02-second/reduce.cu": "nested"})
        got = self.gather(self.dir / "up/carol")
        self.assertEqual(got.found, ["01-first", "02-second"])
        self.assertEqual((got.submission / "02-second" / "reduce.cu").read_text(), "nested")
        self.assertIn("upload.zip/02-second/reduce.cu", "\n".join(got.notes))
        self.assertFalse((self.dir / "out/carol/staged").exists())

    def test_an_archive_inside_a_nested_archive_is_not_unpacked(self):
        inner = make_zip(self.dir / "inner.zip", {"01-first/reduce.cu": "deep"}).read_bytes()
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("inner.zip", inner)
        write_file(self.dir, "up/dan/x", "")
        (self.dir / "up/dan/outer.zip").write_bytes(buf.getvalue())
        got = self.gather(self.dir / "up/dan")
        self.assertEqual(got.found, [])
        self.assertEqual(got.problems[0], "no lab file found in the upload")

    def test_files_hash_follows_the_graded_files_only(self):
        write_file(self.dir, "a/01-first/reduce.cu", "x")
        write_file(self.dir, "b/01-first/reduce.cu", "x")
        write_file(self.dir, "b/01-first/notes.txt", "not graded")
        self.assertEqual(intake.files_hash(self.dir / "a", self.labs), intake.files_hash(self.dir / "b", self.labs))
        write_file(self.dir, "b/02-second/reduce.cu", "")
        self.assertNotEqual(intake.files_hash(self.dir / "a", self.labs),
                            intake.files_hash(self.dir / "b", self.labs))


if __name__ == "__main__":
    unittest.main()
