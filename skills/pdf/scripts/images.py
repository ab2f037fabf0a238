"""Images and PDFs: render pages to PNG, extract the images embedded in pages."""

import argparse

import _pdf


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    render = sub.add_parser(
        "render",
        help="Render pages to PNG files at a resolution.",
        description="Render each page to page-001.png, page-002.png, ... with pypdfium2.",
    )
    render.add_argument("pdf", help="The PDF to render.")
    render.add_argument("--out-dir", required=True, help="Folder for the PNG files (created if missing).")
    render.add_argument("--pages", help="Pages like 1,3-5 (default: all).")
    render.add_argument("--dpi", type=int, default=150, help="Resolution in dots per inch (default: %(default)s).")
    render.add_argument("--password", help="Password of an encrypted PDF.")
    extract = sub.add_parser(
        "extract",
        help="Save the images embedded in pages.",
        description="Save every embedded image as a file named after its page.",
    )
    extract.add_argument("pdf", help="The PDF to read.")
    extract.add_argument("--out-dir", required=True, help="Folder for the images (created if missing).")
    extract.add_argument("--pages", help="Pages like 1,3-5 (default: all).")
    extract.add_argument("--min-size", type=int, default=0, help="Skip images narrower or lower than this (pixels).")
    extract.add_argument("--password", help="Password of an encrypted PDF.")
    return parser


def render(args):
    import pypdfium2 as pdfium

    if not 10 <= args.dpi <= 1200:
        _pdf.fail(f"--dpi {args.dpi} is out of range", "Use 10 to 1200; 150 suits screens, 300 print.")
    doc = _pdf.reader(args.pdf, args.password)
    numbers = _pdf.pages(args.pages, len(doc.pages))
    folder = _pdf.folder(args.out_dir)
    document = pdfium.PdfDocument(str(args.pdf), password=args.password)
    for n in numbers:
        image = document[n - 1].render(scale=args.dpi / 72).to_pil()
        target = folder / f"page-{n:03d}.png"
        image.save(target)
        print(f"{target}  {image.width}x{image.height}")


def extract(args):
    doc = _pdf.reader(args.pdf, args.password)
    numbers = _pdf.pages(args.pages, len(doc.pages))
    folder = _pdf.folder(args.out_dir)
    saved = 0
    for n in numbers:
        for i, image in enumerate(doc.pages[n - 1].images, 1):
            picture = image.image
            if picture is not None and min(picture.size) < args.min_size:
                continue
            suffix = _pdf.Path(image.name).suffix or ".png"
            target = folder / f"page-{n:03d}-{i}{suffix}"
            target.write_bytes(image.data)
            saved += 1
            print(f"{target}  {picture.width}x{picture.height}" if picture is not None else str(target))
    if not saved:
        print(f"no embedded images on {len(numbers)} page(s) of {args.pdf}; `images render` draws whole pages")


def main():
    args = build_parser().parse_args()
    {"render": render, "extract": extract}[args.command](args)


if __name__ == "__main__":
    main()
