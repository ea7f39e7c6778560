#!/bin/sh
# Renders the documentation site in headless Chromium (Debian's chromium)
# and fails when a page is blank, an image is missing or a local link is
# dead (tools/site-check.py): the home page, the reference index, the
# reference page of wtheta(), the articles index and every article (one per
# vignette). Then checks R's own help page of ?wtheta, made by
# tools::Rd2HTML() from the installed package as the help pane shows it:
# it must link to the pages it cites and show no raw markdown.
#
#   sh tools/site-check.sh [SITE]    SITE: the built site (default docs),
#                                    from `sh tools/do.sh site`
set -eu
cd "$(dirname "$0")/.."
site=${1:-docs}
[ -f "$site/index.html" ] || { echo "no site in $site: run sh tools/do.sh site" >&2; exit 1; }

pages="$site/index.html $site/reference/index.html $site/reference/wtheta.html $site/articles/index.html"
for v in vignettes/*.Rmd; do
  pages="$pages $site/articles/$(basename "$v" .Rmd).html"
done
echo "== site pages"
python3 tools/site-check.py $pages
echo "== the site's reference page of wtheta() links to what it cites"
python3 tools/site-check.py "$site/reference/wtheta.html" --links-to pair_counts \
  --links-to theta_bins --links-to wtheta_cov --links-to sky_patches

echo "== R's help page of ?wtheta (tools::Rd2HTML of the installed package)"
help=$(mktemp -d)
trap 'rm -rf "$help"' EXIT
# every topic of the package where R's help links expect it: the page in
# wtheta/html/, a copy under each alias in wtheta/help/ (the help server
# resolves ../../wtheta/help/ALIAS.html), and an index
Rscript -e '
  top <- file.path(commandArgs(TRUE)[1], "wtheta")
  dir.create(file.path(top, "html"), recursive = TRUE)
  dir.create(file.path(top, "help"))
  db <- tools::Rd_db("wtheta")
  links <- tools::findHTMLlinks()
  for (f in names(db)) {
    page <- file.path(top, "html", sub("[.]Rd$", ".html", f))
    tools::Rd2HTML(db[[f]], page, package = "wtheta", Links = links,
                   no_links = FALSE)
    for (a in tools:::.Rd_get_metadata(db[[f]], "alias")) {
      file.copy(page, file.path(top, "help", paste0(a, ".html")))
    }
  }
  writeLines(c("<html><body><h1>wtheta</h1><ul>",
               sprintf("<li><a href=\"%s\">%s</a></li>",
                       sub("[.]Rd$", ".html", names(db)), names(db)),
               "</ul></body></html>"), file.path(top, "html", "00Index.html"))' "$help"
python3 tools/site-check.py "$help/wtheta/html/wtheta.html" --only-under "$help/wtheta" \
  --links-to pair_counts --links-to theta_bins --links-to wtheta_cov --links-to sky_patches
