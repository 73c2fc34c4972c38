import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { MODERATION_CATEGORIES } from "../src/config/types.ts";
import { ApiError } from "../src/errors.ts";
import type { Provider } from "../src/providers/types.ts";
import { measured, pngDeclaring, textBombPng } from "./support/bombs.ts";
import { FakeChatProvider } from "./support/fake_chat_provider.ts";
import { dataUrl, gifWithComment, jpegWithComment, pngUrl } from "./support/image_fixtures.ts";
import { expectError, postJson } from "./support/http.ts";
import { GENEROUS_LIMITS } from "./support/limits.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

type Raw = Record<string, unknown> & { models: Record<string, unknown>[]; providers: unknown[] };

/** The test config with extra moderation models, generous limits, and `patch` applied last. */
function config(patch: (raw: Raw) => void = () => {}) {
  return testConfig((r) => {
    const raw = r as Raw;
    raw.limits = GENEROUS_LIMITS;
    raw.providers.push({ id: "guard", style: "simulator" });
    raw.models.push(
      { id: "sim-moderation-text", provider: "sim", moderation: true },
      {
        id: "sim-moderation-strict",
        provider: "sim",
        moderation: true,
        moderation_thresholds: { harassment: 0.2, violence: 0.99 },
      },
      {
        id: "guard-mod",
        provider: "guard",
        upstream_model: "guard-chat-v1",
        moderation: true,
        image_input: true,
        moderation_mode: "guard",
        moderation_thresholds: { violence: 0.7 },
      },
      { id: "guard-native", provider: "guard", moderation: true },
      { id: "keyed-mod", provider: "sim", moderation: true, access: "key" },
    );
    patch(raw);
  });
}

async function setup(
  options: { patch?: (raw: Raw) => void; guard?: Provider } = {},
) {
  const guard = options.guard ?? new FakeChatProvider("guard", () => "safe");
  const server = await startServer({
    config: config(options.patch),
    providers: new Map([["guard", guard]]),
  });
  const key = (await server.app.services.keys.create({ name: "t" })).key;
  const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });
  return { server, client, key };
}

function post(server: TestServer, body: unknown, key?: string): Promise<Response> {
  return postJson(`${server.url}/v1/moderations`, body, key);
}

interface Result {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
}

/** The spec's shape: exactly the 11 keys (in order) in both objects, scores in [0, 1],
 * flagged iff a category is true. */
function assertShape(result: Result): void {
  assert.deepEqual(Object.keys(result).sort(), ["categories", "category_scores", "flagged"]);
  assert.deepEqual(Object.keys(result.categories), [...MODERATION_CATEGORIES]);
  assert.deepEqual(Object.keys(result.category_scores), [...MODERATION_CATEGORIES]);
  for (const c of MODERATION_CATEGORIES) {
    assert.equal(typeof result.categories[c], "boolean");
    const score = result.category_scores[c]!;
    assert.ok(typeof score === "number" && score >= 0 && score <= 1, `${c}: ${score}`);
  }
  assert.equal(result.flagged, Object.values(result.categories).some((v) => v));
}

const flaggedCategories = (r: Result) =>
  Object.entries(r.categories).filter(([, v]) => v).map(([k]) => k).sort();

Deno.test("moderations.create: one string, the default model, exactly the 11 categories", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const res = await client.moderations.create({ input: "I will kill you" });
  assert.match(res.id, /^modr-[0-9a-f]{32}$/);
  assert.equal(res.model, "sim-moderation");
  assert.equal(res.results.length, 1);
  const result = res.results[0]! as unknown as Result;
  assertShape(result);
  assert.ok(result.flagged);
  assert.deepEqual(flaggedCategories(result), [
    "harassment",
    "harassment/threatening",
    "violence",
  ]);
});

Deno.test("moderations.create: a batch gives one result per input, in order", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const inputs = [
    "Have a lovely day!",
    "You are a pathetic loser",
    "I want to kill myself",
    "Immigrants are vermin",
    "how can i kill myself",
    "naked pictures of a child",
    "the photo showed dismembered corpses in a pool of blood",
    "I would never hurt you",
  ];
  const res = await client.moderations.create({ model: "sim-moderation", input: inputs });
  const results = res.results as unknown as Result[];
  assert.equal(results.length, inputs.length);
  results.forEach(assertShape);
  assert.deepEqual(results.map(flaggedCategories), [
    [],
    ["harassment"],
    ["self-harm", "self-harm/intent"],
    ["hate"],
    ["self-harm", "self-harm/instructions"],
    ["sexual", "sexual/minors"],
    ["violence", "violence/graphic"],
    [],
  ]);
});

Deno.test("moderations: anonymous callers may use the public default model (raw fetch)", async () => {
  const { server } = await setup();
  await using _ = server;
  const res = await post(server, { input: ["k1ll y0u", "hello"] });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  const body = await res.json();
  assert.deepEqual(Object.keys(body), ["id", "model", "results"]);
  assert.equal(body.results.length, 2);
  body.results.forEach(assertShape);
  assert.ok(body.results[0].flagged);
  assert.ok(!body.results[1].flagged);
});

Deno.test("moderations: image i goes with text i; extra images with the last text", async () => {
  const { server, key } = await setup();
  await using _ = server;
  const plain = await pngUrl(null);
  const threat = await pngUrl("I will kill you");
  const run = async (input: string[], images: string[]) => {
    const res = await post(server, { input, input_images: images }, key);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return (body.results as Result[]).map((r) => r.flagged);
  };
  assert.deepEqual(await run(["hello", "nice day"], [plain, threat]), [false, true]);
  assert.deepEqual(await run(["hello", "nice day"], [threat, plain]), [true, false]);
  assert.deepEqual(await run(["hello", "nice day"], [plain, plain, threat]), [false, true]);
  assert.deepEqual(await run(["hello", "nice day", "hi"], [threat]), [true, false, false]);
  assert.deepEqual(await run(["hello"], [plain, plain]), [false]);
  // A single string input takes every image.
  const single = await post(server, { input: "look", input_images: [plain, threat] }, key);
  assert.equal((await single.json()).results[0].flagged, true);
});

Deno.test("moderations: text embedded in PNG (tEXt/iTXt), JPEG and GIF images is read", async () => {
  const { server, key } = await setup();
  await using _ = server;
  const images = [
    await pngUrl("immigrants are vermin", "tEXt"),
    await pngUrl("immigrants are vermin", "iTXt"),
    dataUrl(jpegWithComment("immigrants are vermin"), "image/jpeg"),
    dataUrl(gifWithComment("immigrants are vermin"), "image/gif"),
  ];
  for (const image of images) {
    const res = await post(server, { input: "what is this?", input_images: [image] }, key);
    const result = (await res.json()).results[0] as Result;
    assert.deepEqual(flaggedCategories(result), ["hate"], image.slice(0, 30));
  }
  // Compressed text (zTXt) is never inflated, so never read.
  const zTxt = await pngUrl("immigrants are vermin", "zTXt");
  const res = await post(server, { input: "what is this?", input_images: [zTxt] }, key);
  assert.deepEqual(flaggedCategories((await res.json()).results[0]), []);
});

Deno.test("moderations: 16 anonymous PNGs whose zTXt inflates to 200 MB each: 200, in little memory", async () => {
  const { server } = await setup();
  await using _ = server;
  const MB = 1024 * 1024;
  const bomb = dataUrl(await textBombPng(200 * MB), "image/png");
  const body = { input: "what is this?", input_images: new Array(16).fill(bomb) };
  const { result: res, growth } = await measured(() => post(server, body));
  assert.equal(res.status, 200);
  assert.equal(((await res.json()).results[0] as Result).flagged, false);
  // The RSS is the whole test process's, which other test files share under --parallel (it
  // grew 122 MB there once with nothing inflated); inflating the bombs would take 3.2 GB.
  assert.ok(growth < 1024 * MB, `RSS grew by ${(growth / MB).toFixed(0)} MB`);
});

Deno.test("moderations: an image over the pixel caps is a 400 image_too_large naming it", async () => {
  const { server, key } = await setup();
  await using _ = server;
  const png = await pngUrl(null);
  const huge = dataUrl(pngDeclaring(100_000, 100_000, Uint8Array.of(1, 2, 3)), "image/png");
  await expectError(await post(server, { input: "a", input_images: [png, huge] }, key), 400, {
    type: "invalid_request_error",
    code: "image_too_large",
    param: "input_images[1]",
    message: /100000x100000 = 10000000000 pixels; the limit is 33554432 pixels per image/,
  });
  // 25 megapixels each: the sixth passes the default 134217728 for a whole request.
  const big = dataUrl(pngDeclaring(5000, 5000, Uint8Array.of(1, 2, 3)), "image/png");
  const tooMany = { input: "a", input_images: new Array(6).fill(big) };
  await expectError(await post(server, tooMany, key), 400, {
    type: "invalid_request_error",
    code: "image_too_large",
    param: "input_images[5]",
    message: /brings this request's images to 150000000 pixels; the limit is 134217728/,
  });
});

Deno.test("moderations.create: OpenAI's multimodal input parts are one input", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const res = await client.moderations.create({
    model: "sim-moderation",
    input: [
      { type: "text", text: "what does this say?" },
      { type: "image_url", image_url: { url: await pngUrl("you are an idiot") } },
    ],
  });
  assert.equal(res.results.length, 1);
  assert.deepEqual(flaggedCategories(res.results[0] as unknown as Result), ["harassment"]);
});

Deno.test("moderations: per-category thresholds from the model's config", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const text = "this stupid printer";
  const normal = (await client.moderations.create({ model: "sim-moderation", input: text }))
    .results[0] as unknown as Result;
  const strict = (await client.moderations.create({ model: "sim-moderation-strict", input: text }))
    .results[0] as unknown as Result;
  assert.deepEqual(normal.category_scores, strict.category_scores);
  const score = strict.category_scores.harassment!;
  assert.ok(score >= 0.2 && score < 0.5, `harassment score ${score}`);
  assert.equal(normal.flagged, false);
  assert.deepEqual(flaggedCategories(strict), ["harassment"]);
  // violence 0.99: a clear threat is still harassment, but no longer violence.
  const threat = (await client.moderations.create({
    model: "sim-moderation-strict",
    input: "I will kill you",
  })).results[0] as unknown as Result;
  assert.ok(threat.category_scores.violence! > 0.5);
  assert.equal(threat.categories.violence, false);
  assert.equal(threat.categories.harassment, true);
});

Deno.test("moderations: every invalid request is a 400 naming the parameter", async () => {
  const { server, key } = await setup();
  await using _ = server;
  const png = await pngUrl(null);
  const notPng = dataUrl(new TextEncoder().encode("just some text, not an image"), "image/png");
  const jpegAsPng = dataUrl(jpegWithComment("x"), "image/png");
  // deno-fmt-ignore
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{}, "input", /Missing required parameter: 'input'/],
    [{ input: null }, "input", /Missing required parameter/],
    [{ input: 42 }, "input", /expected a string or an array of strings, but got a number/],
    [{ input: [] }, "input", /expected at least 1 item, but got 0/],
    [{ input: ["a", 3] }, "input[1]", /expected a string like the other items, but got a number/],
    [{ input: new Array(257).fill("a") }, "input", /expected at most 256 items, but got 257/],
    [{ input: "x".repeat(100_001) }, "input", /expected at most 100000 characters, but got 100001/],
    [{ input: [{ type: "video", url: "x" }] }, "input[0].type", /"text" or "image_url"/],
    [{ input: [{ type: "text", text: 5 }] }, "input[0].text", /expected a string/],
    [{ input: [{ type: "image_url", image_url: { url: "https://x/a.png" } }] }, "input[0].image_url.url", /data URL/],
    [{ input: [{ type: "image_url", image_url: {} }] }, "input[0].image_url.url", /Missing required parameter/],
    [{ input: "a", model: "" }, "model", /expected a non-empty string, but got ""/],
    [{ input: "a", model: 12 }, "model", /expected a string/],
    [{ input: "a", input_images: png }, "input_images", /expected an array of strings, but got a string/],
    [{ input: "a", input_images: [7] }, "input_images[0]", /expected a string \(a base64 image data URL\)/],
    [{ input: "a", input_images: ["data:text/plain;base64,aGk="] }, "input_images[0]", /base64 image data URL/],
    [{ input: "a", input_images: [png, notPng] }, "input_images[1]", /not a PNG, JPEG, GIF or WebP/],
    [{ input: "a", input_images: [jpegAsPng] }, "input_images[0]", /says image\/png but holds a JPEG/],
    [{ input: "a", input_images: [png, "data:image/png;base64,@@@"] }, "input_images[1]", /valid base64/],
    [{ input: "a", input_images: new Array(17).fill(png) }, "input_images", /expected at most 16 images in a request/],
  ];
  for (const [body, param, message] of cases) {
    const error = await expectError(await post(server, body, key), 400, {
      type: "invalid_request_error",
      param,
      message,
    });
    // Spec §7: moderation errors carry a code.
    assert.equal(typeof error.code, "string", JSON.stringify(error));
  }
  // Unknown fields are ignored, as OpenAI does.
  assert.equal((await post(server, { input: "a", user: "u-1", extra: true }, key)).status, 200);
});

Deno.test("moderations: model errors: 404 unknown, 400 unsupported_capability, 401 for a keyed model", async () => {
  const { server, client, key } = await setup();
  await using _ = server;
  await expectError(await post(server, { input: "a", model: "nope" }, key), 404, {
    type: "invalid_request_error",
    code: "model_not_found",
    param: "model",
  });
  await expectError(await post(server, { input: "a", model: "sim-chat" }, key), 400, {
    type: "invalid_request_error",
    code: "unsupported_capability",
    param: "model",
    message: /does not support moderation/,
  });
  await expectError(
    await post(server, {
      input: "a",
      model: "sim-moderation-text",
      input_images: [await pngUrl(null)],
    }, key),
    400,
    { code: "unsupported_capability", param: "input_images", message: /image_input/ },
  );
  await expectError(await post(server, { input: "a", model: "keyed-mod" }), 401, {
    code: "invalid_api_key",
  });
  assert.equal((await post(server, { input: "a", model: "keyed-mod" }, key)).status, 200);
  await assert.rejects(
    client.moderations.create({ model: "sim-chat", input: "a" }),
    (e: unknown) => e instanceof OpenAI.BadRequestError && e.code === "unsupported_capability",
  );
  await assert.rejects(
    client.moderations.create({ model: "nope", input: "a" }),
    (e: unknown) => e instanceof OpenAI.NotFoundError && e.code === "model_not_found",
  );
});

Deno.test("moderations: no model and no default configured → 400 saying so", async () => {
  const { server } = await setup({
    patch: (raw) => {
      for (const m of raw.models) delete m.default_moderation;
    },
  });
  await using _ = server;
  await expectError(await post(server, { input: "a" }), 400, {
    type: "invalid_request_error",
    code: "no_default_model",
    param: "model",
    message: /no default moderation model is configured/,
  });
  // Naming a model still works.
  assert.equal((await post(server, { input: "a", model: "sim-moderation" })).status, 200);
});

Deno.test("moderations: a default whose provider is unavailable → 400 saying so", async () => {
  const { server } = await setup({
    patch: (raw) => {
      for (const m of raw.models) delete m.default_moderation;
      raw.providers.push({
        id: "remote",
        style: "openai",
        base_url: "http://127.0.0.1:9/v1",
        api_key_env: "REMOTE_KEY_NOT_SET",
      });
      raw.models.push({
        id: "remote-moderation",
        provider: "remote",
        moderation: true,
        default_moderation: true,
      });
    },
  });
  await using _ = server;
  await expectError(await post(server, { input: "a" }), 400, {
    code: "no_default_model",
    message: /default moderation model `remote-moderation` is not available/,
  });
});

/** A guard answer in JSON, from a map of the categories that are set. */
const json = (scores: Record<string, number>) => JSON.stringify(scores);

Deno.test("guard moderation: a chat model's JSON answer becomes the 11 categories", async () => {
  const guard = new FakeChatProvider(
    "guard",
    (text) =>
      text.includes("attack")
        ? "```json\n" + json({ violence: 0.8, "Self_Harm/Intent": 0.1, illicit: 0.9, reason: 1 }) +
          "\n```"
        : json({ violence: 0.01, harassment: 0.6 }),
  );
  const { server, client } = await setup({ guard });
  await using _ = server;
  const res = await client.moderations.create({
    model: "guard-mod",
    input: ["we attack at dawn", "you again"],
  });
  assert.equal(res.model, "guard-mod");
  const [first, second] = res.results as unknown as Result[];
  assertShape(first!);
  assertShape(second!);
  // violence 0.8 reaches the model's 0.7 threshold; the unknown "illicit" is dropped.
  assert.deepEqual(flaggedCategories(first!), ["violence"]);
  assert.equal(first!.category_scores["self-harm/intent"], 0.1);
  assert.equal(first!.category_scores["self-harm"], 0.1); // a subcategory lifts its parent
  assert.equal(first!.category_scores.sexual, 0);
  assert.deepEqual(flaggedCategories(second!), ["harassment"]);

  // What the chat model was asked: the guard prompt, the text, the upstream model.
  assert.equal(guard.calls.length, 2);
  const call = guard.calls.find((c) => c.userText.includes("we attack at dawn"))!;
  assert.equal(call.upstreamModel, "guard-chat-v1");
  assert.equal(call.request.options.temperature, 0);
  assert.equal(call.request.stream, false);
  const system = call.request.messages[0]!;
  assert.equal(system.role, "system");
  const prompt = system.parts.map((p) => p.type === "text" ? p.text : "").join("");
  for (const c of MODERATION_CATEGORIES) assert.ok(prompt.includes(`- ${c}:`));
});

Deno.test("guard moderation: images are sent with the text they pair with", async () => {
  const guard = new FakeChatProvider(
    "guard",
    (_text, images) => images.length > 0 ? "unsafe\nS1" : "safe",
  );
  const { server, key } = await setup({ guard });
  await using _ = server;
  const a = await pngUrl("a");
  const b = await pngUrl("b");
  const c = await pngUrl("c");
  const res = await post(
    server,
    { model: "guard-mod", input: ["one", "two", "three"], input_images: [a, b, c, a] },
    key,
  );
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  const byText = (t: string) => guard.calls.find((call) => call.userText.includes(t))!.images;
  assert.deepEqual(byText("one"), [a]);
  assert.deepEqual(byText("two"), [b]);
  assert.deepEqual(byText("three"), [c, a]);
  assert.deepEqual((body.results as Result[]).map(flaggedCategories), [
    ["violence"],
    ["violence"],
    ["violence"],
  ]);
});

Deno.test("guard moderation: Llama Guard verdicts map onto the categories", async () => {
  const answers: Record<string, string> = {
    a: "safe",
    b: "unsafe\nS1,S10",
    c: "unsafe\nS4",
    d: "unsafe\nS11",
    e: "unsafe\nS2", // non-violent crimes: none of the 11
  };
  const guard = new FakeChatProvider(
    "guard",
    (text) => answers[/<content>\n(\w)/.exec(text)![1]!]!,
  );
  const { server, client } = await setup({ guard });
  await using _ = server;
  const res = await client.moderations.create({ model: "guard-mod", input: Object.keys(answers) });
  const results = res.results as unknown as Result[];
  results.forEach(assertShape);
  assert.deepEqual(results.map(flaggedCategories), [
    [],
    ["hate", "violence"],
    ["sexual", "sexual/minors"],
    ["self-harm"],
    [],
  ]);
  assert.equal(results[1]!.category_scores.hate, 1);
});

Deno.test("guard moderation: an answer that is no classification is a 502, never 'not flagged'", async () => {
  const guard = new FakeChatProvider(
    "guard",
    (text) => text.includes("odd") ? "I'm sorry, I can't help with that request." : "safe",
  );
  const { server, client, key } = await setup({ guard });
  await using _ = server;
  const error = await expectError(
    await post(server, { model: "guard-mod", input: ["fine", "odd one"] }, key),
    502,
    { type: "upstream_error", code: "upstream_error", message: /not a classification/ },
  );
  assert.match(error.message, /I'm sorry, I can't help/);
  await assert.rejects(
    client.moderations.create({ model: "guard-mod", input: "odd" }),
    (e: unknown) => e instanceof OpenAI.InternalServerError && e.status === 502,
  );
});

Deno.test("guard moderation: the chat provider's errors pass through", async () => {
  const guard = new FakeChatProvider(
    "guard",
    () => new ApiError(429, "rate_limit_error", "upstream busy", { code: "rate_limit_exceeded" }),
  );
  const { server, key } = await setup({ guard });
  await using _ = server;
  await expectError(await post(server, { model: "guard-mod", input: "a" }, key), 429, {
    code: "rate_limit_exceeded",
    message: /upstream busy/,
  });
});

Deno.test("guard moderation: a large batch is classified in order", async () => {
  const guard = new FakeChatProvider("guard", (text) => {
    const n = Number(/item (\d+)/.exec(text)![1]);
    return n % 3 === 0 ? json({ hate: 0.9 }) : json({ hate: 0.1 });
  });
  const { server, client } = await setup({ guard });
  await using _ = server;
  const input = Array.from({ length: 10 }, (_, i) => `item ${i}`);
  const res = await client.moderations.create({ model: "guard-mod", input });
  assert.deepEqual(res.results.map((r) => r.flagged), input.map((_, i) => i % 3 === 0));
  assert.equal(guard.calls.length, 10);
});

Deno.test("moderations: native mode on a provider without a moderation API → 501", async () => {
  const { server, key } = await setup();
  await using _ = server;
  await expectError(await post(server, { model: "guard-native", input: "a" }, key), 501, {
    code: "not_implemented",
    message: /moderation_mode: "guard"/,
  });
});

Deno.test("moderations: the request log names the model and provider, not the text", async () => {
  const { server, client } = await setup();
  await using _ = server;
  await client.moderations.create({ input: "a very private sentence" });
  await server.app.services.logger.flush();
  const record = server.output.records().find((r) => r.path === "/v1/moderations");
  assert.ok(record);
  assert.equal(record.status, 200);
  assert.equal(record.model, "sim-moderation");
  assert.equal(record.provider, "sim");
  assert.ok(!server.output.out.includes("very private"));
});
