/// <reference lib="dom" />
/**
 * The web pages in real headless Chromium against the app on a real port: the catalogue shows
 * what `/v1/models` shows, the playground streams, stops (aborting the upstream), calls tools,
 * sends images, moderates and generates images, and an operator manages keys and watches the
 * log in /admin. axe-core checks each page; screenshots go to docs/screenshots/.
 */
import assert from "node:assert/strict";
import { writePng } from "./support/png_writer.ts";
import { admin } from "./support/admin.ts";
import { eventually } from "./support/eventually.ts";
import { launch, type Page, screenshots, seriousViolations, textOf } from "./web/browser.ts";
import { ADMIN_TOKEN, SITE, startWebGateway } from "./web/gateway.ts";

/** Waits until `fn` is true in the page (polling), with a message naming what it waited for. */
async function until(page: Page, what: string, fn: string, timeout = 15_000): Promise<void> {
  try {
    await page.waitForFunction(fn, { timeout, polling: 50 });
  } catch (e) {
    throw new Error(`timed out waiting for ${what}: ${(e as Error).message}`);
  }
}

async function assertAccessible(page: Page, name: string): Promise<void> {
  const violations = await seriousViolations(page);
  assert.deepEqual(violations, [], `${name}: serious accessibility violations`);
}

Deno.test({
  name: "web pages in headless Chromium",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using gateway = await startWebGateway();
    const { server } = gateway;
    const browser = await launch();
    try {
      const page = await browser.newPage();
      page.on("dialog", (dialog) => dialog.accept());
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(String(e)));
      await page.setViewport({ width: 1280, height: 900 });

      await t.step("the catalogue lists exactly what /v1/models lists anonymously", async () => {
        await page.goto(`${server.url}/`, { waitUntil: "networkidle0" });
        const shown = await page.$$eval(
          "[data-model]",
          (els) => els.map((e) => e.getAttribute("data-model")),
        );
        const api = await (await fetch(`${server.url}/v1/models`)).json();
        assert.deepEqual(shown, api.data.map((m: { id: string }) => m.id));
        assert.ok(!shown.includes("sim-image") && !shown.includes("sim-keyed"));
        assert.equal(await textOf(page, "h1"), SITE.name);
        assert.match(await textOf(page, "main"), /models@harbour\.example/);
        assert.equal(await textOf(page, ".base-url"), `${server.url}/v1`);
        assert.match(
          await textOf(page, "#snippet-python"),
          new RegExp(`base_url="${server.url}/v1"`),
        );
        await assertAccessible(page, "/");
        await screenshots(page, "home");
      });

      await page.goto(`${server.url}/playground`, { waitUntil: "networkidle0" });
      await until(page, "the model list", `document.querySelectorAll("#model option").length > 0`);

      await t.step(
        "a streamed chat shows text as it arrives; Stop aborts the upstream",
        async () => {
          await page.select("#model", "sim-slow");
          await page.type("#max-tokens", "400");
          await page.type("#temperature", "0.7");
          await page.type("#system", "You are a harbour pilot.");
          const sent: unknown[] = [];
          const onRequest = (request: { url(): string; postData(): string | undefined }) => {
            if (request.url().endsWith("/v1/chat/completions")) {
              sent.push(JSON.parse(request.postData() ?? "null"));
            }
          };
          page.on("request", onRequest);
          await page.type(
            "#prompt",
            "Tell me a long story about the ships, the harbour, the tides and the lighthouse keeper.",
          );
          const aborted = gateway.nextAbort();
          await page.click("#send");
          const text = ".message.assistant .text";
          await until(
            page,
            "the first words",
            `document.querySelector(${JSON.stringify(text)})?.textContent.length > 0`,
          );
          const early = await textOf(page, text);
          await until(
            page,
            "more words while still streaming",
            `document.querySelector(${
              JSON.stringify(text)
            }).textContent.length > ${early.length} && !document.querySelector("#stop").disabled`,
          );
          assert.equal(await page.$eval("#stop", (b) => (b as HTMLButtonElement).disabled), false);
          await page.click("#stop");
          page.off("request", onRequest);
          assert.deepEqual(sent, [{
            model: "sim-slow",
            messages: [
              { role: "system", content: "You are a harbour pilot." },
              {
                role: "user",
                content:
                  "Tell me a long story about the ships, the harbour, the tides and the lighthouse keeper.",
              },
            ],
            stream: true,
            stream_options: { include_usage: true },
            temperature: 0.7,
            max_tokens: 400,
          }]);
          await aborted; // the simulator's stream saw its signal fire
          await until(
            page,
            "the stopped note",
            `document.querySelector("#chat-status").textContent === "Stopped."`,
          );
          // The record is written once the stream settles, after the abort reached the model.
          const record = await eventually(async () => {
            const records = await admin(server, "GET", "/admin/logs?model=sim-slow");
            return records.body.data[0];
          }, "the stopped chat's log record");
          assert.equal(record.status, 499);
          assert.equal(record.error, "client_disconnected");
        },
      );

      await t.step("the keyboard alone sends a message (Ctrl+Enter)", async () => {
        await page.click("#clear");
        await page.$eval("#system", (e) => ((e as HTMLTextAreaElement).value = ""));
        await page.$eval("#temperature", (e) => ((e as HTMLInputElement).value = ""));
        await page.$eval("#max-tokens", (e) => ((e as HTMLInputElement).value = ""));
        await page.select("#model", "sim-chat");
        await page.focus("#prompt");
        await page.keyboard.type("Ahoy there");
        await page.keyboard.down("Control");
        await page.keyboard.press("Enter");
        await page.keyboard.up("Control");
        await until(
          page,
          "the answer",
          `document.querySelector(".message.assistant .text")?.textContent.includes("Ahoy there")`,
        );
        // On a fresh load, the first Tab stop skips to the content.
        await page.goto(`${server.url}/playground`, { waitUntil: "networkidle0" });
        await page.keyboard.press("Tab");
        assert.equal(
          await page.evaluate(() => document.activeElement?.textContent),
          "Skip to content",
        );
      });

      await t.step("a tool call is shown, and its result continues the chat", async () => {
        await page.click("#clear");
        await page.select("#model", "sim-vision");
        await page.$eval("#tools", (el) => {
          (el as HTMLTextAreaElement).value = JSON.stringify([{
            type: "function",
            function: {
              name: "get_weather",
              parameters: { type: "object", properties: { city: { type: "string" } } },
            },
          }]);
        });
        await page.type("#prompt", "Use get_weather for city=Paris");
        await page.click("#send");
        await until(
          page,
          "the tool call",
          `document.querySelector(".tool-call")?.textContent.includes("get_weather")`,
        );
        assert.match(await textOf(page, ".tool-call pre"), /"city":\s*"Paris"/);
        await page.type(".tool-results textarea", '{"temp": 21}');
        await page.click(".tool-results button[type=submit]");
        await until(
          page,
          "the answer using the result",
          `[...document.querySelectorAll(".message.assistant .text")].some((e) => e.textContent.includes("returned"))`,
        );
        await page.$eval("#tools", (el) => ((el as HTMLTextAreaElement).value = ""));
      });

      await t.step("an attached image is sent and described", async () => {
        await page.click("#clear");
        const width = 64, height = 48;
        const samples = new Array(width * height * 3).fill(0).map((_, i) => (i * 7) % 256);
        const png = await writePng({ width, height, colorType: 2, depth: 8, samples });
        const file = await Deno.makeTempFile({ suffix: ".png" });
        await Deno.writeFile(file, png);
        const input = await page.$("#attach");
        await (input as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(file);
        await until(
          page,
          "the attachment thumbnail",
          `document.querySelectorAll("#attachments img").length === 1`,
        );
        await page.type("#prompt", "What is in this picture?");
        await page.click("#send");
        await until(
          page,
          "the description",
          `!document.querySelector("#send").disabled && document.querySelector(".message.assistant .text")?.textContent.includes("PNG")`,
        );
        assert.match(await textOf(page, ".message.assistant .text"), /64 × 48 pixels/);
        assert.equal(await page.$$eval(".message.user img", (els) => els.length), 1);
        await Deno.remove(file);
      });

      await t.step("moderation shows the category scores as bars", async () => {
        await page.type("#moderation-input", "I will kill you");
        await page.click("#moderation-form button[type=submit]");
        await until(
          page,
          "the scores",
          `document.querySelectorAll("#moderation-result tbody tr").length === 11`,
        );
        assert.equal(await textOf(page, "#moderation-result p"), "Flagged");
        assert.equal(await page.$$eval("#moderation-result svg.score", (els) => els.length), 11);
      });

      await t.step(
        "embeddings show two texts' similarity, closer when they share words",
        async () => {
          const compare = async (a: string, b: string) => {
            await page.$eval("#embedding-a", (el, v) => ((el as HTMLTextAreaElement).value = v), a);
            await page.$eval("#embedding-b", (el, v) => ((el as HTMLTextAreaElement).value = v), b);
            await page.$eval("#embeddings-result", (el) => (el.textContent = ""));
            await page.click("#embeddings-form button[type=submit]");
            await until(
              page,
              "the similarity",
              `!!document.querySelector("#embeddings-result .num")`,
            );
            assert.match(
              await textOf(page, "#embeddings-result .hint"),
              /^256 dimensions, \d+ input tokens$/,
            );
            return Number(await textOf(page, "#embeddings-result .num"));
          };
          assert.equal(
            await page.$eval("#embedding-model", (s) => (s as HTMLSelectElement).value),
            "sim-embed",
          );
          const same = await compare("the harbour ferry timetable", "the harbour ferry timetable");
          const close = await compare(
            "the harbour ferry timetable",
            "ferry timetable for the harbour today",
          );
          const far = await compare(
            "the harbour ferry timetable",
            "quantum chromodynamics lecture notes",
          );
          assert.ok(Math.abs(same - 1) < 0.001, `same text: ${same}`);
          assert.ok(close > far, `sharing words ${close} against none ${far}`);
          assert.equal(await page.$$eval("#embeddings-result svg.score", (els) => els.length), 1);
        },
      );

      await t.step("the playground is accessible; screenshots", async () => {
        assert.equal(
          await page.$eval("#image-form button", (b) => (b as HTMLButtonElement).disabled),
          true,
        );
        await assertAccessible(page, "/playground");
      });

      let keyValue = "";
      /** The request ids of the key's accepted and refused calls. */
      const keyCalls: string[] = [];
      await t.step("an operator creates a key that works at once, then revokes it", async () => {
        await page.goto(`${server.url}/admin`, { waitUntil: "networkidle0" });
        await until(page, "the sign-in form", `!document.querySelector("#login").hidden`);
        await assertAccessible(page, "/admin (signed out)");
        await page.type("#admin-token", ADMIN_TOKEN);
        await page.click("#login-form button[type=submit]");
        await until(page, "the dashboard", `!document.querySelector("#dashboard").hidden`);
        assert.equal(await page.evaluate(() => location.href), `${server.url}/admin`);
        await page.type("#key-name", "web-team");
        await page.click("#key-preview");
        await page.type("#limit-chat-minute", "120");
        await page.click("#key-submit");
        await until(
          page,
          "the new key",
          `document.querySelector("#new-key-value").textContent.startsWith("sk-sy-")`,
        );
        keyValue = await textOf(page, "#new-key-value");
        const call = () =>
          fetch(`${server.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${keyValue}`, "content-type": "application/json" },
            body: JSON.stringify({
              model: "sim-keyed",
              messages: [{ role: "user", content: "hi" }],
            }),
          });
        const ok = await call();
        assert.equal(ok.status, 200);
        keyCalls.push(ok.headers.get("x-request-id")!);
        await ok.body?.cancel();
        const keys = await admin(server, "GET", "/admin/keys");
        const created = keys.body.data.find((k: { name: string }) => k.name === "web-team");
        assert.deepEqual(created.limits, { chat: { per_minute: 120 } });
        assert.equal(created.preview, true);

        // The key in the playground: the preview image model appears and generates.
        const playground = await browser.newPage();
        await playground.setViewport({ width: 1280, height: 900 });
        await playground.goto(`${server.url}/playground`, { waitUntil: "networkidle0" });
        await playground.type("#api-key", keyValue);
        await playground.$eval("#api-key", (e) => e.dispatchEvent(new Event("change")));
        await until(
          playground,
          "the image model",
          `document.querySelector("#image-model option")?.value === "sim-image"`,
        );
        await playground.type("#image-prompt", "red sunset over the sea with mountains");
        await playground.click("#image-form button[type=submit]");
        await until(
          playground,
          "the picture",
          `document.querySelector("#image-result img")?.complete`,
          30_000,
        );
        assert.match(
          await playground.$eval("#image-result img", (i) => i.getAttribute("src")!),
          /^data:image\/jpeg;base64,/,
        );
        await playground.type("#prompt", "Hello from the harbour, how are the tides today?");
        await playground.click("#send");
        await until(
          playground,
          "an answer",
          `!document.querySelector("#send").disabled && document.querySelector(".message.assistant .text")?.textContent.length > 0`,
        );
        await playground.type("#moderation-input", "You people are vermin and I will hurt you");
        await playground.click("#moderation-form button[type=submit]");
        await until(
          playground,
          "the scores",
          `document.querySelectorAll("#moderation-result svg.score").length === 11`,
        );
        await screenshots(playground, "playground");
        await playground.close();

        // Edit: the form comes back filled in, and a save keeps what it did not change.
        await page.click(`tr[data-key="${created.id}"] button.secondary`);
        await until(
          page,
          "the key in the form",
          `document.querySelector("#key-name").value === "web-team"`,
        );
        assert.equal(
          await page.$eval("#limit-chat-minute", (e) => (e as HTMLInputElement).value),
          "120",
        );
        await page.type("#key-name", "-2");
        await page.type("#limit-images-day", "unlimited");
        await page.click("#key-preview");
        await page.click("#key-submit");
        await until(
          page,
          "the saved key",
          `document.querySelector('tr[data-key="${created.id}"]')?.textContent.includes("web-team-2")`,
        );
        const edited = await admin(server, "GET", `/admin/keys/${created.id}`);
        assert.equal(edited.body.preview, false);
        assert.equal(edited.body.disabled, false);
        assert.deepEqual(edited.body.limits, {
          chat: { per_minute: 120 },
          images: { per_day: null },
        });

        await page.click(`tr[data-key="${created.id}"] button.danger`);
        await until(
          page,
          "the revoked key to leave the table",
          `!document.querySelector('tr[data-key="${created.id}"]')`,
        );
        const refused = await call();
        assert.equal(refused.status, 401);
        keyCalls.push(refused.headers.get("x-request-id")!);
        await refused.body?.cancel();
      });

      await t.step("the log tail shows the requests just made", async () => {
        const [accepted, refused] = keyCalls;
        const ids = [refused, accepted];
        for (const id of ids) {
          await until(
            page,
            `log row ${id}`,
            `!!document.querySelector('tr[data-request-id="${id}"]')`,
          );
        }
        await page.type("#log-status-filter", "401");
        await page.$eval(
          "#log-status-filter",
          (e) => e.dispatchEvent(new Event("change", { bubbles: true })),
        );
        await until(
          page,
          "the filtered tail",
          `!!document.querySelector('tr[data-request-id="${
            ids[0]
          }"]') && !document.querySelector('tr[data-request-id="${ids[1]}"]')`,
        );
        await page.$eval("#log-status-filter", (e) => {
          (e as HTMLInputElement).value = "";
          e.dispatchEvent(new Event("change", { bubbles: true }));
        });
        await until(
          page,
          "the whole tail again",
          `!!document.querySelector('tr[data-request-id="${ids[1]}"]')`,
        );
      });

      await t.step("models are edited without losing fields, and disabled", async () => {
        await page.click('tr[data-model="sim-chat"] button[aria-label="Edit sim-chat"]');
        await until(
          page,
          "the model's JSON",
          `document.querySelector("#model-json").value.includes('"featured": true')`,
        );
        const json = await page.$eval("#model-json", (e) => (e as HTMLTextAreaElement).value);
        await page.$eval(
          "#model-json",
          (e, text) => ((e as HTMLTextAreaElement).value = text),
          json.replace('"chat completions"', '"chat completions", "fast"'),
        );
        await page.click("#model-form button[type=submit]");
        await until(
          page,
          "the save",
          `document.querySelector("#model-status").textContent === "Saved model sim-chat."`,
        );
        const saved = await admin(server, "GET", "/admin/models/sim-chat");
        assert.deepEqual(saved.body.labels, ["chat completions", "fast"]);
        assert.equal(saved.body.featured, true);
        await page.click('tr[data-model="sim-chat"] button[aria-label="Disable sim-chat"]');
        await until(
          page,
          "the disabled model",
          `document.querySelector('tr[data-model="sim-chat"]').textContent.includes("disabled")`,
        );
        const anonymous = await (await fetch(`${server.url}/v1/models`)).json();
        assert.ok(!anonymous.data.some((m: { id: string }) => m.id === "sim-chat"));
        await page.click('tr[data-model="sim-chat"] button[aria-label="Enable sim-chat"]');
        await until(
          page,
          "the enabled model",
          `document.querySelector('tr[data-model="sim-chat"]').textContent.includes("served")`,
        );
      });

      await t.step("a batch is listed with its progress", async () => {
        const created = await admin(server, "POST", "/admin/keys", { name: "batch-owner" });
        const key = created.body.key as string;
        const auth = { authorization: `Bearer ${key}` };
        const lines = [1, 2, 3].map((n) =>
          JSON.stringify({
            custom_id: `line-${n}`,
            method: "POST",
            url: "/v1/chat/completions",
            body: { model: "sim-chat", messages: [{ role: "user", content: `Say ${n}` }] },
          })
        );
        const form = new FormData();
        form.append("purpose", "batch");
        form.append("file", new File([lines.join("\n")], "lines.jsonl"));
        const file = await (await fetch(`${server.url}/v1/files`, {
          method: "POST",
          headers: auth,
          body: form,
        })).json();
        const batch = await (await fetch(`${server.url}/v1/batches`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({
            input_file_id: file.id,
            endpoint: "/v1/chat/completions",
            completion_window: "24h",
          }),
        })).json();
        await eventually(
          async () => {
            const res = await fetch(`${server.url}/v1/batches/${batch.id}`, { headers: auth });
            const now = await res.json();
            return now.status === "completed" ? now : undefined;
          },
          "the batch to complete",
          30_000,
        );
        await page.click("#batches-refresh");
        await until(
          page,
          "the batch row",
          `document.querySelector('#batches-body tr[data-batch="${batch.id}"]')`,
        );
        const cells = await page.$eval(
          `#batches-body tr[data-batch="${batch.id}"]`,
          (r) => [...r.querySelectorAll("td")].map((c) => c.textContent),
        );
        assert.deepEqual(cells.slice(0, 5), [
          batch.id,
          created.body.id,
          "/v1/chat/completions",
          "completed",
          "3 of 3, 0 failed",
        ]);
      });

      await t.step(
        "usage charts, cache hits and guardrail redactions; the dashboard is accessible; screenshots",
        async () => {
          const chat = async (model: string, content: string) => {
            const res = await fetch(`${server.url}/v1/chat/completions`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
            });
            await res.text();
            assert.equal(res.status, 200);
            return res.headers.get("x-switchyard-cache");
          };
          assert.equal(await chat("sim-cached", "Same question"), "miss");
          assert.equal(await chat("sim-cached", "Same question"), "hit");
          assert.equal(await chat("sim-cached", "Same question"), "hit");
          await chat("sim-guarded", "Write to jane.doe@example.com or john@example.org");
          await server.app.services.logger.flush();
          await page.$eval("#usage-day", (e) => e.dispatchEvent(new Event("change")));
          await until(
            page,
            "the charts",
            `document.querySelectorAll("#usage-charts svg.chart").length >= 3`,
          );
          const label = await page.$eval(
            "#usage-charts svg.chart",
            (e) => e.getAttribute("aria-label")!,
          );
          assert.match(label, /^Requests per day/);
          await until(page, "the cache table", `document.querySelector("#usage-cache table")`);
          const rowOf = (table: string, model: string) =>
            page.$$eval(
              `${table} tbody tr`,
              (rows, model) =>
                rows.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent))
                  .find((cells) => cells[0] === model),
              model,
            );
          assert.deepEqual(await rowOf("#usage-cache", "sim-cached"), [
            "sim-cached",
            "2",
            "1",
            "\u2013",
            "67%",
          ]);
          const day = await page.$eval("#usage-day", (e) => (e as HTMLInputElement).value);
          assert.equal(
            await page.$eval("#usage-cache svg.chart", (e) => e.getAttribute("aria-label")),
            `Cache hit ratio per model on ${day}: sim-cached 67%`,
          );
          assert.deepEqual(await rowOf("#usage-guardrails", "sim-guarded"), [
            "sim-guarded",
            "pii",
            "input",
            "\u2013",
            "1",
            "\u2013",
            "\u2013",
            "\u2013",
            "email 2",
          ]);
          const charts = await page.$$eval(
            "#usage-guardrails svg.chart",
            (els) => els.map((e) => e.getAttribute("aria-label")),
          );
          assert.deepEqual(charts, [
            `Guardrail blocks per model on ${day}: sim-guarded 0`,
            `What the guardrails found, by type, on ${day}: email 2`,
          ]);
          await assertAccessible(page, "/admin");
          await screenshots(page, "admin");
        },
      );

      await t.step("without the admin API, /admin says so", async () => {
        await using off = await startWebGateway({ admin: false });
        await page.goto(`${off.server.url}/admin`, { waitUntil: "networkidle0" });
        await until(page, "the notice", `!document.querySelector("#admin-off").hidden`);
        assert.equal(await page.$eval("#login", (e) => (e as HTMLElement).hidden), true);
      });

      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
    }
  },
});
