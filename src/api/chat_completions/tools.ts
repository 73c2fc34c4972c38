import type { ToolChoice, ToolSpec } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../routes/params.ts";
import { parseCacheControl } from "./cache_control.ts";
import {
  absent,
  invalidType,
  isObject,
  kindOf,
  missing,
  notThis,
  optionalBoolean,
} from "./checks.ts";

/** OpenAI's limit on tools. */
const MAX_TOOLS = 128;

const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `tools`: at most {@link MAX_TOOLS} functions with unique names; `function.strict` and a
 * tool's `cache_control` (LiteLLM's convention) are kept. */
export function parseTools(value: unknown): ToolSpec[] {
  if (absent(value)) return [];
  if (!Array.isArray(value)) {
    throw invalidType(`\`tools\` must be an array of tools, not ${kindOf(value)}.`, "tools");
  }
  if (value.length > MAX_TOOLS) {
    throw invalidValue(
      `\`tools\` may hold at most ${MAX_TOOLS} tools, not ${value.length}.`,
      "tools",
    );
  }
  const names = new Map<string, number>();
  return value.map((raw, i): ToolSpec => {
    const at = `tools[${i}]`;
    if (!isObject(raw)) {
      throw invalidType(
        `\`${at}\` must be an object {type: "function", function: {...}}, not ${kindOf(raw)}.`,
        at,
      );
    }
    expectFunctionType(raw.type, `${at}.type`);
    const fn = raw.function;
    if (!isObject(fn)) {
      const message = `\`${at}.function\` must be an object with at least a \`name\`, not ${
        kindOf(fn)
      }.`;
      throw fn === undefined
        ? missing(message, `${at}.function`)
        : invalidType(message, `${at}.function`);
    }
    const name = functionName(fn.name, `${at}.function.name`);
    const first = names.get(name);
    if (first !== undefined) {
      throw invalidValue(
        `\`${at}.function.name\`: the name ${
          quote(name)
        } is already used by tools[${first}]; tool names must be unique.`,
        `${at}.function.name`,
      );
    }
    names.set(name, i);
    const tool: ToolSpec = { name };
    if (!absent(fn.description)) {
      if (typeof fn.description !== "string") {
        throw invalidType(
          `\`${at}.function.description\` must be a string, not ${kindOf(fn.description)}.`,
          `${at}.function.description`,
        );
      }
      tool.description = fn.description;
    }
    if (!absent(fn.parameters)) {
      tool.parameters = parseParameters(fn.parameters, `${at}.function.parameters`);
    }
    const strict = optionalBoolean(fn, "strict", `${at}.function.strict`);
    if (strict !== null) tool.strict = strict;
    const cache = parseCacheControl(raw.cache_control, `${at}.cache_control`);
    if (cache) tool.cache = cache;
    return tool;
  });
}

/** A function's `parameters`: a JSON schema of an object. */
function parseParameters(value: unknown, at: string): Record<string, unknown> {
  if (!isObject(value)) {
    throw invalidType(
      `\`${at}\` must be a JSON schema object like {"type": "object", "properties": {...}}, not ${
        kindOf(value)
      }.`,
      at,
    );
  }
  if (value.type !== undefined && value.type !== "object") {
    throw invalidValue(
      `\`${at}.type\` must be "object" (function arguments are a JSON object), not ${
        quote(value.type)
      }.`,
      `${at}.type`,
    );
  }
  if (value.properties !== undefined && !isObject(value.properties)) {
    throw invalidType(
      `\`${at}.properties\` must be an object mapping names to schemas, not ${
        kindOf(value.properties)
      }.`,
      `${at}.properties`,
    );
  }
  const required = value.required;
  if (
    required !== undefined &&
    (!Array.isArray(required) || required.some((r) => typeof r !== "string"))
  ) {
    throw invalidType(`\`${at}.required\` must be an array of property names.`, `${at}.required`);
  }
  return value;
}

/** `tool_choice`: `none`, `auto`, `required` (needs tools) or one of the tools by name. */
export function parseToolChoice(value: unknown, tools: readonly ToolSpec[]): ToolChoice | null {
  if (absent(value)) return null;
  if (value === "none" || value === "auto") return value;
  if (value === "required") {
    if (tools.length === 0) {
      throw invalidValue(
        '`tool_choice` "required" needs `tools`: no tools were given.',
        "tool_choice",
      );
    }
    return value;
  }
  if (!isObject(value)) {
    const message =
      `\`tool_choice\` must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}, not ${
        typeof value === "string" ? quote(value) : kindOf(value)
      }.`;
    throw typeof value === "string"
      ? invalidValue(message, "tool_choice")
      : invalidType(message, "tool_choice");
  }
  expectFunctionType(value.type, "tool_choice.type");
  const fn = value.function;
  if (!isObject(fn)) {
    const message = `\`tool_choice.function\` must be an object with a \`name\`, not ${
      kindOf(fn)
    }.`;
    throw fn === undefined
      ? missing(message, "tool_choice.function")
      : invalidType(message, "tool_choice.function");
  }
  const name = functionName(fn.name, "tool_choice.function.name");
  if (!tools.some((t) => t.name === name)) {
    throw invalidValue(
      `\`tool_choice.function.name\` is ${
        quote(name)
      }, which is not the name of any tool in \`tools\`.`,
      "tool_choice.function.name",
    );
  }
  return { name };
}

/** Checks that a `type` field is `"function"`. */
export function expectFunctionType(type: unknown, param: string): void {
  if (type === "function") return;
  const message = `\`${param}\` must be "function"${notThis(type)}.`;
  throw type === undefined ? missing(message, param) : invalidValue(message, param);
}

/** A function name: 1 to 64 letters, digits, underscores or dashes. */
export function functionName(name: unknown, param: string): string {
  if (typeof name === "string" && FUNCTION_NAME.test(name)) return name;
  const message = `\`${param}\` must be 1 to 64 letters, digits, underscores or dashes, not ${
    typeof name === "string" ? quote(name) : kindOf(name)
  }.`;
  if (name === undefined) throw missing(message, param);
  throw typeof name === "string" ? invalidValue(message, param) : invalidType(message, param);
}
