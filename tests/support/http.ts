import assert from "node:assert/strict";

/** POSTs a JSON body, with `Authorization: Bearer <key>` when a key is given. */
export function postJson(url: string, body: unknown, key?: string): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  return fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
}

/** What an error response must say; fields left out are not checked. */
export interface ExpectedError {
  type?: string;
  code?: string | null;
  param?: string | null;
  message?: RegExp;
}

/** Asserts an error response's status and body; returns the body's `error`. */
export async function expectError(
  res: Response,
  status: number,
  expected: ExpectedError,
): Promise<{ message: string; type: string; code: string | null; param: string | null }> {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  for (const field of ["type", "code", "param"] as const) {
    if (expected[field] !== undefined) assert.equal(body.error[field], expected[field], field);
  }
  if (expected.message) assert.match(body.error.message, expected.message);
  return body.error;
}

/** Writes `text` on a new raw connection to `port` and reads the answer's head (up to the empty
 * line, or all there is when the server closes first). */
export async function rawHead(port: number, text: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(text));
    let head = "";
    const buf = new Uint8Array(4096);
    while (!head.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) break;
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    return head;
  } finally {
    conn.close();
  }
}
