import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import type { ArgsDef } from "citty";
import { z } from "zod";
import { globalArgs } from "../../src/cli/args.ts";
import { type AnyCommand, resolve } from "../../src/cli/argv.ts";
import { EXIT_CODES } from "../../src/cli/exit-codes.ts";
import { rootCommand } from "../../src/cli/root.ts";
import { ConfigFile, HOOK_EVENTS, PERMISSION_MODES } from "../../src/config/config.ts";
import { REPO_ROOT, allDocs, anchorsOf, linksOf, readDoc, sectionText } from "./markdown.ts";

// The README is the front door and docs/ the reference; these keep both true to
// the code: every command, flag, config key and environment variable the code
// knows is documented where a reader looks for it, and every link leads somewhere.

const README_MAX_BYTES = 12 * 1024;
const docs = allDocs();
const readme = docs[0]!;
const docFile = (path: string) => docs.find((d) => d.path === path) ?? readDoc(path);

interface CommandEntry {
  /** `agent`, `agent run`, `agent mailbox send`. */
  line: string;
  args: ArgsDef;
  runnable: boolean;
}

async function commandTree(cmd: AnyCommand = rootCommand, names: string[] = []): Promise<CommandEntry[]> {
  const args = (await resolve(cmd.args)) ?? {};
  const subs = (await resolve(cmd.subCommands)) ?? {};
  // The root runs too: with no command, on a terminal, it is the interactive session.
  const entries: CommandEntry[] = [{ line: ["agent", ...names].join(" "), args, runnable: cmd.run !== undefined || names.length === 0 }];
  for (const [name, sub] of Object.entries(subs)) {
    entries.push(...(await commandTree((await resolve(sub)) as AnyCommand, [...names, name])));
  }
  return entries;
}
const commands = (await commandTree()).filter((c) => c.runnable);

/** `--name` as a whole flag: `--wait` must not be found inside `--wait-lock`. */
const mentionsFlag = (text: string, name: string) => new RegExp(`--${name}(?![\\w-])`).test(text);

/** The section(s) of docs/ whose heading names the command in a code span, e.g. "## `agent run`". */
function commandSections(line: string): string[] {
  const found: string[] = [];
  for (const doc of docs.slice(1)) {
    for (const heading of doc.headings) {
      if (heading.text.includes(`\`${line}\``)) found.push(sectionText(doc, heading));
    }
  }
  return found;
}

describe("README", () => {
  test(`is at most ${README_MAX_BYTES} bytes: a front door, the reference lives in docs/`, () => {
    const size = Buffer.byteLength(readme.text);
    if (size > README_MAX_BYTES) {
      throw new Error(`README.md is ${size} bytes, over ${README_MAX_BYTES}: move reference material into a docs/<topic>.md and link it`);
    }
  });

  test("links every file in docs/", () => {
    const linked = new Set(linksOf(readme).map((l) => l.target.split("#")[0]));
    for (const doc of docs.slice(1)) {
      if (!linked.has(doc.path)) throw new Error(`README.md does not link ${doc.path}: add it under "Documentation"`);
    }
  });

  test("names every command in its commands table", () => {
    const table = readme.lines.filter((l) => l.startsWith("| `agent")).join("\n");
    for (const { line } of commands) {
      if (!new RegExp(`\\| \`${line}[\` ]`).test(table)) {
        throw new Error(`README.md's commands table has no row for \`${line}\`: add one ("| \`${line}\` | what it does |")`);
      }
    }
  });
});

describe("docs/", () => {
  test("every relative link points at a file that exists, and at a heading that exists", () => {
    const problems: string[] = [];
    for (const doc of docs) {
      for (const link of linksOf(doc)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
        const [file = "", anchor] = link.target.split("#");
        const targetPath = file === "" ? doc.path : normalize(join(dirname(doc.path), file));
        const where = `${doc.path}:${link.line + 1}: ${link.target}`;
        if (!existsSync(join(REPO_ROOT, targetPath))) {
          problems.push(`${where}: no such file`);
          continue;
        }
        if (anchor === undefined || anchor === "") continue;
        if (!targetPath.endsWith(".md") || statSync(join(REPO_ROOT, targetPath)).isDirectory()) {
          problems.push(`${where}: an anchor into a file that is not Markdown`);
        } else if (!anchorsOf(docFile(targetPath)).has(anchor)) {
          problems.push(`${where}: ${targetPath} has no heading with anchor #${anchor}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test("every command has a section in docs/ that names each of its options", () => {
    const problems: string[] = [];
    for (const { line, args } of commands) {
      const sections = commandSections(line);
      if (sections.length === 0) {
        problems.push(`no heading names \`${line}\` in docs/*.md: add one, e.g. "## \`${line}\`"`);
        continue;
      }
      const text = sections.join("\n");
      for (const [name, def] of Object.entries(args)) {
        if (def.type === "positional" || name in globalArgs || name === "version") continue;
        if (!mentionsFlag(text, name)) problems.push(`--${name} of \`${line}\` is not documented in its section of docs/`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("the global options are documented", () => {
    const commandsDoc = docFile("docs/commands.md");
    const heading = commandsDoc.headings.find((h) => h.text === "Global options");
    expect(heading).toBeDefined();
    const text = sectionText(commandsDoc, heading!);
    for (const name of [...Object.keys(globalArgs), "version"]) {
      if (!mentionsFlag(text, name)) throw new Error(`global option --${name} is not in docs/commands.md's "Global options"`);
    }
  });

  test("every config.json key is in docs/configuration.md", () => {
    const text = docFile("docs/configuration.md").text;
    const missing = configKeys(ConfigFile).filter((key) => {
      const last = key.split(".").at(-1)!;
      return key.includes(".") ? !text.includes(`\`${key}\``) : !text.includes(`"${last}"`);
    });
    if (missing.length > 0) {
      throw new Error(`config keys missing from docs/configuration.md: ${missing.join(", ")} (top-level keys as "key" in the example, nested ones as \`parent.key\`)`);
    }
  });

  test("every environment variable the code reads is documented", () => {
    const all = docs.map((d) => d.text).join("\n");
    const missing = [...envNamesReadBySource()].filter((name) => !new RegExp(`\\b${name}\\b`).test(all));
    expect(missing).toEqual([]);
  });

  test("every hook event, permission mode and exit code is documented in its topic's file", () => {
    const hooks = docFile("docs/hooks.md").text;
    for (const event of HOOK_EVENTS) expect(hooks).toContain(`\`${event}\``);
    const permissions = docFile("docs/permissions.md").text;
    for (const mode of PERMISSION_MODES) expect(permissions).toContain(`\`${mode}\``);
    const output = docFile("docs/output.md").text;
    for (const code of Object.values(EXIT_CODES)) expect(output).toMatch(new RegExp(`^\\| ${code} \\|`, "m"));
  });
});

/** Dotted paths of every key of a zod object, nested objects included. */
function configKeys(schema: z.ZodType, prefix = ""): string[] {
  const inner = unwrap(schema);
  if (!(inner instanceof z.ZodObject)) return [];
  return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [path, ...configKeys(value, path)];
  });
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current: z.ZodType = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable || current instanceof z.ZodDefault || current instanceof z.ZodLazy) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

/** Names read as `env.NAME`, `env["NAME"]` or `fromEnv("NAME", …)` anywhere under src/. */
function envNamesReadBySource(): Set<string> {
  const names = new Set<string>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith(".ts")) {
        const source = readFileSync(path, "utf8");
        for (const match of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)|\benv\[["']([A-Z][A-Z0-9_]*)["']\]|fromEnv\(["']([A-Z][A-Z0-9_]*)["']/g)) {
          names.add((match[1] ?? match[2] ?? match[3])!);
        }
      }
    }
  };
  visit(join(REPO_ROOT, "src"));
  expect(names.size).toBeGreaterThan(0);
  return names;
}
