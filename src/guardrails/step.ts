/**
 * Guardrails as one model step (pipeline/model_step.ts; docs/guardrails.md): a model's
 * `guardrails` check the canonical request before the call (every message's text, tool
 * results and tool-call arguments, the system prompt) and the answer after it, whole or as it
 * streams, whatever front door or back end the call uses. A block is an ApiError: the door's
 * error shape before the answer began, the protocol's error event after.
 */
import type { CanonicalRequest, Message } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";
import type { CanonicalResult } from "../canonical/result.ts";
import type { ModelRecord } from "../catalogue/model.ts";
import type { GuardrailConfig } from "../config/types.ts";
import { ApiError, invalidRequest } from "../errors.ts";
import type { HttpClient } from "../http/client/types.ts";
import type { RequestContext } from "../pipeline/context.ts";
import type { ModelStep } from "../pipeline/model_step.ts";
import type { CallContext, Provider } from "../providers/types.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../types/openai.ts";
import {
  answerText,
  mapMessages,
  mapParts,
  messageText,
  replaceAnswerText,
  replaceMessageTexts,
} from "./conversation_text.ts";
import { loggedMessages } from "../log/content.ts";
import { longestFinding } from "./deny.ts";
import { guardrailBlocked, guardrailUnavailable } from "./errors.ts";
import { flaggedCategory } from "./moderation_gate.ts";
import { GuardrailReport } from "./report.ts";
import {
  type CheckState,
  checkText,
  STREAM_HOLD,
  type TextCheck,
  textCheck,
  WindowFilter,
} from "./text_checks.ts";
import { StreamRestorer, Vault } from "./vault.ts";
import { askWebhook, type WebhookVerdict } from "./webhook.ts";

/** What the guardrails step is built from. */
export interface GuardrailDeps {
  /** The client webhook calls go through (the app's upstream client). */
  http: HttpClient;
  /** Environment lookup (a webhook's `token_env`). */
  env: (name: string) => string | undefined;
}

/** A model's guardrails, ready to run. */
interface Compiled {
  input: readonly Stage[];
  output: readonly Stage[];
  /** The output's pattern checks (run in windows on streams). */
  outputChecks: readonly TextCheck[];
  /** Characters a streamed block holds back for the output's pattern checks. */
  hold: number;
}

/** A guardrail with its pattern check, when it is one. */
interface Stage {
  guardrail: GuardrailConfig;
  check: TextCheck | null;
}

/** Characters of streamed text an output moderation guardrail checks at a time (held back
 * until checked). */
const MODERATION_WINDOW = 500;

/** The guardrails step. */
export function guardrails(deps: GuardrailDeps): ModelStep {
  // Compiled once per model record and per key record (both kept while they are current).
  const compiled = new WeakMap<readonly GuardrailConfig[], Compiled>();
  const compiledOf = (list: readonly GuardrailConfig[], prefix = "") => {
    let c = compiled.get(list);
    if (c === undefined) compiled.set(list, c = compile(list, prefix));
    return c;
  };
  return {
    around(provider: Provider, ctx: RequestContext, record: ModelRecord): Provider | null {
      const model = record.guardrails ?? [];
      const key = ctx.principal.kind === "key" ? ctx.principal.key.guardrails ?? [] : [];
      if (model.length === 0 && key.length === 0) return null;
      const c = key.length === 0
        ? compiledOf(model)
        : model.length === 0
        ? compiledOf(key, KEY_PREFIX)
        : joined(compiledOf(model), compiledOf(key, KEY_PREFIX));
      const run = new Run(ctx, c, deps);
      return {
        id: provider.id,
        async chat(req: CanonicalRequest, call: CallContext): Promise<CanonicalResult> {
          run.signal = call.signal;
          const result = await provider.chat(await run.input(req), call);
          return await run.output(result);
        },
        chatStream(req: CanonicalRequest, call: CallContext): AsyncIterable<CanonicalEvent[]> {
          run.signal = call.signal;
          return run.stream(req, (checked) => provider.chatStream(checked, call));
        },
        // Embeddings' inputs go through the input guardrails as user messages.
        ...(provider.embed
          ? {
            async embed(req: EmbeddingRequest, call: CallContext): Promise<EmbeddingResult> {
              run.signal = call.signal;
              return await provider.embed!(await run.embeddingInput(req), call);
            },
          }
          : {}),
        // A count (Messages' count_tokens, Gemini's countTokens) is of the checked request.
        ...(provider.countTokens
          ? {
            async countTokens(req: CanonicalRequest, call: CallContext): Promise<number> {
              run.signal = call.signal;
              return await provider.countTokens!(await run.input(req), call);
            },
          }
          : {}),
      };
    },
  };
}

/** Whether the log's content is a chat's (`{messages: [{role, content}], output}`). */
function isChatContent(content: unknown): content is { messages: unknown[] } {
  return typeof content === "object" && content !== null &&
    Array.isArray((content as { messages?: unknown }).messages);
}

/** What the names of a key's guardrails start with in errors, logs and metrics. */
const KEY_PREFIX = "key.";

/** A model's guardrails split by stage, compiled. */
function compile(list: readonly GuardrailConfig[], prefix: string): Compiled {
  const stages = list.map((g) => {
    const guardrail = prefix === "" ? g : { ...g, name: prefix + g.name };
    return { guardrail, check: textCheck(guardrail) };
  });
  const output = stages.filter((s) => s.guardrail.stage === "output");
  const outputChecks = output.flatMap((s) => s.check ? [s.check] : []);
  // A stream holds back what the longest finding can span, so that one split across deltas is
  // seen whole.
  const longest = Math.max(
    0,
    ...output.map((s) => longestFinding(s.guardrail.words ?? [], s.guardrail.patterns ?? [])),
  );
  return {
    input: stages.filter((s) => s.guardrail.stage === "input"),
    output,
    outputChecks,
    hold: Math.max(STREAM_HOLD, longest + 1),
  };
}

/** A model's guardrails, then a key's. */
function joined(first: Compiled, then: Compiled): Compiled {
  return {
    input: [...first.input, ...then.input],
    output: [...first.output, ...then.output],
    outputChecks: [...first.outputChecks, ...then.outputChecks],
    hold: Math.max(first.hold, then.hold),
  };
}

/** The guardrails of one call. */
class Run implements CheckState {
  readonly report = new GuardrailReport();
  readonly vault = new Vault();
  /** The call's signal (moderation and webhook calls stop with it). */
  signal: AbortSignal;

  constructor(
    readonly ctx: RequestContext,
    readonly compiled: Compiled,
    readonly deps: GuardrailDeps,
  ) {
    ctx.guardrails = this.report.verdicts;
    ctx.loggedContent = this.logged;
    this.signal = ctx.signal;
  }

  /** The request after the input guardrails, in order. */
  async input(req: CanonicalRequest): Promise<CanonicalRequest> {
    const messages = await this.inputMessages(req.messages);
    if (messages === req.messages) return req;
    this.sent = messages;
    return { ...req, messages };
  }

  /** The messages the model got, when the input guardrails changed them. */
  sent: readonly Message[] | null = null;

  /**
   * The log's content as the model saw it (`logs.include_content`): a chat's messages as the
   * input guardrails left them, and every value they gave a placeholder concealed by it, also
   * where the answer had it restored (docs/guardrails.md: the originals are never logged).
   */
  readonly logged = (content: unknown): unknown => {
    let logged = content;
    const sent = this.sent;
    if (sent !== null && isChatContent(content)) {
      logged = { ...content, messages: loggedMessages(sent) };
    }
    return this.vault.used ? this.vault.conceal(logged) : logged;
  };

  /** An embeddings request after the input guardrails: each input a user message. Inputs of
   * token ids cannot be checked, and are refused. */
  async embeddingInput(req: EmbeddingRequest): Promise<EmbeddingRequest> {
    if (this.compiled.input.length === 0) return req;
    const texts = req.input.filter((input) => typeof input === "string");
    if (texts.length !== req.input.length) {
      throw invalidRequest(
        "This model's guardrails check text: send `input` as text, not token ids.",
        "input",
      );
    }
    const messages = texts.map((text): Message => ({
      role: "user",
      parts: [{ type: "text", text }],
    }));
    const checked = await this.inputMessages(messages);
    return checked === messages ? req : { ...req, input: checked.map(messageText) };
  }

  /** Messages after the input guardrails, in order (the same array when none changed them). */
  async inputMessages(messages: Message[]): Promise<Message[]> {
    for (const { guardrail, check } of this.compiled.input) {
      if (check) messages = mapMessages(messages, (text) => checkText(text, [check], this));
      else if (guardrail.type === "moderation") {
        await this.moderate(guardrail, messages.map(messageText).join("\n\n"));
      } else if (guardrail.type === "webhook") {
        const verdict = await this.webhook(guardrail, {
          messages: messages.map((m) => ({ role: m.role, content: messageText(m) })),
        });
        if (verdict?.messages) messages = replaceMessageTexts(messages, verdict.messages);
      }
      this.report.of(guardrail);
    }
    return messages;
  }

  /** A whole answer after the output guardrails, in order, with placeholders restored. */
  async output(result: CanonicalResult): Promise<CanonicalResult> {
    let parts = result.parts;
    for (const { guardrail, check } of this.compiled.output) {
      if (check) parts = mapParts(parts, (text) => checkText(text, [check], this));
      else if (guardrail.type === "moderation") {
        await this.moderate(guardrail, answerText(parts));
      } else if (guardrail.type === "webhook") {
        const verdict = await this.webhook(guardrail, { text: answerText(parts) });
        if (verdict?.text !== undefined) parts = replaceAnswerText(parts, verdict.text);
      }
      this.report.of(guardrail);
    }
    if (this.vault.restores) parts = mapParts(parts, (text) => this.vault.restore(text));
    return parts === result.parts ? result : { ...result, parts };
  }

  /** A streamed answer: the request checked first, then each block's text and tool-call
   * arguments checked in windows as they stream, placeholders restored across deltas. */
  async *stream(
    req: CanonicalRequest,
    call: (req: CanonicalRequest) => AsyncIterable<CanonicalEvent[]>,
  ): AsyncGenerator<CanonicalEvent[]> {
    const checked = await this.input(req);
    for (const { guardrail } of this.compiled.output) this.report.of(guardrail);
    const blocks = new Map<number, BlockPipe>();
    const webhooks = this.compiled.output.filter((s) => s.guardrail.type === "webhook");
    /** The answer's text so far, kept only for an output webhook (asked at the end). */
    let text = "";
    for await (const batch of call(checked)) {
      const out: CanonicalEvent[] = [];
      try {
        for (const event of batch) {
          if (event.type === "block_start") {
            const kind = event.block.type;
            if (kind === "text" || kind === "tool_call" || kind === "refusal") {
              const delta: TextDelta = kind === "tool_call"
                ? { type: "arguments", json: "" }
                : { type: kind, text: "" };
              blocks.set(event.index, new BlockPipe(this, delta));
            }
            out.push(event);
          } else if (event.type === "block_delta") {
            const pipe = blocks.get(event.index);
            const delta = event.delta;
            if (pipe === undefined || delta.type === "reasoning" || delta.type === "signature") {
              out.push(event);
              continue;
            }
            const piece = delta.type === "arguments" ? delta.json : delta.text;
            if (delta.type === "text" && webhooks.length > 0) text += piece;
            const sent = await pipe.push(piece);
            if (sent !== "") out.push(withText(event.index, delta, sent, sent === piece));
          } else if (event.type === "block_stop") {
            const pipe = blocks.get(event.index);
            if (pipe !== undefined) {
              blocks.delete(event.index);
              const rest = await pipe.end();
              if (rest !== "") out.push(withText(event.index, pipe.kind, rest, false));
            }
            out.push(event);
          } else if (event.type === "finish") {
            for (const { guardrail } of webhooks) {
              const verdict = await this.webhook(guardrail, { text });
              // What was sent cannot be rewritten: a redaction of a stream blocks it.
              if (verdict?.action === "redact") {
                this.report.record(guardrail, "blocked");
                throw guardrailBlocked(guardrail, verdict.reason ?? "the webhook's policy");
              }
            }
            out.push(event);
          } else out.push(event);
        }
      } catch (e) {
        // Content that passed the checks before a block is sent first, so that the block
        // ends a stream that began with the protocol's error event whatever the upstream's
        // reads were.
        if (out.some((event) => event.type === "block_delta")) yield out;
        throw e;
      }
      if (out.length > 0) yield out;
    }
  }

  /** Runs a moderation guardrail on `text`: throws when it blocks. */
  async moderate(guardrail: GuardrailConfig, text: string): Promise<void> {
    if (text.trim() === "") return;
    const category = await this.decide(
      guardrail,
      () => flaggedCategory(this.ctx, guardrail, text, this.signal),
    );
    if (category === null || category === undefined) return;
    if (guardrail.action === "log") return this.report.record(guardrail, "logged", category);
    this.report.record(guardrail, "blocked", category);
    throw guardrailBlocked(guardrail, category);
  }

  /** Asks a webhook guardrail; throws when it blocks; the verdict when it redacts (`null` when
   * it allows, failed open, or only logs). */
  async webhook(
    guardrail: GuardrailConfig,
    content: { messages: { role: string; content: string }[] } | { text: string },
  ): Promise<WebhookVerdict | null> {
    const token = guardrail.token_env ? this.deps.env(guardrail.token_env) ?? null : null;
    const body = {
      stage: guardrail.stage,
      model: this.ctx.model ?? "",
      guardrail: guardrail.name,
      ...content,
    };
    const verdict = await this.decide(
      guardrail,
      () => askWebhook(this.deps.http, guardrail, token, body, this.signal),
    );
    if (verdict === undefined || verdict.action === "allow") return null;
    const kind = verdict.reason ?? verdict.action;
    if (guardrail.action === "log") {
      this.report.record(guardrail, "logged", kind);
      return null;
    }
    if (verdict.action === "block") {
      this.report.record(guardrail, "blocked", kind);
      throw guardrailBlocked(guardrail, verdict.reason ?? "the webhook's policy");
    }
    this.report.record(guardrail, "redacted", kind);
    return verdict;
  }

  /** What `check` decides, or `undefined` when it failed and the guardrail fails open; a
   * failure of a guardrail that fails closed is a 503 `guardrail_unavailable`. */
  async decide<T>(guardrail: GuardrailConfig, check: () => Promise<T>): Promise<T | undefined> {
    try {
      return await check();
    } catch (e) {
      if (this.signal.aborted) throw e;
      const why = e instanceof ApiError || e instanceof Error ? e.message : String(e);
      if (guardrail.on_error === "allow") {
        this.report.record(guardrail, "failed_open");
        return undefined;
      }
      this.report.record(guardrail, "failed_closed");
      throw guardrailUnavailable(guardrail, why.slice(0, 200));
    }
  }

  /** Sends `text` through the output's moderation guardrails (throws when one blocks). */
  async moderateWindow(text: string): Promise<void> {
    for (const { guardrail } of this.compiled.output) {
      if (guardrail.type === "moderation") await this.moderate(guardrail, text);
    }
  }

  /** Whether the output has a moderation guardrail (streamed text waits for its windows). */
  get moderatesOutput(): boolean {
    return this.compiled.output.some((s) => s.guardrail.type === "moderation");
  }
}

/** The output checks of one streamed block: pattern checks in windows, then moderation in
 * windows of {@link MODERATION_WINDOW}, then placeholders restored. */
class BlockPipe {
  readonly #filter: WindowFilter | null;
  readonly #restorer: StreamRestorer | null;
  readonly #run: Run;
  #unmoderated = "";
  constructor(run: Run, readonly kind: TextDelta) {
    this.#run = run;
    const checks = run.compiled.outputChecks;
    this.#filter = checks.length > 0 ? new WindowFilter(checks, run, run.compiled.hold) : null;
    this.#restorer = run.vault.restores ? run.vault.streamRestorer() : null;
  }

  /** What to send for a piece of the block (possibly nothing yet). */
  async push(piece: string): Promise<string> {
    let text = this.#filter ? this.#filter.push(piece) : piece;
    if (this.#run.moderatesOutput) {
      this.#unmoderated += text;
      if (this.#unmoderated.length < MODERATION_WINDOW) return "";
      text = this.#unmoderated;
      this.#unmoderated = "";
      await this.#run.moderateWindow(text);
    }
    return this.#restorer ? this.#restorer.push(text) : text;
  }

  /** What the block still holds, checked, at its end. */
  async end(): Promise<string> {
    let text = this.#filter ? this.#filter.end() : "";
    if (this.#run.moderatesOutput) {
      text = this.#unmoderated + text;
      this.#unmoderated = "";
      await this.#run.moderateWindow(text);
    }
    if (!this.#restorer) return text;
    return this.#restorer.push(text) + this.#restorer.end();
  }
}

/** A delta that carries text. */
type TextDelta =
  | { type: "text"; text: string }
  | { type: "arguments"; json: string }
  | { type: "refusal"; text: string };

/** A delta of `delta`'s kind carrying `text` (log probabilities kept only when the text is the
 * delta's own). */
function withText(index: number, delta: TextDelta, text: string, same: boolean): CanonicalEvent {
  if (same) return { type: "block_delta", index, delta };
  if (delta.type === "arguments") {
    return { type: "block_delta", index, delta: { type: "arguments", json: text } };
  }
  return { type: "block_delta", index, delta: { type: delta.type, text } };
}
