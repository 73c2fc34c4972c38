/**
 * Micro-benchmarks of stream translation, per upstream event (JSON parse included):
 * `deno task bench:micro`. The OpenAI normalizer on a content chunk, and the Anthropic
 * translator on a whole message (`message_start` … `message_stop`) and on a text delta.
 */
import { AnthropicStreamTranslator } from "../src/providers/anthropic_stream.ts";
import { OpenAIStreamNormalizer } from "../src/providers/openai_stream.ts";
import { parseEventData } from "../src/providers/wire.ts";
import { anthropicEvents, openaiEvents } from "./fixtures.ts";

/** The `data:` payload of each event. */
const payloads = (events: string[]) => events.map((e) => /^data: (.*)$/m.exec(e)![1]!);

const openai = payloads(openaiEvents(20));
const normalizer = new OpenAIStreamNormalizer("bench-openai", 1_700_000_000_000);
normalizer.push(parseEventData(openai[0]!));
const content = openai[5]!;

Deno.bench("OpenAI → public: one content event", { group: "openai" }, () => {
  normalizer.push(parseEventData(content));
});

const anthropic = payloads(anthropicEvents(20));

Deno.bench(`Anthropic → OpenAI: a whole message (${anthropic.length} events)`, {
  group: "anthropic",
}, () => {
  const translator = new AnthropicStreamTranslator("bench-claude", 1_700_000_000_000);
  for (const data of anthropic) translator.push(parseEventData(data));
});

const translator = new AnthropicStreamTranslator("bench-claude", 1_700_000_000_000);
for (const data of anthropic.slice(0, 3)) translator.push(parseEventData(data));
const delta = anthropic[5]!;

Deno.bench("Anthropic → OpenAI: one text delta event", { group: "anthropic" }, () => {
  translator.push(parseEventData(delta));
});
