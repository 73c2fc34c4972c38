/**
 * The rate limiter under contention: several processes share one KV file (as under
 * `deno serve --parallel`) and hammer the same subject. Reports admissions per second, the
 * KV commits that served them, the CPU time per admission, and checks exactness: with a
 * limit, the processes together admit exactly that many.
 *
 *   deno run -A bench/limiter_contention.ts [--processes 2] [--concurrency 64] [--ms 3000]
 *     [--limit N]   (default: effectively unlimited; a day window of 10^12)
 */
import { cpuUsage } from "node:process";
import { ANONYMOUS_CALLER } from "../src/auth/authenticate.ts";
import { KeyStore } from "../src/auth/keys.ts";
import { systemClock } from "../src/clock.ts";
import { parseConfig } from "../src/config/parse.ts";
import { RateLimiter } from "../src/limits/limiter.ts";

interface WorkerResult {
  admitted: number;
  refused: number;
  failed: number;
  commits: number;
  conflicts: number;
  cpuMicros: number;
}

function flag(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
}

async function worker(path: string, concurrency: number, ms: number, limit: number) {
  const kv = await Deno.openKv(path);
  const config = parseConfig({
    providers: [{ id: "sim", style: "simulator" }],
    limits: { anonymous: { chat: { per_minute: null, per_day: limit } } },
  }, "bench");
  const result: WorkerResult = {
    admitted: 0,
    refused: 0,
    failed: 0,
    commits: 0,
    conflicts: 0,
    cpuMicros: 0,
  };
  const counted = new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "atomic") return typeof value === "function" ? value.bind(target) : value;
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        op.commit = async () => {
          result.commits++;
          try {
            const r = await commit();
            if (!r.ok) result.conflicts++;
            return r;
          } catch (e) {
            result.conflicts++;
            throw e;
          }
        };
        return op;
      };
    },
  });
  const limiter = new RateLimiter({
    kv: counted,
    clock: systemClock,
    limits: config.limits,
    keys: new KeyStore(counted, systemClock),
  });
  const cpu = cpuUsage();
  const end = Date.now() + ms;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      try {
        await limiter.admit("chat", ANONYMOUS_CALLER, "192.0.2.1");
        result.admitted++;
      } catch (e) {
        if ((e as { status?: number }).status === 429) result.refused++;
        else if (result.failed++ === 0) console.error("first failure:", e);
      }
    }
  }));
  const used = cpuUsage(cpu);
  result.cpuMicros = used.user + used.system;
  kv.close();
  console.log(JSON.stringify(result));
}

async function main(args: string[]) {
  const processes = flag(args, "processes", 2);
  const concurrency = flag(args, "concurrency", 64);
  const ms = flag(args, "ms", 3000);
  const limit = flag(args, "limit", 1e12);
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/kv.sqlite`;
    const self = new URL(import.meta.url).pathname;
    const outputs = await Promise.all(
      Array.from({ length: processes }, () =>
        new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "-A",
            "--unstable-kv",
            self,
            "--worker",
            path,
            String(concurrency),
            String(ms),
            String(limit),
          ],
          stdout: "piped",
          stderr: "inherit",
        }).output()),
    );
    const results: WorkerResult[] = outputs.map((o) =>
      JSON.parse(new TextDecoder().decode(o.stdout))
    );
    const total = (k: keyof WorkerResult) => results.reduce((sum, r) => sum + r[k], 0);
    for (const [i, r] of results.entries()) {
      console.log(
        `process ${i + 1}: admitted ${r.admitted}, refused ${r.refused}, failed ${r.failed}, ` +
          `commits ${r.commits} (${r.conflicts} conflicts or lock retries), ` +
          `${(r.cpuMicros / Math.max(1, r.admitted + r.refused)).toFixed(1)} µs CPU per decision`,
      );
    }
    console.log(
      `total: ${total("admitted")} admitted (${Math.round(total("admitted") / (ms / 1000))}/s), ${
        total("refused")
      } refused, ${total("failed")} failed, ` +
        `${(total("admitted") / Math.max(1, total("commits"))).toFixed(1)} admissions per commit`,
    );
    if (limit < 1e12) {
      console.log(
        total("admitted") === limit
          ? `exact: ${limit} admitted for a limit of ${limit}`
          : `NOT EXACT: ${total("admitted")} admitted for a limit of ${limit}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (Deno.args[0] === "--worker") {
  const [, path, concurrency, ms, limit] = Deno.args;
  await worker(path!, Number(concurrency), Number(ms), Number(limit));
} else {
  await main(Deno.args);
}
