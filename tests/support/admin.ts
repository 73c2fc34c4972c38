import { type StartOptions, startServer, type TestServer } from "./server.ts";

/** The admin token of {@link startAdminServer}. */
export const ADMIN_TOKEN = "adm-test-7f3a9c1e5b2d4f6a8c0e91d2b4";

/** A test server with the admin API enabled. */
export function startAdminServer(options: StartOptions = {}): Promise<TestServer> {
  return startServer({
    env: (name) => name === "SWITCHYARD_ADMIN_TOKEN" ? ADMIN_TOKEN : undefined,
    ...options,
  });
}

/** A parsed JSON body; tests index into it freely and assert on what they find. */
// deno-lint-ignore no-explicit-any
export type JsonBody = any;

/** Calls the admin API with the admin token (or `token`); JSON bodies are serialised. */
export async function admin(
  server: TestServer,
  method: string,
  path: string,
  body?: unknown,
  token: string | null = ADMIN_TOKEN,
): Promise<{ status: number; body: JsonBody; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const res = await fetch(`${server.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text), headers: res.headers };
}
