/**
 * When a group commit (several callers' durable writes made as one) begins: on
 * the event loop's next turn, not at the first caller's call. Every caller of
 * this turn then joins it — 32 spawns of one model reply reach it one after
 * another through their awaits — and their own synchronous work (directories
 * made, files created) is done before its first fsync: made while an fsync
 * commits the file system's journal, each of those waits for the commit.
 */
export function groupStart(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
