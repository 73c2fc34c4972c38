import assert from "node:assert/strict";
import { closingPeers, DisconnectWatch, tableKeys } from "../../src/http/disconnect_watch.ts";

const HEADER =
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";

/** A `/proc/net/tcp` row from local port 8000 to `remote` in state `st`. */
function row(remote: string, st: string): string {
  return `   0: 0100007F:1F40 ${remote} ${st} 00000000:00000000 00:00000000 00000000     0        0 1`;
}

Deno.test("tableKeys writes addresses as the kernel's TCP tables do", () => {
  assert.deepEqual(tableKeys("127.0.0.1", 0xc7a2), [
    "0100007F:C7A2",
    "0000000000000000FFFF00000100007F:C7A2",
  ]);
  assert.deepEqual(tableKeys("::1", 80), ["00000000000000000000000001000000:0050"]);
  assert.deepEqual(tableKeys("2001:db8::1", 443), ["B80D0120000000000000000001000000:01BB"]);
  assert.deepEqual(tableKeys("not an address", 1), []);
});

Deno.test("closingPeers lists the remote ends of connections in CLOSE_WAIT only", () => {
  const table = [HEADER, row("0100007F:C7A2", "08"), row("0100007F:C7A3", "01"), ""].join("\n");
  assert.deepEqual(closingPeers([table]), ["0100007F:C7A2"]);
});

Deno.test("DisconnectWatch tells a watched request once its connection closes, and stops reading the table when nothing is watched", async () => {
  let reads = 0;
  let table = [HEADER, row("0100007F:C7A2", "01")].join("\n");
  const watch = new DisconnectWatch({
    intervalMs: 5,
    readTables: () => {
      reads++;
      return Promise.resolve([table]);
    },
  });
  const remote = { transport: "tcp", hostname: "127.0.0.1", port: 0xc7a2 } as const;
  const other = { transport: "tcp", hostname: "127.0.0.1", port: 0xc7a3 } as const;
  const closed = Promise.withResolvers<void>();
  let otherClosed = false;
  watch.watch(remote, () => closed.resolve());
  const unwatchOther = watch.watch(other, () => (otherClosed = true));
  await new Promise((r) => setTimeout(r, 30));
  assert.ok(reads > 0);
  table = [HEADER, row("0100007F:C7A2", "08"), row("0100007F:C7A3", "08")].join("\n");
  unwatchOther();
  await closed.promise;
  assert.equal(otherClosed, false, "an unwatched request is not told");
  await new Promise((r) => setTimeout(r, 30));
  const settled = reads;
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(reads, settled, "no reads while nothing is watched");
  watch.close();
});

Deno.test("DisconnectWatch gives up for good when the table cannot be read", async () => {
  const failed = Promise.withResolvers<unknown>();
  const watch = new DisconnectWatch({
    intervalMs: 1,
    readTables: () => Promise.reject(new Error("no /proc here")),
    onUnavailable: (e) => failed.resolve(e),
  });
  watch.watch({ transport: "tcp", hostname: "127.0.0.1", port: 1 }, () => {});
  assert.match(String(await failed.promise), /no \/proc/);
  const unwatch = watch.watch({ transport: "tcp", hostname: "127.0.0.1", port: 2 }, () => {});
  unwatch();
  watch.close();
});

Deno.test("DisconnectWatch does not read the table while every watched request is younger than the interval", async () => {
  let reads = 0;
  const watch = new DisconnectWatch({
    intervalMs: 40,
    readTables: () => {
      reads++;
      return Promise.resolve([HEADER]);
    },
  });
  const remote = { transport: "tcp", hostname: "127.0.0.1", port: 5000 } as const;
  // Quick requests, each done well within the interval: the table is never needed.
  for (let i = 0; i < 10; i++) {
    const unwatch = watch.watch(remote, () => {});
    await new Promise((r) => setTimeout(r, 10));
    unwatch();
  }
  assert.equal(reads, 0);
  // A request that runs on: now the table is read.
  const unwatch = watch.watch(remote, () => {});
  await new Promise((r) => setTimeout(r, 120));
  assert.ok(reads > 0);
  unwatch();
  watch.close();
});
