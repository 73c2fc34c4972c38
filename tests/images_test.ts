import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { checkJpeg, jpegFromDataUrl } from "./support/jpeg_check.ts";
import { expectError, postJson } from "./support/http.ts";
import { GENEROUS_LIMITS } from "./support/limits.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

const SIZES = ["1024x1024", "1024x1792", "1792x1024"];

/** The test config plus models that lack some image features, with generous limits. */
function config() {
  return testConfig((raw) => {
    raw.limits = GENEROUS_LIMITS;
    (raw.models as unknown[]).push(
      {
        id: "sim-image-basic",
        provider: "sim",
        access: "preview",
        image_generation: { sizes: ["256x256", "1024x1024"], max_n: 1 },
      },
      {
        id: "sim-image-small",
        provider: "sim",
        access: "preview",
        image_generation: {
          sizes: ["64x48"],
          max_n: 2,
          guidance_scale: true,
          num_inference_steps: true,
        },
      },
    );
  });
}

async function setup() {
  const server = await startServer({ config: config() });
  const keys = server.app.services.keys;
  const preview = (await keys.create({ name: "preview", preview: true })).key;
  const plain = (await keys.create({ name: "plain" })).key;
  const client = new OpenAI({ apiKey: preview, baseURL: `${server.url}/v1`, maxRetries: 0 });
  return { server, preview, plain, client };
}

function post(server: TestServer, body: unknown, key?: string): Promise<Response> {
  return postJson(`${server.url}/v1/images/generations`, body, key);
}

/** Mean absolute difference of two decoded images' RGB channels. */
function difference(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) if (i % 4 !== 3) sum += Math.abs(a[i]! - b[i]!);
  return sum / (a.length * 0.75);
}

Deno.test("images.generate: defaults give one 1024x1024 JPEG data URL", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const result = await client.images.generate({ model: "sim-image", prompt: "a lighthouse" });
  assert.equal(result.created, Math.floor(server.clock.now() / 1000));
  assert.equal(result.data?.length, 1);
  checkJpeg(jpegFromDataUrl(result.data![0]!.url!), 1024, 1024);
});

Deno.test("images.generate: every allowed size, exactly, and n = 2 gives two different images", async () => {
  const { server, client } = await setup();
  await using _ = server;
  for (const size of SIZES) {
    const [width, height] = size.split("x").map(Number) as [number, number];
    const n = size === "1024x1024" ? 2 : 1;
    const result = await client.images.generate({ model: "sim-image", prompt: "a city", size, n });
    assert.equal(result.data?.length, n, size);
    const decoded = result.data!.map((d) => checkJpeg(jpegFromDataUrl(d.url!), width, height));
    if (n === 2) {
      assert.notEqual(result.data![0]!.url, result.data![1]!.url);
      assert.ok(difference(decoded[0]!.data, decoded[1]!.data) > 2);
    }
  }
});

Deno.test("images.generate: the same prompt gives the same picture; another prompt a visibly different one", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const generate = async (prompt: string) =>
    (await client.images.generate({ model: "sim-image-small", prompt })).data![0]!.url!;
  const first = await generate("mountains at sunset");
  assert.equal(await generate("mountains at sunset"), first);
  const other = await generate("a quiet harbour at night");
  const a = checkJpeg(jpegFromDataUrl(first), 64, 48);
  const b = checkJpeg(jpegFromDataUrl(other), 64, 48);
  const diff = difference(a.data, b.data);
  assert.ok(diff > 20, `mean difference ${diff.toFixed(1)} is too small to see`);
});

Deno.test("images.generate: guidance_scale and num_inference_steps are passed as extra fields and used", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const generate = async (extra: Record<string, number>) =>
    (await client.images.generate({ model: "sim-image-small", prompt: "a red rose", ...extra }))
      .data![0]!.url!;
  const defaults = await generate({});
  assert.equal(await generate({ guidance_scale: 3.5, num_inference_steps: 30 }), defaults);
  assert.notEqual(await generate({ guidance_scale: 12 }), defaults);
  assert.notEqual(await generate({ num_inference_steps: 4 }), defaults);
  await assert.rejects(
    client.images.generate({ model: "sim-image-small", prompt: "x", guidance_scale: 99 } as never),
    (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === "guidance_scale",
  );
});

Deno.test("images: response_format b64_json gives bare base64 JPEG", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const result = await client.images.generate({
    model: "sim-image-small",
    prompt: "a tree",
    response_format: "b64_json",
  });
  const b64 = result.data![0]!.b64_json!;
  assert.equal(result.data![0]!.url, undefined);
  checkJpeg(Uint8Array.fromBase64(b64), 64, 48);
});

Deno.test("images: a size the model does not allow is a 400 naming it and listing the allowed ones", async () => {
  const { server, client, preview } = await setup();
  await using _ = server;
  const error = await expectError(
    await post(server, { model: "sim-image", prompt: "a cat", size: "512x512" }, preview),
    400,
    { type: "invalid_request_error", param: "size" },
  );
  assert.match(error.message, /512x512/);
  for (const size of SIZES) assert.ok(error.message.includes(size), error.message);
  await assert.rejects(
    client.images.generate({ model: "sim-image", prompt: "a cat", size: "1536x1024" }),
    (e: unknown) =>
      e instanceof OpenAI.BadRequestError && e.param === "size" && /1536x1024/.test(e.message) &&
      /1792x1024/.test(e.message),
  );
});

Deno.test("images: every invalid parameter is a 400 that names it", async () => {
  const { server, preview } = await setup();
  await using _ = server;
  // deno-fmt-ignore
  const cases: [Record<string, unknown>, string, RegExp, string][] = [
    [{ prompt: "x" }, "model", /Missing required parameter: 'model'/, "missing_required_parameter"],
    [{ model: 7, prompt: "x" }, "model", /expected a string, but got a number/, "invalid_type"],
    [{ model: "sim-image" }, "prompt", /Missing required parameter: 'prompt'/, "missing_required_parameter"],
    [{ model: "sim-image", prompt: "  " }, "prompt", /expected a description of the image, but got only white space/, "invalid_value"],
    [{ model: "sim-image", prompt: ["x"] }, "prompt", /got an array/, "invalid_type"],
    [{ model: "sim-image", prompt: "x".repeat(32_001) }, "prompt", /expected at most 32000 characters, but got 32001/, "invalid_value"],
    [{ model: "sim-image", prompt: "x", n: 0 }, "n", /expected an integer of at least 1, but got 0/, "invalid_value"],
    [{ model: "sim-image", prompt: "x", n: 1.5 }, "n", /expected an integer/, "invalid_type"],
    [{ model: "sim-image", prompt: "x", n: "2" }, "n", /expected an integer, but got a string/, "invalid_type"],
    [{ model: "sim-image", prompt: "x", n: 5 }, "n", /expected at most 4 images per request from the model `sim-image`, but got 5/, "invalid_value"],
    [{ model: "sim-image-basic", prompt: "x", n: 2 }, "n", /one image per request/, "unsupported_parameter"],
    [{ model: "sim-image", prompt: "x", size: 1024 }, "size", /expected "1024x1024", "1024x1792" or "1792x1024", but got a number/, "invalid_type"],
    [{ model: "sim-image", prompt: "x", guidance_scale: -1 }, "guidance_scale", /from 0 to 20/, "invalid_value"],
    [{ model: "sim-image", prompt: "x", guidance_scale: "high" }, "guidance_scale", /a number/, "invalid_type"],
    [{ model: "sim-image", prompt: "x", num_inference_steps: 0 }, "num_inference_steps", /from 1 to 150/, "invalid_value"],
    [{ model: "sim-image", prompt: "x", num_inference_steps: 2.5 }, "num_inference_steps", /an integer/, "invalid_type"],
    [{ model: "sim-image-basic", prompt: "x", guidance_scale: 2 }, "guidance_scale", /^Unsupported parameter: 'guidance_scale'\. The model `sim-image-basic` does not take it\.$/, "unsupported_parameter"],
    [{ model: "sim-image-basic", prompt: "x", num_inference_steps: 20 }, "num_inference_steps", /does not take it/, "unsupported_parameter"],
    [{ model: "sim-image", prompt: "x", response_format: "png" }, "response_format", /"url" or "b64_json"/, "invalid_value"],
    [{ model: "sim-image", prompt: "x", output_format: "png" }, "output_format", /expected "jpeg", but got "png"/, "invalid_value"],
  ];
  for (const [body, param, message, code] of cases) {
    await expectError(await post(server, body, preview), 400, {
      type: "invalid_request_error",
      param,
      message,
      code,
    });
  }
  // Unknown fields are ignored, as OpenAI does; known ones set to null mean "the default".
  const res = await post(server, {
    model: "sim-image-small",
    prompt: "x",
    style: "vivid",
    user: "u1",
    n: null,
    size: null,
  }, preview);
  assert.equal(res.status, 200);
  assert.equal((await res.json()).data.length, 1);
});

Deno.test("images: unknown model 404, a model that cannot draw 400 unsupported_capability", async () => {
  const { server, preview } = await setup();
  await using _ = server;
  await expectError(await post(server, { model: "dall-e-9", prompt: "x" }, preview), 404, {
    type: "invalid_request_error",
    code: "model_not_found",
    param: "model",
  });
  await expectError(await post(server, { model: "sim-chat", prompt: "x" }, preview), 400, {
    type: "invalid_request_error",
    code: "unsupported_capability",
    param: "model",
  });
});

Deno.test("images: the model's default size applies when it does not allow 1024x1024", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const result = await client.images.generate({ model: "sim-image-small", prompt: "dunes" });
  checkJpeg(jpegFromDataUrl(result.data![0]!.url!), 64, 48);
});

Deno.test("images: preview gating: anonymous 401, key without preview 403, hidden from their model lists", async () => {
  const { server, plain, preview } = await setup();
  await using _ = server;
  const body = { model: "sim-image", prompt: "a boat" };
  await expectError(await post(server, body), 401, {
    type: "authentication_error",
    code: "invalid_api_key",
  });
  await expectError(await post(server, body, plain), 403, {
    type: "permission_error",
    code: "model_not_permitted",
    param: "model",
  });
  await expectError(await post(server, body, "sk-sy-" + "x".repeat(32)), 401, {
    code: "invalid_api_key",
  });
  // An anonymous caller learns nothing about the parameters before the access check.
  await expectError(await post(server, { model: "sim-image", size: "1x1" }), 401, {});

  const plainClient = new OpenAI({ apiKey: plain, baseURL: `${server.url}/v1`, maxRetries: 0 });
  await assert.rejects(
    plainClient.images.generate(body),
    (e: unknown) => e instanceof OpenAI.PermissionDeniedError,
  );

  const list = async (key?: string) => {
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
    const res = await fetch(`${server.url}/v1/models`, { headers });
    return (await res.json()).data.map((m: { id: string }) => m.id) as string[];
  };
  assert.ok(!(await list()).includes("sim-image"));
  assert.ok(!(await list(plain)).includes("sim-image"));
  assert.ok((await list(preview)).includes("sim-image"));
});

Deno.test("images: the request log names the model, provider and key", async () => {
  const { server, client } = await setup();
  await using _ = server;
  await client.images.generate({ model: "sim-image-small", prompt: "secret prompt text" });
  await server.app.services.logger.flush();
  const record = server.output.records().find((r) => r.path === "/v1/images/generations");
  assert.ok(record);
  assert.equal(record.status, 200);
  assert.equal(record.model, "sim-image-small");
  assert.equal(record.provider, "sim");
  assert.ok(typeof record.key_id === "string");
  assert.ok(!server.output.out.includes("secret prompt text"));
});

Deno.test("images: a client that disconnects mid-generation is logged as 499, not as a crash", async () => {
  const { server, preview } = await setup();
  await using _ = server;
  const controller = new AbortController();
  const request = fetch(`${server.url}/v1/images/generations`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${preview}` },
    body: JSON.stringify({ model: "sim-image", prompt: "slow", n: 4, size: "1792x1024" }),
    signal: controller.signal,
  }).catch((e) => e);
  await new Promise((resolve) => setTimeout(resolve, 30));
  controller.abort();
  assert.ok((await request) instanceof Error);
  let record: Record<string, unknown> | undefined;
  for (let i = 0; i < 200 && !record; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    record = server.output.records().find((r) => r.path === "/v1/images/generations");
  }
  assert.ok(record, "a log record");
  assert.equal(record.status, 499);
  assert.equal(record.error, "client_disconnected");
  assert.ok(!server.output.err.includes("unhandled"), server.output.err);
});
