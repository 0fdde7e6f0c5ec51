import { copyFileSync, linkSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * Sandboxed commands get a private /tmp (docs/security.md §4), so a program or a
 * script of a checkout that lies under /tmp (a CI system may clone there) is not
 * there for them. This is `path` itself anywhere else; under /tmp, a hard link
 * of it (a copy across file systems) in a directory under /var/tmp, made once
 * and removed when the test process exits. Only for self-contained files.
 */
export function visibleInSandbox(path: string): string {
  const real = realpathSync(path);
  if (!real.startsWith("/tmp/")) return path;
  const known = made.get(real);
  if (known !== undefined) return known;
  if (dir === undefined) {
    const created = mkdtempSync("/var/tmp/agent-test-visible-");
    dir = created;
    process.on("exit", () => rmSync(created, { recursive: true, force: true }));
  }
  const target = join(dir, `${made.size}-${basename(real)}`);
  try {
    linkSync(real, target);
  } catch {
    copyFileSync(real, target);
  }
  made.set(real, target);
  return target;
}

let dir: string | undefined;
const made = new Map<string, string>();
