/** Token limits (DESIGN §8) over a real port: reservations at admission, settled to usage. */
import assert from "node:assert/strict";
import { eventually } from "./support/eventually.ts";
import { startServer, testConfig } from "./support/server.ts";

/** Token limits for anonymous chat, and a simulator slow enough (`tokenDelayMs` a token) that
 * concurrent requests overlap. */
function tokenConfig(tokenDelayMs = 0) {
  return testConfig((raw) => {
    raw.limits = { anonymous: { chat: { tokens_per_minute: 2000, tokens_per_day: 50_000 } } };
    raw.providers = [{ id: "sim", style: "simulator", token_delay_ms: tokenDelayMs }];
  });
}

async function post(url: string, body: unknown): Promise<Response> {
  return await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The client's token counter once its minute count is `tokens` (settling runs after the
 * response). */
function settledTo(kv: Deno.Kv, tokens: number): Promise<number[]> {
  return eventually(async () => {
    const counts = (await kv.get<number[]>(["tokens", "chat", "ip", "127.0.0.1"])).value;
    return counts?.[1] === tokens ? counts : undefined;
  }, `the token counter at ${tokens}`);
}

Deno.test("token limits: the reservation shows in the headers and settles to the usage reported", async () => {
  await using server = await startServer({ config: tokenConfig() });
  const res = await post(server.url, {
    model: "sim-chat",
    messages: [{ role: "user", content: "Say hello in a few words." }],
    max_tokens: 100,
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(res.headers.get("x-ratelimit-limit-tokens"), "2000");
  const remaining = Number(res.headers.get("x-ratelimit-remaining-tokens"));
  // The reservation: the prompt's estimate plus max_tokens, held before the call.
  assert.ok(remaining < 2000 - 100 && remaining > 2000 - 200, String(remaining));
  assert.match(res.headers.get("x-ratelimit-reset-tokens")!, /^\d+(\.\d+)?s$|^1m0s$/);
  const used = body.usage.prompt_tokens + body.usage.completion_tokens;
  const counts = await settledTo(server.kv, used);
  assert.equal(counts[3], used);
});

Deno.test("token limits: a request that could pass the limit is refused before any upstream call", async () => {
  await using server = await startServer({ config: tokenConfig(20) });
  const big = await post(server.url, {
    model: "sim-chat",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 4000,
  });
  assert.equal(big.status, 429);
  const error = (await big.json()).error;
  assert.equal(error.code, "rate_limit_exceeded");
  assert.match(error.message, /Request too large: it may use up to \d+ tokens/);
  // Concurrent requests of 900 tokens at most: two fit in 2,000, the third is refused with
  // the time to wait; nothing is counted for the refused ones.
  const many = await Promise.all(
    Array.from({ length: 3 }, () =>
      post(server.url, {
        model: "sim-chat",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 880,
      })),
  );
  const statuses = many.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 200, 429]);
  const refused = many.find((r) => r.status === 429)!;
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);
  assert.match(
    (await refused.json()).error.message,
    /Rate limit reached for tokens: 2000 per minute/,
  );
  const usages = await Promise.all(many.filter((r) => r.status === 200).map((r) => r.json()));
  const used = usages.reduce((n, b) => n + b.usage.prompt_tokens + b.usage.completion_tokens, 0);
  await settledTo(server.kv, used);
});

Deno.test("token limits: a body the handler refuses gives its reservation back", async () => {
  await using server = await startServer({ config: tokenConfig() });
  const res = await post(server.url, {
    model: "sim-chat",
    messages: "not a list",
    max_tokens: 1500,
  });
  assert.equal(res.status, 400);
  await res.body?.cancel();
  await settledTo(server.kv, 0);
});

Deno.test("token limits: config errors name the field; only the chat scope has token limits", () => {
  assert.throws(
    () =>
      testConfig((raw) => {
        raw.limits = { anonymous: { images: { tokens_per_minute: 10 } } };
      }),
    /limits\.anonymous\.images\.tokens_per_minute/,
  );
  assert.throws(
    () =>
      testConfig((raw) => {
        raw.limits = { key: { chat: { tokens_per_day: -1 } } };
      }),
    /limits\.key\.chat\.tokens_per_day/,
  );
});

Deno.test("token limits: a stream the client leaves is settled with the tokens streamed so far, not its reservation", async () => {
  await using server = await startServer({ config: tokenConfig(30) });
  const abort = new AbortController();
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "sim-chat",
      stream: true,
      max_tokens: 1500,
      messages: [{ role: "user", content: "Tell me a long story about a gateway." }],
    }),
    signal: abort.signal,
  });
  assert.equal(res.status, 200);
  const reserved = 2000 - Number(res.headers.get("x-ratelimit-remaining-tokens"));
  const reader = res.body!.getReader();
  let text = "";
  const decoder = new TextDecoder();
  while ((text.match(/"content":"/g) ?? []).length < 4) {
    text += decoder.decode((await reader.read()).value);
  }
  abort.abort();
  // Settled below the 1,500-token reservation: the prompt's estimate and what was streamed.
  const counts = await eventually(async () => {
    const value = (await server.kv.get<number[]>(["tokens", "chat", "ip", "127.0.0.1"])).value;
    return value && value[1]! < reserved ? value : undefined;
  }, "the cut stream's settlement");
  assert.ok(counts[1]! > 0 && counts[1]! < 100, `${counts[1]} tokens counted`);
});

Deno.test("token limits: embeddings count against the chat scope's token limits", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      (raw.models as Record<string, unknown>[]).push({
        id: "sim-embed",
        provider: "sim",
        embeddings: true,
      });
      raw.limits = {
        anonymous: { chat: { per_minute: 1000, tokens_per_minute: 300 } },
      };
    }),
  });
  const embed = (input: string[]) =>
    fetch(`${server.url}/v1/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "sim-embed", input }),
    });
  const small = await embed(["a short text"]);
  assert.equal(small.status, 200);
  assert.ok(small.headers.has("x-ratelimit-limit-tokens"), "the token window is shown");
  await small.body?.cancel();
  const large = await embed(Array.from({ length: 20 }, () => "several words ".repeat(10)));
  assert.equal(large.status, 429);
  const error = (await large.json()).error;
  assert.match(JSON.stringify(error), /token/i);
});
