/**
 * Micro-benchmarks of stream translation to canonical events, per upstream event (JSON parse
 * included): `deno task bench:micro`. The OpenAI translator on a content chunk, and the
 * Anthropic translator on a whole message (`message_start` … `message_stop`) and on a text
 * delta.
 */
import type { CanonicalEvent } from "../src/canonical/events.ts";
import { AnthropicStreamTranslator } from "../src/providers/anthropic/stream.ts";
import { OpenAIStreamTranslator } from "../src/providers/openai/stream.ts";
import { parseEventData } from "../src/providers/wire.ts";
import { anthropicEvents, openaiEvents } from "./fixtures.ts";

/** The `data:` payload of each event. */
const payloads = (events: string[]) => events.map((e) => /^data: (.*)$/m.exec(e)![1]!);

/** Where the translators append their events; emptied before each push. */
const out: CanonicalEvent[] = [];

const openai = payloads(openaiEvents(20));
const openaiTranslator = new OpenAIStreamTranslator();
openaiTranslator.push(parseEventData(openai[0]!), out);
const content = openai[5]!;

Deno.bench("OpenAI → canonical: one content event, parsed", { group: "openai" }, () => {
  out.length = 0;
  openaiTranslator.push(parseEventData(content), out);
});

Deno.bench("OpenAI → canonical: one content event, its text only (pushText)", {
  group: "openai",
}, () => {
  out.length = 0;
  openaiTranslator.pushText(content, out);
});

const anthropic = payloads(anthropicEvents(20));

Deno.bench(`Anthropic → canonical: a whole message (${anthropic.length} events)`, {
  group: "anthropic",
}, () => {
  out.length = 0;
  const translator = new AnthropicStreamTranslator(null);
  for (const data of anthropic) translator.push(parseEventData(data), out);
});

const translator = new AnthropicStreamTranslator(null);
for (const data of anthropic.slice(0, 3)) translator.push(parseEventData(data), out);
const delta = anthropic[5]!;

Deno.bench("Anthropic → canonical: one text delta event", { group: "anthropic" }, () => {
  out.length = 0;
  translator.push(parseEventData(delta), out);
});
