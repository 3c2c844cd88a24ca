"""MkDocs hooks: the site's front page is README.md itself and its changelog CHANGELOG.md, so neither is copied
into docs/. Links are written for GitHub (README -> docs/x.md, a guide -> ../CHANGELOG.md); here they are made
the site's, and MkDocs then checks every one (mkdocs build --strict)."""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
# (file at the repository's root, its page in the site)
ROOT_PAGES = (("README.md", "index.md"), ("CHANGELOG.md", "changelog.md"))


def site_links(markdown: str, from_root: bool) -> str:
    """Relative links rewritten from the repository's layout to the site's: docs/ is the site's root, and the
    root's own pages have their site names."""
    def rewrite(match: re.Match) -> str:
        target = match[2]
        for source, page in ROOT_PAGES:
            prefix = "" if from_root else "../"
            if target.startswith(prefix + source):
                return f"]({page}{target[len(prefix + source):]}"
        if from_root and target.startswith("docs/"):
            return f"]({target[len('docs/'):]}"
        return match[0]

    return re.sub(r"\]\((?!https?:|#|mailto:)(([^)\s]+))", rewrite, markdown)


def on_files(files: Files, config) -> Files:
    for source, page in ROOT_PAGES:
        text = (ROOT / source).read_text(encoding="utf-8")
        files.append(File.generated(config, page, content=site_links(text, from_root=True)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri in {page for _, page in ROOT_PAGES}:
        return markdown
    return site_links(markdown, from_root=False)
