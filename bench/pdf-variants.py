#!/usr/bin/env python3
"""Writes a Kleister-NDA split's PDFs again in the ways other writers write PDFs, each as a
dataset folder `structure-pdf --dataset` reads (its `cases.jsonl` and a `pdf/` of the same
names), so the PDF reader is measured on structures the split itself does not use:

- qpdf (through pikepdf): `objstm` (objects packed in object streams), `linearized`,
  `uncompressed` (no stream filters, no object streams), `qdf` (qpdf's normalised form);
- `incremental`: each file with an update appended (a new /Info, a classic cross-reference
  section whose /Prev leads to the file's own, a table or a stream);
- fpdf2, typesetting each case's text anew: `fpdf` (the standard Times font, justified, so
  word spacing moves the words), `fpdf-ttf` (DejaVu Serif embedded as a composite font with a
  ToUnicode map).

Needs `pip install pikepdf fpdf2` (and DejaVu Serif for `fpdf-ttf`). Writes nothing into the
repository: the dataset is read from where it is, the variants go to OUT.

    python3 bench/pdf-variants.py --dataset ../shared/datasets/kleister-nda/dev-0 --out /tmp/variants
    cargo run --release -p structure-bench --bin structure-pdf -- --dataset /tmp/variants/objstm
"""

import argparse
import json
import pathlib
import re
import shutil

import pikepdf
from fpdf import FPDF

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"


def folder(out: pathlib.Path, name: str, dataset: pathlib.Path) -> pathlib.Path:
    target = out / name
    (target / "pdf").mkdir(parents=True, exist_ok=True)
    shutil.copy(dataset / "cases.jsonl", target / "cases.jsonl")
    return target / "pdf"


def rewritten(dataset: pathlib.Path, out: pathlib.Path) -> None:
    ways = {
        "objstm": dict(object_stream_mode=pikepdf.ObjectStreamMode.generate),
        "linearized": dict(linearize=True),
        "uncompressed": dict(compress_streams=False, object_stream_mode=pikepdf.ObjectStreamMode.disable),
        "qdf": dict(qdf=True),
    }
    for name, options in ways.items():
        pdfs = folder(out, name, dataset)
        for pdf in sorted((dataset / "pdf").iterdir()):
            with pikepdf.open(pdf) as document:
                document.save(pdfs / pdf.name, **options)


def incremental(dataset: pathlib.Path, out: pathlib.Path) -> None:
    pdfs = folder(out, "incremental", dataset)
    for pdf in sorted((dataset / "pdf").iterdir()):
        data = pdf.read_bytes()
        with pikepdf.open(pdf) as document:
            root = document.Root.objgen
            size = int(document.trailer.Size)
        previous = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
        if not data.endswith(b"\n"):
            data += b"\n"
        at = len(data)
        info = f"{size} 0 obj\n<< /Producer (an update) >>\nendobj\n".encode()
        section = (
            f"xref\n{size} 1\n{at:010d} 00000 n \ntrailer\n"
            f"<< /Size {size + 1} /Root {root[0]} {root[1]} R /Info {size} 0 R /Prev {previous} >>\n"
            f"startxref\n{at + len(info)}\n%%EOF\n"
        ).encode()
        (pdfs / pdf.name).write_bytes(data + info + section)


def typeset(dataset: pathlib.Path, out: pathlib.Path, name: str, embedded: bool) -> None:
    pdfs = folder(out, name, dataset)
    for line in open(dataset / "cases.jsonl", encoding="utf-8"):
        case = json.loads(line)
        text = case["text"].replace("\f", "\n")
        pdf = FPDF()
        pdf.add_page()
        if embedded:
            pdf.add_font("Serif", fname=DEJAVU)
            pdf.set_font("Serif", size=10)
        else:
            for plain, fancy in (("'", "\u2019"), ('"', "\u201c"), ('"', "\u201d"), ("-", "\u2014"), ("-", "\u2013")):
                text = text.replace(fancy, plain)
            text = text.encode("latin-1", "replace").decode("latin-1")
            pdf.set_font("Times", size=11)
        for paragraph in text.split("\n"):
            pdf.multi_cell(0, 5, paragraph or " ", align="J", new_x="LMARGIN", new_y="NEXT")
        pdf.output(str(pdfs / case["file"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()
    rewritten(args.dataset, args.out)
    incremental(args.dataset, args.out)
    typeset(args.dataset, args.out, "fpdf", embedded=False)
    typeset(args.dataset, args.out, "fpdf-ttf", embedded=True)
    print(f"variants written to {args.out}")


if __name__ == "__main__":
    main()
