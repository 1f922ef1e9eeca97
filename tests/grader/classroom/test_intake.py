"""grader/classroom/intake.py and grader/intake/unpack.py: the students of an export and their ids, safe unpacking
(hostile archives: traversal, links, bombs, lying or huge headers), each lab's file picked out of an upload."""
import functools
import gzip
import io
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

from grader.intake import unpack
from grader.classroom import intake
from grader.config import load_config
from tests.grader.fakes import SMALL_TOML, write_file

BOMB_FILES, BOMB_FILE_BYTES = 25, 40 << 20  # inside the nested zip bomb: 1000 MiB of zeros, each file under the cap


@functools.cache
def nested_bomb() -> tuple:
    """(outer, inner): inner.zip holds BOMB_FILES .cu files of BOMB_FILE_BYTES zeros (1000 MiB in all, each file
    under the per-file cap, so that only the upload's total cap stops it) in about 1 MB; outer.zip holds inner.zip
    and a lab file: a nested zip bomb of about 1 MB."""
    zeros, inner = bytes(BOMB_FILE_BYTES), io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for k in range(BOMB_FILES):
            z.writestr(f"pad/{k:02d}.cu", zeros)
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("inner.zip", inner.getvalue())
        z.writestr("01-first/reduce.cu", "the real file")
    return outer.getvalue(), inner.getvalue()


def disk_bytes(folder) -> int:
    """The bytes of the files under folder (links not followed)."""
    return sum(p.lstat().st_size for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink())


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
  - :name: 'Conan O''Brien'
    :sid: '456'
    :email: grace@example.edu
  - :name: José Ñúñez
    :sid: '789'
    :email: alan@example.edu
""")
        entries, notes = intake.find_entries(up)
        self.assertEqual([(e.student, e.kind, e.name, e.sid) for e in entries], [
            ("submission_101", "folder", "Ada Lovelace", "123"),
            ("submission_102", "archive", "Conan O'Brien; José Ñúñez", "456; 789")])  # as written, not O''Brien
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

    def test_clashing_ids_get_a_number_and_a_note(self):
        write_file(self.dir, "up/alice/01-first.cu", "x")
        make_zip(self.dir / "up/alice.zip", {"01-first.cu": "y"})
        make_zip(self.dir / "up/Alice.tar.gz", {"01-first.cu": "z"})
        write_file(self.dir, "up/alice-2/01-first.cu", "taken already")
        entries, _ = intake.find_entries(self.dir / "up")
        got = {Path(e.path).name: e.student for e in entries}
        self.assertEqual(got, {"Alice.tar.gz": "Alice", "alice": "alice-3", "alice.zip": "alice-4",
                               "alice-2": "alice-2"})
        by_upload = {Path(e.path).name: e.note for e in entries}
        self.assertEqual(by_upload["alice.zip"], "uploads Alice.tar.gz, alice, alice.zip would share the id Alice: "
                                                 "this one (alice.zip) is alice-4")
        self.assertIn("this one (Alice.tar.gz) is Alice", by_upload["Alice.tar.gz"])
        self.assertEqual(by_upload["alice-2"], "")

    def test_ids_are_safe_folder_names(self):
        cases = {".": "student", "..": "student", "-rf": "rf", "--help.zip": "help", "_slurm": "_slurm",
                 "gradebook.csv.tmp": "gradebook.csv.tmp", "José Ñúñez.zip": "Jose_Nunez",
                 "李雷.tar.gz": "student", "a/b": "a_b", "@x": "x", "=HYPERLINK(1).zip": "_HYPERLINK_1_",
                 "x" * 300: "x" * intake.MAX_ID}
        for name, expected in cases.items():
            with self.subTest(name=name):
                self.assertEqual(intake.student_id(name), expected)
                self.assertRegex(intake.student_id(name), r"^[A-Za-z0-9_][A-Za-z0-9._@+-]*$")

    def test_hostile_upload_names_are_students_like_any_other(self):
        names = ["_slurm", "_slurm-student", "gradebook.csv.tmp", "gradebook.csv", "class.json", "-rf", "..zip",
                 "x" * 250, "Zoë", "Zoe", "李雷", "王芳"]
        for name in names:
            if name.startswith("."):
                continue
            write_file(self.dir / "up", f"{name}/01-first.cu", name)
        entries, notes = intake.find_entries(self.dir / "up")
        ids = [e.student for e in entries]
        self.assertEqual(len(ids), len(names) - 1)
        self.assertEqual(len({i.casefold() for i in ids}), len(ids))
        self.assertIn("rf", ids)
        self.assertIn("x" * intake.MAX_ID, ids)
        self.assertEqual(sorted(i for i in ids if i.startswith(("student", "Zo"))), ["Zoe", "Zoe-2", "student",
                                                                                      "student-2"])
        for e in entries:
            self.assertRegex(e.student, r"^[A-Za-z0-9_][A-Za-z0-9._@+-]{0,70}$")


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

    def test_a_tar_is_read_through_up_to_a_limit(self):
        t = make_tar(self.dir / "huge.tar", {"a.txt": "x" * 5000, "01-first/reduce.cu": "x"}, mode="w")
        with self.assertRaisesRegex(intake.IntakeError, "huge.tar holds more than 4000 bytes of data"):
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
        for mode in ("w", "w:bz2", "w:xz"):
            t = make_tar(self.dir / f"bob-{mode[-2:]}.tgz", {"02-second/reduce.cu": mode})
            self.assertEqual(self.gather(t).found, ["02-second"], mode)
        (self.dir / "text.tar.gz").write_bytes(gzip.compress(b"not a tar, only gzip"))
        with self.assertRaisesRegex(intake.IntakeError, "text.tar.gz is not a zip or tar archive"):
            self.gather(self.dir / "text.tar.gz")

    def test_a_nested_zip_bomb_stops_at_the_cap(self):
        """About 1 MB that would unpack to 1000 MiB: stopped at the upload's 200 MiB with a clear note; the rest of
        the upload is graded, and what is left on disk is far below the cap."""
        outer, _ = nested_bomb()
        self.assertLess(len(outer), 2 << 20)
        (self.dir / "bomb.zip").write_bytes(outer)
        got = self.gather(self.dir / "bomb.zip")
        self.assertEqual(got.found, ["01-first"])
        self.assertIn("could not unpack inner.zip: the upload unpacks to more than 200 MiB (the limit for one upload, "
                      "archives inside it included): unpacking stopped at inner.zip: pad/04.cu", got.problems)
        self.assertLess(disk_bytes(self.dir / "out"), 1 << 20)

    def test_zip_members_compressed_other_than_by_deflate_or_encrypted_are_left_out(self):
        path = self.dir / "odd.zip"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("01-first/reduce.cu", "bz2", compress_type=zipfile.ZIP_BZIP2)
            z.writestr("02-second/reduce.cu", "lzma", compress_type=zipfile.ZIP_LZMA)
        data = bytearray(path.read_bytes())
        got = self.gather(path)
        self.assertEqual(got.found, [])
        self.assertIn("odd.zip: left out (compressed other than by deflate): 01-first/reduce.cu, 02-second/reduce.cu",
                      got.problems)
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("01-first/reduce.cu", "x")
        data = bytearray(path.read_bytes())
        for at in (6, data.rfind(b"PK\x01\x02") + 8):  # the encryption flag, in the local and the central header
            data[at] |= 1
        path.write_bytes(bytes(data))
        self.assertIn("odd.zip: left out (encrypted): 01-first/reduce.cu", self.gather(path).problems)

    def test_a_zip_directory_is_checked_before_it_is_read(self):
        """The entry count and the size of a zip's listing come from its end record: a listing too large for
        max_members is refused before zipfile reads it into memory."""
        names = {f"{'d' * 900}/{k}.cu": "" for k in range(3)}
        z = make_zip(self.dir / "long.zip", names)
        with open(z, "rb") as f:
            entries, listing = unpack._zip_directory(f)
        self.assertEqual(entries, 3)
        self.assertGreater(listing, 3 * unpack.ZIP_DIRECTORY_BYTES)
        with self.assertRaisesRegex(intake.IntakeError, f"long.zip's list of entries takes {listing} bytes, more than "
                                                        f"1536 bytes"):
            self.gather(z, limits=intake.Limits(max_members=3))
        with self.assertRaisesRegex(intake.IntakeError, "long.zip lists 3 entries, more than 2"):
            self.gather(z, limits=intake.Limits(max_members=2))
        many = self.dir / "many.zip"  # more than 65535 entries: a zip64 end record
        with zipfile.ZipFile(many, "w") as zf:
            for k in range(65536):
                zf.writestr(f"{k}", b"")
        with open(many, "rb") as f:
            self.assertEqual(unpack._zip_directory(f)[0], 65536)
        with self.assertRaisesRegex(intake.IntakeError, "many.zip lists 65536 entries, more than 20000"):
            self.gather(many)

    def test_tar_headers_that_would_fill_memory_are_refused(self):
        """A pax header or a GNU long name claiming a gigabyte is refused before it is read; sparse files, whose maps
        tarfile reads whole, are refused."""
        for kind, fmt in ((tarfile.XHDTYPE, tarfile.PAX_FORMAT), (tarfile.GNUTYPE_LONGNAME, tarfile.GNU_FORMAT)):
            info = tarfile.TarInfo("././@LongHeader")
            info.type, info.size = kind, 1 << 30
            path = self.dir / f"header-{kind.decode()}.tar"
            path.write_bytes(info.tobuf(fmt) + bytes(4096))
            with self.subTest(kind=kind), self.assertRaisesRegex(intake.IntakeError, "header is larger than 1 MiB"):
                self.gather(path)
        sparse = tarfile.TarInfo("01-first/reduce.cu")
        sparse.type = tarfile.GNUTYPE_SPARSE
        (self.dir / "sparse.tar").write_bytes(sparse.tobuf(tarfile.GNU_FORMAT) + bytes(1024))
        with self.assertRaisesRegex(intake.IntakeError, "sparse.tar holds a sparse file"):
            self.gather(self.dir / "sparse.tar")
        pax = tarfile.TarInfo("01-first/reduce.cu")
        pax.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.realsize": "10"}
        pax.size = 512
        (self.dir / "pax-sparse.tar").write_bytes(pax.tobuf(tarfile.PAX_FORMAT) + b"99999999999\n" + bytes(2048))
        with self.assertRaisesRegex(intake.IntakeError, "pax-sparse.tar holds a sparse file"):
            self.gather(self.dir / "pax-sparse.tar")

    def test_names_with_control_characters_or_too_deep_are_unsafe(self):
        deep = "/".join(["d"] * (unpack.MAX_PARTS + 1)) + "/01-first.cu"
        z = make_zip(self.dir / "names.zip", {"01-first\n=cmd.cu": "x", deep: "x", "02-second.cu": "ok"})
        got = self.gather(z)
        self.assertEqual(got.found, ["02-second"])
        self.assertIn("unsafe path", "\n".join(got.problems))
        for name in ("a\rb.cu", "x" * (unpack.MAX_PATH + 1), "/etc/x.cu", "a/../../b.cu", "C:\\x.cu"):
            self.assertIsNone(unpack.safe_relpath(name), name)
        self.assertEqual(unpack.safe_relpath("./a//b/./c.cu"), Path("a/b/c.cu"))

    def test_a_folder_upload_with_too_many_files(self):
        for k in range(30):
            write_file(self.dir, f"up/many/f{k}.txt", "")
        with self.assertRaisesRegex(intake.IntakeError, "many holds more than 20 files"):
            self.gather(self.dir / "up/many", limits=intake.Limits(max_members=20))


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
