import assert from "node:assert/strict";
import { remoteSpan } from "../../src/telemetry/tracing.ts";

Deno.test("remoteSpan reads a W3C traceparent and refuses invalid ones", () => {
  const valid = remoteSpan("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  assert.deepEqual(valid?.spanContext(), {
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    traceFlags: 1,
  });
  assert.equal(
    remoteSpan("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-later")?.spanContext()
      .traceFlags,
    0,
  );
  for (
    const header of [
      null,
      "",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
    ]
  ) {
    assert.equal(remoteSpan(header), null, String(header));
  }
});
