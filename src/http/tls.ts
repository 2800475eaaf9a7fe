/**
 * TLS on the one port (docs/operations.md, "TLS"): the certificate and key
 * (PEM, a chain allowed) and, for mutual TLS, the CA that client
 * certificates must chain to. The files are read again when they change
 * (cert-manager and Kubernetes secrets rotate them in place): a new pair is
 * taken only once it is a valid pair, so a rotation caught halfway (the
 * certificate written, the key not yet) keeps the previous one.
 */
import { createHash, createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import tls from "node:tls";
import type { Logger } from "../log";

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** Client certificates are required and must chain to this CA (mutual TLS). */
  readonly clientCaFile?: string;
}

/** What a secure context is made of, read from the files. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca?: Buffer;
}

/** What is wrong with the TLS files: every problem found, each naming its variable and file. */
export class TlsFilesError extends Error {
  override readonly name = "TlsFilesError";
  constructor(readonly problems: readonly string[]) {
    super(problems.join("; "));
  }
}

/**
 * Reads the files and checks that they make a secure context; throws a
 * TlsFilesError listing every problem (each file unreadable or not what it
 * should be, then the pair), as configuration problems are listed.
 */
export function readTlsMaterial(files: TlsFiles): TlsMaterial {
  const problems: string[] = [];
  const read = (file: string, variable: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      problems.push(
        `${variable} cannot be read: ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`,
      );
      return undefined;
    }
  };
  const cert = read(files.certFile, "TLS_CERT_FILE");
  const key = read(files.keyFile, "TLS_KEY_FILE");
  const ca = files.clientCaFile ? read(files.clientCaFile, "TLS_CLIENT_CA_FILE") : undefined;
  problems.push(...problemsOf({ cert, key, ca }, files));
  if (problems.length > 0 || !cert || !key) throw new TlsFilesError(problems);
  return { cert, key, ...(ca ? { ca } : {}) };
}

/**
 * What keeps the certificate, key (and CA) from making a secure context,
 * naming the variable and the file at fault: each file that was read is
 * checked alone, then the pair when both parsed.
 */
function problemsOf(
  material: { cert?: Buffer; key?: Buffer; ca?: Buffer },
  files: TlsFiles,
): string[] {
  const problems: string[] = [];
  const fault = (variable: string, file: string, what: string, error: unknown) =>
    problems.push(`${variable} (${file}) ${what}: ${(error as Error).message}`);
  const parses = (parse: () => unknown, variable: string, file: string, what: string) => {
    try {
      parse();
      return true;
    } catch (error) {
      fault(variable, file, what, error);
      return false;
    }
  };
  const { cert, key, ca } = material;
  const certOk =
    cert !== undefined &&
    parses(
      () => new X509Certificate(cert),
      "TLS_CERT_FILE",
      files.certFile,
      "is not a PEM certificate",
    );
  const keyOk =
    key !== undefined &&
    parses(() => createPrivateKey(key), "TLS_KEY_FILE", files.keyFile, "is not a PEM private key");
  if (certOk && keyOk) {
    parses(
      () => tls.createSecureContext({ cert, key }),
      "TLS_KEY_FILE",
      files.keyFile,
      `is not the private key of the certificate in TLS_CERT_FILE (${files.certFile})`,
    );
  }
  if (ca && files.clientCaFile) {
    // A context takes anything as a CA file (it skips what is not PEM): parse it.
    parses(
      () => {
        new X509Certificate(ca);
        tls.createSecureContext({ ca });
      },
      "TLS_CLIENT_CA_FILE",
      files.clientCaFile,
      "is not a PEM certificate",
    );
  }
  return problems;
}

/** The server options of the material: TLS 1.2 at least, h2 and HTTP/1.1 offered by ALPN. */
export function serverOptions(material: TlsMaterial, handshakeTimeoutMs: number): tls.TlsOptions {
  return {
    cert: material.cert,
    key: material.key,
    minVersion: "TLSv1.2",
    ALPNProtocols: ["h2", "http/1.1"],
    handshakeTimeout: handshakeTimeoutMs,
    ...(material.ca ? { ca: material.ca, requestCert: true, rejectUnauthorized: true } : {}),
  };
}

const digest = (material: TlsMaterial) =>
  createHash("sha256")
    .update(material.cert)
    .update("\0")
    .update(material.key)
    .update("\0")
    .update(material.ca ?? "")
    .digest("hex");

/**
 * Reads the files every `intervalMs` and gives `server` the new context when
 * they changed and make a valid one. Returns the function that stops it.
 */
export function reloadOnChange(
  server: Pick<tls.Server, "setSecureContext">,
  files: TlsFiles,
  initial: TlsMaterial,
  log: Logger,
  intervalMs: number,
): () => void {
  let current = digest(initial);
  let warned = "";
  let running = false;
  const check = async () => {
    if (running) return;
    running = true;
    try {
      const material: TlsMaterial = {
        cert: await readFile(files.certFile),
        key: await readFile(files.keyFile),
        ...(files.clientCaFile ? { ca: await readFile(files.clientCaFile) } : {}),
      };
      const next = digest(material);
      if (next === current) return;
      const problems = problemsOf(material, files);
      if (problems.length > 0) {
        // Halfway through a rotation, or a bad file: keep serving with the previous pair.
        if (warned !== next) {
          warned = next;
          log.warn(
            "tls files changed but do not make a valid certificate: keeping the previous one",
            { reason: problems.join("; ") },
          );
        }
        return;
      }
      server.setSecureContext({
        cert: material.cert,
        key: material.key,
        ...(material.ca ? { ca: material.ca } : {}),
      });
      current = next;
      log.info("tls certificate reloaded", { certFile: files.certFile });
    } catch (error) {
      log.warn("tls files cannot be read: keeping the previous certificate", {
        reason: (error as NodeJS.ErrnoException).code ?? "error",
      });
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
