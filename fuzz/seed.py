#!/usr/bin/env python3
"""Seeds each fuzz target's corpus from the repository's real inputs (recorded provider
bodies, bundled schemas, benchmark fixtures, HTTP API and MCP requests)."""

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(sys.argv[1])

# provider_response: [provider index, status index] + body (indices as in the target).
PROVIDER = {"chat-completions": 0, "openai": 0, "responses": 1, "anthropic": 2, "google": 3, "gemini": 3}
STATUS_200, STATUS_400 = 0, 1


def put(target, data: bytes):
    folder = OUT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


bodies = sorted((ROOT / "tests/provider-api").glob("**/*.json"))
for path in bodies:
    parts = set(path.parts)
    provider = next((index for name, index in PROVIDER.items() if name in parts), None)
    if provider is None:
        continue
    body = path.read_bytes()
    status = STATUS_400 if "error" in path.name else STATUS_200
    put("provider_response", bytes([provider, status]) + body)
    put("lenient_parse", body)

schemas = [json.loads(p.read_text()) for p in sorted((ROOT / "schemas").glob("*.json"))]
fixtures = json.loads((ROOT / "benches/fixtures.json").read_text())
for schema in schemas:
    put("schema_transforms", json.dumps(schema).encode())
for name, cases in fixtures.items():
    schema = json.loads((ROOT / f"schemas/{name}.json").read_text())
    for instance in cases.values():
        put("reason_formatting", json.dumps([schema, instance]).encode())
        answer = json.dumps({"answer": instance})
        put("lenient_parse", f"Here you go:\n```json\n{answer}\n```".encode())

call = json.dumps({"prompt": "Ada, ada@example.org", "schema": "contact", "schemaMode": "named"})
mcp = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "structure", "arguments": json.loads(call)}})
for method, head, body in [
    (1, "/v1/structure\ncontent-type: application/json", call),
    (0, "/v1/schemas", ""),
    (0, "/v1/schemas/contact", ""),
    (2, "/v1/schemas/lead\ncontent-type: application/json", json.dumps({"schema": {"type": "object"}})),
    (1, "/mcp\ncontent-type: application/json\nmcp-protocol-version: 2025-06-18", mcp),
    (0, "/healthz", ""),
    (2, "/v1/schemas/lead?check\ncontent-type: application/json", json.dumps({"schema": {"type": "object", "properties": {"a": {"type": "integr", "minItems": -1}}}})),
    (2, "/v1/schemas/lead\ncontent-type: application/json\nif-match: \"0123abcd\"", json.dumps({"schema": {"type": "object"}, "version": "1.1"})),
    (3, "/v1/schemas/lead\nif-match: *", ""),
    (0, "/v1/insights?window=7d&format=csv", ""),
    (0, "/v1/me", ""),
    (0, "/console/console.js", ""),
]:
    put("http_request", bytes([method]) + f"{head}\n\n{body}".encode())

# records_chunks: [max / 4, overlap] + text, from the README and the eval's records cases.
texts = [(ROOT / "README.md").read_text()[:6000]]
texts += [json.loads(line)["prompt"] for line in (ROOT / "eval/cases/records.jsonl").read_text().splitlines() if line]
for text in texts:
    for max_quarter, overlap in [(4, 2), (40, 10), (250, 60)]:
        put("records_chunks", bytes([max_quarter, overlap]) + text.encode())

# pdf_reader: small PDFs of text pages (as the tests write them, mock_llm::pdf), whole, cut short
# and with bytes flipped.


def pdf(pages: list[str]) -> bytes:
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               "<< /Type /Pages /Kids [%s] /Count %d >>" % (" ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages))), len(pages)),
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, text in enumerate(pages):
        content = "BT /F1 11 Tf 72 720 Td (%s) Tj ET" % text.replace("(", r"\(").replace(")", r"\)")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>")
        objects.append(f"<< /Length {len(content)} >>\nstream\n{content}\nendstream")
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


for pages in (["Party: Ada Lovelace."], ["Agreement.", "Signed (by) Zoe Kim.", "Term: 2 years."]):
    whole = pdf(pages)
    put("pdf_reader", whole)
    put("pdf_reader", whole[: len(whole) // 2])
    put("pdf_reader", whole.replace(b"/Count", b"/Count 99999999 /X"))

# word_and_html: [0] + a Word package (Python's zipfile writes it as Word would), whole and cut
# short; [1] + a web page.


def docx(body: str) -> bytes:
    import io
    import zipfile
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        package.writestr("word/document.xml", '<?xml version="1.0"?><w:document xmlns:w="w"><w:body>'
                         + body + "</w:body></w:document>")
    return out.getvalue()


for body in ("<w:p><w:r><w:t>Invoice &amp; total</w:t><w:tab/><w:t>12.50</w:t></w:r></w:p>",
             "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"):
    whole = docx(body)
    put("word_and_html", b"\0" + whole)
    put("word_and_html", b"\0" + whole[: len(whole) // 2])
for page in ("<!doctype html><title>t</title><p>Total: &euro;12<br>due <b>May</b><script>x<y</script>",
             "<table><tr><td>a<td>b</table><pre> x  y </pre><div hidden>no</div>"):
    put("word_and_html", b"\1" + page.encode())
