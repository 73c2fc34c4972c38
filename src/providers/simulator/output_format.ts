import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { outputSchemaParam } from "./request_params.ts";
import { SchemaSampler } from "./schema_sample.ts";

/**
 * The reply in the form `options.output` asks for: the text as is; `{"reply": text}` for JSON;
 * for a JSON schema, a value valid against it (the caller's `name=value` hints in `userText`
 * used where they fit; a 400 naming the schema when it costs more than the sampler's budget).
 */
export function formatReply(req: CanonicalRequest, text: string, userText: string): string {
  const output = req.options.output;
  switch (output.type) {
    case "text":
      return text;
    case "json":
      return JSON.stringify({ reply: text });
    case "json_schema": {
      const sampler = new SchemaSampler(userText);
      const param = outputSchemaParam(req.extras.protocol);
      return JSON.stringify(sampler.sampleValue(output.schema, param));
    }
  }
}
