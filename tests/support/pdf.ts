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
