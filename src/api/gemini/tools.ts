/**
 * `tools` and `toolConfig` of a Gemini request: each `functionDeclarations` entry a canonical
 * tool (`parametersJsonSchema` as written, else `parameters`, Gemini's `Schema`, as JSON
 * Schema); Gemini's own tools (`googleSearch`, `codeExecution`, `urlContext`...) recorded in
 * `uses` as hosted tools, since only a Gemini back end runs them. `functionCallingConfig.mode`: `AUTO` and
 * `VALIDATED` -> auto, `NONE` -> none, `ANY` -> required, or the one tool when
 * `allowedFunctionNames` names exactly one.
 */
import type { ToolChoice, ToolSpec } from "../../canonical/conversation.ts";
import type { Uses } from "../../canonical/uses.ts";
import { quote } from "../../quote.ts";
import { type Fields, OPTIONAL } from "../../validation/reader.ts";
import { type ToolNames, uniqueToolName } from "../shared/tool_names.ts";
import { fromGeminiSchema } from "./schema.ts";

const MODES = ["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"] as const;
const SCHEMA = { expected: "a JSON schema object" } as const;

/** The function declarations of `tools`. */
export function parseTools(body: Fields, uses: Uses): ToolSpec[] {
  const specs: ToolSpec[] = [];
  const names: ToolNames = new Map();
  for (const item of body.array("tools", OPTIONAL) ?? []) {
    const tool = item.object();
    for (const key of tool.keys) {
      if (key !== "functionDeclarations") {
        uses.hostedTools.push({ path: `${item.path}.${key}`, type: key });
      }
    }
    for (const d of tool.array("functionDeclarations", OPTIONAL) ?? []) {
      const f = d.object();
      const spec: ToolSpec = { name: uniqueToolName(f, names, specs.length) };
      const description = f.string("description", OPTIONAL);
      if (description !== undefined) spec.description = description;
      const json = f.optional("parametersJsonSchema")?.nullAsValue().object(SCHEMA);
      const openApi = f.optional("parameters")?.nullAsValue().object(SCHEMA);
      if (json !== undefined) spec.parameters = json.value;
      else if (openApi !== undefined) spec.parameters = fromGeminiSchema(openApi.value);
      specs.push(spec);
    }
  }
  return specs;
}

/** `toolConfig.functionCallingConfig` as a tool choice (`null`: nothing said). */
export function parseToolConfig(body: Fields, tools: readonly ToolSpec[]): ToolChoice | null {
  const calling = body.object("toolConfig", OPTIONAL)?.object("functionCallingConfig", OPTIONAL);
  if (calling === undefined) return null;
  const mode = calling.oneOf("mode", MODES, OPTIONAL) ?? "MODE_UNSPECIFIED";
  const allowed = (calling.array("allowedFunctionNames", OPTIONAL) ?? []).map((r) => {
    const name = r.string();
    if (!tools.some((t) => t.name === name)) {
      throw r.invalid(`expected the name of a declared function, but got ${quote(name)}`);
    }
    return name;
  });
  switch (mode) {
    case "MODE_UNSPECIFIED":
      return null;
    case "AUTO":
    case "VALIDATED":
      return "auto";
    case "NONE":
      return "none";
    case "ANY":
      return allowed.length === 1 ? { name: allowed[0]! } : "required";
  }
}
