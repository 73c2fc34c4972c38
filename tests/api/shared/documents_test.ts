import assert from "node:assert/strict";
import { pdfBase64 } from "../../support/pdf.ts";
import {
  dataUrlSource,
  pdfSource,
  textSource,
  urlSource,
} from "../../../src/api/shared/documents.ts";
import { ApiError } from "../../../src/errors.ts";
import { type Reader, readJson } from "../../../src/validation/reader.ts";

const PDF_BASE64 = new TextEncoder().encode("%PDF-1.4\n%%EOF\n").toBase64();

/** A reader of `value` at `doc.field`. */
function field(value: unknown): Reader {
  return readJson({ doc: { field: value } }).object().object("doc").get("field");
}

/** Asserts a 400 naming `doc.field`, with a message matching `message`. */
function rejects(read: () => unknown, message: RegExp): void {
  assert.throws(read, (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${e}`);
    assert.equal(e.status, 400);
    assert.equal(e.param, "doc.field");
    assert.equal(e.code, "invalid_value");
    assert.match(e.message, message);
    return true;
  });
}

Deno.test("pdfSource: base64 PDF bytes, whitespace aside", () => {
  assert.deepEqual(pdfSource(PDF_BASE64, field(PDF_BASE64)), {
    kind: "data",
    mediaType: "application/pdf",
    base64: PDF_BASE64,
    pages: 1,
  });
  const wrapped = `${PDF_BASE64.slice(0, 8)}\n${PDF_BASE64.slice(8)}`;
  assert.deepEqual(pdfSource(wrapped, field(wrapped)), pdfSource(PDF_BASE64, field(PDF_BASE64)));
  // Its pages are counted as it is read (the prompt's token count needs them).
  const three = pdfBase64(3);
  assert.deepEqual(pdfSource(three, field(three)), {
    kind: "data",
    mediaType: "application/pdf",
    base64: three,
    pages: 3,
  });
  // Unpadded base64 is base64 too.
  const unpadded = new TextEncoder().encode("%PDF-1.7").toBase64().replace(/=+$/, "");
  assert.equal(pdfSource(unpadded, field(unpadded)).kind, "data");
});

Deno.test("pdfSource: bad base64, or bytes that are not a PDF's, are a 400 naming the field", () => {
  for (const bad of ["", "%%%%", "JVBERi0xLjQ=x", "JVBER", "JV=B", "JVBERi0=x", "JVBERi0xLjQ==="]) {
    rejects(() => pdfSource(bad, field(bad)), bad === "" ? /empty string/ : /not valid base64/);
  }
  const text = btoa("just some text");
  rejects(() => pdfSource(text, field(text)), /do not start with %PDF-/);
});

Deno.test("textSource: base64 UTF-8 text, decoded", () => {
  const base64 = new TextEncoder().encode("Grüße").toBase64();
  assert.deepEqual(textSource(base64, field(base64)), { kind: "text", text: "Grüße" });
  const latin1 = new Uint8Array([0x47, 0xfc]).toBase64();
  rejects(() => textSource(latin1, field(latin1)), /UTF-8 text/);
});

Deno.test("dataUrlSource: a PDF or a text data URL, any case, with parameters", () => {
  const pdf = `data:Application/PDF;name=a.pdf;base64,${PDF_BASE64}`;
  assert.deepEqual(dataUrlSource(field(pdf)), {
    kind: "data",
    mediaType: "application/pdf",
    base64: PDF_BASE64,
    pages: 1,
  });
  const text = `data:text/plain;charset=utf-8;base64,${btoa("hello")}`;
  assert.deepEqual(dataUrlSource(field(text)), { kind: "text", text: "hello" });
  rejects(() => dataUrlSource(field(`data:image/png;base64,${PDF_BASE64}`)), /"image\/png"/);
  rejects(() => dataUrlSource(field("https://example.com/a.pdf")), /base64 data URL.*got a URL/);
  rejects(() => dataUrlSource(field("data:application/pdf,%PDF-1.4")), /base64 data URL/);
  rejects(() => dataUrlSource(field("data:application/pdf;base64,@@@@")), /not valid base64/);
  assert.throws(
    () => dataUrlSource(field(3)),
    (e) => e instanceof ApiError && e.param === "doc.field" && e.code === "invalid_type",
  );
});

Deno.test("urlSource: an https:// URL; plain http:// or not a URL is a 400 naming the field", () => {
  assert.deepEqual(urlSource(field("https://example.com/a.pdf")), {
    kind: "url",
    url: "https://example.com/a.pdf",
  });
  rejects(() => urlSource(field("http://example.com/a.pdf")), /plain http:\/\/ URL/);
  rejects(() => urlSource(field("ftp://example.com/a.pdf")), /expected an https:\/\/ URL/);
  rejects(() => urlSource(field("https://[x")), /expected an https:\/\/ URL/);
});
