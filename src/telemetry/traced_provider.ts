/**
 * A provider whose chat and embeddings calls are traced: each call (a whole answer, a stream, a
 * batch of vectors) is one GenAI span (see `tracing.ts`), active while the adapter works so that its HTTP attempts nest under
 * it, ended with the call's usage and finish reason, or its error.
 */
import type { CanonicalRequest } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";
import type { ProviderConfig } from "../config/types.ts";
import type { CallContext, Provider } from "../providers/types.ts";
import type { ModelCallSpan, Tracing } from "./tracing.ts";

/** `provider` with its chat and embeddings calls traced by `tracing`; its other calls are its
 * own. */
export function tracedProvider(
  provider: Provider,
  config: ProviderConfig,
  tracing: Tracing,
): Provider {
  const start = (req: CanonicalRequest, call: CallContext, stream: boolean) =>
    tracing.modelCall({
      operation: "chat",
      config,
      call,
      messages: req.messages,
      options: req.options,
      stream,
    });
  const traced: Provider = {
    id: provider.id,
    async chat(req, call) {
      const span = start(req, call, false);
      try {
        const result = await span.run(() => provider.chat(req, call));
        span.succeed(result);
        return result;
      } catch (e) {
        span.fail(e);
        throw e;
      }
    },
    chatStream(req, call) {
      const span = start(req, call, true);
      return tracedEvents(span, span.run(() => provider.chatStream(req, call)));
    },
  };
  // Every optional call is kept: a wrapper that dropped one would silently turn a
  // pass-through (Responses, Messages) into a translation whenever tracing is on.
  if (provider.moderate) traced.moderate = provider.moderate.bind(provider);
  if (provider.embed) {
    const embed = provider.embed.bind(provider);
    traced.embed = async (req, call) => {
      const span = tracing.modelCall({
        operation: "embeddings",
        config,
        call,
        messages: [],
        stream: false,
      });
      try {
        const result = await span.run(() => embed(req, call));
        span.succeedWith({ input: result.promptTokens, output: 0 });
        return result;
      } catch (e) {
        span.fail(e);
        throw e;
      }
    };
  }
  if (provider.rerank) traced.rerank = provider.rerank.bind(provider);
  if (provider.generateImages) traced.generateImages = provider.generateImages.bind(provider);
  if (provider.countTokens) traced.countTokens = provider.countTokens.bind(provider);
  if (provider.passthrough) {
    Object.assign(traced, {
      passes: provider.passes,
      passthrough: provider.passthrough.bind(provider),
    });
  }
  if (provider.listModels) traced.listModels = provider.listModels.bind(provider);
  return traced;
}

/** The stream's batches, each pulled with the span active; the span ends with the stream (a
 * consumer that stops early, a client that left, ends it as `client_disconnected`). */
function tracedEvents(
  span: ModelCallSpan,
  batches: AsyncIterable<CanonicalEvent[]>,
): AsyncIterable<CanonicalEvent[]> {
  return {
    [Symbol.asyncIterator]() {
      const iterator = span.run(() => batches[Symbol.asyncIterator]());
      return {
        async next() {
          try {
            const next = await span.run(() => iterator.next());
            if (next.done) span.succeed();
            else span.observe(next.value);
            return next;
          } catch (e) {
            span.fail(e);
            throw e;
          }
        },
        async return(value?: unknown) {
          span.fail(new DOMException("The consumer stopped reading.", "AbortError"));
          await iterator.return?.(value);
          return { done: true, value: undefined };
        },
      };
    },
  };
}
