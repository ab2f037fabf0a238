"""Work with PDF forms (AcroForm fields): list them, fill them, validate values.

Values come from a JSON file ({"field": "value"}) and/or repeated --set NAME=VALUE. Every name and value is
checked against the form (field exists, choice is one of the options, checkbox state is known) before
anything is written.
"""

import argparse
import json

import _pdf

TRUE = ("on", "true", "yes", "1", "checked")
FALSE = ("off", "false", "no", "0", "unchecked")


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    lst = sub.add_parser(
        "list",
        help="List the form fields: names, types, values, options.",
        description="List every AcroForm field with its type, current value, options and flags.",
    )
    lst.add_argument("pdf", help="The PDF form.")
    lst.add_argument("--format", choices=["text", "json"], default="text", help="Output format (default: text).")
    lst.add_argument("--password", help="Password of an encrypted PDF.")
    fill = sub.add_parser(
        "fill",
        help="Fill form fields and write a new PDF.",
        description="Set field values from --values and --set, check them, write --out.",
    )
    fill.add_argument("pdf", help="The PDF form.")
    fill.add_argument("--out", required=True, help="Where to write the filled PDF.")
    fill.add_argument("--values", help='A JSON file with {"field name": value}.')
    fill.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="A field value; repeatable.")
    fill.add_argument("--password", help="Password of an encrypted PDF.")
    check = sub.add_parser(
        "validate",
        help="Check values against the form without writing anything.",
        description="Check given values (or, with none, the form's required fields).",
    )
    check.add_argument("pdf", help="The PDF form.")
    check.add_argument("--values", help='A JSON file with {"field name": value}.')
    check.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="A field value; repeatable.")
    check.add_argument("--password", help="Password of an encrypted PDF.")
    return parser


def _name(value):
    return str(value).lstrip("/") if value is not None else None


def describe(fields):
    """[{name, type, value, options, required, read_only}] from pypdf's get_fields()."""
    out = []
    for name, field in (fields or {}).items():
        kind, flags = field.get("/FT"), int(field.get("/Ff", 0) or 0)
        states = [_name(s) for s in field.get("/_States_", []) if _name(s) != "Off"]
        if kind == "/Btn":
            kind = "radio" if flags & (1 << 15) else "button" if flags & (1 << 16) else "checkbox"
            options = states
        elif kind == "/Ch":
            kind = "choice"
            options = [o[1] if isinstance(o, list) else str(o) for o in field.get("/Opt", [])]
        else:
            kind = {"/Tx": "text", "/Sig": "signature"}.get(kind, "unknown")
            options = []
        out.append({"name": name, "type": kind, "value": _name(field.get("/V")), "options": options,
                    "required": bool(flags & 2), "read_only": bool(flags & 1)})  # fmt: skip
    return out


def wanted(args):
    values = {}
    if args.values:
        path = _pdf.Path(args.values)
        if not path.is_file():
            _pdf.fail(f"--values {args.values} does not exist", 'Give a JSON file like {"name": "Ada"}.')
        try:
            values = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            _pdf.fail(f"--values {args.values} is not valid JSON ({exc.msg} at line {exc.lineno})", "Fix the file.")
        if not isinstance(values, dict):
            _pdf.fail("--values must hold a JSON object of field names to values", "")
    for item in args.set:
        if "=" not in item:
            _pdf.fail(f"--set {item!r} has no '='", "Write --set NAME=VALUE.")
        name, value = item.split("=", 1)
        values[name.strip()] = value
    return values


def problems(fields, values):
    """Human-readable problems with `values` for this form; [] when all is well."""
    by_name = {f["name"]: f for f in fields}
    out = []
    for name, value in values.items():
        field = by_name.get(name)
        if field is None:
            out.append(f"no field named {name!r}. {_pdf.closest(name, list(by_name))}")
            continue
        text = str(value).strip()
        if field["read_only"]:
            out.append(f"field {name!r} is read-only")
        elif field["type"] == "checkbox" and text.lower() not in TRUE + FALSE and text not in field["options"]:
            out.append(f"checkbox {name!r} takes on/off (or {', '.join(field['options'])}), not {text!r}")
        elif field["type"] in ("radio", "choice") and field["options"] and text not in field["options"]:
            out.append(f"{field['type']} {name!r} takes one of {', '.join(field['options'])}, not {text!r}")
        elif field["type"] in ("signature", "button"):
            out.append(f"field {name!r} is a {field['type']} and cannot be filled")
    return out


def pdf_value(field, value):
    text = str(value).strip()
    if field["type"] == "checkbox":
        if text.lower() in FALSE:
            return "/Off"
        return "/" + (text if text in field["options"] else (field["options"] or ["Yes"])[0])
    if field["type"] == "radio":
        return "/" + text
    return text


def main():
    args = build_parser().parse_args()
    doc = _pdf.reader(args.pdf, args.password)
    fields = describe(doc.get_fields())
    if not fields:
        _pdf.fail(f"{args.pdf} has no form fields", "Use `forms list` on a PDF with an AcroForm.")
    if args.command == "list":
        if args.format == "json":
            print(json.dumps(fields, indent=1, ensure_ascii=False))
            return
        for f in fields:
            extra = f" options: {', '.join(f['options'])}" if f["options"] else ""
            flags = "".join(x for x, on in ((" required", f["required"]), (" read-only", f["read_only"])) if on)
            print(f"{f['name']}  ({f['type']}{flags})  value: {f['value'] if f['value'] is not None else '-'}{extra}")
        return
    values = wanted(args)
    found = problems(fields, values)
    if args.command == "validate" and not values:
        found = [f"required field {f['name']!r} is empty" for f in fields if f["required"] and not f["value"]]
    if found:
        _pdf.fail("; ".join(found), "Run `forms list` to see the fields and their options.")
    if args.command == "validate":
        print(f"ok: {len(values) or len(fields)} value(s) fit the form")
        return
    from pypdf import PdfWriter
    from pypdf.generic import NameObject

    by_name = {f["name"]: f for f in fields}
    converted = {name: pdf_value(by_name[name], v) for name, v in values.items()}
    writer = PdfWriter(clone_from=doc)
    for page in writer.pages:
        writer.update_page_form_field_values(page, converted, auto_regenerate=False)
    writer.set_need_appearances_writer(True)
    for field in writer._root_object["/AcroForm"].get("/Fields", []):  # checkbox/radio states need /AS too
        obj = field.get_object()
        name = obj.get("/T")
        if name in converted and converted[name].startswith("/"):
            obj[NameObject("/V")] = NameObject(converted[name])
    target = _pdf.output(args.out, [args.pdf])
    with target.open("wb") as f:
        writer.write(f)
    print(f"wrote {target}: {len(converted)} field(s) filled")


if __name__ == "__main__":
    main()
