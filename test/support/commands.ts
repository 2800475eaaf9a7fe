/**
 * Command monitoring: every command the service's MongoDB driver sends,
 * recorded through the `onCommand` option of the harness (the driver's
 * `monitorCommands` and 'commandStarted' event).
 */
import type { CommandStartedEvent, Document } from "mongodb";

export interface RecordedCommand {
  /** `find`, `aggregate`, `update`, `insert`, `getMore`, … */
  readonly name: string;
  /** The collection it addresses (empty for commands that address none). */
  readonly collection: string;
  readonly databaseName: string;
  /** The command document as sent (with the driver's `$db`, `lsid`, … fields). */
  readonly command: Document;
}

/** Commands that are no round trip of an operation: the driver's own housekeeping. */
const HOUSEKEEPING = new Set([
  "hello",
  "ismaster",
  "isMaster",
  "ping",
  "endSessions",
  "killCursors",
]);

export class CommandRecorder {
  private commands: RecordedCommand[] = [];
  /** Pass as the harness's `onCommand`. */
  readonly listener = (event: CommandStartedEvent): void => {
    if (HOUSEKEEPING.has(event.commandName)) return;
    const target = event.command[event.commandName];
    this.commands.push({
      name: event.commandName,
      collection: typeof target === "string" ? target : "",
      databaseName: event.databaseName,
      command: event.command,
    });
  };

  /** Forgets everything recorded so far. */
  clear(): void {
    this.commands = [];
  }

  /** What was recorded since the last clear, in the order sent. */
  get recorded(): readonly RecordedCommand[] {
    return this.commands;
  }

  /** Clears, runs `action`, and answers what it sent. */
  async during<T>(action: () => Promise<T>): Promise<{ result: T; commands: RecordedCommand[] }> {
    this.clear();
    const result = await action();
    const commands = [...this.commands];
    return { result, commands };
  }
}

/** "find counteragents", "update messages": a short, stable name of a command for assertions. */
export const describeCommand = (c: RecordedCommand): string =>
  c.collection ? `${c.name} ${c.collection}` : c.name;

/** The `hint` of a command (find, aggregate, count, or each statement of an update/delete). */
export function hintsOf(c: RecordedCommand): unknown[] {
  const hints: unknown[] = [];
  if (c.command.hint !== undefined) hints.push(c.command.hint);
  for (const list of ["updates", "deletes"]) {
    const statements = c.command[list];
    if (Array.isArray(statements)) {
      for (const s of statements) if (s?.hint !== undefined) hints.push(s.hint);
    }
  }
  return hints;
}
