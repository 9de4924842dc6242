#!/usr/bin/env python3
"""Render MusicXML files with acapella's engraver and with verovio, side by
side, as PNG through headless Chromium, for looking at them together.

  Tools/compare-verovio.py [--acapella PATH] [--out DIR] FILE…

For each FILE: DIR/NAME.acapella.png (acapella engrave, Bravura embedded in
the SVG so Chromium draws the real glyphs) and DIR/NAME.verovio.png (verovio's
first page, its own Bravura), and DIR/index.html with both. Needs `pip install
verovio` and Debian's `chromium`. Development only.
"""
import argparse, html, os, subprocess, sys, tempfile

import verovio


def screenshot(svg_path, png_path, width):
    # A page that shows the SVG at a fixed width, white behind it.
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as page:
        page.write(f'<html><body style="margin:0;background:#fff"><img src="file://{svg_path}" style="width:{width}px"></body></html>')
    try:
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={width},{int(width * 1.414)}", f"--screenshot={png_path}", f"file://{page.name}"],
                       check=True, capture_output=True, timeout=120)
    finally:
        os.unlink(page.name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--acapella", default=".build/release/acapella")
    parser.add_argument("--out", default="/tmp/engraving-comparison")
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for path in args.files:
        name = os.path.splitext(os.path.basename(path))[0]
        ours_svg = os.path.join(args.out, name + ".acapella.svg")
        subprocess.run([args.acapella, "engrave", path, "-o", ours_svg, "--embed-font"], check=True, capture_output=True)
        toolkit = verovio.toolkit()
        theirs = None
        if toolkit.loadFile(os.path.abspath(path)):
            theirs = os.path.join(args.out, name + ".verovio.svg")
            with open(theirs, "w") as f:
                f.write(toolkit.renderToSVG(1))
        screenshot(os.path.abspath(ours_svg), os.path.join(args.out, name + ".acapella.png"), args.width)
        if theirs:
            screenshot(os.path.abspath(theirs), os.path.join(args.out, name + ".verovio.png"), args.width)
        rows.append((name, theirs is not None))
        print(f"{name}: acapella" + (" and verovio" if theirs else " (verovio cannot read it)"))
    with open(os.path.join(args.out, "index.html"), "w") as f:
        f.write("<html><body><table>")
        for name, has_theirs in rows:
            f.write(f"<tr><th colspan=2>{html.escape(name)}</th></tr><tr><td><img width=600 src='{name}.acapella.png'></td>")
            f.write(f"<td>{'<img width=600 src=' + repr(name + '.verovio.png') + '>' if has_theirs else 'verovio cannot read it'}</td></tr>")
        f.write("</table></body></html>\n")
    print(f"wrote {args.out}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
