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

export class TlsFilesError extends Error {
  override readonly name = "TlsFilesError";
}

/** Reads the files and checks that they make a secure context; throws TlsFilesError naming the variable. */
export function readTlsMaterial(files: TlsFiles): TlsMaterial {
  const read = (file: string, variable: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new TlsFilesError(
        `${variable} cannot be read: ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  };
  const material: TlsMaterial = {
    cert: read(files.certFile, "TLS_CERT_FILE"),
    key: read(files.keyFile, "TLS_KEY_FILE"),
    ...(files.clientCaFile ? { ca: read(files.clientCaFile, "TLS_CLIENT_CA_FILE") } : {}),
  };
  checkMaterial(material, files);
  return material;
}

/**
 * Throws TlsFilesError when the certificate, key (and CA) do not make a
 * secure context, naming the variable and the file at fault: each file is
 * checked alone first, then the pair.
 */
function checkMaterial(material: TlsMaterial, files: TlsFiles): void {
  const fault = (variable: string, file: string, what: string, error: unknown) =>
    new TlsFilesError(`${variable} (${file}) ${what}: ${(error as Error).message}`);
  try {
    new X509Certificate(material.cert);
  } catch (error) {
    throw fault("TLS_CERT_FILE", files.certFile, "is not a PEM certificate", error);
  }
  try {
    createPrivateKey(material.key);
  } catch (error) {
    throw fault("TLS_KEY_FILE", files.keyFile, "is not a PEM private key", error);
  }
  try {
    tls.createSecureContext({ cert: material.cert, key: material.key });
  } catch (error) {
    throw fault(
      "TLS_KEY_FILE",
      files.keyFile,
      `is not the private key of the certificate in TLS_CERT_FILE (${files.certFile})`,
      error,
    );
  }
  if (material.ca && files.clientCaFile) {
    try {
      // A context takes anything as a CA file (it skips what is not PEM): parse it.
      new X509Certificate(material.ca);
      tls.createSecureContext({ ca: material.ca });
    } catch (error) {
      throw fault("TLS_CLIENT_CA_FILE", files.clientCaFile, "is not a PEM certificate", error);
    }
  }
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
      try {
        checkMaterial(material, files);
      } catch (error) {
        // Halfway through a rotation, or a bad file: keep serving with the previous pair.
        if (warned !== next) {
          warned = next;
          log.warn(
            "tls files changed but do not make a valid certificate: keeping the previous one",
            {
              reason: (error as Error).message,
            },
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
