"""Whole-document operations: info, merge, split, rotate, create, encrypt, decrypt, metadata.

Every command that writes takes --out (or --out-dir) and never overwrites its input.
"""

import argparse
import json
import textwrap

import _pdf

META_KEYS = ["title", "author", "subject", "keywords", "creator", "producer"]


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="Pages, page sizes, encryption, metadata and form presence.")
    info.add_argument("pdf", help="The PDF to describe.")
    info.add_argument("--format", choices=["text", "json"], default="text", help="Output format (default: text).")
    info.add_argument("--password", help="Password of an encrypted PDF.")

    merge = sub.add_parser("merge", help="Join PDFs, in the order given, into one.")
    merge.add_argument("pdfs", nargs="+", help="The PDFs to join.")
    merge.add_argument("--out", required=True, help="Where to write the merged PDF.")

    split = sub.add_parser("split", help="Split a PDF into one file per page, or chunks of N pages.")
    split.add_argument("pdf", help="The PDF to split.")
    split.add_argument("--out-dir", required=True, help="Folder for the parts (created if missing).")
    split.add_argument("--pages", help="Only these pages, like 1,3-5 (default: all).")
    split.add_argument("--every", type=int, default=1, help="Pages per part (default: %(default)s).")

    rotate = sub.add_parser("rotate", help="Rotate pages by 90, 180 or 270 degrees clockwise.")
    rotate.add_argument("pdf", help="The PDF to rotate.")
    rotate.add_argument("--out", required=True, help="Where to write the rotated PDF.")
    rotate.add_argument("--degrees", type=int, choices=[90, 180, 270], required=True, help="Clockwise rotation.")
    rotate.add_argument("--pages", help="Pages like 1,3-5 (default: all).")

    create = sub.add_parser("create", help="Create a PDF from text (wrapped over as many pages as needed).")
    create.add_argument("--out", required=True, help="Where to write the new PDF.")
    source = create.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="The text to put in the PDF.")
    source.add_argument("--text-file", help="A UTF-8 text file to put in the PDF.")
    create.add_argument("--title", help="Document title (also printed at the top).")
    create.add_argument("--page-size", choices=["letter", "a4"], default="a4", help="Page size (default: a4).")

    encrypt = sub.add_parser("encrypt", help="Protect a PDF with a password (AES-256).")
    encrypt.add_argument("pdf", help="The PDF to protect.")
    encrypt.add_argument("--out", required=True, help="Where to write the encrypted PDF.")
    encrypt.add_argument("--password", required=True, help="Password needed to open it.")
    encrypt.add_argument("--owner-password", help="Owner password (default: the same).")

    decrypt = sub.add_parser("decrypt", help="Remove the password of an encrypted PDF.")
    decrypt.add_argument("pdf", help="The encrypted PDF.")
    decrypt.add_argument("--out", required=True, help="Where to write the decrypted PDF.")
    decrypt.add_argument("--password", required=True, help="Its password.")

    meta = sub.add_parser("metadata", help="Show metadata; with --set and --out, write updated metadata.")
    meta.add_argument("pdf", help="The PDF.")
    meta.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                      help="title, author, subject, keywords, creator or producer; repeatable.")  # fmt: skip
    meta.add_argument("--out", help="Where to write the PDF with updated metadata (needed with --set).")
    meta.add_argument("--password", help="Password of an encrypted PDF.")
    return parser


def _metadata(doc):
    meta = doc.metadata or {}
    return {k.lstrip("/").lower(): str(v) for k, v in meta.items()}


def _write(writer, path, inputs):
    target = _pdf.output(path, inputs)
    with target.open("wb") as f:
        writer.write(f)
    return target


def info(args):
    doc = _pdf.reader(args.pdf, args.password)
    sizes = sorted({(round(float(p.mediabox.width)), round(float(p.mediabox.height))) for p in doc.pages})
    facts = {"pages": len(doc.pages), "page_sizes_pt": [list(s) for s in sizes], "encrypted": doc.is_encrypted,
             "has_form": bool(doc.get_fields()), "metadata": _metadata(doc)}  # fmt: skip
    if args.format == "json":
        print(json.dumps(facts, indent=1, ensure_ascii=False))
        return
    print(f"pages: {facts['pages']}")
    print("page sizes (pt): " + ", ".join(f"{w}x{h}" for w, h in sizes))
    print(f"encrypted: {'yes' if facts['encrypted'] else 'no'}; form fields: {'yes' if facts['has_form'] else 'no'}")
    for key, value in facts["metadata"].items():
        print(f"{key}: {value}")


def merge(args):
    from pypdf import PdfWriter

    writer = PdfWriter()
    for path in args.pdfs:
        writer.append(_pdf.reader(path))
    target = _write(writer, args.out, args.pdfs)
    print(f"wrote {target}: {len(writer.pages)} pages from {len(args.pdfs)} files")


def split(args):
    from pypdf import PdfWriter

    if args.every < 1:
        _pdf.fail(f"--every {args.every} is not a positive number", "Use --every 1 or more.")
    doc = _pdf.reader(args.pdf)
    numbers = _pdf.pages(args.pages, len(doc.pages))
    folder = _pdf.folder(args.out_dir)
    stem = _pdf.Path(args.pdf).stem
    for start in range(0, len(numbers), args.every):
        chunk = numbers[start : start + args.every]
        writer = PdfWriter()
        for n in chunk:
            writer.add_page(doc.pages[n - 1])
        name = f"{stem}-p{chunk[0]:03d}" + (f"-{chunk[-1]:03d}" if len(chunk) > 1 else "") + ".pdf"
        print(_write(writer, folder / name, [args.pdf]))


def rotate(args):
    from pypdf import PdfWriter

    doc = _pdf.reader(args.pdf)
    numbers = set(_pdf.pages(args.pages, len(doc.pages)))
    writer = PdfWriter(clone_from=doc)
    for n, page in enumerate(writer.pages, 1):
        if n in numbers:
            page.rotate(args.degrees)
    target = _write(writer, args.out, [args.pdf])
    print(f"wrote {target}: {len(numbers)} page(s) rotated by {args.degrees} degrees")


def create(args):
    from reportlab.lib.pagesizes import A4, letter
    from reportlab.pdfgen import canvas

    if args.text_file:
        path = _pdf.Path(args.text_file)
        if not path.is_file():
            _pdf.fail(f"--text-file {args.text_file} does not exist", "Check the path.")
        text = path.read_text(encoding="utf-8", errors="replace")
    else:
        text = args.text
    size = A4 if args.page_size == "a4" else letter
    target = _pdf.output(args.out)
    pdf = canvas.Canvas(str(target), pagesize=size)
    if args.title:
        pdf.setTitle(args.title)
    width, height = size
    margin, leading = 56, 14
    lines = ([args.title, ""] if args.title else []) + [
        wrapped for para in text.splitlines() for wrapped in (textwrap.wrap(para, 90) or [""])
    ]
    y, pages = height - margin, 1
    pdf.setFont("Helvetica", 11)
    for line in lines:
        if y < margin:
            pdf.showPage()
            pdf.setFont("Helvetica", 11)
            y, pages = height - margin, pages + 1
        pdf.drawString(margin, y, line)
        y -= leading
    pdf.save()
    print(f"wrote {target}: {pages} page(s), {len(lines)} lines")


def encrypt(args):
    from pypdf import PdfWriter

    doc = _pdf.reader(args.pdf)
    writer = PdfWriter(clone_from=doc)
    writer.encrypt(user_password=args.password, owner_password=args.owner_password or args.password,
                   algorithm="AES-256")  # fmt: skip
    print(f"wrote {_write(writer, args.out, [args.pdf])}: encrypted with AES-256")


def decrypt(args):
    from pypdf import PdfWriter

    doc = _pdf.reader(args.pdf, args.password)
    if not doc.is_encrypted:
        _pdf.fail(f"{args.pdf} is not encrypted", "There is nothing to decrypt.")
    writer = PdfWriter(clone_from=doc)
    print(f"wrote {_write(writer, args.out, [args.pdf])}: {len(writer.pages)} pages, no password")


def metadata(args):
    from pypdf import PdfWriter

    doc = _pdf.reader(args.pdf, args.password)
    if not args.set:
        for key, value in _metadata(doc).items():
            print(f"{key}: {value}")
        return
    if not args.out:
        _pdf.fail("--set needs --out", "Give --out for the updated PDF.")
    updates = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or key.strip().lower() not in META_KEYS:
            _pdf.fail(f"--set {item!r} is not KEY=VALUE with a known key", f"Keys: {', '.join(META_KEYS)}.")
        updates["/" + key.strip().capitalize()] = value
    writer = PdfWriter(clone_from=doc)
    writer.add_metadata(updates)
    print(f"wrote {_write(writer, args.out, [args.pdf])}: {', '.join(k.lstrip('/').lower() for k in updates)} set")


def main():
    args = build_parser().parse_args()
    {"info": info, "merge": merge, "split": split, "rotate": rotate, "create": create, "encrypt": encrypt,
     "decrypt": decrypt, "metadata": metadata}[args.command](args)  # fmt: skip


if __name__ == "__main__":
    main()
