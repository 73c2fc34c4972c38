import { ApiError, invalidRequest, payloadTooLarge } from "../errors.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const JSON_TYPE = /^application\/([a-z.+-]*\+)?json\s*(;|$)/i;

/** Reads a request body as JSON object, enforcing Content-Type and a byte limit. */
export async function readJsonObject(
  request: Request,
  maxBytes: number,
): Promise<Record<string, unknown>> {
  const type = request.headers.get("content-type");
  if (type !== "application/json" && (type === null || !JSON_TYPE.test(type))) {
    throw new ApiError(
      400,
      "invalid_request_error",
      `Content-Type must be application/json${
        type === null ? " (no Content-Type header was sent)" : `, not ${JSON.stringify(type)}`
      }.`,
      { code: "invalid_content_type" },
    );
  }
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw payloadTooLarge(maxBytes);
  // With a declared length (which the HTTP server holds the body to) read it in one piece;
  // otherwise (chunked) count the bytes as they come.
  const bytes = declared !== null ? await request.bytes() : await readLimited(request, maxBytes);
  if (bytes.length > maxBytes) throw payloadTooLarge(maxBytes);
  if (bytes.length === 0) {
    throw invalidRequest("The request body is empty; send a JSON object.", null, "invalid_json");
  }
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (e) {
    const reason = e instanceof SyntaxError ? e.message : "the body is not valid UTF-8";
    throw invalidRequest(
      `We could not parse the JSON body of your request (${reason}).`,
      null,
      "invalid_json",
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest(
      `The request body must be a JSON object, not ${
        value === null ? "null" : Array.isArray(value) ? "an array" : typeof value
      }.`,
      null,
      "invalid_json",
    );
  }
  return value as Record<string, unknown>;
}

async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
