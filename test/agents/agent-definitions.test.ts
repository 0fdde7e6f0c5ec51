import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentDefinitions, parseAgentDefinition } from "../../src/agents/agent-definitions.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspaceWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "agent-defs-"));
  dirs.push(dir);
  mkdirSync(join(dir, ".agent", "agents"), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, ".agent", "agents", name), text);
  return dir;
}

const def = (frontmatter: string, body = "Be brief.") => `---\n${frontmatter}\n---\n${body}\n`;

describe("parseAgentDefinition", () => {
  test("every field, the body as the prompt", () => {
    const parsed = parseAgentDefinition(
      "x.md",
      def("name: reviewer\ndescription: Reviews code\nmodel: m-1\ntools:\n  - read_file\n  - shell\npermissionMode: plan\nisolation: worktree", "Line one.\n\nLine two."),
    );
    expect(parsed).toEqual({
      path: "x.md",
      name: "reviewer",
      description: "Reviews code",
      model: "m-1",
      tools: ["read_file", "shell"],
      permissionMode: "plan",
      isolation: "worktree",
      prompt: "Line one.\n\nLine two.",
    });
  });

  test("autoClaim: its teammates claim tasks when idle", () => {
    expect(parseAgentDefinition("x.md", def("name: a\ndescription: b\nautoClaim: true", ""))).toMatchObject({ name: "a", autoClaim: true });
  });

  test("name and description alone", () => {
    expect(parseAgentDefinition("x.md", def("name: a\ndescription: b", ""))).toEqual({ path: "x.md", name: "a", description: "b", prompt: "" });
  });

  test.each([
    ["no frontmatter", "just text", /does not start with ---/],
    ["bad YAML", def("name: [a\ndescription: b"), /not valid YAML/],
    ["no description", def("name: a"), /description/],
    ["bad name", def("name: Big Name\ndescription: b"), /lowercase slug/],
    ["unknown tool", def("name: a\ndescription: b\ntools: [edit_file]"), /tools\.0/],
    ["bad mode", def("name: a\ndescription: b\npermissionMode: yolo"), /permissionMode/],
    ["unknown key", def("name: a\ndescription: b\ncolour: red"), /colour/],
    ["unknown isolation", def("name: a\ndescription: b\nisolation: container"), /isolation/],
    ["autoClaim not a boolean", def("name: a\ndescription: b\nautoClaim: sometimes"), /autoClaim/],
  ])("%s is refused", (_, text, problem) => {
    expect(() => parseAgentDefinition("x.md", text)).toThrow(problem);
  });
});

describe("AgentDefinitions.load", () => {
  test("valid ones listed in file order, invalid and duplicate ones reported", () => {
    const workspace = workspaceWith({
      "b.md": def("name: tester\ndescription: Runs tests"),
      "a.md": def("name: reviewer\ndescription: Reviews code"),
      "c.md": def("name: reviewer\ndescription: again"),
      "d.md": "nothing",
      "notes.txt": "ignored",
    });
    const loaded = AgentDefinitions.load(workspace);
    expect(loaded.definitions.map((d) => d.name)).toEqual(["reviewer", "tester"]);
    expect(loaded.problems.map((p) => [p.path.split("/").at(-1), p.problem])).toEqual([
      ["c.md", 'another definition is already named "reviewer"'],
      ["d.md", "it does not start with --- frontmatter holding name and description"],
    ]);
    expect(loaded.find("tester")?.description).toBe("Runs tests");
    expect(loaded.promptSection()).toBe(
      'Teammate definitions you can spawn with spawn_teammate {agent: "<name>"}:\n- reviewer: Reviews code\n- tester: Runs tests',
    );
  });

  test("no .agent/agents: none, no problems, no prompt section", () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-defs-"));
    dirs.push(dir);
    const loaded = AgentDefinitions.load(dir);
    expect([loaded.definitions, loaded.problems, loaded.promptSection()]).toEqual([[], [], ""]);
  });
});
