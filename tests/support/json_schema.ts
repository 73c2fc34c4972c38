/**
 * A small JSON-schema checker for tests (type, required, properties, items, enum, const,
 * bounds, lengths, formats date/email, $ref, anyOf/oneOf/allOf): what tool arguments must meet.
 */
type Schema = Record<string, unknown>;

/** The ways `value` breaks `schema`, each naming its path; empty when it conforms. */
export function schemaErrors(
  schema: Schema,
  value: unknown,
  root: Schema = schema,
  path = "$",
): string[] {
  if (typeof schema.$ref === "string") {
    const target = schema.$ref.slice(2).split("/").reduce<unknown>(
      (node, key) => (node as Schema)?.[key],
      root,
    );
    return schemaErrors(target as Schema, value, root, path);
  }
  const errors: string[] = [];
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    errors.push(`${path}: not the const`);
  }
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))
  ) {
    errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  }
  for (const key of ["anyOf", "oneOf"]) {
    const branches = schema[key] as Schema[] | undefined;
    if (branches && !branches.some((b) => schemaErrors(b, value, root, path).length === 0)) {
      errors.push(`${path}: matches no ${key} branch`);
    }
  }
  for (const part of (schema.allOf as Schema[] | undefined) ?? []) {
    errors.push(...schemaErrors(part, value, root, path));
  }
  const types = schema.type === undefined ? [] : [schema.type].flat() as string[];
  if (types.length > 0 && !types.some((t) => isType(t, value))) {
    errors.push(`${path}: ${JSON.stringify(value)} is not of type ${types.join("|")}`);
    return errors;
  }
  if (typeof value === "number") {
    const n = value;
    if (typeof schema.minimum === "number" && n < schema.minimum) {
      errors.push(`${path}: below minimum`);
    }
    if (typeof schema.maximum === "number" && n > schema.maximum) {
      errors.push(`${path}: above maximum`);
    }
    if (typeof schema.exclusiveMinimum === "number" && n <= schema.exclusiveMinimum) {
      errors.push(`${path}: not above exclusiveMinimum`);
    }
    if (typeof schema.exclusiveMaximum === "number" && n >= schema.exclusiveMaximum) {
      errors.push(`${path}: not below exclusiveMaximum`);
    }
    if (typeof schema.multipleOf === "number" && !Number.isInteger(n / schema.multipleOf)) {
      errors.push(`${path}: not a multiple of ${schema.multipleOf}`);
    }
  }
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength) {
      errors.push(`${path}: too short`);
    }
    if (typeof schema.maxLength === "number" && value.length > schema.maxLength) {
      errors.push(`${path}: too long`);
    }
    if (schema.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
      errors.push(`${path}: not a date`);
    }
    if (schema.format === "email" && !/^[^@\s]+@[^@\s]+$/.test(value)) {
      errors.push(`${path}: not an email`);
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      errors.push(`${path}: too few items`);
    }
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
      errors.push(`${path}: too many items`);
    }
    if (schema.items) {
      value.forEach((item, i) =>
        errors.push(...schemaErrors(schema.items as Schema, item, root, `${path}[${i}]`))
      );
    }
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const key of (schema.required as string[] | undefined) ?? []) {
      if (!(key in obj)) errors.push(`${path}: missing required ${key}`);
    }
    const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const [key, sub] of Object.entries(properties)) {
      if (key in obj) errors.push(...schemaErrors(sub, obj[key], root, `${path}.${key}`));
    }
    if (schema.additionalProperties === false) {
      for (const key of Object.keys(obj)) {
        if (!(key in properties)) errors.push(`${path}: extra ${key}`);
      }
    }
  }
  return errors;
}

function isType(type: string, value: unknown): boolean {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "null":
      return value === null;
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    default:
      return false;
  }
}
