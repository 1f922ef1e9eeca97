"""`make handouts`: render handouts/*.md to standalone HTML in build/handouts/ with pandoc (and to PDF where LaTeX is
installed).

    handouts/README.md      -> build/handouts/index.html
    handouts/NN-stage.md    -> build/handouts/NN-stage.html   (and NN-stage.pdf with xelatex or pdflatex)

The pages are read as GitHub Markdown (what the handouts are written in and how GitHub shows them). Links between
handouts are turned into links between the rendered pages; links to other files of the kit are rewritten so that
they still resolve from build/handouts/; handouts/style.css and handouts/figures/ are copied next to the pages, so
the folder works when opened from disk. Each page gets a small navigation bar (index, previous, next).

Needs pandoc (Debian and Ubuntu: `apt-get install pandoc`); without it this says so and exits with status 1.
PDFs need a LaTeX engine and rsvg-convert (for the SVG figures); without them they are skipped, saying so.
"""
import argparse
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from grader.patterns import KIT

HANDOUTS = KIT / "handouts"
COPIED = ("style.css", "figures")  # what goes next to the pages, as it is in handouts/


def pages() -> list:
    """(source, output stem) for the index and every handout, in ladder order."""
    found = [(HANDOUTS / "README.md", "index")]
    found += [(p, p.stem) for p in sorted(HANDOUTS.glob("[0-9][0-9]-*.md"))]
    return found


def rewrite_target(url: str, source: Path, out_dir: Path, stems: dict, ext: str) -> str:
    """A link or image target of `source` as seen from a page in out_dir."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path:  # http:, mailto:, or a #fragment of this page
        return url
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    target = (source.parent / parts.path).resolve()
    if target in stems:
        return stems[target] + ext + fragment
    try:
        inside = target.relative_to(HANDOUTS)
    except ValueError:
        inside = None
    if inside is not None and inside.parts and inside.parts[0] in COPIED:
        return inside.as_posix() + fragment
    return Path(os.path.relpath(target, out_dir)).as_posix() + fragment


def walk(node, fix):
    """Rewrite the targets of every Link and Image in a pandoc JSON AST (pandoc 2.x: [attr, inlines, [url, title]])."""
    if isinstance(node, dict):
        if node.get("t") in ("Link", "Image"):
            target = node["c"][2]
            target[0] = fix(target[0])
        for value in node.values():
            walk(value, fix)
    elif isinstance(node, list):
        for item in node:
            walk(item, fix)


def mark_figures(node):
    """An image alone in its paragraph is a figure: class "figure" (see style.css), and a link to the full-size SVG."""
    if isinstance(node, dict):
        if node.get("t") in ("Para", "Plain") and len(node["c"]) == 1 and node["c"][0]["t"] == "Image":
            image = node["c"][0]
            image["c"][0][1].append("figure")
            node["c"] = [{"t": "Link", "c": [["", [], []], [image], [image["c"][2][0], ""]]}]
            return
        for value in node.values():
            mark_figures(value)
    elif isinstance(node, list):
        for item in node:
            mark_figures(item)


def first_heading(ast) -> str:
    """The text of the first level-1 heading, for the page title."""
    def text(inlines):
        out = []
        for i in inlines:
            if i["t"] == "Str":
                out.append(i["c"])
            elif i["t"] in ("Space", "SoftBreak"):
                out.append(" ")
            elif i["t"] == "Code":
                out.append(i["c"][1])
            elif i["t"] in ("Emph", "Strong"):
                out.append(text(i["c"]))
            elif i["t"] == "Link":
                out.append(text(i["c"][1]))
        return "".join(out)
    for block in ast["blocks"]:
        if block["t"] == "Header" and block["c"][0] == 1:
            return text(block["c"][2])
    return "Parallel Patterns Lab"


def nav(index: int, all_pages: list, titles: list) -> str:
    """Index, previous and next links for page `index`."""
    links = ['<a href="index.html">All handouts</a>'] if index else []
    if index > 1:
        prev = index - 1
        links.append(f'<a class="prev" href="{all_pages[prev][1]}.html">&larr; {html.escape(titles[prev])}</a>')
    if index + 1 < len(all_pages):
        after = index + 1
        links.append(f'<a class="next" href="{all_pages[after][1]}.html">{html.escape(titles[after])} &rarr;</a>')
    return '<nav class="handouts">' + "".join(links) + "</nav>\n"


def pandoc_run(pandoc: str, args: list, stdin: str = None) -> str:
    proc = subprocess.run([pandoc] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pandoc {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def pdf_tools() -> tuple:
    """(LaTeX engine or None, why PDFs are skipped or None)."""
    engine = next((e for e in ("xelatex", "pdflatex") if shutil.which(e)), None)
    if engine is None:
        return None, "no LaTeX engine (xelatex or pdflatex) here: PDFs skipped, HTML only"
    if not shutil.which("rsvg-convert"):
        return None, (f"{engine} is here but rsvg-convert is not (the figures are SVG; Debian: "
                      f"apt-get install librsvg2-bin): PDFs skipped, HTML only")
    return engine, None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=KIT / "build" / "handouts", help="default: build/handouts")
    parser.add_argument("--no-pdf", action="store_true", help="HTML only, even where LaTeX is installed")
    args = parser.parse_args(argv)
    pandoc = os.environ.get("PANDOC", "pandoc")
    if not shutil.which(pandoc):
        print(f"make handouts needs pandoc, and `{pandoc}` is not installed here.\n"
              "Install it: `apt-get install pandoc` (Debian, Ubuntu), `brew install pandoc` (macOS), "
              "or see https://pandoc.org/installing.html", file=sys.stderr)
        return 1
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        src, dst = HANDOUTS / name, out / name
        if src.is_dir():
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
        else:
            shutil.copyfile(src, dst)
    all_pages = pages()
    stems = {src.resolve(): stem for src, stem in all_pages}
    asts = [json.loads(pandoc_run(pandoc, ["-f", "gfm", "-t", "json", str(src)])) for src, _ in all_pages]
    titles = [first_heading(ast) for ast in asts]
    engine, no_pdf = (None, "--no-pdf given: PDFs skipped") if args.no_pdf else pdf_tools()
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, ((src, stem), ast) in enumerate(zip(all_pages, asts)):
            page = json.loads(json.dumps(ast))
            walk(page, lambda url: rewrite_target(url, src, out, stems, ".html"))
            mark_figures(page)
            before = Path(tmp) / f"{stem}.nav.html"
            before.write_text(nav(k, all_pages, titles))
            target = out / f"{stem}.html"
            pandoc_run(pandoc, ["-f", "json", "-t", "html5", "--standalone", "--css", "style.css",
                                "--metadata", f"pagetitle={titles[k]}", "--include-before-body", str(before),
                                "-o", str(target)], json.dumps(page))
            written.append(target)
        failed = []
        for (src, stem), ast in (zip(all_pages, asts) if engine else ()):
            page = json.loads(json.dumps(ast))
            walk(page, lambda url: rewrite_target(url, src, out, stems, ".pdf"))
            target = out / f"{stem}.pdf"
            try:
                pandoc_run(pandoc, ["-f", "json", "--standalone", f"--pdf-engine={engine}",
                                    "--resource-path", str(out), "-V", "geometry:margin=2cm",
                                    "-V", "colorlinks=true", "-o", str(target)], json.dumps(page))
                written.append(target)
            except RuntimeError as err:  # LaTeX's log is long: its end says what went wrong
                failed.append(f"{stem}.pdf:\n" + "\n".join(str(err).strip().splitlines()[-12:]))
    for path in written:
        print(f"wrote {os.path.relpath(path, KIT) if path.is_relative_to(KIT) else path}")
    if no_pdf:
        print(no_pdf)
    print(f"open {out / 'index.html'}")
    if failed:
        print("\n".join(failed), file=sys.stderr)
        print(f"the HTML is complete, but {len(failed)} PDF(s) failed with {engine} (above); "
              f"`make handouts PDF=no` skips PDFs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
