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
