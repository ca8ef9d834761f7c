#!/usr/bin/env python3
"""Checks the boxes structure gives a PDF's values against an independent reader, pdfplumber:
for each PDF of a split (read from the dataset's folder, never copied), phrases are picked
from pdfplumber's own words — two of three within a line, one of three over a line break (the
last words of a line and the first of the next) — structure's reader says where each stands
(`structure-boxes`: the phrase found in the text it reads, its boxes), and pdfplumber reads
back the characters whose centres lie in each box. A phrase passes when what its boxes read
back, in order, is the phrase (whitespace aside, both sides NFKC-normalised: a ligature is its
letters).

Needs `pip install pdfplumber`. Writes nothing into the repository.

    cargo build --release -p structure-bench --bin structure-boxes
    python3 bench/boxes-check.py --dataset ../shared/datasets/kleister-nda/dev-0 \
        --bin target/release/structure-boxes [--per-document 9] [--show 5]
"""

import argparse
import json
import pathlib
import random
import subprocess
import unicodedata

import pdfplumber

# A character is in a box when its centre is, give or take this much (points): positions are
# given to a hundredth, and readers round differently.
TOLERANCE = 0.5


def normal(text):
    return "".join(unicodedata.normalize("NFKC", text).split())


def lines_of(page):
    """The page's lines as pdfplumber reads them, each a list of its words."""
    lines = []
    for line in page.extract_text_lines(return_chars=False):
        words = line["text"].split()
        if words:
            lines.append(words)
    return lines


def phrases_of(pdf, count, rng):
    """`count` phrases of the document: (page index, words, over a line break)."""
    picked = []
    pages = [lines_of(page) for page in pdf.pages]
    within = [(index, line) for index, lines in enumerate(pages) for line in lines if len(line) >= 2]
    across = [
        (index, first, second)
        for index, lines in enumerate(pages)
        for first, second in zip(lines, lines[1:])
    ]
    for number in range(count):
        if number % 3 == 2 and across:
            index, first, second = rng.choice(across)
            words = first[-rng.randint(1, min(2, len(first))):] + second[: rng.randint(1, min(2, len(second)))]
            picked.append((index, words, True))
        elif within:
            index, line = rng.choice(within)
            length = rng.randint(2, min(4, len(line)))
            start = rng.randint(0, len(line) - length)
            picked.append((index, line[start : start + length], False))
    return picked


def read_back(page, box):
    """The characters of `page` whose centres lie in `box` (structure's: from the visible
    area's top-left corner), in reading order."""
    left, top = page.bbox[0], page.bbox[1]
    x0, x1 = box["x0"] + left - TOLERANCE, box["x1"] + left + TOLERANCE
    y0, y1 = box["top"] + top - TOLERANCE, box["bottom"] + top + TOLERANCE
    chars = [
        char
        for char in page.chars
        if x0 <= (char["x0"] + char["x1"]) / 2 <= x1 and y0 <= (char["top"] + char["bottom"]) / 2 <= y1
    ]
    chars.sort(key=lambda char: (round(char["top"]), char["x0"]))
    return "".join(char["text"] for char in chars)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, type=pathlib.Path)
    parser.add_argument("--bin", required=True, help="the structure-boxes binary")
    parser.add_argument("--per-document", type=int, default=9)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--limit", type=int, help="only the first N PDFs")
    parser.add_argument("--show", type=int, default=5, help="failures to print")
    args = parser.parse_args()

    files = sorted((args.dataset / "pdf").glob("*.pdf"))[: args.limit]
    asked, picked = [], {}
    for path in files:
        rng = random.Random(f"{args.seed}:{path.name}")
        with pdfplumber.open(path) as pdf:
            phrases = phrases_of(pdf, args.per_document, rng)
        picked[str(path)] = phrases
        words = [[unicodedata.normalize("NFKC", word) for word in phrase] for _, phrase, _ in phrases]
        asked.append(json.dumps({"pdf": str(path), "phrases": words}))
    answered = subprocess.run(
        [args.bin], input="\n".join(asked), capture_output=True, text=True, check=True
    ).stdout
    totals = {key: [0, 0, 0] for key in ("within a line", "over a line break")}
    failures = []
    for line in answered.splitlines():
        result = json.loads(line)
        phrases = picked[result["pdf"]]
        with pdfplumber.open(result["pdf"]) as pdf:
            for (index, words, across), boxes in zip(phrases, result["boxes"]):
                kind = "over a line break" if across else "within a line"
                totals[kind][0] += 1
                if boxes is None:
                    failures.append((result["pdf"], words, "not in the text read"))
                    continue
                totals[kind][1] += 1
                back = "".join(read_back(pdf.pages[box["page"] - 1], box) for box in boxes)
                if normal(back) == normal("".join(words)):
                    totals[kind][2] += 1
                else:
                    failures.append((result["pdf"], words, f"read back {back!r} from {boxes}"))
    print("| phrases | picked | found in the text read | read back exactly from their boxes |")
    print("|---|---:|---:|---:|")
    for kind, (count, found, exact) in totals.items():
        print(f"| {kind} | {count} | {found} | {exact} ({exact / max(found, 1):.1%} of found) |")
    count, found, exact = (sum(column) for column in zip(*totals.values()))
    print(f"| **all** | {count} | {found} | **{exact} ({exact / max(found, 1):.1%} of found, {exact / max(count, 1):.1%} of picked)** |")
    for pdf, words, why in failures[: args.show]:
        print(f"- {pathlib.Path(pdf).name}: {' '.join(words)!r}: {why}")


if __name__ == "__main__":
    main()
