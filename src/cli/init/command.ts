import { closeSync, existsSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join, relative } from "node:path";
import { defineCommand } from "citty";
import { globalArgs, jsonArg } from "../args.ts";
import { writeJson, writeOut } from "../output.ts";
import { resolveWorkspace } from "../run/workspace.ts";
import { AGENT_GITIGNORE } from "../../sessions/gitignore.ts";
import { assertOwnStateRoot } from "../../sessions/state-root.ts";
import { AGENTS_TEMPLATE, CONFIG_TEMPLATE } from "./templates.ts";

interface Written {
  path: string;
  action: "created" | "kept";
  note?: string;
}

/** Creates `path` with `text` unless something is there already: never overwrites, even in a race. */
function createOnce(path: string, text: string): "created" | "kept" {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o644);
  } catch (error) {
    if ((error as { code?: string }).code === "EEXIST") return "kept";
    throw error;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return "created";
}

export const initCommand = defineCommand({
  meta: { name: "init", description: "Set up a project for agent: .agent/config.json, .agent/.gitignore and AGENTS.md; never overwrites" },
  args: {
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const workspace = resolveWorkspace(args.workspace);
    const dotAgent = join(workspace, ".agent");
    // A .agent/ (or .agent/state) a repository made a symlink is refused: nothing is written through it.
    assertOwnStateRoot(workspace, join(dotAgent, "state"));
    mkdirSync(dotAgent, { recursive: true, mode: 0o755 });
    const written: Written[] = [
      { path: join(dotAgent, "config.json"), action: createOnce(join(dotAgent, "config.json"), CONFIG_TEMPLATE) },
      { path: join(dotAgent, ".gitignore"), action: createOnce(join(dotAgent, ".gitignore"), AGENT_GITIGNORE) },
    ];
    // CLAUDE.md is read when there is no AGENTS.md: a new AGENTS.md would hide it.
    const claude = join(workspace, "CLAUDE.md");
    const agentsMd = join(workspace, "AGENTS.md");
    if (!existsSync(agentsMd) && existsSync(claude)) {
      written.push({ path: agentsMd, action: "kept", note: "not created: CLAUDE.md holds the project's instructions" });
    } else {
      written.push({ path: agentsMd, action: createOnce(agentsMd, AGENTS_TEMPLATE) });
    }

    if (args.json) {
      await writeJson({ workspace, files: written });
      return;
    }
    const lines = written.map((w) => {
      const name = relative(workspace, w.path);
      return w.action === "created" ? `created ${name}` : `kept    ${name} (${w.note ?? "exists; not overwritten"})`;
    });
    await writeOut(`${lines.join("\n")}\nNext: edit AGENTS.md, then \`agent doctor\` to check the setup.\n`);
  },
});
