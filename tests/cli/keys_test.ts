/** `deno task keys …`, run as a real process on a KV file. */
import assert from "node:assert/strict";
import { KeyStore } from "../../src/auth/keys.ts";
import { FakeClock, startServer } from "../support/server.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const CLI = new URL("../../src/cli/keys.ts", import.meta.url).pathname;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function keys(kvPath: string, ...args: string[]): Promise<Run> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", "--allow-read", "--allow-write", "--allow-net", CLI, ...args],
    cwd: ROOT,
    env: { SWITCHYARD_KV: kvPath, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

async function withKvFile(fn: (path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(`${dir}/kv.sqlite`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function store<T>(path: string, fn: (keys: KeyStore) => Promise<T>): Promise<T> {
  const kv = await Deno.openKv(path);
  try {
    return await fn(new KeyStore(kv, new FakeClock()));
  } finally {
    kv.close();
  }
}

Deno.test("keys create prints the key once; list, show, update, disable, enable, revoke", async () => {
  await withKvFile(async (path) => {
    const created = await keys(
      path,
      "create",
      "--name",
      "ci",
      "--models",
      "sim-chat,sim-t*",
      "--chat-per-minute=100",
      "--images-per-day",
      "unlimited",
    );
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    assert.match(key, /^sk-sy-[0-9A-Za-z]{32}$/);
    const record = await store(path, (s) => s.findByKey(key));
    assert.ok(record);
    assert.equal(record.name, "ci");
    assert.deepEqual(record.models, ["sim-chat", "sim-t*"]);
    assert.deepEqual(record.limits, { chat: { per_minute: 100 }, images: { per_day: null } });
    assert.match(created.stderr, new RegExp(`Created API key ${record.id}.*only time`));
    assert.ok(!created.stderr.includes(key));

    const [list, json, show] = await Promise.all([
      keys(path, "list"),
      keys(path, "list", "--json"),
      keys(path, "show", record.id, "--json"),
    ]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stdout,
      /^ID\s+NAME\s+CREATED\s+LAST USED\s+STATUS\s+MODELS\s+PREVIEW\s+LIMITS/,
    );
    assert.match(
      list.stdout,
      new RegExp(
        `${record.id}\\s+ci\\s+\\S+\\s+never\\s+active\\s+sim-chat,sim-t\\*\\s+no\\s+chat 100/min, images unlimited/day`,
      ),
    );
    for (const run of [list, json, show]) assert.ok(!run.stdout.includes(key));
    assert.deepEqual(JSON.parse(json.stdout).map((k: { id: string }) => k.id), [record.id]);
    assert.equal(JSON.parse(show.stdout).name, "ci");
    assert.ok(!("hash" in JSON.parse(show.stdout)));

    const updated = await keys(
      path,
      "update",
      record.id,
      "--name",
      "ci2",
      "--preview",
      "--models",
      "all",
      "--chat-per-minute",
      "default",
      "--other-per-day",
      "5",
    );
    assert.equal(updated.code, 0, updated.stderr);
    const after = await store(path, (s) => s.get(record.id));
    assert.equal(after!.name, "ci2");
    assert.equal(after!.preview, true);
    assert.equal(after!.models, null);
    assert.deepEqual(after!.limits, { images: { per_day: null }, other: { per_day: 5 } });

    assert.equal((await keys(path, "disable", record.id)).code, 0);
    assert.equal((await store(path, (s) => s.get(record.id)))!.disabled, true);
    assert.equal((await keys(path, "enable", record.id)).code, 0);
    assert.equal((await store(path, (s) => s.get(record.id)))!.disabled, false);

    const revoked = await keys(path, "revoke", record.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stderr, /revoked/);
    assert.equal(await store(path, (s) => s.findByKey(key)), null);
    const again = await keys(path, "revoke", record.id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no API key with id/);
    const empty = await keys(path, "list");
    assert.equal(empty.code, 0);
    assert.equal(empty.stdout, "");
    assert.match(empty.stderr, /No API keys/);
  });
});

Deno.test("keys: usage errors exit 2 with a message; failures exit 1", async () => {
  await withKvFile(async (path) => {
    const cases: [string[], RegExp][] = [
      [[], /no command/],
      [["frobnicate"], /unknown command frobnicate/],
      [["create"], /create needs --name NAME/],
      [["create", "--name"], /--name needs a value/],
      [
        ["create", "--name", "x", "--chat-per-minute", "0"],
        /--chat-per-minute: expected a positive integer/,
      ],
      [["create", "--name", "x", "--chat-per-minute", "default"], /--chat-per-minute/],
      [["create", "--name", "x", "--models", "bad id!"], /models\[0\]: expected a model id/],
      [["create", "--name", "x", "--colour", "red"], /unknown option --colour/],
      [["create", "--name", "x", "--json"], /create does not take --json/],
      [["show"], /show takes one key id/],
      [["update", "key_x"], /no API key with id key_x/],
      [["revoke", "a", "b"], /revoke takes one key id/],
    ];
    const runs = await Promise.all(cases.map(([args]) => keys(path, ...args)));
    runs.forEach((run, i) => {
      const [args, message] = cases[i]!;
      assert.match(run.stderr, message, args.join(" "));
      assert.equal(run.code, args[0] === "update" ? 1 : 2, args.join(" "));
      if (run.code === 2) assert.match(run.stderr, /Usage: deno task keys/);
      assert.equal(run.stdout, "");
    });
    const help = await keys(path, "--help");
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: deno task keys <command>/);
    const config = await keys(path, "list", "--config", "/nonexistent/switchyard.json");
    assert.equal(config.code, 1);
    assert.match(
      config.stderr,
      /\/nonexistent\/switchyard\.json: cannot read config: file not found/,
    );
  });
});

Deno.test("a key made by `deno task keys` works on a server over the same KV; revoking it there refuses it", async () => {
  await withKvFile(async (path) => {
    const task = await new Deno.Command(Deno.execPath(), {
      args: ["task", "keys", "create", "--name", "from-cli"],
      cwd: ROOT,
      env: { SWITCHYARD_KV: path, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(task.code, 0, new TextDecoder().decode(task.stderr));
    const key = new TextDecoder().decode(task.stdout).trim();
    const kv = await Deno.openKv(path);
    try {
      await using server = await startServer({ kv });
      const ids = async () => {
        const res = await fetch(`${server.url}/v1/models`, {
          headers: { authorization: `Bearer ${key}` },
        });
        const body = await res.json();
        return res.ok ? body.data.map((m: { id: string }) => m.id) : res.status;
      };
      assert.ok((await ids()).includes("sim-keyed"));
      const id = (await server.app.services.keys.list())[0]!.id;
      assert.equal((await keys(path, "revoke", id)).code, 0);
      assert.equal(await ids(), 401);
    } finally {
      kv.close();
    }
  });
});

Deno.test("keys create and update refuse model patterns that match no model, unless --force", async () => {
  await withKvFile(async (path) => {
    const refused = await keys(path, "create", "--name", "typo", "--models", "sim-chatt,sim-*");
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      'keys: --models: "sim-chatt" matches no model in the catalogue or the config (a key ' +
        "limited to it could use nothing); check the ids, or pass --force to keep them\n",
    );
    assert.equal(refused.stdout, "");
    assert.deepEqual(await store(path, (s) => s.list()), [], "no key was created");
    const forced = await keys(path, "create", "--name", "typo", "--models", "sim-chatt", "--force");
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stderr, /warning: models: "sim-chatt" matches no model in the catalogue/);
    const [record] = await store(path, (s) => s.list());
    const update = await keys(path, "update", record!.id, "--models", "nope-*");
    assert.equal(update.code, 1);
    assert.match(update.stderr, /"nope-\*" matches no model/);
    const fixed = await keys(path, "update", record!.id, "--models", "sim-chat");
    assert.equal(fixed.code, 0, fixed.stderr);
  });
});

Deno.test("keys create and update refuse an empty --models list, unless --force", async () => {
  await withKvFile(async (path) => {
    const refused = await keys(path, "create", "--name", "none", "--models", "");
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      "keys: --models: the list is empty, so a key limited to it could use nothing; name " +
        'model ids (or "all"), or pass --force to keep it\n',
    );
    assert.deepEqual(await store(path, (s) => s.list()), [], "no key was created");
    const forced = await keys(path, "create", "--name", "none", "--models", ",", "--force");
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stderr, /warning: models: \[\] allows no model, so the key can use none/);
    const [record] = await store(path, (s) => s.list());
    assert.deepEqual(record!.models, []);
    const update = await keys(path, "update", record!.id, "--models", "sim-chat");
    assert.equal(update.code, 0, update.stderr);
    const emptied = await keys(path, "update", record!.id, "--models=");
    assert.equal(emptied.code, 1);
    assert.match(emptied.stderr, /the list is empty/);
    assert.deepEqual((await store(path, (s) => s.get(record!.id)))!.models, ["sim-chat"]);
  });
});

Deno.test("keys: token limits, a concurrency cap and a budget from the flags; update merges the budget", async () => {
  await withKvFile(async (path) => {
    const created = await keys(
      path,
      "create",
      "--name",
      "capped",
      "--tokens-per-minute",
      "200000",
      "--max-concurrent",
      "4",
      "--budget-per-day",
      "5",
    );
    assert.equal(created.code, 0, created.stderr);
    const record = (await store(path, (s) => s.findByKey(created.stdout.trim())))!;
    assert.deepEqual(record.limits, { chat: { tokens_per_minute: 200000 } });
    assert.equal(record.max_concurrent, 4);
    assert.deepEqual(record.budget, { per_day: 5 });
    const updated = await keys(
      path,
      "update",
      record.id,
      "--budget-per-month",
      "100.5",
      "--max-concurrent",
      "unlimited",
      "--tokens-per-minute",
      "default",
    );
    assert.equal(updated.code, 0, updated.stderr);
    const after = (await store(path, (s) => s.get(record.id)))!;
    assert.deepEqual(after.budget, { per_day: 5, per_month: 100.5 });
    assert.equal(after.max_concurrent, null);
    assert.deepEqual(after.limits, {});
    const bad = await keys(path, "update", record.id, "--budget-per-day", "lots");
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--budget-per-day: expected an amount/);
  });
});

Deno.test("keys: --guardrails sets a key's guardrails, show --json has them, none removes them; a bad one exits 2 naming the flag", async () => {
  await withKvFile(async (path) => {
    const guardrails = '[{"type": "deny", "stage": "input", "action": "block", "words": ["x"]}]';
    const created = await keys(path, "create", "--name", "guarded", "--guardrails", guardrails);
    assert.equal(created.code, 0, created.stderr);
    const record = (await store(path, (s) => s.findByKey(created.stdout.trim())))!;
    const expected = [{
      type: "deny",
      name: "deny",
      stage: "input",
      action: "block",
      on_error: "block",
      words: ["x"],
    }];
    assert.deepEqual(record.guardrails, expected);
    const shown = await keys(path, "show", record.id, "--json");
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(JSON.parse(shown.stdout).guardrails, expected);
    const bad = await keys(
      path,
      "update",
      record.id,
      "--guardrails",
      '[{"type": "deny", "stage": "later", "action": "block"}]',
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--guardrails: guardrails\[0\]\.stage: /);
    assert.deepEqual((await store(path, (s) => s.get(record.id)))!.guardrails, expected);
    const removed = await keys(path, "update", record.id, "--guardrails", "none");
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await store(path, (s) => s.get(record.id)))!.guardrails, null);
  });
});
