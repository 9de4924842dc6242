#!/usr/bin/env python3
"""Engrave MusicXML files with acapella, LilyPond and verovio, and put the
three printed pages side by side, with the figures a person compares them by.

  Tools/compare-engravers.py [--acapella PATH] [--out DIR] [--pages N] FILE…

For each FILE: DIR/NAME.png — acapella | LilyPond | verovio, each its A4
pages one under the other (the first N), at the same scale — and one line of
DIR/metrics.md: measures; pages, systems and measures a system in each; the
time each took (acapella: MusicXML → PDF; LilyPond: musicxml2ly + lilypond
→ PDF; verovio: load + layout + every page's SVG). All three print the
score as written (acapella's `engrave` does not write repeats out).

Systems are counted from what each prints: acapella says them; LilyPond
prints a bar number at the start of every system but the first (counted in
the PDF's text with pdftotext); verovio's SVG has one `g.system` each.

Needs Debian's lilypond, poppler-utils, librsvg2-bin and python3-pil, and
verovio from PyPI (Tools/requirements.txt; run with Tools/python-env's
Python). Development only: the box never runs Python.
"""
import argparse, glob, io, json, os, re, subprocess, sys, tempfile, time, zipfile

import verovio
from PIL import Image, ImageDraw

A4 = (2100, 2970)  # verovio's page in tenths of a millimetre


def run(command, **kwargs):
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)


def pdf_pages(pdf, prefix, dpi):
    run(["pdftoppm", "-r", str(dpi), "-png", pdf, prefix])
    return sorted(glob.glob(prefix + "-*.png"))


def page_count(pdf):
    info = run(["pdfinfo", pdf]).stdout
    return int(re.search(r"Pages:\s+(\d+)", info).group(1))


def acapella(path, work, binary, dpi):
    pdf = os.path.join(work, "acapella.pdf")
    start = time.perf_counter()
    said = run([binary, "engrave", path, "-o", pdf]).stdout
    seconds = time.perf_counter() - start
    systems = int(re.search(r"(\d+) systems?", said).group(1))
    return dict(pages=page_count(pdf), systems=systems, seconds=seconds, images=pdf_pages(pdf, os.path.join(work, "acapella"), dpi))


def lilypond(path, work, dpi):
    ly = os.path.join(work, "score.ly")
    # musicxml2ly reads UTF-8 only: the score handed over as such.
    xml = os.path.join(work, "score.xml")
    with open(xml, "w", encoding="utf-8") as f:
        text = score_text(path).lstrip("\ufeff")
        f.write(re.sub(r'(<\?xml[^>]*encoding=)["\'][^"\']*["\']', r'\1"UTF-8"', text, count=1))
    start = time.perf_counter()
    run(["musicxml2ly", "--output", ly, xml])
    run(["lilypond", "-dno-point-and-click", "--loglevel=ERROR", "-o", os.path.join(work, "lilypond"), ly])
    seconds = time.perf_counter() - start
    pdf = os.path.join(work, "lilypond.pdf")
    # A bar number over the start of every system but the first: figures
    # right-aligned at one x, the staves' left edge (the most common such
    # edge); a clef's small 8 and the time signatures' large figures are
    # left out by their size, page numbers by their place.
    ends = {}
    pattern = r'<word xMin="[\d.]+" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">\d+</word>'
    for word in re.finditer(pattern, run(["pdftotext", "-bbox", pdf, "-"]).stdout):
        if 5.5 < float(word.group(3)) - float(word.group(1)) < 12:
            key = round(float(word.group(2)))
            ends[key] = ends.get(key, 0) + 1
    numbers = max(ends.values(), default=0)
    return dict(pages=page_count(pdf), systems=numbers + 1, seconds=seconds, images=pdf_pages(pdf, os.path.join(work, "lilypond"), dpi))


def score_text(path):
    # verovio cannot detect UTF-16: hand it the score as text.
    data = open(path, "rb").read()
    if data[:2] == b"PK":
        archive = zipfile.ZipFile(io.BytesIO(data))
        container = archive.read("META-INF/container.xml").decode("utf-8", "replace")
        data = archive.read(re.search(r'full-path="([^"]+)"', container).group(1))
    return data.decode("utf-16") if data[:2] in (b"\xff\xfe", b"\xfe\xff") else data.decode("utf-8")


def verovio_pages(path, work, dpi):
    start = time.perf_counter()
    toolkit = verovio.toolkit()
    toolkit.setOptions({"inputFrom": "musicxml", "pageWidth": A4[0], "pageHeight": A4[1], "pageMarginLeft": 120, "pageMarginRight": 120,
                        "pageMarginTop": 120, "pageMarginBottom": 120, "adjustPageHeight": False})
    if not toolkit.loadData(score_text(path)):
        return None
    svgs = [toolkit.renderToSVG(page) for page in range(1, toolkit.getPageCount() + 1)]
    seconds = time.perf_counter() - start
    images = []
    for number, svg in enumerate(svgs, 1):
        name = os.path.join(work, f"verovio-{number}")
        with open(name + ".svg", "w") as f:
            f.write(svg)
        width = int(210 / 25.4 * dpi)
        run(["rsvg-convert", "-w", str(width), "-b", "white", "-o", name + ".png", name + ".svg"])
        images.append(name + ".png")
    systems = sum(svg.count('class="system"') for svg in svgs)
    return dict(pages=len(svgs), systems=systems, seconds=seconds, images=images)


def measures(path, binary):
    # As written: the number of the last measure (a pickup is measure 0).
    return json.loads(run([binary, "dump", "--json", "--no-unfold", path]).stdout)["measures"]


def side_by_side(columns, labels, out, pages):
    opened = [[Image.open(image).convert("RGB") for image in column[:pages]] for column in columns]
    width = max((image.width for column in opened for image in column), default=600)
    heights = [sum(image.height for image in column) for column in opened]
    sheet = Image.new("RGB", (width * len(columns) + 20 * (len(columns) - 1), max(heights, default=1) + 30), "white")
    draw = ImageDraw.Draw(sheet)
    for index, column in enumerate(opened):
        x = index * (width + 20)
        draw.text((x + 10, 8), labels[index], fill="black")
        y = 30
        for image in column:
            sheet.paste(image, (x, y))
            draw.rectangle([x, y, x + image.width - 1, y + image.height - 1], outline="#888")
            y += image.height
    sheet.save(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--acapella", default=".build/release/acapella")
    parser.add_argument("--out", default="/tmp/engravers")
    parser.add_argument("--pages", type=int, default=3, help="pages of each shown (all are counted)")
    parser.add_argument("--dpi", type=int, default=60)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for path in args.files:
        path = os.path.abspath(path)
        name = os.path.splitext(os.path.basename(path))[0]
        with tempfile.TemporaryDirectory() as work:
            ours = acapella(path, work, args.acapella, args.dpi)
            try:
                lily = lilypond(path, work, args.dpi)
            except subprocess.CalledProcessError as error:
                lily = None
                print(f"{name}: LilyPond failed: {error.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            theirs = verovio_pages(path, work, args.dpi)
            results = [ours, lily, theirs]
            side_by_side([r["images"] if r else [] for r in results], ["acapella", "LilyPond (musicxml2ly)", "verovio"],
                         os.path.join(args.out, name + ".png"), args.pages)
        count = measures(path, args.acapella)
        cells = [name, str(count)]
        for key in ("pages", "systems"):
            cells.append(" / ".join(str(r[key]) if r else "–" for r in results))
        cells.append(" / ".join(f"{count / r['systems']:.1f}" if r and count else "–" for r in results))
        cells.append(" / ".join(f"{r['seconds']:.2f}" if r else "–" for r in results))
        rows.append(cells)
        print(" | ".join(cells), flush=True)
    header = ["file", "measures", "pages (acapella / LilyPond / verovio)", "systems", "measures a system", "seconds"]
    with open(os.path.join(args.out, "metrics.md"), "w") as f:
        f.write("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n")
        for cells in rows:
            f.write("| " + " | ".join(cells) + " |\n")
    print(f"wrote {args.out}/metrics.md and one PNG a file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
