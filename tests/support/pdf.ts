/** Small PDFs for tests, as base64. */

/** A PDF of `pages` uncompressed page objects under one page tree, as base64. */
export function pdfBase64(pages = 1): string {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(" ");
  let body = `%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n` +
    `2 0 obj << /Type /Pages /Kids [${kids}] /Count ${pages} >> endobj\n`;
  for (let i = 0; i < pages; i++) {
    body += `${i + 3} 0 obj << /Type/Page /Parent 2 0 R >> endobj\n`;
  }
  return latin1Base64(body + "%%EOF\n");
}

/** `text` (one byte per character) as base64. */
export function latin1Base64(text: string): string {
  return new Uint8Array([...text].map((c) => c.charCodeAt(0))).toBase64();
}

/** A valid one-page PDF (with a cross-reference table) showing `text` in Helvetica, as bytes. */
export function textPdf(text: string): Uint8Array<ArrayBuffer> {
  const escaped = text.replace(/[\\()]/g, (c) => `\\${c}`);
  const stream = `BT /F1 12 Tf 72 720 Td (${escaped}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R " +
    "/Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let body = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, "0")} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array([...body].map((c) => c.charCodeAt(0)));
}
