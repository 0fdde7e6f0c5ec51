import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { tempDir } from "../support/temp-dir.ts";
import { ensureBinary, runAgent } from "./agent-binary.ts";

beforeAll(() => {
  ensureBinary();
}, 120_000);

const init = (workspace: string, ...args: string[]) => runAgent(["init", "--workspace", workspace, ...args]);

describe("agent init", () => {
  test("writes .agent/config.json, .agent/.gitignore and AGENTS.md in a fresh project", async () => {
    const workspace = tempDir("agent-init-");
    const result = await init(workspace);
    expect(result.code).toBe(0);
    expect(result.stdout).toStartWith("created .agent/config.json\ncreated .agent/.gitignore\ncreated AGENTS.md\n");
    expect(readFileSync(join(workspace, ".agent", ".gitignore"), "utf8")).toMatch(/^state\/\nconfig\.local\.json\n$/m);
    expect(readFileSync(join(workspace, "AGENTS.md"), "utf8")).toStartWith("# AGENTS.md\n");
    expect(statSync(join(workspace, ".agent", "config.json")).mode & 0o777).toBe(0o644);
    // The template is a config the agent accepts as it stands.
    const { settings, files } = loadSettings({ workspace, env: {}, home: tempDir() });
    expect(files.map((f) => f.path)).toEqual([join(workspace, ".agent", "config.json")]);
    expect(settings.permissions.deny).toContain("write_file(.env)");
  });

  test("never overwrites: a second run, and files the user already has, are kept byte for byte", async () => {
    const workspace = tempDir("agent-init-");
    writeFileSync(join(workspace, "AGENTS.md"), "# Ours\n");
    expect((await init(workspace)).code).toBe(0);
    writeFileSync(join(workspace, ".agent", "config.json"), '{"model":"mine"}\n');
    const again = await init(workspace, "--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).files.map((f: { action: string }) => f.action)).toEqual(["kept", "kept", "kept"]);
    expect(readFileSync(join(workspace, "AGENTS.md"), "utf8")).toBe("# Ours\n");
    expect(readFileSync(join(workspace, ".agent", "config.json"), "utf8")).toBe('{"model":"mine"}\n');
  });

  test("a project with CLAUDE.md gets no AGENTS.md, which would hide it", async () => {
    const workspace = tempDir("agent-init-");
    writeFileSync(join(workspace, "CLAUDE.md"), "# Instructions\n");
    const result = await init(workspace);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("kept    AGENTS.md (not created: CLAUDE.md holds the project's instructions)");
    expect(() => statSync(join(workspace, "AGENTS.md"))).toThrow();
  });

  test("a missing workspace is a usage error", async () => {
    const result = await init(join(tempDir(), "nope"));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^agent: workspace .*nope does not exist/);
  });
});
