#!/usr/bin/env python3
"""Do the component's Word and HTML readers find the values a reference reader finds?

Writes 20 documents with values planted in them the ways people write them — 10 Word documents
(python-docx: paragraphs, runs split mid-word, tables, line breaks, tabs, lists, a header) and 10
web pages (headings, tables, lists, `<br>`, entities, inline markup splitting words, nesting) —
plus decoys a reader must not show (a web page's scripts, styles, `hidden` elements, its title;
Word's deleted text). Each is read by `structure-read` (the component's readers) and by the
reference: python-docx's paragraphs and table cells for Word, Chromium's `innerText` of the body
for HTML. A value is found when its words appear in order with only whitespace between them.
Prints, per document, the values each reader found; exits 1 when they differ anywhere.

    python3 -m venv /tmp/formats && /tmp/formats/bin/pip install python-docx
    npm --prefix js ci     # playwright-core, for Chromium
    cargo build --release -p structure-bench --bin structure-read
    /tmp/formats/bin/python bench/formats-check.py --out /tmp/formats-docs
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAMES = ["Mary Jackson", "Zoë Kowalczyk", "Dorothy Vaughan", "Łukasz Nowak", "Ada O'Brien",
         "Katherine Johnson", "José Álvarez", "Grace Hopper", "Chiara Russo", "Kenji Watanabe"]
CITIES = ["Hampton", "Kraków", "Galway", "São Paulo", "Osaka", "Zürich", "Lyon", "Austin"]


def planted(rng: random.Random, index: int) -> dict[str, str]:
    return {
        "name": rng.choice(NAMES),
        "invoice": f"INV-{rng.randint(1000, 9999)}-{index}",
        "date": f"{rng.randint(1, 28)} {rng.choice(['March', 'June', 'October'])} 20{rng.randint(10, 29)}",
        "total": f"{rng.randint(10, 99_999):,}.{rng.randint(0, 99):02} EUR",
        "city": rng.choice(CITIES),
    }


def decoys(index: int) -> dict[str, str]:
    return {"hidden": f"SECRET-{index}-HIDDEN", "script": f"SCRIPT-{index}-VALUE"}


def write_docx(path: pathlib.Path, values: dict[str, str], hidden: dict[str, str], variant: int) -> None:
    import docx
    from docx.oxml.ns import qn
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = f"Header {values['invoice']} (not in the body)"
    document.add_heading(f"Invoice {values['invoice']}", level=1)
    paragraph = document.add_paragraph("Billed to ")
    # A name split over runs mid-word, one bold: Word writes formatting changes so.
    name = values["name"]
    cut = max(1, len(name) // 2)
    paragraph.add_run(name[:cut]).bold = True
    paragraph.add_run(name[cut:])
    paragraph.add_run(f", of {values['city']}.")
    if variant % 2:
        table = document.add_table(rows=2, cols=2)
        table.cell(0, 0).text, table.cell(0, 1).text = "Date", values["date"]
        table.cell(1, 0).text, table.cell(1, 1).text = "Total", values["total"]
    else:
        run = document.add_paragraph().add_run(f"Date:\t{values['date']}")
        run.add_break()
        run.add_text(f"Total:\t{values['total']}")
    for item in ("Goods delivered", "Payment within 30 days"):
        document.add_paragraph(item, style="List Bullet")
    # Deleted text (a tracked change): not in the document as it reads.
    deleted = document.add_paragraph("Note: ")
    removal = OxmlElement("w:del")
    removal.set(qn("w:id"), "1")
    removal.set(qn("w:author"), "bench")
    run = OxmlElement("w:r")
    text = OxmlElement("w:delText")
    text.text = hidden["hidden"]
    run.append(text)
    removal.append(run)
    deleted._p.append(removal)
    document.save(path)


def docx_reference(path: pathlib.Path) -> str:
    """python-docx's text of the body: each paragraph and each table cell, in order."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(path)
    lines = []
    for block in document.element.body.iterchildren():
        if block.tag.endswith("}p"):
            lines.append(Paragraph(block, document).text)
        elif block.tag.endswith("}tbl"):
            for row in Table(block, document).rows:
                lines += [cell.text for cell in row.cells]
    return "\n".join(lines)


def write_html(path: pathlib.Path, values: dict[str, str], hidden: dict[str, str], variant: int) -> None:
    name = values["name"].replace("'", "&#39;")
    first, _, last = name.partition(" ")
    city = values["city"].replace("ü", "&uuml;").replace("ó", "&oacute;")
    table = (f"<table><tr><th>Date</th><td>{values['date']}</td></tr>"
             f"<tr><th>Total</th><td>{values['total'].replace(' ', '&nbsp;')}</td></tr></table>")
    lines = f"<p>Date: {values['date']}<br>Total:  {values['total']}</p>"
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{hidden['hidden']}</title>
<style>.x::before {{ content: "{hidden['script']}" }}</style></head>
<body>
  <div><div><section>
    <h1>Invoice <span class="id">{values['invoice']}</span></h1>
    <p>Billed to <b>{first}</b> <i>{last}</i>,
       of {city}.</p>
  </section></div></div>
  {table if variant % 2 else lines}
  <ul><li>Goods delivered</li><li>Payment within 30 days</li></ul>
  <div hidden>{hidden['hidden']}</div>
  <script>var note = "<p>{hidden['script']}</p>";</script>
  <template><p>{hidden['hidden']}</p></template>
</body></html>"""
    path.write_text(page, encoding="utf-8")


def html_reference(paths: list[pathlib.Path]) -> dict[str, str]:
    """Chromium's innerText of each page's body (playwright-core from js/node_modules)."""
    script = """
const { chromium } = require('playwright-core');
(async () => {
  const browser = await chromium.launch({ executablePath: process.env.STRUCTURE_CHROMIUM || '/usr/bin/chromium' });
  const page = await browser.newPage();
  const out = {};
  for (const file of process.argv.slice(1)) {
    await page.goto('file://' + file);
    out[file] = await page.evaluate(() => document.body.innerText);
  }
  console.log(JSON.stringify(out));
  await browser.close();
})();
"""
    run = subprocess.run(["node", "-e", script, *map(str, paths)], cwd=ROOT / "js", capture_output=True,
                         text=True, check=True)
    return json.loads(run.stdout)


def found(text: str, value: str) -> bool:
    words = [re.escape(word) for word in value.split()]
    return re.search(r"\s+".join(words), text) is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="/tmp/formats-docs", help="where the documents are written")
    parser.add_argument("--bin", default=str(ROOT / "target/release/structure-read"))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    documents = []
    for index in range(20):
        values, hidden = planted(rng, index), decoys(index)
        kind = "docx" if index < 10 else "html"
        path = out / f"doc-{index:02}.{kind}"
        (write_docx if kind == "docx" else write_html)(path, values, hidden, index)
        documents.append((path, kind, values, hidden))
    ours = {}
    for line in subprocess.run([args.bin, *(str(path) for path, *_ in documents)], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        read = json.loads(line)
        ours[read["file"]] = read.get("text", "")
    browser = html_reference([path for path, kind, *_ in documents if kind == "html"])
    same, differ = 0, 0
    for path, kind, values, hidden in documents:
        reference = docx_reference(path) if kind == "docx" else browser[str(path)]
        texts = {"ours": ours[str(path)], "reference": reference}
        finds = {reader: sorted(key for key, value in values.items() if found(text, value))
                 for reader, text in texts.items()}
        shown = {reader: sorted(key for key, value in hidden.items() if value in text)
                 for reader, text in texts.items()}
        agree = finds["ours"] == finds["reference"] and shown["ours"] == shown["reference"]
        same, differ = same + agree, differ + (not agree)
        print(f"{path.name}: values ours {len(finds['ours'])}/5, reference {len(finds['reference'])}/5; "
              f"decoys shown ours {shown['ours']}, reference {shown['reference']}" + ("" if agree else "  DIFFER"))
    print(f"{same} of {len(documents)} documents: the same values found by both readers")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
