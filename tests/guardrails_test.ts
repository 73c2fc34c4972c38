/**
 * Guardrails end to end (docs/guardrails.md): over a real port, with fake upstreams that record
 * what they receive, through the chat completions, Messages, Responses and Gemini front doors.
 */
import assert from "node:assert/strict";
import { type Gateway, startGateway } from "./support/gateway.ts";

const CHAT = { chat_completions: true, function_calling: true, image_input: true };
const EMAIL = "jane.doe@example.com";
const CARD = "4111 1111 1111 1111";
const KEY = "sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345";
const PROMPT = `My mail is ${EMAIL}, card ${CARD}, key ${KEY} thanks`;

/** A model on the fake OpenAI upstream and one on the fake Anthropic upstream, both with
 * `guardrails`. */
function guarded(guardrails: unknown[]): Record<string, unknown>[] {
  return [
    { id: "oa-guarded", provider: "oa", upstream_model: "gpt-up", ...CHAT, guardrails },
    { id: "an-guarded", provider: "an", upstream_model: "claude-up", ...CHAT, guardrails },
  ];
}

/** A request to a front door: its path, headers and body for `model`, `text` and `stream`. */
interface Door {
  name: string;
  model: string;
  call(gw: Gateway, text: string, stream: boolean): Promise<Response>;
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

const DOORS: readonly Door[] = [
  {
    name: "chat completions",
    model: "oa-guarded",
    call: (gw, text, stream) =>
      post(`${gw.server.url}/v1/chat/completions`, {
        model: "oa-guarded",
        stream,
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: text }],
      }),
  },
  {
    name: "Messages",
    model: "an-guarded",
    call: (gw, text, stream) =>
      post(`${gw.server.url}/v1/messages`, {
        model: "an-guarded",
        max_tokens: 200,
        stream,
        messages: [{ role: "user", content: text }],
      }, { "anthropic-version": "2023-06-01" }),
  },
  {
    name: "Responses",
    model: "oa-guarded",
    call: (gw, text, stream) =>
      post(`${gw.server.url}/v1/responses`, { model: "oa-guarded", stream, input: text }),
  },
  {
    name: "Gemini",
    model: "oa-guarded",
    call: (gw, text, stream) =>
      post(
        `${gw.server.url}/v1beta/models/oa-guarded:${
          stream ? "streamGenerateContent?alt=sse" : "generateContent"
        }`,
        { contents: [{ role: "user", parts: [{ text }] }] },
      ),
  },
];

/** Everything the fakes received, as text. */
function received(gw: Gateway): string {
  return JSON.stringify([gw.openai.received, gw.anthropic.received].flat().map((r) => r.body));
}

Deno.test("guardrails: an e-mail, a card number and an API key never reach the upstream, and are restored in the answer (every door, whole and streamed)", async () => {
  await using gw = await startGateway({
    models: guarded([{ type: "pii", stage: "input", action: "redact", restore: true }]),
  });
  for (const door of DOORS) {
    for (const stream of [false, true]) {
      const before = gw.openai.received.length + gw.anthropic.received.length;
      const res = await door.call(gw, PROMPT, stream);
      const text = await res.text();
      assert.equal(res.status, 200, `${door.name} ${stream}: ${text}`);
      assert.equal(gw.openai.received.length + gw.anthropic.received.length, before + 1);
      const sent = received(gw);
      for (const secret of [EMAIL, "4111", KEY.slice(0, 12)]) {
        assert.ok(!sent.includes(secret), `${door.name} ${stream}: ${secret} reached the upstream`);
      }
      assert.ok(
        sent.includes("[EMAIL_1]") && sent.includes("[CARD_1]") && sent.includes("[SECRET_1]"),
      );
      // The fakes answer "You said: <the prompt>": the placeholders come back and are restored.
      for (const original of [EMAIL, CARD, KEY]) {
        assert.ok(
          text.includes(original),
          `${door.name} ${stream}: ${original} not restored in ${text}`,
        );
      }
      assert.ok(!text.includes("[EMAIL_1]"), text);
    }
  }
  assert.deepEqual(gw.openai.violations, []);
  assert.deepEqual(gw.anthropic.violations, []);
  // The log says what was redacted, by type and count, never the values.
  await new Promise((r) => setTimeout(r, 20));
  const records = gw.server.output.records().filter((r) => r.guardrails);
  assert.equal(records.length, 8);
  assert.deepEqual(records[0]!.guardrails, [
    { name: "pii", stage: "input", verdict: "redacted", found: { email: 1, card: 1, secret: 1 } },
  ]);
  assert.ok(!gw.server.output.out.includes(EMAIL) && !gw.server.output.err.includes(EMAIL));
});

Deno.test("guardrails: with logs.include_content the log shows what the model saw, never a redacted value, also where the answer restored it (every door, whole and streamed)", async () => {
  await using gw = await startGateway({
    models: guarded([{ type: "pii", stage: "input", action: "redact", restore: true }]),
    configure: (raw) => {
      raw.logs = { include_content: true };
    },
  });
  for (const door of DOORS) {
    for (const stream of [false, true]) {
      const res = await door.call(gw, PROMPT, stream);
      const text = await res.text();
      assert.equal(res.status, 200, `${door.name} ${stream}: ${text}`);
      assert.ok(text.includes(EMAIL), "the client gets the original back");
    }
  }
  await new Promise((r) => setTimeout(r, 20));
  const records = gw.server.output.records().filter((r) => r.guardrails);
  assert.equal(records.length, 8);
  for (const record of records) {
    const content = JSON.stringify(record.content);
    assert.ok(content.includes("[EMAIL_1]") && content.includes("[CARD_1]"), content);
    // The prompt as the model saw it, and its answer ("You said: ...") before the restore.
    assert.ok(content.includes("My mail is [EMAIL_1]"), content);
    assert.ok(/You said:[^"]*\[EMAIL_1\]/.test(content), content);
  }
  for (const secret of [EMAIL, CARD, KEY]) {
    assert.ok(!gw.server.output.out.includes(secret), `${secret} in the log`);
    assert.ok(!gw.server.output.err.includes(secret), `${secret} in the error log`);
  }
});

Deno.test("guardrails: a webhook's rewrite of the input is what the log shows (logs.include_content)", async () => {
  const redactor = startWebhook({ action: "redact", messages: ["Be brief.", "hello there"] });
  try {
    await using gw = await startGateway({
      models: [{
        id: "oa-guarded",
        provider: "oa",
        upstream_model: "gpt-up",
        ...CHAT,
        guardrails: [{ type: "webhook", stage: "input", action: "redact", url: redactor.url }],
      }],
      configure: (raw) => {
        raw.logs = { include_content: true };
      },
    });
    const res = await DOORS[0]!.call(gw, PROMPT, false);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 20));
    const record = gw.server.output.records().find((r) => r.guardrails);
    assert.deepEqual((record?.content as { messages: unknown }).messages, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "hello there" },
    ]);
    assert.ok(!gw.server.output.out.includes(EMAIL));
  } finally {
    await redactor.close();
  }
});

Deno.test("guardrails: without restore the answer keeps the placeholders; a model without guardrails is untouched", async () => {
  await using gw = await startGateway({
    models: guarded([{ type: "pii", stage: "input", action: "redact", entities: ["email"] }]),
  });
  const res = await DOORS[0]!.call(gw, PROMPT, false);
  const answer = (await res.json()).choices[0].message.content as string;
  assert.ok(answer.includes("[EMAIL_1]") && answer.includes(CARD), answer);
  const plain = await post(`${gw.server.url}/v1/chat/completions`, {
    model: "oa-chat",
    messages: [{ role: "user", content: PROMPT }],
  });
  assert.equal(plain.status, 200);
  await plain.body?.cancel();
  assert.ok(JSON.stringify(gw.openai.last.body).includes(EMAIL));
});

/** The error a door answered: status, and its code or type as the protocol writes it. */
async function errorOf(res: Response): Promise<{ status: number; text: string }> {
  return { status: res.status, text: await res.text() };
}

Deno.test("guardrails: a blocked input is a 400 in each protocol's error shape, naming the guardrail, and no upstream call", async () => {
  await using gw = await startGateway({
    models: guarded([{
      type: "pii",
      name: "no-cards",
      stage: "input",
      action: "block",
      entities: ["card"],
    }]),
  });
  for (const door of DOORS) {
    for (const stream of [false, true]) {
      const { status, text } = await errorOf(await door.call(gw, PROMPT, stream));
      assert.equal(status, 400, `${door.name}: ${text}`);
      const body = JSON.parse(text);
      assert.match(text, /no-cards/);
      assert.ok(!text.includes("4111"), text);
      if (door.name === "Messages") {
        assert.deepEqual([body.type, body.error.type], ["error", "invalid_request_error"]);
      } else if (door.name === "Gemini") {
        assert.deepEqual([body.error.code, body.error.status], [400, "INVALID_ARGUMENT"]);
      } else assert.equal(body.error.code, "guardrail_blocked");
    }
  }
  assert.equal(gw.openai.received.length + gw.anthropic.received.length, 0);
});

Deno.test("guardrails: a moderation guardrail blocks a flagged input with the category named", async () => {
  await using gw = await startGateway({
    models: guarded([{
      type: "moderation",
      stage: "input",
      action: "block",
      categories: { violence: 0.3 },
    }]),
  });
  const { status, text } = await errorOf(await DOORS[0]!.call(gw, "I will kill you all", false));
  assert.equal(status, 400, text);
  assert.match(JSON.parse(text).error.message, /"moderation".*violence/);
  assert.equal(gw.openai.received.length, 0);
  const ok = await DOORS[0]!.call(gw, "What a lovely day", false);
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  assert.equal(gw.openai.received.length, 1);
});

/** A fake answer of `words` words of filler and then `tail`. */
function longAnswer(words: number, tail: string): () => { text: string; toolCalls: [] } {
  return () => ({ text: `${"filler ".repeat(words)}${tail}`, toolCalls: [] });
}

Deno.test("guardrails: a flagged output is blocked whole, and mid-stream with each protocol's error event", async () => {
  await using gw = await startGateway({
    models: guarded([
      { type: "deny", name: "no-zeus", stage: "output", action: "block", words: ["project zeus"] },
    ]),
  });
  gw.openai.script = gw.anthropic.script = longAnswer(120, "about Project Zeus today");
  for (const door of DOORS) {
    const whole = await errorOf(await door.call(gw, "hi", false));
    assert.equal(whole.status, 400, `${door.name}: ${whole.text}`);
    assert.match(whole.text, /no-zeus/);
    const res = await door.call(gw, "hi", true);
    // The stream began (its first window of filler was sent) and ends with the error event.
    assert.equal(res.status, 200, door.name);
    const text = await res.text();
    assert.match(text, /filler filler/, door.name);
    assert.ok(!/Project Zeus/i.test(text), `${door.name}: ${text}`);
    const last = text.trim().split("\n").filter((l) => l.startsWith("data:")).at(-1)!;
    assert.match(last, /no-zeus/, `${door.name}: ${last}`);
    if (door.name === "Messages") assert.match(text, /event: error/);
    if (door.name === "Responses") assert.match(text, /response\.failed/);
    if (door.name === "chat completions") assert.ok(!text.includes("[DONE]"));
  }
});

Deno.test("guardrails: output checks see tool-call arguments, and redact PII in the answer as it streams", async () => {
  await using gw = await startGateway({
    models: guarded([{ type: "pii", stage: "output", action: "redact" }]),
  });
  gw.openai.script = () => ({
    text: `${"word ".repeat(60)}mail ${EMAIL} now`,
    toolCalls: [{ name: "send", arguments: { to: EMAIL } }],
  });
  const body = {
    model: "oa-guarded",
    messages: [{ role: "user", content: "send it" }],
    tools: [{ type: "function", function: { name: "send", parameters: { type: "object" } } }],
  };
  for (const stream of [false, true]) {
    const res = await post(`${gw.server.url}/v1/chat/completions`, { ...body, stream });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.ok(!text.includes(EMAIL), text);
    assert.ok(text.includes("[EMAIL_1]"), text);
  }
});

/** A webhook on a real port that answers `verdict` after `delayMs`, recording what it got. */
function startWebhook(verdict: unknown, delayMs = 0) {
  const got: unknown[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    got.push(await req.json());
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    return Response.json(verdict);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/check`,
    got,
    close: () => server.shutdown(),
  };
}

Deno.test("guardrails: a webhook's verdict blocks or redacts the request", async () => {
  const blocker = startWebhook({ action: "block", reason: "policy" });
  const redactor = startWebhook({ action: "redact", messages: ["Be brief.", "hello there"] });
  try {
    await using gw = await startGateway({
      models: [
        {
          id: "oa-blocked",
          provider: "oa",
          upstream_model: "gpt-up",
          ...CHAT,
          guardrails: [{ type: "webhook", stage: "input", action: "block", url: blocker.url }],
        },
        {
          id: "oa-guarded",
          provider: "oa",
          upstream_model: "gpt-up",
          ...CHAT,
          guardrails: [{ type: "webhook", stage: "input", action: "redact", url: redactor.url }],
        },
      ],
    });
    const blocked = await post(`${gw.server.url}/v1/chat/completions`, {
      model: "oa-blocked",
      messages: [{ role: "user", content: "something" }],
    });
    assert.equal(blocked.status, 400);
    assert.equal((await blocked.json()).error.code, "guardrail_blocked");
    assert.deepEqual(blocker.got, [{
      stage: "input",
      model: "oa-blocked",
      guardrail: "webhook",
      messages: [{ role: "user", content: "something" }],
    }]);
    const res = await DOORS[0]!.call(gw, PROMPT, false);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.ok(received(gw).includes("hello there") && !received(gw).includes(EMAIL));
  } finally {
    await blocker.close();
    await redactor.close();
  }
});

Deno.test("guardrails: a stream whose first event has the count asks an input webhook once", async () => {
  // The simulator counts a prompt itself: the count and the stream are of one checked request.
  const hook = startWebhook({ action: "allow" });
  try {
    await using gw = await startGateway({
      models: [{
        id: "sim-guarded",
        provider: "sim",
        ...CHAT,
        guardrails: [{ type: "webhook", stage: "input", action: "block", url: hook.url }],
      }],
    });
    const messages = await post(`${gw.server.url}/v1/messages`, {
      model: "sim-guarded",
      max_tokens: 50,
      stream: true,
      messages: [{ role: "user", content: "Say hello." }],
    }, { "anthropic-version": "2023-06-01" });
    const text = await messages.text();
    assert.equal(messages.status, 200, text);
    assert.match(text, /event: message_stop/);
    assert.equal(hook.got.length, 1, JSON.stringify(hook.got));
    const gemini = await post(
      `${gw.server.url}/v1beta/models/sim-guarded:streamGenerateContent?alt=sse`,
      { contents: [{ role: "user", parts: [{ text: "Say hello." }] }] },
    );
    assert.equal(gemini.status, 200, await gemini.clone().text());
    await gemini.body?.cancel();
    assert.equal(hook.got.length, 2, JSON.stringify(hook.got));
  } finally {
    await hook.close();
  }
});

Deno.test("guardrails: a webhook that times out follows on_error: block fails closed (503), allow lets the call through", async () => {
  const slow = startWebhook({ action: "allow" }, 500);
  try {
    const hook = (
      on_error: string,
    ) => [{
      type: "webhook",
      stage: "input",
      action: "block",
      url: slow.url,
      timeout_ms: 50,
      on_error,
    }];
    await using gw = await startGateway({
      models: [
        {
          id: "oa-closed",
          provider: "oa",
          upstream_model: "gpt-up",
          ...CHAT,
          guardrails: hook("block"),
        },
        {
          id: "oa-open",
          provider: "oa",
          upstream_model: "gpt-up",
          ...CHAT,
          guardrails: hook("allow"),
        },
      ],
    });
    const ask = (model: string) =>
      post(`${gw.server.url}/v1/chat/completions`, {
        model,
        messages: [{ role: "user", content: "hi" }],
      });
    const closed = await ask("oa-closed");
    const error = (await closed.json()).error;
    assert.equal(closed.status, 503);
    assert.equal(error.code, "guardrail_unavailable");
    assert.match(error.message, /no verdict within 50 ms/);
    assert.equal(gw.openai.received.length, 0);
    const open = await ask("oa-open");
    assert.equal(open.status, 200);
    await open.body?.cancel();
    assert.equal(gw.openai.received.length, 1);
    await new Promise((r) => setTimeout(r, 20));
    const verdicts = gw.server.output.records().flatMap((r) =>
      (r.guardrails ?? []) as { verdict: string }[]
    );
    assert.deepEqual(verdicts.map((v) => v.verdict), ["failed_closed", "failed_open"]);
  } finally {
    await slow.close();
  }
});

Deno.test("guardrails: an output moderation guardrail checks a stream in windows and ends it with the error event", async () => {
  await using gw = await startGateway({
    models: guarded([{ type: "moderation", name: "calm", stage: "output", action: "block" }]),
  });
  gw.openai.script = longAnswer(
    150,
    "and then I will kill you all, murder everyone, kill kill kill",
  );
  const res = await DOORS[0]!.call(gw, "tell me a story", true);
  assert.equal(res.status, 200);
  const text = await res.text();
  // The first windows (filler) were sent; the flagged one was not.
  assert.match(text, /filler filler/);
  assert.ok(!text.includes("murder"), text);
  assert.match(text.trim().split("\n").at(-1)!, /calm.*violence.*guardrail_blocked/);
  const whole = await DOORS[0]!.call(gw, "tell me a story", false);
  assert.equal(whole.status, 400);
  await whole.body?.cancel();
  gw.openai.script = longAnswer(10, "the end");
  const fine = await DOORS[0]!.call(gw, "tell me a story", true);
  assert.equal(fine.status, 200);
  assert.match(await fine.text(), /the end.*\[DONE\]/s);
});

Deno.test("guardrails: a key's own guardrails apply to its calls, after the model's, named key.<name>", async () => {
  await using gw = await startGateway();
  const { readKeyFields } = await import("../src/auth/key_fields.ts");
  const fields = readKeyFields({
    name: "careful",
    guardrails: [{ type: "deny", name: "words", stage: "input", action: "block", words: ["zeus"] }],
  }, "create");
  const { key } = await gw.server.app.services.keys.create(fields);
  const ask = (auth: Record<string, string>) =>
    post(`${gw.server.url}/v1/chat/completions`, {
      model: "oa-chat",
      messages: [{ role: "user", content: "tell me about Zeus" }],
    }, auth);
  const blocked = await ask({ authorization: `Bearer ${key}` });
  assert.equal(blocked.status, 400);
  assert.match((await blocked.json()).error.message, /"key\.words"/);
  const anonymous = await ask({});
  assert.equal(anonymous.status, 200);
  await anonymous.body?.cancel();
  assert.equal(gw.openai.received.length, 1);
  assert.throws(
    () =>
      readKeyFields({
        guardrails: [{ type: "deny", stage: "input", action: "block", patterns: ["(a+)+"] }],
      }, "update"),
    /guardrails\[0\]\.patterns\[0\]/,
  );
});

Deno.test("guardrails: an output webhook rewrites a whole answer, and is asked at the end of a stream, a refusal ending it with the error event", async () => {
  const rewriter = startWebhook({ action: "redact", text: "A safer answer." });
  const refuser = startWebhook({ action: "block", reason: "brand" });
  try {
    const hook = (url: string) => [{ type: "webhook", stage: "output", action: "block", url }];
    await using gw = await startGateway({
      models: [
        {
          id: "oa-rewrite",
          provider: "oa",
          upstream_model: "gpt-up",
          ...CHAT,
          guardrails: hook(rewriter.url),
        },
        {
          id: "oa-refuse",
          provider: "oa",
          upstream_model: "gpt-up",
          ...CHAT,
          guardrails: hook(refuser.url),
        },
      ],
    });
    const ask = (model: string, stream: boolean) =>
      post(`${gw.server.url}/v1/chat/completions`, {
        model,
        stream,
        messages: [{ role: "user", content: "hello there" }],
      });
    const rewritten = await (await ask("oa-rewrite", false)).json();
    assert.equal(rewritten.choices[0].message.content, "A safer answer.");
    assert.deepEqual(rewriter.got, [{
      stage: "output",
      model: "oa-rewrite",
      guardrail: "webhook",
      text: "You said: hello there",
    }]);
    // A long answer: it reaches the gateway in several reads, the first sent before the end.
    gw.openai.script = longAnswer(300, "the end");
    const res = await ask("oa-refuse", true);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /filler/);
    assert.match(text.trim().split("\n").at(-1)!, /brand.*guardrail_blocked/);
  } finally {
    await rewriter.close();
    await refuser.close();
  }
});

Deno.test("guardrails: a token count of a guarded model never sends what the guardrails redact (Messages count_tokens, Gemini countTokens)", async () => {
  await using gw = await startGateway({
    models: [
      ...guarded([{ type: "pii", stage: "input", action: "redact" }]),
      {
        id: "ge-guarded",
        provider: "ge",
        upstream_model: "gemini-up",
        ...CHAT,
        guardrails: [{ type: "pii", stage: "input", action: "redact" }],
      },
    ],
  });
  const count = await post(`${gw.server.url}/v1/messages/count_tokens`, {
    model: "an-guarded",
    messages: [{ role: "user", content: PROMPT }],
  }, { "anthropic-version": "2023-06-01" });
  assert.equal(count.status, 200);
  assert.ok((await count.json()).input_tokens > 0);
  const gemini = await post(`${gw.server.url}/v1beta/models/ge-guarded:countTokens`, {
    contents: [{ role: "user", parts: [{ text: PROMPT }] }],
  });
  assert.equal(gemini.status, 200);
  assert.ok((await gemini.json()).totalTokens > 0);
  const sent = JSON.stringify(
    [gw.anthropic.received, gw.gemini.received].flat().map((r) => r.body),
  );
  assert.ok(!sent.includes(EMAIL) && !sent.includes(KEY), sent);
});

Deno.test("guardrails: embeddings inputs go through the model's input guardrails; token-id inputs, which they cannot read, are refused", async () => {
  const redact = [{ type: "pii", stage: "input", action: "redact" }];
  await using gw = await startGateway({
    models: [{
      id: "oa-embed",
      provider: "oa",
      upstream_model: "text-embedding-3-small",
      embeddings: true,
      guardrails: [...redact, { type: "deny", stage: "input", action: "block", words: ["zeus"] }],
    }],
  });
  const embed = (input: unknown) =>
    post(`${gw.server.url}/v1/embeddings`, { model: "oa-embed", input });
  const res = await embed([PROMPT, "plain text"]);
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal((await res.json()).data.length, 2);
  assert.deepEqual((gw.openai.last.body as { input: string[] }).input, [
    "My mail is [EMAIL_1], card [CARD_1], key [SECRET_1] thanks",
    "plain text",
  ]);
  const blocked = await embed("all about Zeus");
  assert.equal(blocked.status, 400);
  assert.equal((await blocked.json()).error.code, "guardrail_blocked");
  const tokens = await embed([[1, 2, 3]]);
  assert.equal(tokens.status, 400);
  assert.equal((await tokens.json()).error.param, "input");
  assert.equal(gw.openai.received.length, 1);
});
