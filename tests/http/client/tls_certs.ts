/**
 * A throwaway certificate authority and a server certificate it signed (for 127.0.0.1 and
 * localhost), made with `openssl` when first asked for.
 */

/** PEM texts: the CA's certificate, and the server's certificate and key. */
export interface TestCerts {
  ca: string;
  cert: string;
  key: string;
}

let made: Promise<TestCerts> | null = null;

/** The certificates (made once per test module). */
export function testCerts(): Promise<TestCerts> {
  return made ??= make();
}

async function openssl(dir: string, args: string[]): Promise<void> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("openssl", { args, cwd: dir, stdin: "null" }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error("These tests need openssl (apt-get install -y openssl).");
    }
    throw e;
  }
  if (!output.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
}

async function make(): Promise<TestCerts> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-tls-" });
  try {
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    await openssl(dir, [
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "2",
      "-subj",
      "/CN=Switchyard Test CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    await openssl(dir, [
      "req",
      ...ec,
      "-keyout",
      "server.key",
      "-out",
      "server.csr",
      "-subj",
      "/CN=localhost",
    ]);
    await Deno.writeTextFile(
      `${dir}/server.ext`,
      "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n" +
        "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
    );
    await openssl(dir, [
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.pem",
      "-days",
      "2",
      "-extfile",
      "server.ext",
    ]);
    const [ca, cert, key] = await Promise.all(
      ["ca.pem", "server.pem", "server.key"].map((f) => Deno.readTextFile(`${dir}/${f}`)),
    );
    return { ca: ca!, cert: cert!, key: key! };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
