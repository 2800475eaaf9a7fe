/**
 * The command line every tool shares: `--help` (or `-h`) prints the usage
 * and exits before any work is done, and an option the tool does not know
 * is refused (exit 2) instead of being taken for a file name.
 */

export interface Usage {
  /** The usage text, printed as it is. */
  readonly text: string;
  /** The options the tool reads (e.g. "--json"); anything else starting with "-" is refused. */
  readonly options?: readonly string[];
}

/** Answers --help and refuses unknown options; returns the arguments when the tool should run. */
export function commandLine(
  usage: Usage,
  argv: readonly string[] = process.argv.slice(2),
): string[] {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${usage.text.trim()}\n`);
    process.exit(0);
  }
  const unknown = argv.find((arg) => arg.startsWith("-") && !(usage.options ?? []).includes(arg));
  if (unknown !== undefined) {
    process.stderr.write(`unknown option ${JSON.stringify(unknown)}\n\n${usage.text.trim()}\n`);
    process.exit(2);
  }
  return [...argv];
}
