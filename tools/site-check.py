#!/usr/bin/env python3
"""Render pages of the documentation site in headless Chromium and fail
when one is blank, shows an image that is not there, or links to a local
page or anchor that does not exist.

    python3 tools/site-check.py PAGE.html... [--only-under DIR]
        [--links-to NAME]...

Each page is rendered with `chromium --headless --dump-dom` (scripts run,
the network is cut off: the check works offline) and with `--screenshot`.
A page fails when
  - its rendered text is shorter than 200 characters, or its screenshot
    is a single colour (blank);
  - an <img> points at a local file that is missing or empty, or holds a
    data: URI that is empty;
  - an <a href> points at a local file that does not exist, or at an
    anchor (#id) that the target page does not have.
--only-under DIR counts local links and images outside DIR as external
(R's help pages link to other packages' pages, which R's help server
makes on demand). --links-to NAME (repeatable) also requires a link to a page NAME.html
from every page given (for the help page of wtheta(): links to the pages
of pair_counts(), theta_bins(), ...), and no raw roxygen markdown
(`[fun()]` or backticks) in its text.
Links and images on other hosts are counted, not followed.
"""
import base64
import html.parser
import os
import struct
import subprocess
import sys
import tempfile
import urllib.parse
import zlib

CHROMIUM = os.environ.get("CHROMIUM", "chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
         "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND",
         "--virtual-time-budget=5000", "--hide-scrollbars",
         "--window-size=1200,900"]


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text = []
        self.links = []
        self.images = []
        self.ids = set()
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        if tag in ("script", "style", "noscript"):
            self.skip += 1
        elif tag == "a" and a.get("href") is not None:
            self.links.append(a["href"])
        elif tag == "img":
            self.images.append(a.get("src") or "")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "noscript") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.text.append(data)


def render(path):
    out = subprocess.run([CHROMIUM] + FLAGS + ["--dump-dom",
                                               "file://" + path],
                         capture_output=True, text=True, timeout=120)
    return out.stdout


def parse(dom):
    p = Page()
    p.feed(dom)
    return p


def png_colours(path):
    """The number of distinct byte values in a PNG's filtered pixel rows,
    filter bytes left out: a single-colour image gives at most four (its
    channel values and the zeros of the Sub, Up and Paeth filters)."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 8
    idat = b""
    width = channels = depth = None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, _, depth, colour = struct.unpack(">IIBB", body[:10])
            channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    row = 1 + (width * channels * depth + 7) // 8
    values = set()
    for start in range(0, len(raw), row):
        values.update(raw[start + 1:start + row])
    return len(values)


def screenshot_blank(path):
    with tempfile.TemporaryDirectory() as tmp:
        shot = os.path.join(tmp, "shot.png")
        subprocess.run([CHROMIUM] + FLAGS + ["--screenshot=" + shot,
                                             "file://" + path],
                       capture_output=True, timeout=120)
        if not os.path.exists(shot):
            return "no screenshot was written"
        if png_colours(shot) <= 4:
            return "the screenshot is a single colour"
    return None


def local_target(page, ref):
    """(file, fragment) of a local reference, or None for another host."""
    u = urllib.parse.urlsplit(ref)
    if u.scheme in ("http", "https", "mailto", "javascript", "ftp", "data"):
        return None
    if u.scheme == "file":
        path = urllib.parse.unquote(u.path)
    elif not u.path:
        path = page
    else:
        path = os.path.normpath(os.path.join(os.path.dirname(page),
                                             urllib.parse.unquote(u.path)))
    if os.path.isdir(path):
        path = os.path.join(path, "index.html")
    return path, u.fragment


def inside(path, under):
    return under is None or os.path.abspath(path).startswith(under + os.sep)


def main(argv):
    pages = []
    links_to = []
    under = None
    i = 0
    while i < len(argv):
        if argv[i] == "--links-to":
            links_to.append(argv[i + 1])
            i += 2
        elif argv[i] == "--only-under":
            under = os.path.abspath(argv[i + 1])
            i += 2
        else:
            pages.append(os.path.abspath(argv[i]))
            i += 1
    if not pages:
        print(__doc__, file=sys.stderr)
        return 2
    parsed = {}

    def get(path):
        if path not in parsed:
            parsed[path] = parse(render(path))
        return parsed[path]

    failures = []
    for page in pages:
        name = os.path.relpath(page)
        if not os.path.isfile(page):
            failures.append(f"{name}: the page does not exist")
            continue
        p = get(page)
        problems = []
        text = " ".join(" ".join(p.text).split())
        if len(text) < 200:
            problems.append(f"blank: {len(text)} characters of text")
        else:
            why = screenshot_blank(page)
            if why:
                problems.append("blank: " + why)
        external = 0
        for src in p.images:
            if src.startswith("data:"):
                payload = src.split(",", 1)[1] if "," in src else ""
                try:
                    ok = len(base64.b64decode(payload)) > 0
                except ValueError:
                    ok = False
                if not ok:
                    problems.append("an image with an empty data: URI")
                continue
            t = local_target(page, src) if src else (None, None)
            if t is not None and t[0] and not inside(t[0], under):
                t = None
            if t is None:
                external += 1
            elif not t[0] or not os.path.isfile(t[0]) or \
                    os.path.getsize(t[0]) == 0:
                problems.append(f"missing image {src!r}")
        n_local = 0
        for href in p.links:
            t = local_target(page, href)
            if t is not None and not inside(t[0], under):
                t = None
            if t is None:
                external += 1
                continue
            n_local += 1
            target, frag = t
            if not os.path.isfile(target):
                problems.append(f"dead link {href!r}")
                continue
            if frag and target.endswith(".html"):
                if frag not in get(target).ids:
                    problems.append(f"dead anchor {href!r}")
        for want in links_to:
            if not any(urllib.parse.urlsplit(h).path.endswith(want + ".html")
                       for h in p.links):
                problems.append(f"no link to {want}.html")
        if links_to:
            if "()]" in text or "`" in text:
                problems.append("raw markdown in the text (`[fun()]` or a "
                                "backtick)")
        status = "FAIL" if problems else "ok"
        print(f"{status:4} {name}: {len(text)} characters, "
              f"{len(p.images)} images, {n_local} local links checked, "
              f"{external} external references not followed")
        failures += [f"{name}: {x}" for x in problems]
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
