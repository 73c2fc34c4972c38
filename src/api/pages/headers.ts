/**
 * How the web pages and their files are answered: security headers on every one, and an ETag
 * so that a browser revalidates instead of downloading again.
 */

/** The content security policy of every page: our own scripts, styles and API only (no inline
 * script), images also as `data:` and `blob:` URLs (attached and generated images), and never
 * inside a frame. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
};

/** A strong ETag for `text`: FNV-1a (32 bits) over its UTF-16 code units, and its length. */
export function etagOf(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `"${(hash >>> 0).toString(36)}-${text.length.toString(36)}"`;
}

/** One file or page as served: its body, type and ETag. */
export interface Served {
  body: string;
  type: string;
  etag: string;
}

/** Answers `served` for `request`: 304 when the browser's copy is current, otherwise 200. Every
 * answer must be revalidated before use (`no-cache`), so a new release is seen at once. */
export function serve(request: Request, served: Served): Response {
  const headers = new Headers(SECURITY_HEADERS);
  headers.set("etag", served.etag);
  headers.set("cache-control", "no-cache");
  const known = request.headers.get("if-none-match");
  if (known !== null && known.split(",").some((tag) => tag.trim() === served.etag)) {
    return new Response(null, { status: 304, headers });
  }
  headers.set("content-type", served.type);
  // Deno.serve leaves the body out of an answer to HEAD (keeping its content-length).
  return new Response(served.body, { headers });
}
