/**
 * Certificates for TLS tests, made by openssl for each run in a temporary
 * directory (nothing secret is committed): a CA, server certificates for
 * 127.0.0.1 and localhost, a client certificate.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCertificates {
  readonly dir: string;
  /** The path of a file in the directory (`ca.pem`, `<name>.pem`, `<name>.key`). */
  file(name: string): string;
  /** The CA certificate, for clients to trust. */
  readonly ca: Buffer;
  /** A key and a certificate signed by the CA; a server's by default. */
  issue(name: string, serial: string, extension?: string): void;
}

const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

export async function makeCertificates(): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), "docflow-tls-"));
  const file = (name: string) => join(dir, name);
  openssl(
    "req",
    "-x509",
    ...EC,
    "-subj",
    "/CN=docflow test CA",
    "-days",
    "2",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.pem"),
  );
  return {
    dir,
    file,
    ca: readFileSync(file("ca.pem")),
    issue(name, serial, extension = "subjectAltName=IP:127.0.0.1,DNS:localhost") {
      openssl(
        "req",
        ...EC,
        "-subj",
        `/CN=${name}`,
        "-keyout",
        file(`${name}.key`),
        "-out",
        file(`${name}.csr`),
      );
      writeFileSync(file(`${name}.ext`), `${extension}\n`);
      openssl(
        "x509",
        "-req",
        "-in",
        file(`${name}.csr`),
        "-CA",
        file("ca.pem"),
        "-CAkey",
        file("ca.key"),
        "-set_serial",
        serial,
        "-days",
        "2",
        "-extfile",
        file(`${name}.ext`),
        "-out",
        file(`${name}.pem`),
      );
    },
  };
}
