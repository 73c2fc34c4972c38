/** The `server` section: where to listen and how to treat what arrives. */
import { quote } from "../quote.ts";
import { OPTIONAL, type Reader } from "../validation/reader.ts";
import { COUNT, OPTIONAL_TEXT, orEmpty, STRINGS, TEXT } from "./rules.ts";
import type { ServerConfig } from "./types.ts";

const ORIGIN = /^https?:\/\/[^/\s]+$/;

/** The `server` section, every default filled in. */
export function readServer(r: Reader): ServerConfig {
  const f = orEmpty(r).object();
  const trust = f.get("trust_proxy");
  const server: ServerConfig = {
    hostname: f.string("hostname", OPTIONAL_TEXT) ?? "0.0.0.0",
    port: f.integer("port", { optional: true, min: 0, max: 65535 }) ?? 8000,
    trust_proxy: trust.value === true
      ? 1
      : trust.value === undefined || trust.value === false
      ? 0
      : trust.integer({ min: 1, max: 32, expected: "true, false or a number of hops (1\u201332)" }),
    max_body_bytes: f.integer("max_body_bytes", COUNT) ?? 20 * 1024 * 1024,
    cors_origins: ["*"],
    shutdown_grace_seconds: f.integer("shutdown_grace_seconds", { optional: true, min: 0 }) ??
      10,
    body_timeout_ms: f.integer("body_timeout_ms", { optional: true, min: 100, max: 3_600_000 }) ??
      30_000,
    ipv6_prefix: f.integer("ipv6_prefix", { optional: true, min: 1, max: 128 }) ?? 64,
    reuse_port: f.boolean("reuse_port", OPTIONAL) ?? false,
  };
  const origins = f.array("cors_origins", STRINGS);
  if (origins !== undefined) {
    server.cors_origins = origins.map((item) => {
      const origin = item.string(TEXT);
      if (origin !== "*" && !ORIGIN.test(origin)) {
        throw item.invalid(
          `expected "*" or an origin like "https://app.example.com", but got ${quote(origin)}`,
        );
      }
      return origin;
    });
  }
  f.done();
  return server;
}
