// A child for the kill -9 test: writes the file at argv[3] (in the workspace
// argv[2]) through the real write_file tool, alternating between the contents of
// the files argv[4] and argv[5], until it is killed. It prints "writing" once the
// first write has begun, and "wrote N" after the Nth, so the killer can choose
// how far it gets.
import { readFileSync } from "node:fs";
import { writeFileTool } from "../../src/tools/write-file.ts";

const [workspace, path, a, b] = process.argv.slice(2) as [string, string, string, string];
const contents = [readFileSync(a, "utf8"), readFileSync(b, "utf8")];
const tool = writeFileTool();
const context = { identity: "lead", idempotencyKey: "00000000-0000-4000-8000-000000000001", workspace, signal: new AbortController().signal };
process.stdout.write("writing\n");
for (let i = 0; ; i += 1) {
  await tool.run({ path, content: contents[i % 2]! }, context);
  process.stdout.write(`wrote ${i + 1}\n`);
}
