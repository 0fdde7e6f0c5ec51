import { test } from "bun:test";

/**
 * What a test needs of the machine that `npm ci` does not bring (bubblewrap,
 * PostgreSQL's server binaries, a `postgres` user when run as root) is never a
 * reason to skip silently: `npm run test:all` (scripts/test-all.sh) installs what
 * it can, and where something is still missing one test fails with a line
 * naming the command, while the tests that need it are left out.
 */
export const INSTALL_PREREQUISITES = "`npm run test:all` installs it (scripts/test-all.sh; docs/development.md)";

/** True when `problem` is undefined; else registers the one failing test and returns false. */
export function requirePrerequisite(what: string, problem: string | undefined): boolean {
  if (problem === undefined) return true;
  test(`needs ${what}`, () => {
    throw new Error(`${problem}; ${INSTALL_PREREQUISITES}`);
  });
  return false;
}
