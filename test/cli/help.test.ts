import { expect, test } from "bun:test";
import { resolveInvocation } from "../../src/cli/argv.ts";
import { renderHelp } from "../../src/cli/help.ts";
import { formatTable } from "../../src/cli/output.ts";
import { rootCommand } from "../../src/cli/root.ts";

async function help(...argv: string[]) {
  return renderHelp(await resolveInvocation(rootCommand, [...argv, "--help"]));
}

test("a leaf's help shows its usage, its options and the global ones apart", async () => {
  const text = await help("mailbox", "send");
  expect(text).toStartWith("agent mailbox send - ");
  expect(text).toContain("Usage: agent mailbox send --to <name> --from <name> [options]");
  expect(text).toMatch(/Options:\n {2}--to <name> +Recipient.*\(required\)/);
  expect(text).toContain("--kind <task|message|result>");
  expect(text).toContain("(default: message)");
  expect(text.indexOf("Global options:")).toBeGreaterThan(text.indexOf("--json"));
  expect(text).toContain("-h, --help");
  expect(text).not.toContain("\u001b[");
});

test("a group's help lists its commands", async () => {
  const text = await help("mailbox");
  expect(text).toContain("Usage: agent mailbox <command> [options]");
  for (const name of ["send", "list", "show", "recover", "prune"]) expect(text).toMatch(new RegExp(`^ {2}${name} +\\S`, "m"));
  expect(text).toContain("Run `agent mailbox <command> --help`");
});

test("operands are shown by name; one that may be left out in brackets", async () => {
  expect(await help("mailbox", "show")).toContain("Usage: agent mailbox show <ID> [options]");
  // `echo "fix it" | agent run`: the prompt may come from stdin.
  expect(await help("run")).toContain("Usage: agent run [PROMPT] [options]");
});

test("formatTable aligns columns and does not pad the last one", () => {
  expect(formatTable([["a", "bb", "c"], ["ccc", "d", "e"]])).toBe("a    bb  c\nccc  d   e\n");
  expect(formatTable([["é", "x"], ["ab", "y"]])).toBe("é   x\nab  y\n");
});
