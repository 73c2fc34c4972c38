/**
 * End-to-end attack tests: each starts `main.ts` as a real process (the repository's
 * switchyard.json plus a slow model and a 1.5 s body timeout; see tests/support/attack.ts) on a
 * free port with its own KV file, attacks it, and checks the hardening issue's "Done when":
 *
 * - the attack request gets a JSON answer (a 4xx/5xx error in the API's shape, or, where the
 *   attack is a legal request that the gateway can afford to answer, a small 2xx) or is cut,
 *   within a few seconds;
 * - `/healthz`, probed every ~100 ms during the attack, answers every time in under a second;
 * - RSS (VmRSS sampled every ~50 ms, and VmHWM) stays under 600 MB;
 * - the process survives, and an ordinary chat to sim-chat gets 200 afterwards.
 *
 * Where the issue names the outcome (408, 499, 503, 429, all records logged) that is checked
 * too. Every request has a timeout and every gateway is killed in `finally`, so a test that
 * finds a hole fails in a few seconds instead of hanging.
 */
import assert from "node:assert/strict";
import {
  ADMIN_TOKEN,
  assertContained,
  assertSurvived,
  BODY_TIMEOUT_MS,
  call,
  clip,
  describeWatch,
  type Gateway,
  type GatewayOptions,
  isErrorBody,
  type Json,
  kvBytes,
  RawConnection,
  sleep,
  SLOW_MODEL,
  startGateway,
  tail,
  waitFor,
  watch,
} from "./support/attack.ts";
import { pngDeclaring, textBombPng } from "./support/bombs.ts";
import { dataUrl } from "./support/images.ts";

/** "Within a few seconds" for an attack request: a catastrophe detector, not a speed target.
 * The attacks this file guards against took 100 s and more before they were fixed; the slowest
 * fixed one (20 MB of ordinary words to the lexicon) takes ~2 s alone and up to ~7 s when this
 * two-core machine runs other test suites beside it. */
const FEW_SECONDS = 20_000;
/** Client timeout of an attack request: past {@link FEW_SECONDS}, so a late answer is seen. */
const ATTACK_TIMEOUT = 25_000;

/** One test on its own gateway, stopped (and its temp dir removed) however the test ends. */
function attackTest(
  name: string,
  fn: (gateway: Gateway) => Promise<void>,
  options: { gateway?: GatewayOptions; ignore?: boolean } = {},
): void {
  Deno.test({
    name,
    ignore: options.ignore ?? false,
    // Raw sockets the server may leave half-open and aborted fetches are cleaned up in
    // `finally`, but their ops can outlive the test body by a tick.
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const gateway = await startGateway(options.gateway);
      try {
        await fn(gateway);
      } finally {
        await gateway.dispose();
      }
    },
  });
}

function chatBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "sim-chat", messages: [{ role: "user", content: "hello" }], ...extra };
}

/** The error-level diagnostics (stack traces) the gateway wrote to stderr after `from`. */
function errorLines(gateway: Gateway, from = 0): string[] {
  return gateway.stderr().slice(from).split("\n").filter((line) =>
    /"level":"error"/.test(line) || /^\s+at /.test(line) || /^error: Uncaught/.test(line)
  );
}

// ---------------------------------------------------------------------------------------------
// 1. The simulator's schema sampler.

const schemaAttacks: { name: string; body: () => Record<string, unknown> }[] = [
  {
    name: "json_schema array with minItems 1e9 (sim-chat)",
    body: () =>
      chatBody({
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "x",
            schema: { type: "array", minItems: 1_000_000_000, items: { type: "string" } },
          },
        },
      }),
  },
  {
    name: "json_schema string with minLength 1e9 (sim-chat)",
    body: () =>
      chatBody({
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "x",
            schema: {
              type: "object",
              properties: { s: { type: "string", minLength: 1_000_000_000 } },
              required: ["s"],
            },
          },
        },
      }),
  },
  {
    // Just under V8's longest string (2^29 − 24 characters): 1e9 is refused by V8 itself.
    name: "json_schema string with minLength 5e8 (sim-chat)",
    body: () =>
      chatBody({
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "x",
            schema: {
              type: "object",
              properties: { s: { type: "string", minLength: 500_000_000 } },
              required: ["s"],
            },
          },
        },
      }),
  },
  {
    name: 'tool parameters with recursive {"$ref":"#"} properties (sim-tools, tool_choice)',
    body: () => {
      const properties: Record<string, unknown> = {};
      for (const p of "abcdefgh") properties[p] = { $ref: "#" };
      return {
        model: "sim-tools",
        messages: [{ role: "user", content: "call it" }],
        tools: [{
          type: "function",
          function: { name: "boom", parameters: { type: "object", properties } },
        }],
        tool_choice: { type: "function", function: { name: "boom" } },
      };
    },
  },
  {
    name: "json_schema with deep $defs recursion (sim-chat)",
    body: () => {
      const properties: Record<string, unknown> = {};
      for (const p of "abcdefgh") properties[p] = { $ref: "#/$defs/node" };
      return chatBody({
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "x",
            schema: {
              $defs: {
                node: { type: "object", properties, required: [..."abcdefgh"] },
              },
              $ref: "#/$defs/node",
            },
          },
        },
      });
    },
  },
  {
    name: "json_schema with nested anyOf arrays multiplying to 1e9 items (sim-chat)",
    body: () => {
      let schema: Record<string, unknown> = { type: "string", minLength: 64 };
      for (let i = 0; i < 3; i++) {
        schema = { anyOf: [{ type: "array", minItems: 1000, items: schema }, { type: "null" }] };
      }
      return chatBody({
        response_format: { type: "json_schema", json_schema: { name: "x", schema } },
      });
    },
  },
  {
    name: "tool parameters with anyOf nested 20,000 deep (sim-tools, tool_choice)",
    body: () => {
      let schema: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < 20_000; i++) schema = { anyOf: [schema] };
      return {
        model: "sim-tools",
        messages: [{ role: "user", content: "call it" }],
        tools: [{
          type: "function",
          function: {
            name: "deep",
            parameters: { type: "object", properties: { v: schema }, required: ["v"] },
          },
        }],
        tool_choice: { type: "function", function: { name: "deep" } },
      };
    },
  },
];

for (const attack of schemaAttacks) {
  for (const stream of [false, true]) {
    if (stream && !attack.name.startsWith("json_schema array")) continue;
    attackTest(
      `schema sampler: ${attack.name}${stream ? ", streamed" : ""} is contained`,
      async (gw) => {
        const body = { ...attack.body(), ...(stream ? { stream: true } : {}) };
        const { result, watch: w } = await watch(
          gw,
          () => call(gw, "/v1/chat/completions", { body, timeoutMs: ATTACK_TIMEOUT }),
        );
        console.log(`    attack: ${result.summary.slice(0, 200)}`);
        // A streamed answer is SSE, not JSON: there only the time and size count.
        if (stream && result.kind === "response" && result.status === 200) {
          assert.ok(result.ms < FEW_SECONDS, result.summary);
          assert.ok(result.text.length <= 1024 * 1024, result.summary);
        } else {
          assertContained(result, FEW_SECONDS);
        }
        await assertSurvived(gw, w);
      },
    );
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Decompression bombs and huge declared images.

let bomb1GiB: Promise<Uint8Array> | undefined;
let bomb512MiB: Promise<Uint8Array> | undefined;

attackTest("images: a PNG whose zTXt chunk inflates to 1 GiB is contained", async (gw) => {
  bomb1GiB ??= textBombPng(1024 * 1024 * 1024);
  const png = await bomb1GiB;
  const body = {
    model: "sim-moderation",
    input: "hello",
    input_images: [dataUrl("image/png", png)],
  };
  const { result, watch: w } = await watch(
    gw,
    () => call(gw, "/v1/moderations", { body, timeoutMs: ATTACK_TIMEOUT }),
  );
  console.log(`    attack (${png.length} bytes of PNG): ${result.summary.slice(0, 200)}`);
  assertContained(result, FEW_SECONDS);
  await assertSurvived(gw, w);
});

attackTest("images: 16 zTXt bombs (512 MiB each) in one moderation request", async (gw) => {
  bomb512MiB ??= textBombPng(512 * 1024 * 1024);
  const url = dataUrl("image/png", await bomb512MiB);
  // 16 × ~0.7 MB of base64: under the 20 MiB body limit (16 copies of the 1 GiB bomb are not).
  const body = {
    model: "sim-moderation",
    input: "hello",
    input_images: Array.from({ length: 16 }, () => url),
  };
  const { result, watch: w } = await watch(
    gw,
    () => call(gw, "/v1/moderations", { body, timeoutMs: ATTACK_TIMEOUT }),
  );
  console.log(`    attack: ${result.summary.slice(0, 200)}`);
  assertContained(result, FEW_SECONDS);
  await assertSurvived(gw, w);
});

attackTest("images: a PNG declaring 100000×100000 pixels is refused with a 4xx", async (gw) => {
  const url = dataUrl("image/png", pngDeclaring(100_000, 100_000, new Uint8Array(64)));
  const { result, watch: w } = await watch(gw, async () => [
    await call(gw, "/v1/moderations", {
      body: { model: "sim-moderation", input: "hello", input_images: [url] },
      timeoutMs: ATTACK_TIMEOUT,
    }),
    await call(gw, "/v1/chat/completions", {
      body: {
        model: "sim-vision",
        messages: [{
          role: "user",
          content: [{ type: "text", text: "what is this?" }, {
            type: "image_url",
            image_url: { url },
          }],
        }],
      },
      timeoutMs: ATTACK_TIMEOUT,
    }),
  ]);
  for (const out of result) {
    console.log(`    attack: ${out.summary.slice(0, 200)}`);
    assertContained(out, FEW_SECONDS, { allowOk: false });
    assert.ok(out.status >= 400 && out.status < 500, `expected a 4xx: ${out.summary}`);
  }
  await assertSurvived(gw, w);
});

// ---------------------------------------------------------------------------------------------
// 3. Request bodies.

const CHAT_HEAD = (extra: string) =>
  "POST /v1/chat/completions HTTP/1.1\r\nHost: switchyard\r\n" +
  `Content-Type: application/json\r\n${extra}\r\n`;

attackTest(
  "body: Content-Length 20 MB, 10 bytes and silence on 20 connections → 408, RSS bounded",
  async (gw) => {
    const { result, watch: w } = await watch(
      gw,
      () =>
        Promise.all(Array.from({ length: 20 }, async () => {
          const conn = await RawConnection.open(gw);
          try {
            const sent = performance.now();
            await conn.write(CHAT_HEAD("Content-Length: 20000000\r\n") + '{"model":"');
            return await conn.response(sent + BODY_TIMEOUT_MS + 2500, sent);
          } finally {
            await conn.close();
          }
        })),
    );
    const statuses = result.map((r) => r.status);
    const slowest = Math.max(...result.map((r) => r.ms));
    console.log(`    statuses ${JSON.stringify(statuses)}; slowest ${Math.round(slowest)} ms`);
    for (const r of result) {
      assert.equal(
        r.status,
        408,
        `expected 408 within ${BODY_TIMEOUT_MS} ms + 2.5 s: ${
          JSON.stringify({ ...r, head: clip(r.head, 200) })
        }`,
      );
    }
    // Nothing may be allocated from the declared length (20 × 20 MB would be 400 MB).
    assert.ok(
      w.peakRssMb - w.startRssMb < 100,
      `RSS grew by ${Math.round(w.peakRssMb - w.startRssMb)} MB (${describeWatch(w)})`,
    );
    await assertSurvived(gw, w);
  },
);

attackTest("body: a chunked body at one byte a second is cut with 408", async (gw) => {
  const { result, watch: w } = await watch(gw, async () => {
    const conn = await RawConnection.open(gw);
    try {
      const sent = performance.now();
      await conn.write(CHAT_HEAD("Transfer-Encoding: chunked\r\n"));
      const body = '{"model":"sim-chat","messages":[]}';
      for (let i = 0; i < body.length && performance.now() - sent < BODY_TIMEOUT_MS + 2500; i++) {
        if (conn.closed || !(await conn.write(`1\r\n${body[i]}\r\n`))) break;
        const r = await conn.response(performance.now() + 1000, sent);
        if (r.status !== null || r.closed) return r;
      }
      return await conn.response(performance.now() + 100, sent);
    } finally {
      await conn.close();
    }
  });
  console.log(`    ${JSON.stringify({ ...result, head: clip(result.head, 120) })}`);
  assert.equal(result.status, 408, `expected 408: ${JSON.stringify(result)}`);
  assert.ok(result.ms < BODY_TIMEOUT_MS + 2000, `408 came late: ${Math.round(result.ms)} ms`);
  await assertSurvived(gw, w);
});

attackTest(
  "body: an upload aborted mid-body is logged 499, not 500, no stack trace",
  async (gw) => {
    const stderrFrom = gw.stderr().length;
    const { result, watch: w } = await watch(gw, async () => {
      const conn = await RawConnection.open(gw);
      await conn.write(CHAT_HEAD("Content-Length: 1000000\r\n"));
      await conn.write(
        '{"model":"sim-chat","messages":[{"role":"user","content":"' + "x".repeat(100_000),
      );
      await sleep(100);
      await conn.close();
      const closedAt = performance.now();
      const record = await waitFor(
        () => gw.records().find((r) => r.path === "/v1/chat/completions"),
        2000,
      );
      await sleep(300); // anything else it logs about the request
      return { record, closedAt };
    });
    const { record, closedAt } = result;
    console.log(`    record: ${JSON.stringify(record)}`);
    assert.ok(record, "the aborted upload was not logged within 2 s");
    assert.equal(record.status, 499, `logged ${record.status} ${record.error}`);
    assert.ok(record.seenAt - closedAt < 1500, "logged late");
    assert.ok(!gw.records().some((r) => r.status === 500), "a 500 was logged");
    assert.deepEqual(errorLines(gw, stderrFrom), [], "stderr has error lines / stack traces");
    await assertSurvived(gw, w);
  },
);

// Header trickle: Deno.serve applies its own header read timeout, if any; Switchyard has no
// setting for it. Observed with Deno 2.9.6: a connection that sent one header byte every
// 500 ms was still open after 45 s (no timeout fired; the server never answered nor closed).
// So this test only checks that such connections cost nothing else: 20 of them for ~3 s.
attackTest(
  "headers: 20 connections trickling header bytes do not starve the server",
  async (gw) => {
    const { result, watch: w } = await watch(gw, async () => {
      const conns = await Promise.all(Array.from({ length: 20 }, () => RawConnection.open(gw)));
      const head = "GET /v1/models HTTP/1.1\r\nHost: switchyard\r\nX-Trickle: " + "t".repeat(100);
      const start = performance.now();
      try {
        for (let i = 0; i < head.length && performance.now() - start < 3000; i++) {
          await Promise.all(conns.map((c) => c.write(head[i]!)));
          await sleep(250);
        }
        return conns.filter((c) => c.closed).length;
      } finally {
        await Promise.all(conns.map((c) => c.close()));
      }
    });
    console.log(`    connections the server closed within ~3 s: ${result} of 20`);
    await assertSurvived(gw, w);
  },
);

// ---------------------------------------------------------------------------------------------
// 4. The moderation lexicon's regular expressions.

attackTest('moderation: "i will ki" + "l"×2000 + "x" answers within a few seconds', async (gw) => {
  const body = { input: "i will ki" + "l".repeat(2000) + "x" };
  const { result, watch: w } = await watch(
    gw,
    () => call(gw, "/v1/moderations", { body, timeoutMs: ATTACK_TIMEOUT }),
  );
  console.log(`    attack: ${result.summary.slice(0, 160)}`);
  assertContained(result, 3000);
  await assertSurvived(gw, w);
});

attackTest(
  'moderation: many inputs of "a" + "!"×99998 + "x" answer within a few seconds',
  async (gw) => {
    // The issue's text is "a" + "!"×100000 + "x", 100,002 characters: one over the limit of an
    // input (a quick 400). Two "!" fewer, it is exactly the limit of 100,000.
    const over = await call(gw, "/v1/moderations", {
      body: { input: "a" + "!".repeat(100_000) + "x" },
      timeoutMs: ATTACK_TIMEOUT,
    });
    console.log(`    one 100,002-character input: ${over.summary.slice(0, 160)}`);
    assertContained(over, 3000);
    const text = "a" + "!".repeat(99_998) + "x";
    // 256 such inputs are 25.6 MB: over the default 20 MiB body limit, so a quick 413.
    const all = await call(gw, "/v1/moderations", {
      body: { input: Array.from({ length: 256 }, () => text) },
      timeoutMs: ATTACK_TIMEOUT,
    });
    console.log(`    256 inputs: ${all.summary.slice(0, 160)}`);
    assertContained(all, 3000);
    // 200 inputs (20.0 MB) fit the body limit: the lexicon has to get through them.
    const { result, watch: w } = await watch(gw, () =>
      call(gw, "/v1/moderations", {
        body: { input: Array.from({ length: 200 }, () => text) },
        timeoutMs: ATTACK_TIMEOUT,
      }));
    console.log(`    200 inputs: ${result.summary.slice(0, 160)}`);
    assertContained(result, FEW_SECONDS, { maxBodyBytes: 4 * 1024 * 1024 });
    await assertSurvived(gw, w);
  },
);

// Linear-time patterns are not enough when all of a 20 MB batch is scored in one go on the
// event loop: ordinary words are the slowest text for the lexicon (measured: ~1.8 s of stall).
attackTest(
  "moderation: 200 inputs of 100,000 characters of ordinary words keep /healthz fast",
  async (gw) => {
    const text = "word ".repeat(20_000);
    const { result, watch: w } = await watch(gw, () =>
      call(gw, "/v1/moderations", {
        body: { input: Array.from({ length: 200 }, () => text) },
        timeoutMs: ATTACK_TIMEOUT,
      }));
    console.log(`    200 inputs: ${result.summary.slice(0, 160)}`);
    assertContained(result, FEW_SECONDS, { maxBodyBytes: 4 * 1024 * 1024 });
    await assertSurvived(gw, w);
  },
);

// ---------------------------------------------------------------------------------------------
// 5. The request log.

async function adminLogs(gw: Gateway, query: string): Promise<Json[]> {
  const out = await call(gw, `/admin/logs?${query}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.equal(out.status, 200, out.summary);
  return out.json.data;
}

attackTest(
  "log: a 2,100-character model sent with 59 ordinary chats: all 60 are logged in KV",
  async (gw) => {
    const since = Date.now() - 1000;
    const { result, watch: w } = await watch(
      gw,
      () =>
        Promise.all(Array.from({ length: 60 }, (_, i) =>
          call(gw, "/v1/chat/completions", {
            body: chatBody(i === 0 ? { model: "m".repeat(2100) } : {}),
          }))),
    );
    assert.equal(result[0]!.status, 404, result[0]!.summary);
    assert.ok(isErrorBody(result[0]!.json));
    for (const out of result.slice(1)) assert.equal(out.status, 200, out.summary);
    const ids = result.map((out) => out.headers.get("x-request-id"));
    assert.ok(ids.every((id) => id !== null));
    let missing: (string | null)[] = ids;
    await waitFor(
      async () => {
        const logged = new Set(
          (await adminLogs(gw, `since=${since}&path=/v1/chat/completions&limit=1000`))
            .map((r) => r.request_id),
        );
        missing = ids.filter((id) => !logged.has(id));
        return missing.length === 0 ? true : undefined;
      },
      5000,
      250,
    );
    assert.deepEqual(
      missing,
      [],
      `${missing.length} of 60 requests are not in the KV log${
        missing.includes(ids[0]!) ? " (the 2,100-character one among them)" : ""
      }; stderr:\n${tail(gw.stderr(), 5)}`,
    );
    await assertSurvived(gw, w);
  },
);

// ---------------------------------------------------------------------------------------------
// 6. Anonymous KV writes.

const OTHER_PER_MINUTE = 100;
const lowOtherLimit: GatewayOptions = {
  config: (c) =>
    void (c.limits.anonymous.other = { per_minute: OTHER_PER_MINUTE, per_day: 50_000 }),
};

/** Sends `count` requests, `parallel` at a time; returns their statuses. */
async function flood(count: number, parallel: number, send: () => Promise<number>) {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < count) {
      next++;
      statuses.push(await send());
    }
  }));
  return statuses;
}

function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

for (
  const variant of [
    {
      what: "GETs of 60 KB unknown paths",
      path: () => `/no/such/${"p".repeat(60_000)}`,
      headers: {} as Record<string, string>,
    },
    {
      what: "failed admin auths (60 KB key ids)",
      path: () => `/admin/keys/${"k".repeat(60_000)}`,
      headers: { authorization: "Bearer not-the-admin-token" } as Record<string, string>,
    },
  ]
) {
  attackTest(
    `kv: 300 anonymous ${variant.what} hit the per-IP other limit; KV grows < 4 MB`,
    async (gw) => {
      await sleep(500); // start-up writes settle
      const before = kvBytes(gw.kvPath);
      const { result, watch: w } = await watch(gw, () =>
        flood(300, 8, async () => {
          const out = await call(gw, variant.path(), { headers: variant.headers });
          if (out.kind !== "response") throw new Error(out.summary);
          return out.status;
        }));
      await sleep(1000); // the KV log flushes every 250 ms
      const running = kvBytes(gw.kvPath) - before;
      const counts = tally(result);
      console.log(`    statuses ${JSON.stringify(counts)}; KV +${(running / 1e6).toFixed(2)} MB`);
      assert.ok(!counts[500], "500s");
      assert.ok(counts[429], `never limited: ${JSON.stringify(counts)}`);
      assert.ok(
        300 - (counts[429] ?? 0) <= 2 * OTHER_PER_MINUTE,
        `more admitted than the limit allows: ${JSON.stringify(counts)}`,
      );
      assert.ok(running < 4e6, `KV grew by ${(running / 1e6).toFixed(1)} MB while running`);
      await assertSurvived(gw, w);
      await gw.stop();
      const stopped = kvBytes(gw.kvPath) - before;
      assert.ok(stopped < 4e6, `KV grew by ${(stopped / 1e6).toFixed(1)} MB (after stop)`);
    },
    { gateway: lowOtherLimit },
  );
}

// ---------------------------------------------------------------------------------------------
// 7. Clients that leave.

attackTest(
  "disconnect: a non-streamed chat on a slow model aborted after 300 ms is logged 499 within ~1 s",
  async (gw) => {
    const body = {
      model: SLOW_MODEL,
      max_tokens: 5, // 5 tokens at 1 s each
      messages: [
        { role: "system", content: "pad ".repeat(2500) }, // a 10 KB body
        { role: "user", content: "Tell me a long story about many things." },
      ],
    };
    const { result, watch: w } = await watch(gw, async () => {
      const abort = new AbortController();
      const pending = fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.any([abort.signal, AbortSignal.timeout(ATTACK_TIMEOUT)]),
      }).then((r) => r.arrayBuffer()).catch(() => null);
      await sleep(300);
      abort.abort();
      const abortedAt = performance.now();
      await pending;
      const record = await waitFor(
        () => gw.records().find((r) => r.model === SLOW_MODEL),
        2500,
      );
      return { record, abortedAt };
    });
    const { record, abortedAt } = result;
    console.log(`    record: ${JSON.stringify(record)}`);
    if (!record) {
      // For the failure message: what does it log once the generation (5 s) is over?
      const late = await waitFor(() => gw.records().find((r) => r.model === SLOW_MODEL), 4000);
      assert.fail(
        `not logged within 2.5 s of the abort; ${
          late
            ? `logged ${late.status} ${late.error} ${
              Math.round(late.seenAt - abortedAt)
            } ms after it`
            : "still not logged 6.5 s after it"
        }`,
      );
    }
    assert.equal(record.status, 499, `logged ${record.status} ${record.error}`);
    assert.ok(
      record.seenAt - abortedAt < 1200,
      `logged ${Math.round(record.seenAt - abortedAt)} ms after the abort`,
    );
    await assertSurvived(gw, w);
  },
);

attackTest(
  "disconnect: a stream aborted before its first byte is logged 499 within ~1 s",
  async (gw) => {
    // A forced tool call: the first chunk is due one token (1 s) in.
    const body = {
      model: SLOW_MODEL,
      stream: true,
      messages: [{ role: "user", content: "look it up" }],
      tools: [{
        type: "function",
        function: {
          name: "lookup",
          parameters: { type: "object", properties: { q: { type: "string" } } },
        },
      }],
      tool_choice: { type: "function", function: { name: "lookup" } },
    };
    const { result, watch: w } = await watch(gw, async () => {
      const abort = new AbortController();
      let firstByte = false;
      const pending = fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.any([abort.signal, AbortSignal.timeout(ATTACK_TIMEOUT)]),
      }).then(async (r) => {
        firstByte = true;
        await r.arrayBuffer();
      }).catch(() => null);
      await sleep(300);
      const early = !firstByte;
      abort.abort();
      const abortedAt = performance.now();
      await pending;
      const record = await waitFor(
        () => gw.records().find((r) => r.model === SLOW_MODEL),
        2500,
      );
      return { record, abortedAt, early };
    });
    const { record, abortedAt, early } = result;
    console.log(`    record: ${JSON.stringify(record)}`);
    assert.ok(early, "the response had started before the abort");
    assert.ok(record, "not logged within 2.5 s of the abort");
    assert.equal(record.status, 499, `logged ${record.status} ${record.error}`);
    assert.ok(
      record.seenAt - abortedAt < 1200,
      `logged ${Math.round(record.seenAt - abortedAt)} ms after the abort`,
    );
    await assertSurvived(gw, w);
  },
);

// ---------------------------------------------------------------------------------------------
// 8. KV failure.

/** After `breakKv`, /healthz turns 503 with a reason (within 3 s, never slow) and a chat gets
 * 503 `service_unavailable`, not 500; the process stays up. */
async function checkKvFailure(gw: Gateway, breakKv: () => Promise<void>) {
  const ok = await call(gw, "/healthz");
  assert.equal(ok.status, 200, ok.summary);
  await breakKv();
  let slowest = 0;
  const health = await waitFor(
    async () => {
      const out = await call(gw, "/healthz", { timeoutMs: 3000 });
      slowest = Math.max(slowest, out.ms);
      return out.status === 503 || out.kind !== "response" ? out : undefined;
    },
    3000,
    100,
  );
  console.log(`    healthz: ${health?.summary ?? "still 200 after 3 s"}`);
  assert.ok(health, "/healthz still answers 200 after 3 s");
  assert.equal(health.status, 503, health.summary);
  const reason = health.json?.reason ?? health.json?.error?.message;
  assert.ok(typeof reason === "string" && reason.length > 0, `no reason: ${health.summary}`);
  assert.ok(slowest < 1000, `/healthz took ${Math.round(slowest)} ms`);

  const chat = await call(gw, "/v1/chat/completions", { body: chatBody() });
  console.log(`    chat: ${chat.summary.slice(0, 200)}`);
  assert.equal(chat.status, 503, chat.summary);
  assert.ok(
    chat.json?.error?.type === "service_unavailable" ||
      chat.json?.error?.code === "service_unavailable",
    chat.summary,
  );
  assert.ok(!gw.records().some((r) => r.status === 500), "a 500 was logged");
  assert.equal(gw.exited(), null, "the gateway died");
}

attackTest("kv: deleting the KV file while running → /healthz 503, chat 503", async (gw) => {
  await checkKvFailure(gw, () => Deno.remove(gw.kvPath));
});

attackTest(
  "kv: replacing the KV file with garbage while running → /healthz 503, chat 503",
  async (gw) => {
    await checkKvFailure(gw, async () => {
      await Deno.remove(gw.kvPath);
      await Deno.writeFile(gw.kvPath, new TextEncoder().encode("not a database\n".repeat(512)));
    });
  },
);

// As root (uid 0), a read-only mode stops no write (and the open file descriptor is writable
// anyway), so this one runs only for an unprivileged user.
attackTest("kv: a KV file made read-only while running → /healthz 503, chat 503", async (gw) => {
  try {
    await checkKvFailure(gw, async () => {
      await Deno.chmod(gw.kvPath, 0o444);
      await Deno.chmod(gw.dir, 0o555);
    });
  } finally {
    await Deno.chmod(gw.dir, 0o755); // so that the temp dir can be removed
  }
}, { ignore: Deno.uid() === 0 });

// ---------------------------------------------------------------------------------------------
// 9. Smaller holes.

attackTest(
  "X-Forwarded-For: a 3,000-character entry with trust_proxy is not a 500",
  async (gw) => {
    const long = "203.0.113." + "7".repeat(2990);
    const { result, watch: w } = await watch(gw, async () => {
      const outs = [];
      for (const xff of [`${long}, 10.0.0.1`, long, `${long}, ${long}`]) {
        const headers = { "x-forwarded-for": xff };
        outs.push(await call(gw, "/v1/models", { headers }));
        outs.push(await call(gw, "/v1/chat/completions", { headers, body: chatBody() }));
      }
      return outs;
    });
    for (const out of result) {
      console.log(`    ${out.summary.slice(0, 120)}`);
      assertContained(out, FEW_SECONDS, { maxBodyBytes: 64 * 1024 });
      assert.notEqual(out.status, 500, out.summary);
    }
    await assertSurvived(gw, w);
  },
  { gateway: { config: (c) => void (c.server.trust_proxy = 2) } },
);

attackTest(
  "X-Forwarded-For: with trust_proxy 2 a single client-supplied entry is not trusted",
  async (gw) => {
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await sleep(60_100 - intoMinute);
    const statuses: number[] = [];
    for (let i = 1; i <= 8; i++) {
      const out = await call(gw, "/v1/models", {
        headers: { "x-forwarded-for": `198.51.100.${i}` },
      });
      statuses.push(out.status);
    }
    console.log(`    statuses ${JSON.stringify(statuses)}`);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
    const ips = new Set(gw.records().filter((r) => r.path === "/v1/models").map((r) => r.ip));
    console.log(`    logged ips ${JSON.stringify([...ips])}`);
  },
  {
    gateway: {
      config: (c) => {
        c.server.trust_proxy = 2;
        c.limits.anonymous.other = { per_minute: 5, per_day: 50_000 };
      },
    },
  },
);

attackTest("errors echo at most ~100 characters of an offending 1 MB value", async (gw) => {
  const big = (c: string) => c.repeat(1_000_000);
  const cases: [string, string, Record<string, unknown>, string][] = [
    ["role", "/v1/chat/completions", {
      model: "sim-chat",
      messages: [{ role: big("r"), content: "hi" }],
    }, "r"],
    ["model", "/v1/chat/completions", chatBody({ model: big("q") }), "q"],
    ["content part type", "/v1/chat/completions", {
      model: "sim-chat",
      messages: [{ role: "user", content: [{ type: big("z"), text: "hi" }] }],
    }, "z"],
    ["moderation model", "/v1/moderations", { model: big("w"), input: "hi" }, "w"],
  ];
  const { result, watch: w } = await watch(gw, async () => {
    const outs = [];
    for (const [what, path, body, fill] of cases) {
      outs.push({ what, fill, out: await call(gw, path, { body, timeoutMs: ATTACK_TIMEOUT }) });
    }
    return outs;
  });
  for (const { what, fill, out } of result) {
    const run = Math.max(
      0,
      ...(out.text.match(new RegExp(`${fill}+`, "g")) ?? []).map((s) => s.length),
    );
    console.log(`    ${what}: ${out.status}, ${out.text.length} bytes, longest echo ${run}`);
    assertContained(out, FEW_SECONDS, { allowOk: false });
    assert.ok(out.status >= 400 && out.status < 500, `${what}: ${out.summary}`);
    assert.ok(run <= 128, `${what}: the error echoes ${run} characters of the value`);
    assert.ok(out.text.length < 2048, `${what}: a ${out.text.length}-byte error body`);
  }
  await assertSurvived(gw, w);
});

attackTest(
  'allow-list glob "*a"×10 + "*b" on a key: GET /v1/models answers quickly',
  async (gw) => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const longId = "a".repeat(128);
    const put = await call(gw, `/admin/models/${longId}`, {
      method: "PUT",
      headers: admin,
      body: { provider: "sim", chat_completions: true },
    });
    assert.ok(put.status === 200 || put.status === 201, put.summary);
    const glob = "*a".repeat(10) + "*b";
    const created = await call(gw, "/admin/keys", {
      headers: admin,
      body: { name: "glob", models: [glob] },
    });
    console.log(`    key: ${created.summary.slice(0, 120)}`);
    if (created.status === 400) {
      // Refusing such a glob up front is a fix too.
      assert.ok(isErrorBody(created.json), created.summary);
      return;
    }
    assert.equal(created.status, 201, created.summary);
    const key = created.json.key as string;
    const { result, watch: w } = await watch(gw, () =>
      call(gw, "/v1/models", {
        headers: { authorization: `Bearer ${key}` },
        timeoutMs: ATTACK_TIMEOUT,
      }));
    console.log(`    attack: ${result.summary.slice(0, 160)}`);
    assertContained(result, 2000);
    assert.equal(result.status, 200, result.summary);
    await assertSurvived(gw, w);
  },
);
