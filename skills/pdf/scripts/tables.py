"""Extract tables from PDFs with pdfplumber, as CSV, JSON or Markdown.

Tables are found from ruling lines and text alignment. With --out the tables go to a file and only a
summary is printed.
"""

import argparse
import csv
import io
import json

import _pdf


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    extract = sub.add_parser("extract", help="Extract the tables of a PDF as CSV, JSON or Markdown.",
                             description="Find the tables on each page and print their cells.")  # fmt: skip
    extract.add_argument("pdf", help="The PDF to read.")
    extract.add_argument("--pages", help="Pages like 1,3-5 (default: all).")
    extract.add_argument("--format", choices=["csv", "json", "markdown"], default="csv",
                         help="CSV (tables separated by a blank line), JSON [{page, index, rows}] or Markdown "
                              "(default: %(default)s).")  # fmt: skip
    extract.add_argument("--password", help="Password of an encrypted PDF.")
    extract.add_argument("--out", help="Write the tables to this file and print only a summary.")
    return parser


def _cells(row):
    return ["" if c is None else str(c).replace("\n", " ") for c in row]


def render(tables, fmt):
    if fmt == "json":
        return json.dumps([{"page": p, "index": i, "rows": rows} for p, i, rows in tables], indent=1,
                          ensure_ascii=False)  # fmt: skip
    parts = []
    for page, index, rows in tables:
        if fmt == "csv":
            buf = io.StringIO()
            buf.write(f"# page {page} table {index}\n")
            csv.writer(buf, lineterminator="\n").writerows(_cells(r) for r in rows)
            parts.append(buf.getvalue().rstrip("\n"))
        else:
            head, *body = [_cells(r) for r in rows] or [[]]
            lines = [f"Page {page}, table {index}:", "", "| " + " | ".join(head) + " |",
                     "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in body]  # fmt: skip
            parts.append("\n".join(lines))
    return "\n\n".join(parts)


def extract(args):
    doc = _pdf.reader(args.pdf, args.password)
    numbers = _pdf.pages(args.pages, len(doc.pages))
    tables = []
    with _pdf.plumber(args.pdf, args.password) as plumbed:
        for n in numbers:
            for i, rows in enumerate(plumbed.pages[n - 1].extract_tables(), 1):
                tables.append((n, i, [_cells(r) for r in rows]))
    if not tables:
        print(f"no tables found on {len(numbers)} page(s) of {args.pdf}; try `text extract --format layout`")
        return
    summary = f"{len(tables)} tables from {len(numbers)} pages ({args.format})"
    _pdf.deliver(render(tables, args.format), args.out, [args.pdf], summary)


def main():
    args = build_parser().parse_args()
    if args.command == "extract":
        extract(args)


if __name__ == "__main__":
    main()
