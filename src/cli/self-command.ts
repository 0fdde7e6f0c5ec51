/** This same program: the compiled binary alone, or bun with the entry script when run from source. */
export function selfCommand(): string[] {
  // A compiled binary's entry is in Bun's embedded file system, not a file to pass.
  const main = Bun.main;
  return main.startsWith("/$bunfs/") || main.startsWith("B:/~BUN/") ? [process.execPath] : [process.execPath, main];
}
