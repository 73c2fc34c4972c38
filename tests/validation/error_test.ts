import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import {
  invalidType,
  invalidValue,
  missingParameter,
  unknownParameter,
  unsupportedParameter,
  ValidationError,
} from "../../src/validation/error.ts";

/** The parts of an error a client and a config file see. */
function seen(e: ValidationError) {
  return {
    status: e.status,
    body: e.toBody().error,
    field: e.fieldMessage(),
  };
}

Deno.test("one wording per mistake, as an API body and as a config file's field message", () => {
  assert.deepEqual(seen(missingParameter("model")), {
    status: 400,
    body: {
      message: "Missing required parameter: 'model'.",
      type: "invalid_request_error",
      code: "missing_required_parameter",
      param: "model",
    },
    field: "model: missing required parameter",
  });
  assert.deepEqual(seen(invalidType("model", "a string", 5)), {
    status: 400,
    body: {
      message: "Invalid type for 'model': expected a string, but got a number.",
      type: "invalid_request_error",
      code: "invalid_type",
      param: "model",
    },
    field: "model: expected a string, but got a number",
  });
  assert.deepEqual(seen(invalidValue("models[3].provider", 'unknown provider "x"')), {
    status: 400,
    body: {
      message: `Invalid value for 'models[3].provider': unknown provider "x".`,
      type: "invalid_request_error",
      code: "invalid_value",
      param: "models[3].provider",
    },
    field: 'models[3].provider: unknown provider "x"',
  });
  assert.deepEqual(seen(unknownParameter("colour")), {
    status: 400,
    body: {
      message: "Unknown parameter: 'colour'.",
      type: "invalid_request_error",
      code: "unknown_parameter",
      param: "colour",
    },
    field: "colour: unknown parameter",
  });
  assert.deepEqual(seen(unsupportedParameter("n", "The model `m` makes one image.")).body, {
    message: "Unsupported parameter: 'n'. The model `m` makes one image.",
    type: "invalid_request_error",
    code: "unsupported_parameter",
    param: "n",
  });
});

Deno.test("a missing parameter may say why in a sentence of its own", () => {
  const e = missingParameter("messages[0].content", "An assistant message needs content.");
  assert.equal(
    e.message,
    "Missing required parameter: 'messages[0].content'. An assistant message needs content.",
  );
  assert.equal(e.reason, "missing required parameter");
});

Deno.test("the document itself is the request body, with no param; (root) in a config file", () => {
  const e = invalidType("", "an object", []);
  assert.equal(e.param, null);
  assert.equal(
    e.message,
    "Invalid type for the request body: expected an object, but got an array.",
  );
  assert.equal(e.fieldMessage(), "(root): expected an object, but got an array");
});

Deno.test("a validation error is an ApiError; a long path is cut in the middle", () => {
  const path = `a.${"b".repeat(500)}.c`;
  const e = invalidValue(path, "no", "invalid_image");
  assert.ok(e instanceof ApiError);
  assert.equal(e.code, "invalid_image");
  assert.equal(e.path, path);
  assert.ok(e.param!.length <= 301 && e.param!.endsWith("b.c"));
  assert.ok(e.message.length < 250, e.message);
  assert.ok(e.message.endsWith(".c': no."), e.message);
});
