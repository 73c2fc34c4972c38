/**
 * The memory of slow uploads: Switchyard (`main.ts` with `deno task start`'s flags) and N clients
 * that each send a chat request with a chunked body, one byte every 2 s. Prints the RSS before,
 * the peak while they trickle, and the peak's growth per client.
 *
 *   deno run -A bench/slow_clients.ts [--clients 200] [--seconds 20]
 */
const ROOT = new URL("..", import.meta.url).pathname;
const args = Deno.args;
const option = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const clients = option("clients", 200);
const seconds = option("seconds", 20);

const words: string[] = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.start
  .split(" ");
const flags = words.slice(2, words.indexOf("main.ts"));
await Deno.mkdir(`${ROOT}data/bench`, { recursive: true });
const dir = await Deno.makeTempDir({ dir: `${ROOT}data/bench` });
const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
const port = (listener.addr as Deno.NetAddr).port;
listener.close();
const config = JSON.parse(await Deno.readTextFile(`${ROOT}switchyard.json`));
config.server = { ...config.server, hostname: "127.0.0.1", port, body_timeout_ms: 600_000 };
config.kv = { path: `${dir}/kv.sqlite` };
config.limits = { anonymous: { chat: { per_minute: 1_000_000 } } };
await Deno.writeTextFile(`${dir}/switchyard.json`, JSON.stringify(config));
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", ...flags, `${ROOT}main.ts`, "--config", `${dir}/switchyard.json`],
  cwd: ROOT,
  env: { NO_COLOR: "1" },
  stdout: "null",
  stderr: "null",
}).spawn();

const rssMb = () => {
  const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
for (let i = 0;; i++) {
  try {
    await (await fetch(`http://127.0.0.1:${port}/healthz`)).body?.cancel();
    break;
  } catch {
    if (i > 400) throw new Error("Switchyard did not start");
    await sleep(25);
  }
}
// Warm up the path the clients take, then let the heap settle.
for (let i = 0; i < 50; i++) {
  await (await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "sim-chat", messages: [{ role: "user", content: "hi" }] }),
  })).body?.cancel();
}
await sleep(2000);
const before = rssMb();
const encoder = new TextEncoder();
const head = encoder.encode(
  "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n" +
    "transfer-encoding: chunked\r\n\r\n",
);
const conns = await Promise.all(
  Array.from({ length: clients }, () => Deno.connect({ hostname: "127.0.0.1", port })),
);
await Promise.all(conns.map((c) => c.write(head)));
let peak = before;
const body = '{"model":"sim-chat","messages":[{"role":"user","content":"' + "x".repeat(100);
const end = Date.now() + seconds * 1000;
for (let i = 0; Date.now() < end; i++) {
  await Promise.all(conns.map((c) => c.write(encoder.encode(`1\r\n${body[i % body.length]}\r\n`))));
  for (let t = 0; t < 4; t++) {
    peak = Math.max(peak, rssMb());
    await sleep(500);
  }
}
for (const c of conns) c.close();
child.kill("SIGKILL");
await child.status;
await Deno.remove(dir, { recursive: true });
const perClient = (peak - before) / clients;
console.log(
  `${clients} clients, one byte every 2 s for ${seconds} s: RSS ${before.toFixed(1)} MB before, ` +
    `${peak.toFixed(1)} MB at the peak: ${perClient.toFixed(3)} MB a client`,
);
