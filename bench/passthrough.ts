/**
 * The floor for the load benchmark: a bare pass-through proxy with no validation, auth,
 * limits or logging. It forwards each request to UPSTREAM and streams the body back.
 *
 *   UPSTREAM=http://127.0.0.1:9100 PORT=9200 deno run -A bench/passthrough.ts
 */
const upstream = Deno.env.get("UPSTREAM") ?? "http://127.0.0.1:9100";
const port = Number(Deno.env.get("PORT") ?? 9200);

Deno.serve({ port, hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
  const url = new URL(request.url);
  const headers = new Headers(request.headers);
  headers.delete("host");
  const response = await fetch(upstream + url.pathname + url.search, {
    method: request.method,
    headers,
    body: request.body,
    signal: request.signal,
  });
  return new Response(response.body, { status: response.status, headers: response.headers });
});
