/**
 * Drives the native client's response-head and chunked-body parsers with a server that answers
 * each call with well-formed but varied bytes, or with hostile ones (mutated, truncated, random,
 * pipelined extra answers, framing and size limits broken), split into random writes, over
 * kept-alive connections shared by concurrent callers. Whatever the bytes:
 *
 * - no call resolves with another call's answer (each answer carries its call's token), so a
 *   pooled connection is never left out of step;
 * - a well-formed answer is read exactly;
 * - every call settles (resolves and is read to its end, or rejects with an Error) within a
 *   bound, and nothing is thrown outside a call.
 *
 * Seeded (`FUZZ_SEED` picks another seed; a failure names the seed and the call).
 */
import { random as seeded } from "../../../src/providers/simulator/scene.ts";
import assert from "node:assert/strict";
import { NativeHttpClient } from "../../../src/http/client/native.ts";
import type { ClientResponse } from "../../../src/http/client/types.ts";
import { type Peer, RawServer, within } from "./raw_server.ts";

const SEED = Number(Deno.env.get("FUZZ_SEED") ?? 0x5eed_2026);
/** Calls made, over {@link LANES} concurrent callers. */
const CALLS = 1200;
const LANES = 8;
/** How long a call (its request and its whole body) may take before it counts as hung. */
const SETTLE_MS = 5000;

const encoder = new TextEncoder();

type Random = () => number;
const int = (random: Random, min: number, max: number) =>
  min + Math.floor(random() * (max - min + 1));
const pick = <T>(random: Random, items: readonly T[]): T =>
  items[int(random, 0, items.length - 1)]!;
const chance = (random: Random, p: number) => random() < p;

/** The token an answer to call `id` carries: no single-byte change makes another call's. */
const token = (id: number) => `<${id}|${id}>`;
const TOKEN = /<(\d+)\|(\d+)>/g;

/** What the server does for one call. */
interface Plan {
  /** The bytes, in the writes they are sent as. */
  writes: Uint8Array[];
  /** Whether the connection is closed after them. */
  close: boolean;
  /** The body a well-formed answer has (`null`: hostile, any outcome but a wrong answer). */
  body: string | null;
  kind: string;
}

const bytes = (text: string) => encoder.encode(text);
const join = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) at += (out.set(part, at), part.length);
  return out;
};

/** A body for call `id`: its token, a few times, with filler (some of it multi-byte). */
function bodyFor(random: Random, id: number): string {
  let body = "";
  for (let i = int(random, 1, 12); i > 0; i--) {
    body += token(id) + pick(random, ["", " ", "data: x\n\n", "héllo ✓ ", "\r\n", "0\r\n\r\n"]);
  }
  return body;
}

/** Extra well-formed header fields. */
function extraFields(random: Random): string[] {
  const fields: string[] = [];
  for (let i = int(random, 0, 6); i > 0; i--) {
    fields.push(
      `${pick(random, ["X-A", "x-request-id", "Server", "Date", "X-Empty"])}:${
        pick(random, [" v", "", "  spaced  ", "\tt", " a:b:c"])
      }`,
    );
  }
  return fields;
}

/** A chunked encoding of `body`: random chunk sizes, hex case, leading zeros, extensions,
 * trailers. */
function chunked(random: Random, body: Uint8Array): string[] {
  const out: string[] = [];
  const latin1 = (b: Uint8Array) => String.fromCharCode(...b);
  for (let at = 0; at < body.length;) {
    const size = Math.min(body.length - at, int(random, 1, 64));
    let hex = size.toString(16);
    if (chance(random, 0.3)) hex = hex.toUpperCase();
    if (chance(random, 0.2)) hex = "00" + hex;
    const ext = chance(random, 0.15) ? ";name=value" : "";
    out.push(`${hex}${ext}\r\n${latin1(body.subarray(at, at + size))}\r\n`);
    at += size;
  }
  out.push(chance(random, 0.2) ? "0\r\nX-Trailer: t\r\n\r\n" : "0\r\n\r\n");
  return out;
}

/** A well-formed answer to call `id`, as latin1 text (bytes as chars), and how it ends. */
function wellFormed(random: Random, id: number) {
  const body = bodyFor(random, id);
  const raw = encoder.encode(body);
  const interim = chance(random, 0.1)
    ? pick(random, [
      "HTTP/1.1 100 Continue\r\n\r\n",
      "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
    ])
    : "";
  const fields = extraFields(random);
  const framing = pick(random, ["length", "length", "chunked", "chunked", "close", "http1.0"]);
  let close = false;
  let framed: string;
  let version = "HTTP/1.1";
  if (framing === "length") {
    fields.push(`Content-Length: ${raw.length}`);
    framed = String.fromCharCode(...raw);
  } else if (framing === "chunked") {
    fields.push(pick(random, ["Transfer-Encoding: chunked", "transfer-encoding: Chunked"]));
    framed = chunked(random, raw).join("");
  } else if (framing === "close") {
    close = true;
    framed = String.fromCharCode(...raw);
  } else {
    version = "HTTP/1.0";
    fields.push(`Content-Length: ${raw.length}`);
    if (chance(random, 0.5)) fields.push("Connection: keep-alive");
    else close = true;
    framed = String.fromCharCode(...raw);
  }
  if (!close && chance(random, 0.1)) {
    fields.push("Connection: close");
    close = true;
  }
  const status = pick(random, ["200 OK", "200 OK", "500 Internal Server Error", "429 Slow"]);
  const head = `${version} ${status}\r\n${fields.map((f) => `${f}\r\n`).join("")}\r\n`;
  return { text: interim + head + framed, body, close };
}

/** Latin1 text (one char a byte) as bytes. */
const latin1Bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** Bytes a mutation writes: framing characters most. */
const INTERESTING = [13, 10, 58, 32, 9, 48, 49, 55, 57, 97, 102, 70, 59, 45, 43, 0, 127, 255];

/** Hostile answers (the server closes the connection after, unless noted). */
function hostile(
  random: Random,
  id: number,
): { writes: Uint8Array; close: boolean; kind: string; end?: number } {
  const first = wellFormed(random, id);
  const good = latin1Bytes(first.text);
  // Kept open after bytes beyond an answer, unless that answer is delimited by the close.
  const closes = first.close;
  switch (int(random, 0, 9)) {
    case 0: {
      // A few bytes changed.
      const out = good.slice();
      for (let i = int(random, 1, 4); i > 0; i--) {
        out[int(random, 0, out.length - 1)] = chance(random, 0.7)
          ? pick(random, INTERESTING)
          : int(random, 0, 255);
      }
      return { writes: out, close: true, kind: "mutated" };
    }
    case 1:
      return {
        writes: good.subarray(0, int(random, 0, good.length - 1)),
        close: true,
        kind: "cut",
      };
    case 2: {
      const out = new Uint8Array(int(random, 0, 400));
      for (let i = 0; i < out.length; i++) out[i] = int(random, 0, 255);
      if (chance(random, 0.5)) out.set(bytes("HTTP/1.1 ").subarray(0, out.length));
      return { writes: out, close: true, kind: "random" };
    }
    case 3: {
      // Bytes inserted somewhere.
      const at = int(random, 0, good.length);
      const junk = bytes(
        pick(random, ["\r\n", "\n", ":", " ", "0\r\n\r\n", "HTTP/1.1 200 OK\r\n"]),
      );
      return {
        writes: join([good.subarray(0, at), junk, good.subarray(at)]),
        close: true,
        kind: "inserted",
      };
    }
    case 4: {
      // A second answer (the same call's) right behind the first, the connection kept open: the
      // client must not hand it to the next call on this connection.
      const again = latin1Bytes(wellFormed(random, id).text);
      return { writes: join([good, again]), close: closes, kind: "pipelined", end: good.length };
    }
    case 5: {
      const junk = new Uint8Array(int(random, 1, 40)).map(() => int(random, 0, 255));
      return { writes: join([good, junk]), close: closes, kind: "trailing junk", end: good.length };
    }
    case 6: {
      const sizes = ["1234567890abcd", "-1", "0x10", "g", "", " ", "ffffffffffffffffff", "1 2"];
      const text = `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${token(id).length}\r\n${
        token(id)
      }\r\n${pick(random, sizes)}\r\n${token(id)}\r\n0\r\n\r\n`;
      return { writes: bytes(text), close: true, kind: "bad chunk size" };
    }
    case 7: {
      const t = token(id);
      const text = pick(random, [
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${t.length}\r\n${t}XX0\r\n\r\n`,
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;${
          "e".repeat(5000)
        }\r\nx\r\n0\r\n\r\n`,
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n${"T: t\r\n".repeat(100)}\r\n`,
        `HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n${t}`,
        `HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n${t}`,
        `HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n${t}`,
        `HTTP/1.1 200 OK\r\nContent-Length: ${t.length}\r\nTransfer-Encoding: chunked\r\n\r\n${t}`,
        // Transfer codings besides chunked, refused at the head.
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${t.length}\r\n${t}\r\n0\r\n\r\n`,
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n${t}`,
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: ${t.length}\r\n\r\n${t}`,
      ]);
      return { writes: bytes(text), close: true, kind: "bad framing" };
    }
    case 8: {
      const text = pick(random, [
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n`,
        "HTTP/1.1 100 Continue\r\n\r\n".repeat(12),
        `HTTP/1.1 200 OK\r\n${"X: y\r\n".repeat(300)}\r\n`,
        `HTTP/1.1 200 OK\r\nX: ${"v".repeat(70_000)}\r\n\r\n`,
        `HTTP/1.1 200 OK\r\n folded: x\r\n\r\n`,
        `HTTP/2 200\r\n\r\n`,
        `HTTP/1.1 20 OK\r\n\r\n`,
        `HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 0\r\n\r\n`,
        `HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 0\r\n\r\n`,
      ]);
      return { writes: bytes(text), close: true, kind: "bad head" };
    }
    default:
      // A well-formed answer whose connection closes in the middle of the next request.
      return { writes: good, close: true, kind: "closed after" };
  }
}

/** Split points: the bytes in 1 to 5 writes, the last one holding whatever follows `end`. */
function split(random: Random, all: Uint8Array, end: number): Uint8Array[] {
  const cuts = new Set<number>();
  for (let i = int(random, 0, 4); i > 0; i--) cuts.add(int(random, 1, Math.max(1, end - 1)));
  const sorted = [...cuts].filter((c) => c < end).sort((a, b) => a - b);
  const writes: Uint8Array[] = [];
  let from = 0;
  for (const cut of sorted) {
    writes.push(all.subarray(from, cut));
    from = cut;
  }
  writes.push(all.subarray(from));
  return writes.filter((w) => w.length > 0);
}

/** What the server does for call `id` (the same every time it is asked: a retried call gets
 * the same plan). */
function planFor(id: number): Plan {
  const random = seeded(SEED ^ Math.imul(id + 1, 0x9e3779b1));
  if (chance(random, 0.55)) {
    const { text, body, close } = wellFormed(random, id);
    const all = latin1Bytes(text);
    return { writes: split(random, all, all.length), close, body, kind: "well-formed" };
  }
  const { writes, close, kind, end } = hostile(random, id);
  // A pipelined answer or junk after one arrives in the same write as the end of the first
  // answer (as one network read: a client can only tell it is there if it came with it).
  return { writes: split(random, writes, end ?? writes.length), close, body: null, kind };
}

/** Sends `plan` (a short pause between writes, now and then); `false` once the client left. */
async function perform(peer: Peer, plan: Plan, random: Random): Promise<boolean> {
  try {
    for (const write of plan.writes) {
      await peer.send(write);
      if (chance(random, 0.3)) await new Promise((r) => setTimeout(r, int(random, 0, 2)));
    }
  } catch {
    return false;
  }
  return true;
}

/** The whole body of `response`, read by `read()` or `text()` as `random` picks. */
async function readAll(response: ClientResponse, random: Random): Promise<string> {
  if (chance(random, 0.3)) {
    const { text, complete } = await response.text(1 << 20);
    assert.ok(complete);
    return text;
  }
  const decoder = new TextDecoder();
  let text = "";
  for (let piece = await response.read(); piece !== null; piece = await response.read()) {
    text += decoder.decode(piece, { stream: true });
  }
  return text + decoder.decode();
}

Deno.test(`NativeHttpClient fuzz: hostile answers on pooled connections never reach another call, and every call settles (seed ${SEED})`, async () => {
  const uncaught: unknown[] = [];
  const onUnhandled = (event: PromiseRejectionEvent) => {
    event.preventDefault();
    uncaught.push(event.reason);
  };
  globalThis.addEventListener("unhandledrejection", onUnhandled);
  const kinds = new Map<string, { calls: number; resolved: number }>();
  await using server = new RawServer(async (peer, index) => {
    const random = seeded(SEED + index);
    for (let request = await peer.request(); request !== null; request = await peer.request()) {
      const plan = planFor(Number(request.target.slice("/c/".length)));
      if (!(await perform(peer, plan, random)) || plan.close) return peer.close();
    }
  });
  const client = new NativeHttpClient();
  const failures: string[] = [];
  let next = 0;
  const lane = async (n: number) => {
    const random = seeded(SEED * 31 + n);
    for (let id = next++; id < CALLS; id = next++) {
      const plan = planFor(id);
      const stats = kinds.get(plan.kind) ?? { calls: 0, resolved: 0 };
      kinds.set(plan.kind, stats);
      stats.calls++;
      const where = `call ${id} (${plan.kind}, seed ${SEED})`;
      const post = chance(random, 0.5);
      let outcome: { body: string } | { error: unknown };
      try {
        outcome = await within(
          (async () => {
            const response = await client.request({
              method: post ? "POST" : "GET",
              url: server.url(`/c/${id}`),
              headers: { "x-call": String(id) },
              signal: new AbortController().signal,
              ...(post ? { body: `{"call":${id}}` } : {}),
            });
            try {
              return { body: await readAll(response, random) };
            } catch (error) {
              return { error };
            }
          })().catch((error) => ({ error })),
          SETTLE_MS,
          where,
        );
      } catch (e) {
        failures.push(`${where}: hung: ${(e as Error).message}`);
        continue;
      }
      if ("error" in outcome) {
        if (!(outcome.error instanceof Error)) {
          failures.push(`${where}: rejected with a non-Error ${String(outcome.error)}`);
        } else if (plan.body !== null) {
          failures.push(`${where}: a well-formed answer failed: ${outcome.error.message}`);
        }
        continue;
      }
      stats.resolved++;
      for (const [, a, b] of outcome.body.matchAll(TOKEN)) {
        if (a === b && Number(a) !== id) {
          failures.push(`${where}: got call ${a}'s answer`);
        }
      }
      if (plan.body !== null && outcome.body !== plan.body) {
        failures.push(`${where}: read ${JSON.stringify(outcome.body)}, not its answer`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: LANES }, (_, n) => lane(n)));
  } finally {
    client.close();
    globalThis.removeEventListener("unhandledrejection", onUnhandled);
  }
  assert.deepEqual(failures, [], failures.slice(0, 10).join("\n"));
  assert.deepEqual(uncaught, [], "nothing is thrown outside a call");
  // The run exercised what it claims: every kind of answer, and kept-alive connections.
  for (
    const kind of [
      "well-formed",
      "mutated",
      "cut",
      "random",
      "inserted",
      "pipelined",
      "trailing junk",
      "bad chunk size",
      "bad framing",
      "bad head",
      "closed after",
    ]
  ) {
    assert.ok((kinds.get(kind)?.calls ?? 0) > 10, `${kind}: ${JSON.stringify(kinds.get(kind))}`);
  }
  assert.ok(server.accepted < CALLS * 0.8, `connections reused: ${server.accepted} for ${CALLS}`);
});
