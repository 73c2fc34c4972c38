import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { dropLacking, type DroppableOption } from "../dropped_options.ts";
import type { MessagesRequest } from "../../types/anthropic.ts";
import { toAnthropicJsonOutput } from "./json_output.ts";
import { toAnthropicMessages } from "./messages.ts";
import { anthropicModelTraits } from "./model.ts";
import { toAnthropicSampling } from "./sampling.ts";
import { thinkingCanContinue, toAnthropicThinking, wantsThinking } from "./thinking.ts";
import { toAnthropicToolChoice, toAnthropicTools } from "./tools.ts";

/** A Messages request, and what reading its answer needs to know. */
export interface AnthropicCall {
  body: MessagesRequest;
  /** The tool whose input is the answer's JSON text (see `toAnthropicJsonOutput`). */
  jsonTool: string | null;
}

/**
 * The Messages API body for a canonical request to `upstreamModel` (the model's traits read
 * from its name): the conversation (`toAnthropicMessages`); `max_tokens` always (Anthropic
 * requires it); `stop_sequences`; tools, tool choice and the answer's JSON form; thinking when
 * asked for and possible; sampling; `metadata.user_id` from `user`; and the fields of a Messages
 * front door's extras, passed on. What Anthropic cannot honour is added to `dropped` by its
 * name: `seed`, `frequency_penalty`, `presence_penalty`, `metadata`, sampling the model or
 * thinking refuses, the reasoning (`reasoning_effort`, or `thinking` for a bare budget) when
 * thinking cannot be on, and every extra field of another protocol.
 *
 * Thinking cannot be on for models without it, with a forced tool choice (Anthropic refuses
 * it: the caller's forced choice is kept, since the caller's code waits for that call), nor
 * mid tool loop when the calls' turn has no thinking block (`thinkingCanContinue`).
 */
export function toAnthropicRequest(
  req: CanonicalRequest,
  upstreamModel: string,
  stream: boolean,
  dropped: Set<string>,
): AnthropicCall {
  const options = req.options;
  const traits = anthropicModelTraits(upstreamModel);
  const { system, messages } = toAnthropicMessages(req.messages, dropped);
  const body: MessagesRequest = { model: upstreamModel, messages, max_tokens: options.maxTokens };
  if (system.length > 0) body.system = system;
  if (options.stop.length > 0) body.stop_sequences = [...options.stop];

  const output = toAnthropicJsonOutput(
    options.output,
    traits.structuredOutputs,
    toAnthropicTools(options.tools, traits.structuredOutputs, dropped),
    toAnthropicToolChoice(options.toolChoice, options.parallelToolCalls),
    options.toolChoice,
  );
  if (output.tools.length > 0) {
    body.tools = output.tools;
    if (output.choice !== null) body.tool_choice = output.choice;
  }
  if (output.format !== undefined) body.output_config = { format: output.format };

  const reasoning = options.reasoning;
  if (reasoning !== undefined && wantsThinking(reasoning)) {
    const forced = body.tool_choice?.type === "any" || body.tool_choice?.type === "tool";
    if (traits.thinking === "none" || forced || !thinkingCanContinue(messages)) {
      dropped.add(reasoning.effort !== undefined ? "reasoning_effort" : "thinking");
    } else {
      const thinking = toAnthropicThinking(reasoning, traits.thinking, options.maxTokens);
      body.thinking = thinking.thinking;
      body.max_tokens = thinking.maxTokens;
      if (thinking.effort !== undefined) {
        body.output_config = { ...body.output_config, effort: thinking.effort };
      }
    }
  }
  Object.assign(
    body,
    toAnthropicSampling(
      options,
      { thinking: body.thinking !== undefined, fixedSampling: traits.fixedSampling },
      dropped,
    ),
  );
  if (options.user !== undefined) body.metadata = { user_id: options.user };
  dropLacking(options, LACKING, dropped);
  if (stream) body.stream = true;

  if (req.extras.protocol !== "anthropic_messages") {
    for (const name of Object.keys(req.extras.fields)) dropped.add(name);
    return { body, jsonTool: output.jsonTool };
  }
  return { body: { ...req.extras.fields, ...body }, jsonTool: output.jsonTool };
}

/** The options the Messages API has no field for. */
const LACKING: readonly DroppableOption[] = [
  "seed",
  "frequencyPenalty",
  "presencePenalty",
  "metadata",
  "verbosity",
];
