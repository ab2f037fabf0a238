"""Real PDFs made for the tests with reportlab and pypdf: text, a table, an AcroForm form, encrypted, an image."""

from __future__ import annotations

from pathlib import Path


def text_pdf(folder: Path, pages: int = 3) -> Path:
    """Pages saying "Page N says hello to the reader." (N = 1..pages)."""
    from reportlab.pdfgen import canvas

    path = folder / "text.pdf"
    pdf = canvas.Canvas(str(path))
    for n in range(1, pages + 1):
        pdf.drawString(72, 720, f"Page {n} says hello to the reader.")
        pdf.drawString(72, 700, f"This is line two of page {n}.")
        pdf.showPage()
    pdf.save()
    return path


def table_pdf(folder: Path) -> Path:
    """One page with a ruled 3x3 table of known cells."""
    from reportlab.lib import colors
    from reportlab.platypus import SimpleDocTemplate, Table, TableStyle

    path = folder / "table.pdf"
    table = Table([["Name", "Qty", "Price"], ["Apple", "3", "1.20"], ["Pear", "5", "0.80"]])
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 1, colors.black)]))
    SimpleDocTemplate(str(path)).build([table])
    return path


def form_pdf(folder: Path) -> Path:
    """An AcroForm: text fields `name` and `age`, checkbox `subscribe`, radio `color`, dropdown `country`."""
    from reportlab.pdfgen import canvas

    path = folder / "form.pdf"
    pdf = canvas.Canvas(str(path))
    form = pdf.acroForm
    pdf.drawString(72, 760, "Name:")
    form.textfield(name="name", x=150, y=750, width=200, height=20)
    pdf.drawString(72, 720, "Age:")
    form.textfield(name="age", x=150, y=710, width=60, height=20)
    pdf.drawString(72, 680, "Subscribe:")
    form.checkbox(name="subscribe", x=150, y=675, buttonStyle="check")
    pdf.drawString(72, 640, "Color:")
    form.radio(name="color", value="red", x=150, y=635, selected=False)
    form.radio(name="color", value="green", x=190, y=635, selected=False)
    pdf.drawString(72, 600, "Country:")
    form.choice(name="country", options=["France", "Japan", "Peru"], value="France", x=150, y=590, width=120, height=20)
    pdf.showPage()
    pdf.save()
    return path


def encrypted_pdf(folder: Path, password: str = "secret") -> Path:
    from pypdf import PdfReader, PdfWriter

    (folder / "plain").mkdir(exist_ok=True)
    source = text_pdf(folder / "plain", 2)
    writer = PdfWriter(clone_from=PdfReader(source))
    writer.encrypt(user_password=password, algorithm="AES-256")
    path = folder / "encrypted.pdf"
    with path.open("wb") as f:
        writer.write(f)
    return path


def image_pdf(folder: Path) -> Path:
    """A page with one embedded 40x30 PNG."""
    from PIL import Image
    from reportlab.pdfgen import canvas

    picture = folder / "red.png"
    Image.new("RGB", (40, 30), (200, 20, 20)).save(picture)
    path = folder / "image.pdf"
    pdf = canvas.Canvas(str(path))
    pdf.drawImage(str(picture), 72, 600, width=80, height=60)
    pdf.showPage()
    pdf.save()
    return path
