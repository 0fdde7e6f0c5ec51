import { basename } from "node:path";
import { type RawCommand, type ShellWord, parseShell } from "./parse.ts";

/** One command the line would run, as permission rules see it. */
export interface CommandPart {
  /** Name (basename) and arguments after wrappers and leading assignments are stripped. */
  argv: string[];
  /** What `shell(pattern)` rules are matched against: the argv joined by spaces. */
  text: string;
  /** Set when what runs cannot be known (a command name from an expansion, `sh -c "$X"`): no allow rule matches it. */
  opaque?: string;
}

/** A file an output redirection writes: an edit of that path. `path` is undefined when it is an expansion. */
export interface FileWrite {
  path: string | undefined;
  source: string;
}

export type AnalysedLine = { ok: true; parts: CommandPart[]; writes: FileWrite[] } | { ok: false; error: string };

/** How deep `sh -c "sh -c '…'"` is followed before the part is given up as opaque. */
const MAX_DEPTH = 4;

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]);
const OUTPUT_OPS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);
/** Writing to these is not an edit of a file. */
const HARMLESS_TARGETS = /^(?:\/dev\/(?:null|stdout|stderr|tty|fd\/\d+))$/;

/**
 * Splits a command line into the commands it runs and the files it writes by
 * redirection. Each command is normalised: leading `NAME=value` assignments
 * dropped, the command's path reduced to its basename (`/usr/bin/touch` →
 * `touch`), and wrappers looked through (`sh -c`, `bash -c`, `env`, `xargs`,
 * `nice`, `timeout`, `command`, `exec`, `eval`, `sudo`, `nohup`, `stdbuf`,
 * `find -exec`). What cannot be seen through is marked opaque.
 */
export function analyseCommandLine(line: string, depth = 0): AnalysedLine {
  const parsed = parseShell(line);
  if (!parsed.ok) return parsed;
  const parts: CommandPart[] = [];
  const writes: FileWrite[] = [];
  for (const redirect of parsed.redirects) {
    if (!OUTPUT_OPS.has(redirect.op)) continue;
    const { literal, source } = redirect.target;
    if (redirect.op === ">&" && literal !== undefined && /^(?:\d+|-)$/.test(literal)) continue;
    if (literal !== undefined && HARMLESS_TARGETS.test(literal)) continue;
    writes.push({ path: literal, source });
  }
  for (const command of parsed.commands) {
    const result = normalise(command, depth);
    parts.push(...result.parts);
    writes.push(...result.writes);
  }
  return { ok: true, parts, writes };
}

function part(argv: string[], opaque?: string): CommandPart {
  return { argv, text: argv.join(" "), ...(opaque ? { opaque } : {}) };
}

function normalise(command: RawCommand, depth: number): { parts: CommandPart[]; writes: FileWrite[] } {
  if (command.words.length === 0) {
    // A bare `PATH=/x` changes what later commands run: a part of its own, which only a rule for it allows.
    return { parts: [part(command.assignments)], writes: [] };
  }
  if (command.declaration) return { parts: [part(command.words.map((word) => word.source))], writes: [] };
  return unwrap(command.words, depth);
}

function opaquePart(words: ShellWord[], why: string): { parts: CommandPart[]; writes: FileWrite[] } {
  return { parts: [part(words.map((word) => word.literal ?? word.source), why)], writes: [] };
}

/** The part `words` runs, seen through wrappers. */
function unwrap(words: ShellWord[], depth: number): { parts: CommandPart[]; writes: FileWrite[] } {
  const first = words[0];
  if (first === undefined) return { parts: [], writes: [] };
  if (first.literal === undefined) return opaquePart(words, `the command name ${first.source} is an expansion`);
  if (depth > MAX_DEPTH) return opaquePart(words, "wrappers nested too deep to follow");
  const name = basename(first.literal);
  const args = words.slice(1);
  const literalArgs = args.map((word) => word.literal);
  const inner = (rest: ShellWord[]) => (rest.length === 0 ? plain(name, words) : unwrap(rest, depth + 1));
  const script = (text: string | undefined, what: string) => {
    if (text === undefined) return opaquePart(words, `${what} is an expansion`);
    const analysed = analyseCommandLine(text, depth + 1);
    if (!analysed.ok) return opaquePart(words, `${what} does not parse (${analysed.error})`);
    return { parts: analysed.parts, writes: analysed.writes };
  };

  switch (name) {
    case "env": {
      let i = 0;
      for (; i < args.length; i += 1) {
        const value = literalArgs[i];
        if (value === undefined) return opaquePart(words, "an env argument is an expansion");
        if (value === "--") {
          i += 1;
          break;
        }
        if (value === "-u" || value === "--unset" || value === "-C" || value === "--chdir" || value === "-S" || value === "--split-string") {
          if (value === "-S" || value === "--split-string") return script(literalArgs[i + 1], "env -S's command");
          i += 1;
          continue;
        }
        if (value.startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) continue;
        break;
      }
      return inner(args.slice(i));
    }
    case "nice":
    case "nohup":
    case "command":
    case "exec":
    case "sudo":
    case "doas":
    case "stdbuf":
    case "time":
    case "setsid":
    case "chrt":
    case "ionice": {
      // Options, with the values of those that take one, come before the command.
      const takesValue: Record<string, Set<string>> = {
        nice: new Set(["-n", "--adjustment"]),
        exec: new Set(["-a"]),
        sudo: new Set(["-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "--user", "--group", "--host", "--prompt"]),
        doas: new Set(["-u", "-C"]),
        stdbuf: new Set(["-i", "-o", "-e"]),
        time: new Set(["-f", "-o", "--format", "--output"]),
        ionice: new Set(["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"]),
        chrt: new Set([]),
      };
      let i = 0;
      for (; i < args.length; i += 1) {
        const value = literalArgs[i];
        if (value === undefined) return opaquePart(words, `a ${name} argument is an expansion`);
        if (value === "--") {
          i += 1;
          break;
        }
        if (!value.startsWith("-")) break;
        // `command -v x` and `command -V x` only look a name up.
        if (name === "command" && /^-[pvV]*[vV]/.test(value)) return plain(name, words);
        if (takesValue[name]?.has(value)) i += 1;
      }
      // chrt takes a priority before the command.
      if (name === "chrt" && literalArgs[i] !== undefined && /^\d+$/.test(literalArgs[i] as string)) i += 1;
      return inner(args.slice(i));
    }
    case "timeout": {
      const valued = new Set(["-s", "--signal", "-k", "--kill-after"]);
      let i = 0;
      for (; i < args.length; i += 1) {
        const value = literalArgs[i];
        if (value === undefined) return opaquePart(words, "a timeout argument is an expansion");
        if (value === "--") {
          i += 1;
          break;
        }
        if (!value.startsWith("-")) break;
        if (valued.has(value)) i += 1;
      }
      // The duration, then the command.
      return inner(args.slice(i + 1));
    }
    case "xargs": {
      const valued = new Set(["-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--replace", "--eof"]);
      let i = 0;
      for (; i < args.length; i += 1) {
        const value = literalArgs[i];
        if (value === undefined) return opaquePart(words, "an xargs argument is an expansion");
        if (value === "--") {
          i += 1;
          break;
        }
        if (!value.startsWith("-")) break;
        if (valued.has(value)) i += 1;
      }
      // xargs with no command runs echo.
      return args.length > i ? inner(args.slice(i)) : plain("echo", [{ source: "echo", literal: "echo" }]);
    }
    case "eval":
      if (literalArgs.some((value) => value === undefined)) return opaquePart(words, "an eval argument is an expansion");
      return script(literalArgs.join(" "), "eval's command");
    case "trap":
      // `trap 'cmd' SIGNAL` runs cmd later; `trap - SIG` and `trap -p` run nothing.
      if (literalArgs[0] === undefined && args.length > 0) return opaquePart(words, "a trap command is an expansion");
      if (args.length < 2 || literalArgs[0] === "-" || (literalArgs[0] ?? "").startsWith("-")) return plain(name, words);
      return merge(plain(name, words), script(literalArgs[0], "trap's command"));
    case "find":
      return findExec(name, words, args, depth);
  }
  if (SHELLS.has(name)) return shellWrapper(name, words, args, depth, script);
  return plain(name, words);
}

function plain(name: string, words: ShellWord[]): { parts: CommandPart[]; writes: FileWrite[] } {
  return { parts: [part([name, ...words.slice(1).map((word) => word.literal ?? word.source)])], writes: [] };
}

function merge(...results: { parts: CommandPart[]; writes: FileWrite[] }[]): { parts: CommandPart[]; writes: FileWrite[] } {
  return { parts: results.flatMap((result) => result.parts), writes: results.flatMap((result) => result.writes) };
}

/** `sh -c 'script'` (options may come first: `bash -ec`, `sh -x -c`); `sh file` stays `sh file`. */
function shellWrapper(
  name: string,
  words: ShellWord[],
  args: ShellWord[],
  depth: number,
  script: (text: string | undefined, what: string) => { parts: CommandPart[]; writes: FileWrite[] },
): { parts: CommandPart[]; writes: FileWrite[] } {
  let i = 0;
  // `busybox sh -c …` and `busybox touch …`: busybox runs its first argument.
  if (name === "busybox") return args.length > 0 ? unwrap(args, depth + 1) : plain(name, words);
  let command = false;
  for (; i < args.length; i += 1) {
    const value = args[i]?.literal;
    if (value === undefined) return opaquePart(words, `a ${name} option is an expansion`);
    if (value === "--" || value === "-") {
      i += 1;
      break;
    }
    if (!/^[-+]/.test(value)) break;
    if (/^-[A-Za-z]*c/.test(value)) command = true;
    // `-o option` and `+O option` take a value.
    if (/^[-+][oO]$/.test(value)) i += 1;
  }
  if (!command) return plain(name, words);
  return script(args[i]?.literal, `${name} -c's script`);
}

/** `find … -exec cmd {} ;` runs cmd: each -exec/-execdir/-ok/-okdir is a command of its own. */
function findExec(name: string, words: ShellWord[], args: ShellWord[], depth: number): { parts: CommandPart[]; writes: FileWrite[] } {
  const results = [plain(name, words)];
  for (let i = 0; i < args.length; i += 1) {
    if (!/^-(?:exec|execdir|ok|okdir)$/.test(args[i]?.literal ?? "")) continue;
    const start = i + 1;
    let end = start;
    while (end < args.length && args[end]?.literal !== ";" && args[end]?.literal !== "+") end += 1;
    results.push(unwrap(args.slice(start, end), depth + 1));
    i = end;
  }
  return merge(...results);
}
