import type { CanonicalRequest, Options } from "../../canonical/conversation.ts";
import { dropLacking, type DroppableOption } from "../dropped_options.ts";
import { toGeminiContents } from "./contents.ts";
import { toGeminiSchema } from "./schema.ts";
import { toGeminiThinking } from "./thinking.ts";
import { toGeminiFunctions, toGeminiToolConfig } from "./tools.ts";
import type { GenerateContentRequest, GenerationConfig } from "./types.ts";

/**
 * The `generateContent` body for a canonical request (the model and whether it streams are in
 * the path): the conversation (contents.ts); `generationConfig` with
 * `maxOutputTokens` when the caller gave a limit (raised by the thinking budget, which Gemini
 * counts in it), `temperature`, `topP`, `topK`, `stopSequences`, `seed`, the penalties,
 * `responseMimeType` and `responseJsonSchema` for a JSON answer, and `thinkingConfig`;
 * function declarations and `toolConfig`; a tool result's inline media inside its function
 * response for a `gemini-3-` `upstreamModel`. What Gemini has no field for goes to `dropped` by
 * its wire name: `user`, `metadata`, and every extra field of another protocol.
 */
export function toGeminiRequest(
  req: CanonicalRequest,
  dropped: Set<string>,
  upstreamModel = "",
): GenerateContentRequest {
  const options = req.options;
  // Gemini 3 takes a tool's inline media inside its function response (the Gemini CLI's rule).
  const mediaInResponses = upstreamModel.startsWith("gemini-3-");
  const { system, contents } = toGeminiContents(req.messages, dropped, mediaInResponses);
  const body: GenerateContentRequest = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system };
  if (options.tools.length > 0) {
    body.tools = [{ functionDeclarations: toGeminiFunctions(options.tools, dropped) }];
  }
  const calling = toGeminiToolConfig(options.toolChoice, options.parallelToolCalls, dropped);
  if (calling !== null && options.tools.length > 0) {
    body.toolConfig = { functionCallingConfig: calling };
  }
  const config = generationConfig(options);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  dropLacking(options, LACKING, dropped);
  for (const name of Object.keys(req.extras.fields)) dropped.add(name);
  return body;
}

function generationConfig(options: Options): GenerationConfig {
  const config: GenerationConfig = {};
  const thinking = toGeminiThinking(options.reasoning);
  if (options.maxTokensGiven) {
    config.maxOutputTokens = options.maxTokens + (thinking?.thinkingBudget ?? 0);
  }
  if (options.temperature !== undefined) config.temperature = options.temperature;
  if (options.topP !== undefined) config.topP = options.topP;
  if (options.topK !== undefined) config.topK = options.topK;
  if (options.stop.length > 0) config.stopSequences = [...options.stop];
  if (options.seed !== undefined) config.seed = options.seed;
  if (options.presencePenalty !== undefined) config.presencePenalty = options.presencePenalty;
  if (options.frequencyPenalty !== undefined) config.frequencyPenalty = options.frequencyPenalty;
  const output = options.output;
  if (output.type !== "text") config.responseMimeType = "application/json";
  if (output.type === "json_schema") config.responseJsonSchema = toGeminiSchema(output.schema);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  return config;
}

/** The options Gemini has no field for. */
const LACKING: readonly DroppableOption[] = ["user", "metadata", "verbosity"];
