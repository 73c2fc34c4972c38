/**
 * The URL a request names. Deno writes `request.url` as the scheme, the `Host` header and the
 * request-target one after the other, so a `Host` that is no host (`a b`, `x:99999`) makes no
 * URL at all, and one holding `/`, `?`, `#` or `\` (`x/admin/keys?`) moves the path the
 * request is routed by. Such a request gets a 400 (RFC 9112 §3.2), routed by nothing. Switchyard's
 * own server (`http/server/`) puts such a request under {@link PLACEHOLDER} itself.
 */

/** A `Host` value: a registered name, IPv4 or bracketed IP literal (RFC 3986 §3.2.2, no user
 * info), then an optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[\w.~!$&'()*+,;=%-]*)(?::\d*)?$/;

/** Whether a `Host` value has the form of a host (a name or IP literal, then an optional port). */
export function isHostValue(host: string): boolean {
  return HOST.test(host);
}

/** The host under which a request with a bad `Host` is put: by the server, or by
 * {@link targetUrl}. */
export const PLACEHOLDER = "http://host.invalid";
const PLACEHOLDER_HOST = "host.invalid";

/** The request's URL, or `null` when its `Host` header is not a host. */
export function requestUrl(request: Request): URL | null {
  const host = request.headers.get("host");
  if (host !== null && !isHostValue(host)) return null;
  // Switchyard's server put a Host it could not use under the placeholder.
  if (host !== PLACEHOLDER_HOST && request.url.startsWith(PLACEHOLDER + "/")) return null;
  try {
    return new URL(request.url);
  } catch {
    return null;
  }
}

/** For a request whose `Host` is not a host: its request-target under a placeholder host, so
 * that the log records the path it asked for (`/` when that cannot be told). */
export function targetUrl(request: Request): URL {
  const { url } = request;
  if (url.startsWith(PLACEHOLDER + "/")) return new URL(url);
  const host = request.headers.get("host") ?? "";
  const start = url.indexOf("://") + 3;
  const target = url.startsWith(host, start) ? url.slice(start + host.length) : "";
  try {
    return new URL(PLACEHOLDER + (target.startsWith("/") ? target : "/"));
  } catch {
    return new URL(PLACEHOLDER + "/");
  }
}
