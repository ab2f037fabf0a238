"""The bundled PDF skill, built with `mcp-cli build` and served by the built package, driven through a real
MCP client: the help path, then every command on real PDFs made here, checked by reading the results back."""

import json
import subprocess
import sys

import pdfplumber
import pytest
from pypdf import PdfReader

from mcp_cli.testing import call, ok

from . import pdfs
from .conftest import ROOT, budget, inspector, served

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("build") / "pdf-mcp"
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "build", str(ROOT / "skills" / "pdf"), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr  # our own skill follows the spec
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pdfs")
    return {
        "text": pdfs.text_pdf(folder, pages=3),
        "table": pdfs.table_pdf(folder),
        "form": pdfs.form_pdf(folder),
        "encrypted": pdfs.encrypted_pdf(folder, password="secret"),
        "image": pdfs.image_pdf(folder),
        "dir": folder,
    }


@pytest.fixture(scope="module")
async def pdf(built):
    launcher = built / "pdf_mcp" / "__main__.py"
    async with served(str(launcher), command=sys.executable) as client:
        yield client


async def test_help_path_from_root_to_command(pdf):
    root = await ok(pdf, "--help")
    for domain in ("documents", "text", "tables", "forms", "images", "docs"):
        assert f"\n  {domain} " in root
    assert "extract" in await ok(pdf, "text", "--help")
    usage = await ok(pdf, "text", "extract", "--help")
    assert "--pages" in usage and "--format" in usage and "--out" in usage


async def test_text_extract_plain_json_and_to_a_file(pdf, files, tmp_path):
    plain = await ok(pdf, "text", "extract", files["text"])
    assert "Page 2 says hello to the reader." in plain
    pages = json.loads(await ok(pdf, "text", "extract", files["text"], "--pages", "1,3", "--format", "json"))
    assert [p["page"] for p in pages] == [1, 3]
    assert "Page 3" in pages[1]["text"] and "Page 2" not in json.dumps(pages)
    target = tmp_path / "out.txt"
    summary = await ok(pdf, "text", "extract", files["text"], "--out", target)
    assert target.is_file() and "Page 1 says hello" in target.read_text()
    assert "Page 1 says hello" not in summary  # only a summary comes back


async def test_tables_extract_csv_and_json(pdf, files):
    with pdfplumber.open(files["table"]) as doc:
        expected = doc.pages[0].extract_tables()[0]
    rows = json.loads(await ok(pdf, "tables", "extract", files["table"], "--format", "json"))
    assert rows[0]["rows"] == expected
    csv_text = await ok(pdf, "tables", "extract", files["table"], "--format", "csv")
    assert ",".join(expected[1]) in csv_text


async def test_forms_list_fill_validate(pdf, files, tmp_path):
    listed = json.loads(await ok(pdf, "forms", "list", files["form"], "--format", "json"))
    names = {f["name"] for f in listed}
    assert {"name", "age", "subscribe", "color", "country"} <= names
    filled = tmp_path / "filled.pdf"
    await ok(pdf, "forms", "fill", files["form"], "--out", filled, "--set", "name=Ada", "--set", "age=36")
    fields = PdfReader(filled).get_fields()
    assert fields["name"].get("/V") == "Ada" and fields["age"].get("/V") == "36"
    reply = await call(pdf, "forms", "fill", files["form"], "--out", tmp_path / "x.pdf", "--set", "nmae=Ada")
    assert not reply.ok and "nmae" in reply.text and "name" in reply.text
    assert not (tmp_path / "x.pdf").exists()
    reply = await call(pdf, "forms", "validate", files["form"], "--set", "country=Atlantis")
    assert not reply.ok and "Atlantis" in reply.text


async def test_documents_commands(pdf, files, tmp_path):
    info = await ok(pdf, "documents", "info", files["text"])
    assert info.splitlines()[:3] == ["pages: 3", "page sizes (pt): 595x842", "encrypted: no; form fields: no"]
    described = json.loads(await ok(pdf, "documents", "info", files["form"], "--format", "json"))
    assert (described["pages"], described["encrypted"], described["has_form"]) == (1, False, True)
    merged = tmp_path / "merged.pdf"
    await ok(pdf, "documents", "merge", files["text"], files["table"], "--out", merged)
    assert len(PdfReader(merged).pages) == 3 + len(PdfReader(files["table"]).pages)
    split_dir = tmp_path / "split"
    await ok(pdf, "documents", "split", files["text"], "--out-dir", split_dir)
    assert len(list(split_dir.glob("*.pdf"))) == 3
    rotated = tmp_path / "rotated.pdf"
    await ok(pdf, "documents", "rotate", files["text"], "--out", rotated, "--degrees", "90", "--pages", "2")
    assert [p.rotation for p in PdfReader(rotated).pages] == [0, 90, 0]
    created = tmp_path / "created.pdf"
    await ok(pdf, "documents", "create", "--out", created, "--text", "Made by an agent.", "--title", "Memo")
    assert "Made by an agent." in PdfReader(created).pages[0].extract_text()
    locked = tmp_path / "locked.pdf"
    await ok(pdf, "documents", "encrypt", files["text"], "--out", locked, "--password", "pw")
    assert PdfReader(locked).is_encrypted
    opened = tmp_path / "opened.pdf"
    await ok(pdf, "documents", "decrypt", locked, "--out", opened, "--password", "pw")
    assert not PdfReader(opened).is_encrypted and len(PdfReader(opened).pages) == 3
    tagged = tmp_path / "tagged.pdf"
    await ok(pdf, "documents", "metadata", files["text"], "--set", "title=Quarterly", "--out", tagged)
    assert PdfReader(tagged).metadata.title == "Quarterly"


async def test_images_render_and_extract(pdf, files, tmp_path):
    from PIL import Image

    render_dir = tmp_path / "render"
    await ok(pdf, "images", "render", files["text"], "--out-dir", render_dir, "--pages", "1", "--dpi", "72")
    pngs = sorted(render_dir.glob("*.png"))
    assert len(pngs) == 1
    width, height = Image.open(pngs[0]).size
    page = PdfReader(files["text"]).pages[0]
    assert abs(width - float(page.mediabox.width)) <= 2 and abs(height - float(page.mediabox.height)) <= 2
    extract_dir = tmp_path / "extract"
    await ok(pdf, "images", "extract", files["image"], "--out-dir", extract_dir)
    assert list(extract_dir.iterdir())


@pytest.mark.parametrize(
    "argv, words",
    [
        (["text", "extract", "/no/such.pdf"], "/no/such.pdf does not exist."),
        (["text", "extract", "no-such.pdf"], "relative paths start from /"),  # where it runs, not the skill folder
        (["text", "extract", "{encrypted}"], "encrypted.pdf is encrypted. Give its password with --password."),
        (["text", "extract", "{text}", "--pages", "9"], "page 9 is past the end; the document has 3 pages."),
        (["text", "extract", "{text}", "--pages", "5-2"], "bad page range '5-2'"),
        (["text", "extract", "{notpdf}"], "notes.txt is not a PDF (no %PDF header)."),
    ],
)
async def test_bad_input_is_one_clear_line(pdf, files, argv, words):
    (files["dir"] / "notes.txt").write_text("not a pdf at all")
    values = {**files, "notpdf": files["dir"] / "notes.txt"}
    argv = [a.format(**values) if a.startswith("{") else a for a in argv]
    reply = await call(pdf, *argv)
    assert not reply.ok
    stderr = reply.text.split("[stderr]\n", 1)[1].split("\n\n[stdout]\n")[0].strip()  # the text's stderr part
    assert stderr.startswith("error:") and len(stderr.splitlines()) == 1 and words in stderr
    assert "Traceback" not in reply.text


async def test_bad_flags_never_start_the_script(pdf, files):
    reply = await call(pdf, "text", "extract", files["text"], "--format", "xml")
    assert not reply.ok and reply.structured["error"] == "usage" and "invalid choice: 'xml'" in reply.text


async def test_docs_topics(pdf):
    listing = await ok(pdf, "docs")
    assert "forms" in listing
    assert len(await ok(pdf, "docs", "forms")) > 200


def test_inspector_strict_accepts_the_built_server(built, tmp_path):
    launcher = [sys.executable, str(built / "pdf_mcp" / "__main__.py")]
    listed = inspector(launcher, "--method", "tools/list", home=tmp_path, strict=True)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["tools"][0]["name"] == "pdf"
