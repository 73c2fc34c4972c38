/**
 * Traces through Deno's built-in OpenTelemetry, on a real `main.ts` process with `OTEL_DENO=true`
 * exporting OTLP/HTTP (JSON) to a receiver in the test: the server span of each request, named
 * after its route and continuing the caller's `traceparent`; under it one GenAI span per model
 * call; under that one span per HTTP attempt (a retry is a second one).
 */
import assert from "node:assert/strict";
import { startFakeAnthropic } from "../support/fake_anthropic.ts";
import { startFakeOpenAI } from "../support/fake_openai.ts";
import { startGatewayProcess } from "../support/gateway_process.ts";

/** An OTLP attribute value as the JSON encoding writes it. */
interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

interface Span {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  kind: number;
  status?: { code?: number; message?: string };
  attributes: Record<string, unknown>;
}

/** An attribute value as plain JSON (integers as numbers). */
function plain(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  return null;
}

/** A receiver of OTLP/HTTP JSON exports: every span exported so far, and the names of the
 * metrics. */
function startReceiver() {
  const spans: Span[] = [];
  const metrics = new Map<string, unknown[]>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    assert.match(req.headers.get("content-type") ?? "", /application\/json/);
    const body = await req.json();
    if (path === "/v1/traces") {
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            const attributes: Record<string, unknown> = {};
            for (const a of span.attributes ?? []) attributes[a.key] = plain(a.value);
            spans.push({ ...span, attributes });
          }
        }
      }
    } else if (path === "/v1/metrics") {
      for (const resource of body.resourceMetrics ?? []) {
        for (const scope of resource.scopeMetrics ?? []) {
          for (const metric of scope.metrics ?? []) {
            const points = metric.histogram?.dataPoints ?? [];
            metrics.set(metric.name, [...metrics.get(metric.name) ?? [], ...points]);
          }
        }
      }
    }
    return Response.json({});
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    metrics,
    close: () => server.shutdown(),
  };
}

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

Deno.test("OTel: server, GenAI and HTTP attempt spans with the caller's trace id, for a chat, a stream, a retry and an error", async () => {
  const receiver = startReceiver();
  await using openai = startFakeOpenAI();
  await using anthropic = startFakeAnthropic();
  const gateway = await startGatewayProcess(openai, anthropic, {
    provider: { max_retries: 1 },
    env: {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "switchyard-test",
    },
  });
  const chat = async (model: string, extra: Record<string, unknown>, traceparent?: string) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (traceparent) headers.traceparent = traceparent;
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        model,
        messages: [{ role: "user", content: "Trace this call, please." }],
        ...extra,
      }),
    });
    return { res, text: await res.text(), requestId: res.headers.get("x-request-id")! };
  };
  let stopped = false;
  try {
    // A chat, continuing the caller's trace.
    const plainCall = await chat("oa-chat", {}, `00-${TRACE_ID}-${CALLER_SPAN}-01`);
    assert.equal(plainCall.res.status, 200);
    const usage = JSON.parse(plainCall.text).usage;
    assert.match(
      openai.received[0]!.headers.get("traceparent") ?? "",
      new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`),
      "the upstream call carries the trace on",
    );
    // A stream.
    const streamed = await chat("an-chat", { stream: true });
    assert.equal(streamed.res.status, 200);
    // A retry: the first attempt is a 500, the second answers.
    openai.faults = [{ status: 500, headers: { "retry-after-ms": "10" } }];
    const retried = await chat("oa-chat", {});
    assert.equal(retried.res.status, 200);
    // An error the upstream answers (not retried).
    openai.faults = [{ status: 400, errorType: "invalid_request_error", message: "bad" }];
    const failed = await chat("oa-chat", {});
    assert.equal(failed.res.status, 400);
    const { code, stderr } = await gateway.stop();
    stopped = true;
    assert.equal(code, 0, stderr);

    const spans = receiver.spans;
    const children = (parent: Span) => spans.filter((s) => s.parentSpanId === parent.spanId);
    /** The request's server span (kind SERVER) and its GenAI span (CLIENT, from Switchyard). */
    const spansOf = (requestId: string) => {
      const genAi = spans.find((s) => s.attributes["switchyard.request_id"] === requestId);
      assert.ok(genAi, `no GenAI span for ${requestId}`);
      const server = spans.find((s) => s.spanId === genAi.parentSpanId);
      assert.ok(server, "the GenAI span's parent was exported");
      return { server, genAi, attempts: children(genAi) };
    };

    const first = spansOf(plainCall.requestId);
    assert.equal(first.server.traceId, TRACE_ID);
    assert.equal(first.server.parentSpanId, CALLER_SPAN);
    assert.equal(first.server.kind, 2, "SERVER");
    assert.equal(first.server.name, "POST /v1/chat/completions");
    assert.equal(first.server.attributes["http.route"], "/v1/chat/completions");
    assert.equal(first.server.attributes["http.request.method"], "POST");
    assert.equal(first.genAi.traceId, TRACE_ID);
    assert.equal(first.genAi.kind, 3, "CLIENT");
    assert.equal(first.genAi.name, "chat gpt-up");
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(first.genAi.attributes).filter(([k]) =>
          k.startsWith("gen_ai.") || k === "error.type"
        ),
      ),
      {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-up",
        "gen_ai.request.max_tokens": first.genAi.attributes["gen_ai.request.max_tokens"],
        "gen_ai.response.model": "gpt-up",
        "gen_ai.response.id": JSON.parse(plainCall.text).id,
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
      },
    );
    assert.equal(typeof first.genAi.attributes["gen_ai.request.max_tokens"], "number");
    assert.equal(first.genAi.attributes["switchyard.model"], "oa-chat");
    assert.equal(first.genAi.attributes["gen_ai.input.messages"], undefined, "no content");
    assert.equal(first.attempts.length, 1);
    assert.equal(first.attempts[0]!.attributes["http.response.status_code"], "200");
    assert.equal(
      openai.received[0]!.headers.get("traceparent")?.split("-")[2],
      first.attempts[0]!.spanId,
      "the upstream's parent is the attempt's span",
    );

    const stream = spansOf(streamed.requestId);
    assert.notEqual(
      stream.server.traceId,
      TRACE_ID,
      "a request without traceparent starts a trace",
    );
    assert.equal(stream.server.parentSpanId ?? "", "");
    assert.equal(stream.genAi.name, "chat claude-up");
    assert.equal(stream.genAi.attributes["gen_ai.provider.name"], "anthropic");
    assert.equal(stream.genAi.attributes["switchyard.stream"], true);
    assert.deepEqual(stream.genAi.attributes["gen_ai.response.finish_reasons"], ["stop"]);
    assert.ok((stream.genAi.attributes["gen_ai.usage.output_tokens"] as number) > 0);
    assert.ok((stream.genAi.attributes["gen_ai.usage.input_tokens"] as number) > 0);
    assert.equal(stream.attempts.length, 1);

    const retry = spansOf(retried.requestId);
    assert.deepEqual(
      retry.attempts.map((s) => s.attributes["http.response.status_code"]),
      ["500", "200"],
      "one span per HTTP attempt",
    );
    assert.equal(retry.genAi.attributes["error.type"], undefined);

    const error = spansOf(failed.requestId);
    assert.equal(error.genAi.attributes["error.type"], "invalid_request_error");
    assert.equal(error.genAi.status?.code, 2, "ERROR");
    assert.equal(error.server.attributes["http.response.status_code"], "400");
    assert.equal(error.genAi.attributes["gen_ai.usage.input_tokens"], undefined);

    // The same calls through OTel metrics.
    assert.ok(receiver.metrics.has("gen_ai.client.operation.duration"));
    assert.ok(receiver.metrics.has("gen_ai.client.token.usage"));
  } finally {
    if (!stopped) await gateway.stop();
    await receiver.close();
  }
});

/** Runs the exit fixture in `mode` with OTel exporting to `endpoint` every second; its exit code,
 * or `null` when it was still running after `waitMs` (then it is killed). */
async function exitAfterBusy(mode: "settle" | "raw", endpoint: string, waitMs: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-env",
      new URL("./fixtures/exit_after_busy.ts", import.meta.url).pathname,
      mode,
    ],
    env: {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_METRIC_EXPORT_INTERVAL: "1000",
    },
    stdout: "null",
    stderr: "null",
  }).spawn();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
  const code = await Promise.race([child.status.then((s) => s.code), late]);
  clearTimeout(timer);
  if (code === null) {
    child.kill("SIGKILL");
    await child.status;
  }
  return code;
}

Deno.test("OTel: the process exits after a busy spell, where exiting at once hangs in Deno's metric reader", async () => {
  const receiver = startReceiver();
  try {
    assert.equal(await exitAfterBusy("settle", receiver.url, 15_000), 0);
    // The hazard the wait is for; if this fails, Deno no longer deadlocks and beforeExit can go.
    assert.equal(await exitAfterBusy("raw", receiver.url, 5_000), null);
  } finally {
    await receiver.close();
  }
});
