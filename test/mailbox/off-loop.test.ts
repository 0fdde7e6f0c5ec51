import { describe, expect, test } from "bun:test";
import { fixture } from "./helpers.ts";

describe("the file store's fsyncs wait off the event loop", () => {
  test("a timer due while messages are sent fires before the sends are done; each claim and ack has moved its file when it returns", async () => {
    const f = fixture();
    await f.store.send(f.message("alice", "first")); // creates the directories
    let fired = false;
    let firedAt = -1;
    setTimeout(() => {
      fired = true;
    }, 0);
    const steps: string[] = [];
    for (let i = 0; i < 10; i++) {
      const m = f.message("alice", `message ${i}`);
      await f.store.send(m);
      steps.push("sent");
      if (fired && firedAt < 0) firedAt = steps.length;
    }
    // A synchronous fsync keeps the loop until every call is done: the timer would fire only after them.
    expect(fired).toBe(true);
    expect(firedAt).toBeLessThan(steps.length);
    for (let claimed = await f.store.claim("alice"); claimed; claimed = await f.store.claim("alice")) {
      expect(f.files("alice", "processing")).toContain(`${claimed.id}.json`);
      await f.store.ack(claimed);
      expect(f.files("alice", "done")).toContain(`${claimed.id}.json`);
    }
    expect(f.files("alice", "done")).toHaveLength(11);
  });
});
