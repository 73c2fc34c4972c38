/**
 * Where the schemas the simulator samples sit in the caller's request, by the protocol of the
 * front door it came through, so that a 400 about a schema names the caller's own field.
 */
import type { Protocol } from "../../canonical/conversation.ts";

/** The field of the answer format's JSON schema. */
export function outputSchemaParam(protocol: Protocol): string {
  switch (protocol) {
    case "openai_chat":
      return "response_format.json_schema.schema";
    case "openai_responses":
      return "text.format.schema";
    case "anthropic_messages":
      return "output_config.format.schema";
    case "gemini_generate":
      return "generationConfig.responseJsonSchema";
  }
}

/** The field of the parameters schema of the tool at `index` of the request's tools. */
export function toolParametersParam(protocol: Protocol, index: number): string {
  switch (protocol) {
    case "openai_chat":
      return `tools[${index}].function.parameters`;
    case "openai_responses":
      return `tools[${index}].parameters`;
    case "anthropic_messages":
      return `tools[${index}].input_schema`;
    case "gemini_generate":
      // Clients declare their functions in one tool (the index counts declarations).
      return `tools[0].functionDeclarations[${index}].parametersJsonSchema`;
  }
}
