"""How faithfully rag_assets reads documentation sources, against the site each tree's own tool builds.

    python bench/doc_fidelity.py [--json docs/figures/doc_fidelity.json]

Three real trees are committed under data/third_party/doc_trees/ with their licences and provenance
(data/third_party/README.md): Flask's documentation (Sphinx, reStructuredText with Python domains,
roles, version notes and its own extensions), Typer's (MkDocs Material, include markers) and
MyST-Parser's (MyST Markdown in Sphinx). For each tree the oracle is its own build:
``sphinx-build -b html`` with the tree's conf.py (executed here, for the oracle only; extensions that
are not installed are left out and named) and ``mkdocs build`` with its mkdocs.yml
(plugins and theme overrides left out: they change navigation, not a page's text; the references of the
autorefs plugin, which the site shows as links with their title once mkdocstrings registered the
identifiers, are shown as their title), and, for a Docusaurus tree, a Docusaurus 3 site of the
classic preset built around a copy of its docs (``npm install`` of Docusaurus into bench/.oracles/ once; the
tree's remark plugins and its own components left out, stand-ins keeping their children). Each page of the
built site is compared sentence by sentence (``rag_assets.lib.ingest.fidelity``) with the canonical text
rag_assets extracts from the source: the share of the site's sentences in ours (content kept), the
share of ours on the site (nothing added), and the share of documents without a line of source syntax.
Times: the whole tree with today's extractor, against the extractor before (docutils and markdown-it
alone), in the same run. The oracle tools are the ``doc-oracles`` extra.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.lib.ingest import sphinx_sources  # noqa: E402
from rag_assets.lib.ingest.documents import extract_file  # noqa: E402
from rag_assets.lib.ingest.extraction import extract_document, extract_html, extract_sphinx_html  # noqa: E402
from rag_assets.lib.ingest.fidelity import coverage  # noqa: E402

TREES = PROJECT / "data" / "third_party" / "doc_trees"
# name: (tool, the docs folder under the tree, the source suffixes of its pages)
# a page whose text the site generates from the project's code (autodoc imports it): not read from source
FROM_CODE = re.compile(r"^\s*(?:\.\. |```\{)auto(?:class|module|function|data|attribute|exception|method|doc2-\w+)\b",
                       re.MULTILINE)
# and (MkDocs) a ``::: identifier`` block of mkdocstrings or mkdocs-click
FROM_CODE_MKDOCS = re.compile(r"^:::[ \t]+[\w.:-]+[ \t]*$", re.MULTILINE)
CASES = {"flask": ("sphinx", "docs", (".rst",)), "typer": ("mkdocs", "docs", (".md",)),
         "myst-parser": ("sphinx", "docs", (".md", ".rst")),
         # round two: autodoc and its own object types; autorefs and blocks; Docusaurus 3 beside its docs
         "scrapy": ("sphinx", "docs", (".rst",)), "marimo": ("mkdocs", "docs", (".md",)),
         "redux-toolkit": ("docusaurus", "docs", (".md", ".mdx"))}
ORACLES = PROJECT / "bench" / ".oracles"  # the Docusaurus oracle's node_modules, installed once from npm
DOCUSAURUS_PACKAGES = {"@docusaurus/core": "3.9.2", "@docusaurus/preset-classic": "3.9.2",
                       "@mdx-js/react": "^3.0.0", "clsx": "^2.0.0", "prism-react-renderer": "^2.3.0",
                       "react": "^19.0.0", "react-dom": "^19.0.0"}
# webpack 5.106 and later refuse the progress bar's options that Docusaurus 3.9 passes: the last one before
DOCUSAURUS_OVERRIDES = {"webpack": "5.105.0"}

WRAPPER_CONF = '''
import importlib.util, os, sys
sys.path.insert(0, {src!r})
os.chdir({src!r})
_theirs = {{"__file__": {conf!r}}}
exec(compile(open({conf!r}, encoding="utf-8").read(), {conf!r}, "exec"), _theirs)
for _name, _value in _theirs.items():
    if not _name.startswith("_") and not callable(_value) and type(_value).__name__ != "module":
        globals()[_name] = _value
def _loads(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
extensions = [e for e in _theirs.get("extensions", []) if _loads(e)]
_LEFT_OUT = [e for e in _theirs.get("extensions", []) if e not in extensions]
html_theme = "basic"  # the theme changes the chrome around a page, not its text
html_theme_options, html_sidebars, templates_path, html_context = {{}}, {{}}, [], {{}}
'''


def sources(tree: Path, docs: str, suffixes: tuple[str, ...]) -> list[str]:
    root = tree / docs
    return sorted(p.relative_to(tree).as_posix() for p in root.rglob("*") if p.suffix in suffixes
                  and not any(part.startswith(("_", ".")) or part in ("overrides",) for part in p.relative_to(root).parts))


def ours(tree: Path, paths: list[str]) -> tuple[dict[str, dict], float]:
    sphinx_sources._builds.clear()
    started = time.perf_counter()
    rows = {}
    for path in paths:
        data = (tree / path).read_bytes()
        rows[path] = extract_file(tree, path, "rst" if path.endswith(".rst") else "markdown",
                                  hashlib.sha256(data).hexdigest(), 10**8)
    return rows, time.perf_counter() - started


def before(tree: Path, paths: list[str]) -> float:
    """The extractor before this change: docutils or markdown-it on the file alone."""
    started = time.perf_counter()
    for path in paths:
        try:
            extract_document((tree / path).read_bytes(), "rst" if path.endswith(".rst") else "markdown", Path(path).stem)
        except Exception:  # noqa: BLE001 - a page the old extractor fails on still took its time
            pass
    return time.perf_counter() - started


def sphinx_site(tree: Path, docs: str, paths: list[str], work: Path) -> tuple[dict[str, str], list[str]]:
    src = work / "src"
    shutil.copytree(tree, src)
    confdir = work / "conf"
    confdir.mkdir()
    their_conf = src / docs / "conf.py"
    (confdir / "conf.py").write_text(WRAPPER_CONF.format(src=str(src / docs), conf=str(their_conf)))
    out = work / "html"
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(confdir), "--keep-going",
                    str(src / docs), str(out)], capture_output=True, text=True, cwd=src / docs)
    probe = subprocess.run([sys.executable, "-c", f"exec(open({str(confdir / 'conf.py')!r}).read()); print(_LEFT_OUT)"],
                           capture_output=True, text=True, cwd=src / docs)
    site = {}
    for path in paths:
        page = out / Path(path).relative_to(docs).with_suffix(".html")
        if page.is_file():  # the page's main content; a toctree's entries are navigation, left out on both sides
            site[path] = extract_sphinx_html(page.read_bytes(), page.stem).text
    return site, [probe.stdout.strip()]


def _extension_block(config_text: str) -> list[str]:
    """The lines of the top-level ``markdown_extensions:`` block."""
    block, inside = [], False
    for line in config_text.split("\n"):
        if re.match(r"^markdown_extensions:", line):
            inside = True
            continue
        if inside and re.match(r"^\S", line):
            break
        if inside:
            block.append(line)
    return block


def _unloadable(config_text: str) -> list[str]:
    """Extensions under markdown_extensions that cannot be loaded here."""
    import markdown

    names = [m.group(1) for line in _extension_block(config_text)
             if (m := re.match(r"^  (?:- )?([\w.-]+(?::[A-Z]\w*)?):?\s*(?:#.*)?$", line))]
    bad = []
    for name in names:
        try:
            markdown.Markdown(extensions=[name])
        except Exception:  # noqa: BLE001
            bad.append(name)
    return bad


SITE_AUTOREF = re.compile(r"\[((?:(?!\]\[)[^\[\]])+)\]\[[\w.:/-]*\]")  # [title][identifier] or [id][]


def mkdocs_site(tree: Path, docs: str, paths: list[str], work: Path) -> tuple[dict[str, str], list[str]]:
    src = work / "src"
    shutil.copytree(tree, src)
    config = (src / "mkdocs.yml").read_text(encoding="utf-8")
    left_out = _unloadable(config)
    lines, skipping, block = [], False, None
    for line in config.split("\n"):
        if re.match(r"^\S", line):
            block = line.split(":")[0]
            skipping = block in ("hooks", "watch")  # the hooks run code; watch names folders not taken
            if block == "plugins":
                lines.append("plugins: []")
                skipping = True
                continue
        if skipping or "custom_dir:" in line or (block == "markdown_extensions" and any(
                re.match(rf"^  (?:- )?{re.escape(name)}:?\s*(?:#.*)?$", line) for name in left_out)):
            continue
        lines.append(line)
    (src / "mkdocs.yml").write_text("\n".join(lines), encoding="utf-8")
    autorefs = bool(re.search(r"^\s+- (?:autorefs|mkdocstrings)\b", config, re.M))
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(work / "site")], cwd=src,
                           capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    if built.returncode:
        raise RuntimeError(f"the MkDocs oracle did not build:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}")
    from selectolax.lexbor import LexborHTMLParser

    site = {}
    for path in paths:
        relative = Path(path).relative_to(docs).with_suffix("")
        page = work / "site" / ("index.html" if relative.name == "index" and relative.parent == Path(".") else
                                (relative.parent / "index.html" if relative.name == "index" else relative / "index.html"))
        if page.is_file():
            article = LexborHTMLParser(page.read_text(encoding="utf-8")).css_first("article")
            if article is not None:
                for anchor in article.css("a.headerlink"):
                    anchor.decompose()
                body = article.html
                if autorefs:  # on the site, mkdocstrings registers the identifiers and each reference is a link
                    body = SITE_AUTOREF.sub(r"\1", body)  # showing its title; without them it stays [title][id]
                html = f"<html><body><main>{body}</main></body></html>".encode()
                site[path] = extract_html(html, relative.name).text
    return site, left_out


_IMPORT = re.compile(r"""^import\s+(?:([^'"]+?)\s+from\s+)?['"]([^'"]+)['"];?[ \t]*$""", re.MULTILINE)
_KEPT_MODULES = ("@theme/", "@docusaurus/", "@site/docs/", "./", "../")


def _stubbed_imports(text: str) -> str:
    """An MDX page whose imports of the site's own components (and packages not installed here) are stand-ins that
    render their children: the oracle site has Docusaurus' theme, not the tree's ``src/``."""
    def stub(match: re.Match) -> str:
        names, module = match.group(1), match.group(2)
        if module.startswith(_KEPT_MODULES) and not module.endswith((".css", ".scss")) and \
                (not module.startswith(".") or module.endswith((".md", ".mdx"))):
            return match.group(0)
        if not names:
            return ""  # a style sheet, or an import for its side effects
        bound = re.findall(r"\b(?:as\s+)?(\w+)\b(?=\s*(?:,|}|$))", names.replace("* as", "as"))
        return "import Stub from '@site/src/Stub';\n" + "\n".join(f"export const {n} = Stub;" for n in bound if n != "as")
    parts = re.split(r"(^[ \t]*(?:```|~~~).*?^[ \t]*(?:```|~~~)[ \t]*$)", text, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if part.lstrip(" \t").startswith(("```", "~~~")) else _IMPORT.sub(stub, part) for part in parts)


def docusaurus_site(tree: Path, docs: str, paths: list[str], work: Path) -> tuple[dict[str, str], list[str]]:
    """A Docusaurus 3 site (the classic preset) built around a copy of the tree's docs: its remark plugins and
    components left out (named), the site's own component imports stand-ins that keep their children."""
    ORACLES.mkdir(parents=True, exist_ok=True)
    modules = ORACLES / "docusaurus"
    if not (modules / "node_modules" / "@docusaurus" / "core").is_dir():
        modules.mkdir(exist_ok=True)
        (modules / "package.json").write_text(json.dumps({"name": "oracle", "private": True,
                                                          "dependencies": DOCUSAURUS_PACKAGES,
                                                          "overrides": DOCUSAURUS_OVERRIDES}))
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=modules, check=True)
    site = work / "site"
    shutil.copytree(tree / docs, site / "docs")
    for page in (site / "docs").rglob("*"):
        if page.suffix in (".md", ".mdx"):
            page.write_text(_stubbed_imports(page.read_text(encoding="utf-8")), encoding="utf-8")
    (site / "src").mkdir()
    (site / "src" / "Stub.js").write_text("export default function Stub(props) { return props.children ?? null; }\n")
    (site / "node_modules").symlink_to(modules / "node_modules")
    (site / "docusaurus.config.js").write_text(
        "module.exports = {title: 'oracle', url: 'http://localhost', baseUrl: '/', onBrokenLinks: 'ignore',\n"
        "  markdown: {hooks: {onBrokenMarkdownLinks: 'ignore', onBrokenMarkdownImages: 'ignore'}},\n"
        "  presets: [['classic', {docs: {path: 'docs', routeBasePath: '/'}, blog: false, pages: false,\n"
        "    theme: {}}]]};\n")
    built = subprocess.run(["node", str(modules / "node_modules" / "@docusaurus" / "core" / "bin" / "docusaurus.mjs"),
                            "build", "--out-dir", str(work / "build")], cwd=site, capture_output=True, text=True)
    if built.returncode:
        raise RuntimeError(f"the Docusaurus oracle did not build:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}")
    from selectolax.lexbor import LexborHTMLParser

    result = {}
    for path in paths:
        relative = Path(path).relative_to(docs).with_suffix("")
        front = re.match(r"\A---\n(.*?)\n---", (tree / path).read_text(encoding="utf-8"), re.DOTALL)
        slug = re.search(r"^id:\s*(\S+)", front.group(1), re.MULTILINE) if front else None
        name = slug.group(1) if slug else relative.name
        for candidate in (relative.parent / name / "index.html", relative.parent / f"{name}.html"):
            page = work / "build" / candidate
            if page.is_file():
                body = LexborHTMLParser(page.read_text(encoding="utf-8")).css_first("div.theme-doc-markdown")
                if body is not None:
                    for anchor in body.css("a.hash-link"):
                        anchor.decompose()
                    result[path] = extract_html(f"<html><body><main>{body.html}</main></body></html>".encode(),
                                                relative.name).text
                break
    return result, ["the tree's remark plugins and its src/ components (stand-ins keep their children)"]


def needle_check(name: str, rows: dict[str, dict]) -> dict | None:
    """The tree's evaluation set (data/eval/<tree>.needles.jsonl: needles typed from the sources) against the
    canonical text read here: how many the blocking checks accept (once in the corpus, in its document, not a
    heading), and why the others are refused."""
    from rag_assets.lib.evalsets.checks import heading_problems, occurrence_problems
    from rag_assets.lib.evalsets.queries import Needle

    path = PROJECT / "data" / "eval" / f"{name}.needles.jsonl"
    if not path.is_file():
        return None
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    needles = [Needle(id=r["id"], doc_id=r["doc_id"], needle=r["needle"], questions=r.get("questions") or {})
               for r in records]
    documents = {doc: row["text"] for doc, row in rows.items() if row["status"] == "ok"}
    headings = {doc: [s["heading"] for s in row["sections"] if s["heading"]] for doc, row in rows.items()
                if row["status"] == "ok"}
    problems = occurrence_problems(needles, documents) + heading_problems(needles, headings)
    refused = {line.split(":")[0] for line in problems}
    return {"needles": len(needles), "accepted": len(needles) - len(refused), "problems": problems}


def measure(name: str) -> dict:
    tool, docs, suffixes = CASES[name]
    tree = TREES / name
    paths = sources(tree, docs, suffixes)
    rows, our_seconds = ours(tree, paths)
    old_seconds = before(tree, paths)
    build = {"sphinx": sphinx_site, "mkdocs": mkdocs_site, "docusaurus": docusaurus_site}[tool]
    with tempfile.TemporaryDirectory() as folder:
        site, left_out = build(tree, docs, paths, Path(folder))
    per_doc, site_total, site_found, our_total, our_found = [], 0, 0, 0, 0
    from_code = [path for path in paths if (FROM_CODE_MKDOCS if tool == "mkdocs" else FROM_CODE).search(
        (tree / path).read_text(encoding="utf-8", errors="replace"))]
    for path in paths:
        row = rows[path]
        if row["status"] != "ok" or path not in site or path in from_code:
            continue
        counts, missed, extra = coverage(row["text"], site[path])
        site_total, site_found = site_total + counts.site_sentences, site_found + counts.site_in_ours
        our_total, our_found = our_total + counts.our_sentences, our_found + counts.ours_in_site
        per_doc.append({"document": path, "site_sentences": counts.site_sentences, "missed": len(missed),
                        "ours": counts.our_sentences, "extra": len(extra), "syntax_lines": row["syntax_lines"],
                        "unknown_constructs": row["unknown_constructs"], "first_missed": missed[:2],
                        "first_extra": extra[:2]})
    compared = len(per_doc)
    needles = needle_check(name, rows)
    return {
        "needles": needles,
        "tree": name, "tool": tool, "documents": len(paths), "compared": compared,
        "failed": sorted(p for p, r in rows.items() if r["status"] != "ok"),
        "site_in_ours": site_found / site_total if site_total else 1.0,
        "ours_on_site": our_found / our_total if our_total else 1.0,
        "without_syntax_lines": sum(1 for d in per_doc if not d["syntax_lines"]) / compared if compared else 1.0,
        "syntax_lines": sum(d["syntax_lines"] for d in per_doc),
        "syntax_documents": {d["document"]: d["syntax_lines"] for d in per_doc if d["syntax_lines"]},
        "site_sentences": site_total, "our_sentences": our_total,
        "seconds": round(our_seconds, 2), "seconds_before": round(old_seconds, 2),
        "time_ratio": round(our_seconds / old_seconds, 2) if old_seconds else None,
        "oracle_left_out": left_out, "from_code": from_code,
        "worst": sorted(per_doc, key=lambda d: -(d["missed"] + d["extra"]))[:3],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--markdown", type=Path, help="also write the table here (Markdown)")
    parser.add_argument("--trees", nargs="*", default=list(CASES))
    args = parser.parse_args()
    results = [measure(name) for name in args.trees]
    lines = ["| tree | tool | documents (compared) | site's sentences in ours | ours on the site | documents without "
             "source syntax | lines of source syntax | seconds (before) | ratio |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['tree']} | {r['tool']} | {r['documents']} ({r['compared']}) | {r['site_in_ours']:.3f} of "
                     f"{r['site_sentences']} | {r['ours_on_site']:.3f} of {r['our_sentences']} | "
                     f"{r['without_syntax_lines']:.3f} | {r['syntax_lines']} | {r['seconds']} ({r['seconds_before']}) | "
                     f"{r['time_ratio']} |")
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n\nMeasured by `python bench/doc_fidelity.py` on this machine "
                                 "class; pages generated from code (autodoc) are not compared.\n", encoding="utf-8")
    for r in results:
        print(f"\n{r['tree']}: oracle left out {r['oracle_left_out'] or 'nothing'}; failed: {r['failed'] or 'none'}; "
              f"pages generated from code (autodoc), not compared: {r['from_code'] or 'none'}")
        if r["needles"]:
            print(f"  needles typed from the sources: {r['needles']['accepted']} of {r['needles']['needles']} accepted"
                  + (f"; refused: {r['needles']['problems']}" if r["needles"]["problems"] else ""))
        if r["syntax_documents"]:
            print(f"  lines of source syntax: {r['syntax_documents']}")
        for d in r["worst"]:
            print(f"  {d['document']}: {d['missed']} of {d['site_sentences']} missed, {d['extra']} of {d['ours']} extra, "
                  f"{d['syntax_lines']} syntax lines; missed {d['first_missed']}; extra {d['first_extra']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
