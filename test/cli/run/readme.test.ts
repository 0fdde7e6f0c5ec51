import { expect, test } from "bun:test";
import { join } from "node:path";
import { globalArgs } from "../../../src/cli/args.ts";
import { runCommand } from "../../../src/cli/run.ts";
import { ConfigFile } from "../../../src/config/config.ts";

// The README promises every `agent run` flag and every config.json key; these keep it honest.
const readme = await Bun.file(join(import.meta.dir, "..", "..", "..", "README.md")).text();
const section = (title: string) => {
  const start = readme.indexOf(`\n${title}\n`);
  expect(start).toBeGreaterThan(-1);
  const rest = readme.slice(start + 1);
  const end = rest.slice(1).search(/\n#{2,3} /);
  return end === -1 ? rest : rest.slice(0, end + 1);
};

test("every agent run flag is in the README's agent run section", async () => {
  const args = typeof runCommand.args === "function" ? await runCommand.args() : await runCommand.args;
  const runSection = section("### `agent run`");
  for (const [name, def] of Object.entries(args ?? {})) {
    if (def.type === "positional" || name in globalArgs) continue;
    expect(runSection).toContain(`\`--${name}`);
  }
});

test("every config.json key is in the README's Configuration section", () => {
  const configSection = section("## Configuration");
  for (const key of Object.keys(ConfigFile.shape)) expect(configSection).toContain(`"${key}"`);
});
