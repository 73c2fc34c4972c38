/**
 * OpenAI's published schemas (`shared/reference/openai-openapi.json` beside the checkout, a copy of OpenAI's
 * OpenAPI 3.1 document) checked with a real JSON-schema validator (Ajv, draft 2020-12, the
 * dialect OpenAPI 3.1 uses): `#/components/schemas/...` references resolve inside the
 * document; OpenAPI's own keywords (`x-…`, `discriminator`) and formats are not checked.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "npm:ajv@8.17.1/dist/2020.js";

/** Where the document may be, in order: `OPENAI_OPENAPI`; the project's shared references
 * beside the checkout (DESIGN keeps it out of the project); the team's shared folder, for a
 * checkout elsewhere (a fresh clone in /tmp). */
const DOCUMENTS = [
  Deno.env.get("OPENAI_OPENAPI"),
  new URL("../../../../shared/reference/openai-openapi.json", import.meta.url).pathname,
  "/work/shared/reference/openai-openapi.json",
].filter((path): path is string => path !== undefined);
type Schema = Record<string, unknown>;
const ID = "https://switchyard.test/openai-openapi.json";

/** Validates values against named schemas of OpenAI's document. */
export class OpenAISchemas {
  readonly #ajv: Ajv2020;
  readonly #compiled = new Map<string, ValidateFunction>();

  /** The schema of each stream event type (the members of `ResponseStreamEvent`). */
  readonly #events = new Map<string, string>();

  private constructor(document: { components: { schemas: Record<string, Schema> } }) {
    this.#ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
    this.#ajv.addSchema({ $id: ID, components: document.components }, ID);
    const schemas = document.components.schemas;
    for (const member of schemas.ResponseStreamEvent!.anyOf as Schema[]) {
      const name = String(member.$ref).split("/").at(-1)!;
      const type = (schemas[name]!.properties as Record<string, Schema>).type!;
      for (const value of type.enum as string[]) this.#events.set(value, name);
    }
  }

  /** The errors of a stream event against `ResponseStreamEvent` (its member for its type, for
   * errors that say what is wrong rather than what every other member wanted). */
  eventErrors(event: { type?: unknown }): string[] {
    const name = this.#events.get(String(event.type));
    if (name === undefined) return [`unknown event type ${JSON.stringify(event.type)}`];
    const errors = this.errors(name, event);
    return errors.length > 0 ? errors : this.errors("ResponseStreamEvent", event);
  }

  /** Loads the document. */
  static async load(): Promise<OpenAISchemas> {
    for (const path of DOCUMENTS) {
      const text = await Deno.readTextFile(path).catch(() => null);
      if (text !== null) return new OpenAISchemas(JSON.parse(text));
    }
    throw new Error(
      `OpenAI's OpenAPI document is not at ${DOCUMENTS.join(" nor ")}: set OPENAI_OPENAPI`,
    );
  }

  /** The errors of `value` against `#/components/schemas/<name>`; empty when it conforms. */
  errors(name: string, value: unknown): string[] {
    let validate = this.#compiled.get(name);
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: `${ID}#/components/schemas/${name}` });
      this.#compiled.set(name, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e: ErrorObject) =>
      `${e.instancePath || "(root)"} ${e.message ?? ""} ${
        JSON.stringify(e.params)
      } [${e.schemaPath}]`
    );
  }
}
