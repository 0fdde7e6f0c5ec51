// The session's runtime lock in PostgreSQL: one holder in any process, the holder
// named when refused, and freed by the server when the holder is killed with -9.
import { describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import { StateDirBusyError } from "../../src/core/errors.ts";
import { PgSessionLock } from "../../src/postgres/session-lock.ts";
import { clusterForFile } from "../support/postgres.ts";

const pg = clusterForFile();
const options = (session: string) => ({ where: `session ${session}`, fix: "wait for it" });

async function firstLine(child: Bun.Subprocess<"ignore", "pipe", "pipe">): Promise<string> {
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  return new TextDecoder().decode(value ?? new Uint8Array()).trim();
}

describe("PgSessionLock", () => {
  test("a second taker is refused naming the holder; after release it is free; sessions are apart", async () => {
    const url = await pg().database();
    const session = randomUUID();
    const first = await PgSessionLock.acquire(url, session, options(session));
    const refused = await PgSessionLock.acquire(url, session, options(session)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StateDirBusyError);
    expect((refused as Error).message).toBe(`state dir session ${session} is busy, owned by pid ${process.pid} on host ${hostname()}; wait for it`);
    const other = await PgSessionLock.acquire(url, randomUUID(), options("other"));
    await other.release();
    await first.release();
    const again = await PgSessionLock.acquire(url, session, options(session));
    await again.release();
  });

  test("a holder killed with -9 frees the session: the next runtime takes it without breaking anything", async () => {
    const url = await pg().database();
    const session = randomUUID();
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "../fixtures/hold-session-lock.ts"), url, session], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      expect(await firstLine(child)).toBe("held");
      const refused = await PgSessionLock.acquire(url, session, options(session)).catch((error: unknown) => error);
      expect((refused as Error).message).toContain(`owned by pid ${child.pid}`);
      child.kill("SIGKILL");
      await child.exited;
      // The server ends the dead client's backend; waiting covers the moment that takes.
      const taken = await PgSessionLock.acquire(url, session, { ...options(session), waitMs: 10_000 });
      await taken.release();
    } finally {
      child.kill("SIGKILL");
    }
  });
});
