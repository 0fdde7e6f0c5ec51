import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readContent } from "../../src/cli/content.ts";
import { UsageError } from "../../src/core/errors.ts";
import { tempDir } from "../support/temp-dir.ts";

const noStdin = async (): Promise<Uint8Array> => {
  throw new Error("stdin must not be read");
};
const stdinOf = (bytes: Uint8Array | string) => async () =>
  typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;

describe("readContent", () => {
  test("inline content is returned exactly, whitespace and all", async () => {
    expect(await readContent({ content: "  x \n\n" }, noStdin)).toBe("  x \n\n");
  });

  test("a file's bytes are decoded without trimming or dropping a BOM", async () => {
    const path = join(tempDir(), "c.txt");
    const text = "\ufeff\r\n  é 🚀\t\n";
    writeFileSync(path, text);
    expect(await readContent({ contentFile: path }, noStdin)).toBe(text);
  });

  test("- reads all of stdin", async () => {
    expect(await readContent({ contentFile: "-" }, stdinOf("  from stdin\n"))).toBe("  from stdin\n");
  });

  test("invalid UTF-8 is refused rather than replaced", async () => {
    const bytes = new Uint8Array([0x68, 0x69, 0xff, 0xfe]);
    await expect(readContent({ contentFile: "-" }, stdinOf(bytes))).rejects.toThrow("- (stdin) is not valid UTF-8");
    const path = join(tempDir(), "bin");
    writeFileSync(path, bytes);
    await expect(readContent({ contentFile: path }, noStdin)).rejects.toThrow(`${path} is not valid UTF-8`);
  });

  test("exactly one source, and it must not be empty", async () => {
    await expect(readContent({}, noStdin)).rejects.toBeInstanceOf(UsageError);
    await expect(readContent({ content: "a", contentFile: "-" }, noStdin)).rejects.toThrow("exactly one of");
    await expect(readContent({ content: "" }, noStdin)).rejects.toThrow("content from --content is empty");
    await expect(readContent({ contentFile: "-" }, stdinOf(""))).rejects.toThrow("content from stdin is empty");
    await expect(readContent({ contentFile: "" }, noStdin)).rejects.toThrow("--content-file needs a path");
  });

  test("an unreadable file names the path and the cause", async () => {
    const dir = tempDir();
    await expect(readContent({ contentFile: join(dir, "missing") }, noStdin)).rejects.toThrow("no such file");
    mkdirSync(join(dir, "sub"));
    await expect(readContent({ contentFile: join(dir, "sub") }, noStdin)).rejects.toThrow("it is a directory");
  });
});
