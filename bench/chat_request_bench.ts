/**
 * Micro-benchmarks of reading and validating a typical chat body: `deno task bench:micro`.
 */
import { readJsonObject } from "../src/http/body.ts";
import { parseChatRequest } from "../src/api/chat_completions/request.ts";
import { Expiries } from "../src/http/expiries.ts";

const timers = new Expiries(250);
import { chatBody } from "./fixtures.ts";

const text = chatBody("bench-openai", false);
const bytes = new TextEncoder().encode(text);
const parsed = JSON.parse(text);

Deno.bench("parseChatRequest: validate a parsed body", { group: "chat" }, () => {
  parseChatRequest(parsed);
});

Deno.bench("readJsonObject + parseChatRequest: from the request", { group: "chat" }, async () => {
  const request = new Request("http://localhost/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(bytes.length) },
    body: bytes,
  });
  parseChatRequest(
    await readJsonObject(request, { max_body_bytes: 1 << 20, body_timeout_ms: 30_000 }, timers),
  );
});
