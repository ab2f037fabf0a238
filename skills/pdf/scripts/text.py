"""Extract text from PDFs.

Plain text (pypdf), JSON with one entry per page, or layout-preserving text (pdfplumber) that keeps columns
and indentation. With --out the text goes to a file and only a summary is printed.
"""

import argparse
import json

import _pdf


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    extract = sub.add_parser("extract", help="Extract the text of a PDF, optionally some pages only.",
                             description="Extract the text of a PDF as plain text, JSON (one entry per page) or "
                                         "layout-preserving text.")  # fmt: skip
    extract.add_argument("pdf", type=str, help="The PDF to read.")
    extract.add_argument("--pages", help="Pages like 1,3-5 (default: all).")
    extract.add_argument(
        "--format",
        choices=["plain", "json", "layout"],
        default="plain",
        help="plain text, JSON [{page, text}], or layout-preserving text (default: %(default)s).",
    )
    extract.add_argument("--password", help="Password of an encrypted PDF.")
    extract.add_argument("--out", help="Write the text to this file and print only a summary.")
    return parser


def extract(args):
    doc = _pdf.reader(args.pdf, args.password)
    numbers = _pdf.pages(args.pages, len(doc.pages))
    if args.format == "layout":
        with _pdf.plumber(args.pdf, args.password) as plumbed:
            texts = [plumbed.pages[n - 1].extract_text(layout=True) or "" for n in numbers]
    else:
        texts = [doc.pages[n - 1].extract_text() or "" for n in numbers]
    if args.format == "json":
        body = json.dumps(
            [{"page": n, "text": t} for n, t in zip(numbers, texts, strict=True)], indent=1, ensure_ascii=False
        )
    else:
        body = "\n\n".join(t.rstrip() for t in texts)
    _pdf.deliver(body, args.out, [args.pdf], f"{len(numbers)} pages, {len(body):,} characters ({args.format})")


def main():
    args = build_parser().parse_args()
    if args.command == "extract":
        extract(args)


if __name__ == "__main__":
    main()
