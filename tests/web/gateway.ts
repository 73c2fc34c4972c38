/**
 * The gateway the web pages' tests run against, on a real port: the test simulator models, a
 * slow simulator model (`sim-slow`, a token every 40 ms) whose stream aborts the tests can
 * watch, a model with a response cache (`sim-cached`) and one with a `pii` guardrail
 * (`sim-guarded`), the admin API on (unless asked), a `site` section, and limits no test
 * reaches.
 */
import { inlineImageWork } from "../../src/images/work.ts";
import { SimulatorProvider } from "../../src/providers/simulator/provider.ts";
import type { Provider } from "../../src/providers/types.ts";
import { ADMIN_TOKEN } from "../support/admin.ts";
import { startServer, testConfig, type TestServer } from "../support/server.ts";
import { FetchHttpClient } from "../../src/http/client/fetch.ts";

export { ADMIN_TOKEN };

const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };

/** The site section the tests configure. */
export const SITE = {
  name: "Harbour Models",
  description: "Open models for the harbour community, through one OpenAI-compatible API.",
  contact: "models@harbour.example",
};

/** A started gateway and what its slow simulator saw. */
export interface WebGateway {
  server: TestServer;
  /** Resolves when the slow model's next stream is aborted (after this call). */
  nextAbort(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the gateway; `admin: false` leaves the admin API off. */
export async function startWebGateway(options: { admin?: boolean } = {}): Promise<WebGateway> {
  const config = testConfig((raw) => {
    (raw.providers as unknown[]).push({ id: "slow", style: "simulator", token_delay_ms: 40 });
    (raw.models as unknown[]).push(
      {
        id: "sim-slow",
        provider: "slow",
        chat_completions: true,
        labels: ["chat completions", "slow"],
      },
      { id: "sim-embed", provider: "sim", embeddings: { dimensions: 256 } },
      {
        id: "sim-cached",
        provider: "sim",
        chat_completions: true,
        // One scope for every caller, so that anonymous calls are cached too.
        cache: { ttl_seconds: 3600, namespace: "web" },
      },
      {
        id: "sim-guarded",
        provider: "sim",
        chat_completions: true,
        guardrails: [{ type: "pii", stage: "input", action: "redact" }],
      },
    );
    raw.limits = {
      anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
      key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
    };
    raw.site = SITE;
  });
  let slow: SimulatorProvider | null = null;
  let aborted = Promise.withResolvers<void>();
  const watched: Provider = {
    id: "slow",
    chat: (req, ctx) => slow!.chat(req, ctx),
    chatStream: (req, ctx) => {
      const mine = aborted;
      ctx.signal.addEventListener("abort", () => mine.resolve(), { once: true });
      return slow!.chatStream(req, ctx);
    },
  };
  const server = await startServer({
    config,
    env: (name) =>
      name === "SWITCHYARD_ADMIN_TOKEN" && options.admin !== false ? ADMIN_TOKEN : undefined,
    providers: new Map([["slow", watched]]),
  });
  slow = new SimulatorProvider({
    config: config.providers.find((p) => p.id === "slow")!,
    apiKey: null,
    http: new FetchHttpClient(),
    clock: server.clock,
    logger: server.app.services.logger,
    images: inlineImageWork,
  });
  return {
    server,
    nextAbort() {
      aborted = Promise.withResolvers<void>();
      return aborted.promise;
    },
    [Symbol.asyncDispose]: () => server.close(),
  };
}
