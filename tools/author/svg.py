"""The drawing basics of the handouts' figures (tools/author/figures.py, tools/author/ladder_figure.py): the colours,
and just enough SVG (rectangles, text, lines and arrows, paths) written as text, the same bytes on every run."""
from xml.sax.saxutils import escape

# Colours: readable in print, distinguishable without colour vision (light/dark and labels carry the meaning too).
INK = "#222222"
MUTED = "#8a8a8a"
LINE = "#555555"
CELL = "#ffffff"
STALE = "#f1f1f1"
ACTIVE = "#ffcf8a"
ACTIVE_EDGE = "#c46a00"
BUSY_WARP = "#dbe8f6"
OK = "#c9e8c4"
BAD = ["#ffe0b0", "#ffc27a", "#ff9a5c", "#f26b4a", "#d63a3a"]  # 2-, 4-, 8-, 16-, 32-way
SIZE_COLOURS = ["#3b6fb6", "#e08a1e", "#5aa469", "#9c5fb5"]
STATUS_FILL = {"X": "#e6e6e6", "A": "#ffd98a", "P": "#9fd49a"}
STATUS_EDGE = {"X": "#9a9a9a", "A": "#c48a00", "P": "#3c8a36"}


def num(v: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros: the same text on every run."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


class Svg:
    """Just enough SVG: rectangles, text, lines and arrows, paths; rendered as text."""

    def __init__(self, width: float, height: float, title: str, desc: str):
        self.width, self.height, self.title, self.desc = width, height, title, desc
        self.items = []

    def rect(self, x, y, w, h, fill=CELL, stroke=LINE, width=1.0, rx=0, dash=None, opacity=None):
        extra = f' rx="{num(rx)}"' if rx else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        extra += f' fill-opacity="{num(opacity)}"' if opacity is not None else ""
        self.items.append(f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" fill="{fill}" '
                          f'stroke="{stroke}" stroke-width="{num(width)}"{extra}/>')

    def text(self, x, y, s, size=13, anchor="middle", weight=None, fill=INK, mono=False, italic=False, halo=False):
        extra = ' font-weight="bold"' if weight == "bold" else ""
        extra += ' stroke="#ffffff" stroke-width="3" paint-order="stroke"' if halo else ""
        extra += ' font-style="italic"' if italic else ""
        extra += ' class="mono"' if mono else ""
        self.items.append(f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}" text-anchor="{anchor}" '
                          f'fill="{fill}"{extra}>{escape(s)}</text>')

    def line(self, x1, y1, x2, y2, stroke=LINE, width=1.2, arrow=False, dash=None):
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" stroke="{stroke}" '
                          f'stroke-width="{num(width)}"{extra}/>')

    def path(self, d, stroke=LINE, width=1.2, fill="none", arrow=False):
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        self.items.append(f'<path d="{d}" stroke="{stroke}" stroke-width="{num(width)}" fill="{fill}"{extra}/>')

    def render(self) -> str:
        head = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(self.width)}" height="{num(self.height)}" '
            f'viewBox="0 0 {num(self.width)} {num(self.height)}" role="img">',
            f"<title>{escape(self.title)}</title>",
            f"<desc>{escape(self.desc)}</desc>",
            "<!-- drawn by tools/author/figures.py (make figures); do not edit by hand -->",
            "<style>text { font-family: 'DejaVu Sans', 'Helvetica Neue', Helvetica, Arial, sans-serif; } "
            ".mono { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; }</style>",
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{LINE}"/></marker></defs>',
            f'<rect x="0" y="0" width="{num(self.width)}" height="{num(self.height)}" fill="#ffffff"/>',
        ]
        return "\n".join(head + self.items + ["</svg>"]) + "\n"
