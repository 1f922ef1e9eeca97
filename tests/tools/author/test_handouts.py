"""The handouts: every relative link and image resolves, the committed figures are exactly what tools/author/figures.py
draws, and `make handouts` gives pages whose images and local links resolve (skipped, saying so, without pandoc)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from grader.config import load_config
from grader.patterns import KIT
from tools.author import figures, ladder_figure

HANDOUTS = KIT / "handouts"
FIGURES = HANDOUTS / "figures"


def markdown_files() -> list:
    """The handouts, the lab READMEs (which link the handouts), the kit README and the design notes."""
    files = sorted(HANDOUTS.glob("*.md"))
    for root in ("labs", "solutions"):
        files += sorted((KIT / root).glob("[0-9][0-9]-*/README.md"))
    return files + [KIT / "README.md"] + sorted((KIT / "docs").glob("*.md"))


def prose(text: str) -> str:
    """The Markdown without code: fenced blocks, indented blocks and `code spans` removed."""
    out, fenced, previous_blank, in_code = [], False, True, False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        indented = line.startswith("    ") or line.startswith("\t")
        in_code = indented and (previous_blank or in_code)
        if not fenced and not in_code:
            out.append(line)
        previous_blank = not line.strip()
    return re.sub(r"`[^`]*`", "", "\n".join(out))


def closing(text: str, start: int, open_char: str, close_char: str) -> int:
    """Index of the bracket closing the one at text[start], counting nesting; -1 if none."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_char:
            depth += 1
        elif text[i] == close_char:
            depth -= 1
            if depth == 0:
                return i
    return -1


def links(text: str) -> list:
    """(is image, text or alt, target) of every inline link and image: [text](target), ![alt](target "title")."""
    text, found, i = prose(text), [], 0
    while True:
        i = text.find("[", i)
        if i < 0:
            return found
        end = closing(text, i, "[", "]")
        if end > 0 and text[end + 1:end + 2] == "(":
            stop = closing(text, end + 1, "(", ")")
            if stop > 0:
                target = text[end + 2:stop].strip().split(" ")[0].strip("<>")
                found.append((i > 0 and text[i - 1] == "!", text[i + 1:end], target))
                i = stop
        i += 1


def github_slugs(markdown: str) -> set:
    """The anchors GitHub (and pandoc's gfm reader) give the headings of a Markdown file."""
    slugs = set()
    for line in prose(markdown).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
            slugs.add(slug)
    return slugs


def local(target: str) -> bool:
    parts = urlsplit(target)
    return not parts.scheme and not parts.netloc


class MarkdownLinks(unittest.TestCase):
    def test_every_relative_link_and_image_exists(self):
        for md in markdown_files():
            text = md.read_text()
            for is_image, _, target in links(text):
                if not local(target):
                    continue
                with self.subTest(file=str(md.relative_to(KIT)), target=target):
                    parts = urlsplit(target)
                    path = (md.parent / unquote(parts.path)).resolve() if parts.path else md
                    self.assertTrue(path.exists(), f"{md.relative_to(KIT)} links {target}, which does not exist")
                    if parts.fragment and path.suffix == ".md":
                        self.assertIn(parts.fragment, github_slugs(path.read_text()),
                                      f"{md.relative_to(KIT)} links {target}: no such heading in {path.name}")

    def test_lab_readmes_link_their_handout(self):
        for root in ("labs", "solutions"):
            for readme in sorted((KIT / root).glob("[0-9][0-9]-*/README.md")):
                with self.subTest(readme=str(readme.relative_to(KIT))):
                    targets = [t for _, _, t in links(readme.read_text())]
                    self.assertIn(f"../../handouts/{readme.parent.name}.md", targets,
                                  f"{readme.relative_to(KIT)} must link its own handout (a README copied from "
                                  f"another lab links that lab's: docs/AUTHORING.md, 'A new lab of an existing "
                                  f"pattern')")

    def test_images_have_alt_text_and_are_committed_figures(self):
        for md in sorted(HANDOUTS.glob("*.md")):
            for is_image, alt, target in links(md.read_text()):
                if is_image:
                    with self.subTest(file=md.name, image=target):
                        self.assertGreater(len(alt.split()), 5, "an image needs alt text that says what it shows")
                        self.assertTrue(target.startswith("figures/"), "figures live in handouts/figures/")

    def test_every_figure_is_shown_in_a_handout(self):
        shown = {t for md in HANDOUTS.glob("*.md") for is_image, _, t in links(md.read_text()) if is_image}
        for svg in sorted(FIGURES.glob("*.svg")):
            with self.subTest(figure=svg.name):
                self.assertIn(f"figures/{svg.name}", shown)

    def test_link_parser(self):
        text = ("See [a](x.md#b) and ![the tree (t % 2) with partial[t]](figures/t.svg \"title\").\n\n"
                "    [not](code.md)\n\nand `[nor](span.md)` but [yes](<y.md>).")
        self.assertEqual(links(text), [(False, "a", "x.md#b"),
                                       (True, "the tree (t % 2) with partial[t]", "figures/t.svg"),
                                       (False, "yes", "y.md")])
        self.assertEqual(github_slugs("# Lab 01: global-memory strided reduction\n## Check and grade"),
                         {"lab-01-global-memory-strided-reduction", "check-and-grade"})


class Figures(unittest.TestCase):
    def test_committed_figures_are_what_the_script_draws(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([sys.executable, "-m", "tools.author.figures", "--out", tmp], cwd=KIT,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(proc.returncode, 0, proc.stdout)
            drawn = sorted(p.name for p in Path(tmp).glob("*.svg"))
            self.assertEqual(drawn, sorted(p.name for p in FIGURES.glob("*.svg")),
                             "handouts/figures/ and tools/author/figures.py disagree on the figures: run `make figures`")
            for name in drawn:
                with self.subTest(figure=name):
                    same = (Path(tmp) / name).read_bytes() == (FIGURES / name).read_bytes()
                    self.assertTrue(same, f"handouts/figures/{name} is not what tools/author/figures.py draws: run "
                                          f"`make figures` and commit the result")

    def test_figures_are_svg_with_title_and_description(self):
        ns = "{http://www.w3.org/2000/svg}"
        for svg in sorted(FIGURES.glob("*.svg")):
            with self.subTest(figure=svg.name):
                root = ET.parse(svg).getroot()
                self.assertEqual(root.tag, f"{ns}svg")
                self.assertTrue(root.findtext(f"{ns}title"))
                self.assertGreater(len(root.findtext(f"{ns}desc").split()), 10)

    def test_bank_table(self):
        ways = [[figures.bank_access(words)[1] for _, _, words in rows] for _, _, rows in figures.bank_panels()]
        self.assertEqual(ways, [[1, 1, 1, 1, 1], [2, 4, 8, 16, 32], [1, 1, 1, 1, 1, 1]])
        self.assertEqual(figures.bank_access([0, 32, 32, 64])[1], 3, "the same word twice is a broadcast")

    def test_scans_and_trees(self):
        for n in (8, 16, 64):
            with self.subTest(n=n):
                ks, bk = figures.kogge_stone_steps(n), figures.brent_kung_steps(n)
                figures.run_scan(n, ks)
                figures.run_scan(n, bk)
                log2n = n.bit_length() - 1
                self.assertEqual(sum(len(ops) for _, ops in bk), 2 * n - 2 - log2n)
                self.assertEqual(sum(len(ops) for _, ops in ks), n * log2n - n + 1)
                for sequential in (False, True):
                    steps = figures.reduction_steps(n, sequential)
                    self.assertEqual(sum(len(ops) for _, ops in steps), n - 1)

    def test_lookback_stops_at_the_nearest_p(self):
        statuses, values = "PAAPAAAAA", [1, 2, 3, 6, 4, 5, 6, 7, 8]
        prefix, windows = figures.lookback_walk(statuses, values, 8, 2)
        self.assertEqual(prefix, 7 + 6 + 5 + 4 + 6)
        self.assertEqual([used for _, used, _ in windows], [[7, 6], [5, 4], [3]])


class LadderInputs(unittest.TestCase):
    """tools/author/figures.py --ladder reads what `make bench` writes: build/bench/ladder.md and ladder.jsonl."""

    def setUp(self):
        self.data = json.loads((FIGURES / "ladder.json").read_text())
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, text) -> Path:
        path = Path(self.tmp.name) / name
        path.write_text(text)
        return path

    def test_committed_data_covers_every_lab_at_both_sizes(self):
        labs = [lab.name for lab in load_config().labs]
        for n in ("2^26", "2^28"):
            self.assertEqual([r["lab"] for r in self.data["rows"] if r["n"] == n], labs,
                             f"handouts/figures/ladder.json must have a row for each lab of grader/labs.toml at {n}: "
                             f"measure the ladder on a GPU and redraw it (docs/AUTHORING.md, 'The ladder figure')")

    def test_markdown_table(self):
        lines = [f"Reference ladder on {self.data['device']} (sm 9.0); ratios from one process each.", "",
                 "| lab | n | x baseline | x CUB | % copy | solution ms | spread |", "|---|---|---|---|---|---|---|"]
        for r in self.data["rows"]:
            xb = "-" if r["x_baseline"] is None else f"{r['x_baseline']:.2f}"
            lines.append(f"| {r['lab']} | {r['n']} | {xb} | {r['x_cub']:.2f} | {r['pct_copy']} | 0.1000 | 1.0% |")
        got = ladder_figure.load_ladder(self.write("ladder.md", "\n".join(lines) + "\n"))
        self.assertEqual(got["device"], self.data["device"])
        self.assertEqual(got["rows"], self.data["rows"])
        ladder_figure.ladder_figure(got).render()

    def jsonl(self, rows) -> str:
        out = []
        for r in rows:
            line = {"case": "bench", "kind": "bench", "n": 1 << int(r["n"][2:]), "student_ms": 1.0,
                    "cub_ms": r["x_cub"], "copy_ms": r["pct_copy"] / 100, "device": self.data["device"], "sm": "9.0"}
            if r["x_baseline"] is not None:
                line.update(speedup=r["x_baseline"], student_gbps=100.0)
            else:
                line.update(speedup=r["x_cub"])
            out.append(json.dumps({"case": "plan", "kind": "plan", "cases": ["bench"]}))
            out.append(json.dumps(line))
        return "\n".join(out) + "\n"

    def rows_of_every_lab(self) -> list:
        """The committed rows, with a made-up one for a lab labs.toml has and the figure's data not yet (so that this
        parsing test does not fail for what test_committed_data_covers_every_lab_at_both_sizes reports)."""
        have = {(r["lab"], r["n"]): r for r in self.data["rows"]}
        return [have.get((lab.name, n), {"lab": lab.name, "n": n, "x_baseline": 1.0, "x_cub": 0.5, "pct_copy": 50})
                for n in ("2^26", "2^28") for lab in load_config().labs]

    def test_json_lines_in_the_order_bench_runs_them(self):
        rows = self.rows_of_every_lab()
        got = ladder_figure.load_ladder(self.write("ladder.jsonl", self.jsonl(rows)))
        self.assertEqual(got["rows"], rows)
        self.assertEqual(got["device"], self.data["device"])

    def test_json_lines_of_some_labs_only_are_refused(self):
        rows = [r for r in self.data["rows"] if r["lab"] != "04-unrolled"]
        with self.assertRaisesRegex(ValueError, "ladder.md"):
            ladder_figure.load_ladder(self.write("ladder.jsonl", self.jsonl(rows)))


class PageParser(HTMLParser):
    """The img sources, a hrefs and ids of one HTML page."""

    def __init__(self):
        super().__init__()
        self.images, self.hrefs, self.ids, self.alts = [], [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "img":
            self.images.append(attrs.get("src", ""))
            self.alts.append(attrs.get("alt", ""))
        elif tag == "a" and "href" in attrs:
            self.hrefs.append(attrs["href"])
        elif tag == "link" and attrs.get("rel") == "stylesheet":
            self.hrefs.append(attrs.get("href", ""))


def parse_page(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text())
    return parser


class MakeHandouts(unittest.TestCase):
    def test_without_pandoc_it_says_how_to_install_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([sys.executable, "-m", "tools.author.render_handouts", "--out", tmp], cwd=KIT,
                                  env=dict(os.environ, PANDOC=str(Path(tmp) / "no-pandoc-here")),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("apt-get install pandoc", proc.stderr)

    @unittest.skipUnless(shutil.which("pandoc"), "pandoc is not installed (apt-get install pandoc): "
                                                 "make handouts is not tested here")
    def test_pages_and_their_links(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "handouts"
            proc = subprocess.run(["make", "-s", "handouts", f"HANDOUTS_OUT={out}", "PDF=no"], cwd=KIT,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(proc.returncode, 0, proc.stdout)
            expected = ["index.html"] + [f"{lab.name}.html" for lab in load_config().labs]
            self.assertEqual(sorted(expected[1:]), [f"{md.stem}.html" for md in sorted(HANDOUTS.glob("[0-9][0-9]-*.md"))],
                             "each lab of grader/labs.toml has one handout, handouts/LAB.md, and no other handout is "
                             "named like a lab (docs/AUTHORING.md, 'A new lab of an existing pattern')")
            for name in expected:
                page = out / name
                self.assertTrue(page.exists(), f"make handouts wrote no {name}")
                parsed = parse_page(page)
                for src, alt in zip(parsed.images, parsed.alts):
                    with self.subTest(page=name, img=src):
                        self.assertTrue(local(src) and (page.parent / unquote(src)).is_file(), src)
                        self.assertTrue(alt)
                for href in parsed.hrefs:
                    if not local(href):
                        continue
                    with self.subTest(page=name, href=href):
                        parts = urlsplit(href)
                        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
                        self.assertTrue(target.exists(), f"{name} links {href}, which does not exist")
                        if parts.fragment and target.suffix == ".html":
                            self.assertIn(parts.fragment, parse_page(target).ids, f"{name} links {href}")
            shown = parse_page(out / "03-sequential.html").images
            self.assertIn("figures/reduce-tree-sequential.svg", shown)


if __name__ == "__main__":
    unittest.main()
