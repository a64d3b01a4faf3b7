"""The docs site works offline (issue 25): nothing loaded from the network, no repository link.

`make docs` builds docs/ into site/ with mkdocs. A reader opens site/index.html from disk,
without a network: the site must load no script, style sheet or image from elsewhere (the
mkdocs theme's highlight.js comes from a CDN unless `highlightjs: false`), must not link to
a repository ("Edit on GitHub" pointed at one that does not exist), and its links must
resolve to files of the site (pages are `name.html`, not folders a file:// URL cannot open).

The first test reads mkdocs.yml and the theme overrides, so it always runs; the second builds
the site and reads every page, and runs only where the docs extra is installed (`make docs`
installs it; `make test` does not).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "mkdocs.yml"


def strings(value: Any) -> Iterator[str]:
    """Every string anywhere in a loaded YAML document, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme and parts.scheme not in ("mailto",)) or url.startswith("//")


def test_issue25_mkdocs_config_loads_nothing_from_the_network_and_links_no_repository() -> None:
    config = yaml.safe_load(CONFIG.read_text())  # mkdocs.yml holds no !!python tags
    for key in ("repo_url", "repo_name", "edit_uri", "edit_uri_template", "site_url"):
        assert key not in config, f"mkdocs.yml: {key} links the offline site to the network"
    theme = config["theme"]
    assert theme.get("highlightjs") is False, (
        "mkdocs.yml: the mkdocs theme loads highlight.js from a CDN unless "
        "`highlightjs: false`; code is coloured by Pygments at build time instead"
    )
    assert "analytics" not in theme, "mkdocs.yml: analytics load a script from the network"
    assert config.get("use_directory_urls") is False, (
        "mkdocs.yml: `use_directory_urls: false` makes links name .html files, which a "
        "browser opens from disk (a folder URL does not resolve under file://)"
    )
    remote = [s for s in strings(config) if "://" in s]
    assert not remote, f"mkdocs.yml names network locations: {remote}"
    docs = REPO / config.get("docs_dir", "docs")
    for asset in [*config.get("extra_css", []), *config.get("extra_javascript", [])]:
        assert (docs / asset).is_file(), f"mkdocs.yml: {asset} is not a file of {docs.name}/"
    overrides = REPO / theme["custom_dir"]
    for template in sorted(overrides.rglob("*")):
        if template.is_file():
            assert "://" not in template.read_text(), f"{template}: a network location"


class _Refs(HTMLParser):
    """What a page loads (script, style sheet, image, frame) and where its links go."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value for name, value in attrs if value is not None}
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        elif tag in ("script", "img", "iframe", "source", "embed") and "src" in values:
            self.loads.append(values["src"])
        elif tag == "link" and "href" in values:
            self.loads.append(values["href"])


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="the docs extra is not installed (`make docs` installs it)",
)
def test_issue25_the_built_site_loads_nothing_from_the_network_and_its_links_resolve(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    built = subprocess.run(
        [
            *(sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet"),
            *("--config-file", str(CONFIG), "--site-dir", str(site)),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10, pages
    problems: list[str] = []
    for page in pages:
        refs = _Refs()
        refs.feed(page.read_text())
        where = page.relative_to(site)
        problems += [f"{where} loads {url}" for url in refs.loads if is_external(url)]
        for url in refs.links:
            if is_external(url):
                problems.append(f"{where} links to {url} (the site is read offline)")
                continue
            path = unquote(urlsplit(url).path)
            if path.startswith("/") and where == Path("404.html"):
                # Only a web server shows 404.html, for any missing path: mkdocs writes its
                # links from the site's root, where that server serves site/.
                target = site / path.lstrip("/")
            else:
                target = page.parent / path
            if path and not target.is_file():
                problems.append(f"{where} links to {url}, which is no file of the site")
    assert not problems, "\n".join(problems)
