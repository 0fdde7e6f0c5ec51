import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { tempDir } from "../support/temp-dir.ts";

// fsyncDirOffLoop asked for one directory by 32 callers at once (32 agents
// creating their files in it): each change is made durable by an fsync begun
// after it was asked for, and the asks join the one waiting to start.

const strace = Bun.which("strace");
const atomicFile = join(import.meta.dir, "../../src/storage/atomic-file.ts");

describe("directory fsyncs asked for at once", () => {
  if (requirePrerequisite("strace", strace ? undefined : "strace is not installed")) {
    test("32 asks for one directory are a few fsyncs, each begun after its ask; two directories are not joined", async () => {
      const root = tempDir("dir-fsync-");
      const script = join(root, "asks.ts");
      writeFileSync(
        script,
        `import { writeFileSync, mkdirSync } from "node:fs";
import { fsyncDirOffLoop } from ${JSON.stringify(atomicFile)};
const one = ${JSON.stringify(join(root, "one"))}, two = ${JSON.stringify(join(root, "two"))};
mkdirSync(one); mkdirSync(two);
const asks = [];
for (let i = 0; i < 32; i++) { writeFileSync(one + "/f" + i, "x"); asks.push(fsyncDirOffLoop(one)); }
writeFileSync(two + "/f", "x");
asks.push(fsyncDirOffLoop(two));
await Promise.all(asks);
// Asked after the others settled: a fsync of its own.
writeFileSync(one + "/last", "x");
await fsyncDirOffLoop(one);
console.log("done");
`,
      );
      const trace = join(root, "trace.txt");
      const child = Bun.spawn([strace!, "-f", "-y", "-e", "trace=fsync", "-o", trace, process.execPath, script], { stdout: "pipe", stderr: "pipe" });
      expect(await child.exited).toBe(0);
      expect(await new Response(child.stdout).text()).toBe("done\n");
      const fsyncsOf = (dir: string) => readFileSync(trace, "utf8").split("\n").filter((line) => line.includes(`fsync(`) && line.includes(`<${join(root, dir)}>`) && !line.includes("resumed")).length;
      // The first begins at once; the 31 asked while it runs share the one queued after it; then the last.
      expect(fsyncsOf("one")).toBeGreaterThanOrEqual(2);
      expect(fsyncsOf("one")).toBeLessThanOrEqual(3);
      expect(fsyncsOf("two")).toBe(1);
    }, 30_000);
  }
});
