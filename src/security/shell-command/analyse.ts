import { basename, isAbsolute } from "node:path";
import { type FileWrite, programWrites } from "./file-writes.ts";
import { type RawCommand, type ShellWord, parseShell } from "./parse.ts";
import { type CommandPart, type PrefixWord, assignmentPrefix, assignmentWord, makePart, prefixed, setsCode } from "./command-part.ts";
import { INFO_ONLY, INTERPRETERS, INTERPRETER_VALUED, isSafeAssignment } from "./programs.ts";

export type { FileWrite } from "./file-writes.ts";
export type { CommandPart } from "./command-part.ts";

export type AnalysedLine = { ok: true; parts: CommandPart[]; writes: FileWrite[] } | { ok: false; error: string };

interface Analysis {
  parts: CommandPart[];
  writes: FileWrite[];
}

/** How deep `sh -c "sh -c '…'"` is followed before the part is given up as opaque. */
const MAX_DEPTH = 4;

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]);
const OUTPUT_OPS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);
/** Writing to these is not an edit of a file. */
const HARMLESS_TARGETS = /^(?:\/dev\/(?:null|stdout|stderr|tty|fd\/\d+))$/;
/** Wrappers that run their command unchanged (same program, user, arguments and directory). */
const TRANSPARENT = new Set(["nice", "nohup", "command", "builtin", "exec", "stdbuf", "time", "setsid", "chrt", "ionice"]);
const CHANGES_DIRECTORY = new Set(["cd", "pushd", "popd"]);

/**
 * Splits a command line into the commands it runs and the files it changes.
 * Each command is normalised: its path reduced to its basename
 * (`/usr/bin/touch` → `touch`), wrappers looked through (`sh -c`, `bash -c`,
 * `env`, `xargs`, `nice`, `timeout`, `command`, `exec`, `eval`, `sudo`,
 * `nohup`, `stdbuf`, `find -exec`), leading assignments and wrappers that
 * change what runs kept in `ruled`. What cannot be seen through is opaque.
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
  return { ok: true, parts: markWrittenScripts(parts, writes), writes: settleWrites(parts, writes) };
}

/**
 * A path after a `cd` in the same line is relative to a directory the rules
 * cannot know, and `~` is the home directory: both become undetermined.
 */
function settleWrites(parts: CommandPart[], writes: FileWrite[]): FileWrite[] {
  const moved = parts.some((part) => CHANGES_DIRECTORY.has(part.argv[0] ?? ""));
  return writes.map((write) => {
    if (write.path === undefined) return write;
    if (write.path.startsWith("~")) return { path: undefined, source: `${write.source} (in the home directory)` };
    if (moved && !isAbsolute(write.path)) return { path: undefined, source: `${write.source} (after a cd)` };
    return write;
  });
}

/** A script the line writes and then runs (`echo … > x.sh; sh x.sh`) is code the rules cannot see. */
function markWrittenScripts(parts: CommandPart[], writes: FileWrite[]): CommandPart[] {
  return parts.map((part) => {
    const file = part.runsFile;
    if (file === undefined || part.opaque !== undefined) return part;
    if (!writes.some((write) => write.path === undefined || write.path === file || write.path.replace(/^\.\//, "") === file.replace(/^\.\//, ""))) return part;
    return { ...part, opaque: `it runs ${file}, which the same line writes` };
  });
}

function normalise(command: RawCommand, depth: number): Analysis {
  if (command.words.length === 0) {
    // A bare `PATH=/x` changes what later commands run: a part of its own, which only a rule for it allows.
    return { parts: [makePart([], command.assignments, command.assignments, setsCode(command.assignments))], writes: [] };
  }
  if (command.declaration) {
    const argv = command.words.map((word) => word.source);
    return { parts: [makePart([], argv, argv, setsCode(argv.slice(1)))], writes: [] };
  }
  return unwrap(command.words, depth, assignmentPrefix(command.assignments));
}

function opaquePart(words: readonly ShellWord[], prefix: readonly PrefixWord[], why: string): Analysis {
  const argv = words.map((word) => word.literal ?? word.source);
  return { parts: [makePart(prefix, argv, [], { opaque: why })], writes: [] };
}

function plain(name: string, words: readonly ShellWord[], prefix: readonly PrefixWord[], runsFile?: string): Analysis {
  const args = words.slice(1);
  const argv = [name, ...args.map((word) => word.literal ?? word.source)];
  const written = words[0]?.literal;
  const extra = { ...(runsFile !== undefined ? { runsFile } : {}), ...(written !== undefined && written.includes("/") ? { path: written } : {}) };
  const part = makePart(prefix, argv, [name, ...args.map((word) => word.literal)], extra);
  return { parts: [part], writes: programWrites(name, args) };
}

function merge(...results: Analysis[]): Analysis {
  return { parts: results.flatMap((result) => result.parts), writes: results.flatMap((result) => result.writes) };
}

/** A script run by a wrapper (`sh -c`, `eval`, `env -S`): its commands, each carrying the wrapper's prefix. */
function script(text: string | undefined, what: string, words: readonly ShellWord[], prefix: readonly PrefixWord[], depth: number): Analysis {
  if (text === undefined) return opaquePart(words, prefix, `${what} is an expansion`);
  const analysed = analyseCommandLine(text, depth + 1);
  if (!analysed.ok) return opaquePart(words, prefix, `${what} does not parse (${analysed.error})`);
  return { parts: analysed.parts.map((part) => prefixed(part, prefix)), writes: analysed.writes };
}

/** Skips options (and the values of `valued` ones) before a wrapped command; the index of the command, or an expansion's reason. */
function skipOptions(args: readonly ShellWord[], valued: ReadonlySet<string>, name: string): number | string {
  let i = 0;
  for (; i < args.length; i += 1) {
    const value = args[i]?.literal;
    if (value === undefined) return `a ${name} argument is an expansion`;
    if (value === "--") return i + 1;
    if (!value.startsWith("-")) return i;
    if (valued.has(value)) i += 1;
  }
  return i;
}

const WRAPPER_VALUED: Record<string, ReadonlySet<string>> = {
  nice: new Set(["-n", "--adjustment"]),
  exec: new Set(["-a"]),
  sudo: new Set(["-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "--user", "--group", "--host", "--prompt", "--chdir"]),
  doas: new Set(["-u", "-C"]),
  stdbuf: new Set(["-i", "-o", "-e"]),
  time: new Set(["-f", "-o", "--format", "--output"]),
  ionice: new Set(["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"]),
  timeout: new Set(["-s", "--signal", "-k", "--kill-after"]),
  xargs: new Set(["-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--replace", "--eof"]),
};

/** The parts `words` runs, seen through wrappers; `prefix` is what came before them that changes what runs. */
function unwrap(words: readonly ShellWord[], depth: number, prefix: readonly PrefixWord[]): Analysis {
  const first = words[0];
  if (first === undefined) return { parts: [], writes: [] };
  if (first.literal === undefined) return opaquePart(words, prefix, `the command name ${first.source} is an expansion`);
  if (depth > MAX_DEPTH) return opaquePart(words, prefix, "wrappers nested too deep to follow");
  const name = basename(first.literal);
  const args = words.slice(1);
  const literalArgs = args.map((word) => word.literal);

  if (TRANSPARENT.has(name) || name === "timeout" || name === "sudo" || name === "doas" || name === "xargs") {
    // `command -v x` and `command -V x` only look a name up.
    if (name === "command" && /^-[pvV]*[vV]/.test(literalArgs[0] ?? "")) return plain(name, words, prefix);
    const at = skipOptions(args, WRAPPER_VALUED[name] ?? new Set(), name);
    if (typeof at === "string") return opaquePart(words, prefix, at);
    let start = at;
    // chrt takes a priority, timeout a duration, before the command.
    if ((name === "chrt" && /^\d+$/.test(literalArgs[start] ?? "")) || name === "timeout") start += 1;
    const rest = args.slice(start);
    if (name === "xargs") {
      // xargs adds arguments read from standard input: the rule must name xargs. With no command it runs echo.
      const own = [{ text: "xargs", why: "xargs" }, ...args.slice(0, at).map((word) => ({ text: word.literal ?? word.source }))];
      if (rest.length === 0) return plain("echo", [{ source: "echo", literal: "echo" }], [...prefix, ...own]);
      return fedArguments(unwrap(rest, depth + 1, [...prefix, ...own]), "xargs");
    }
    if (rest.length === 0) return plain(name, words, prefix);
    if (name === "sudo" || name === "doas") {
      // Another user runs it: the rule must name the wrapper.
      const own = [{ text: name, why: name }, ...args.slice(0, start).map((word) => ({ text: word.literal ?? word.source }))];
      return unwrap(rest, depth + 1, [...prefix, ...own]);
    }
    return unwrap(rest, depth + 1, prefix);
  }

  const operand = OPERAND_WRAPPERS[name];
  if (operand !== undefined) return operandWrapper(name, operand, words, args, depth, prefix);
  // A program that runs another one in a way not followed here (its own option syntax, another
  // user, another namespace): with arguments, what it runs cannot be checked against a rule.
  if (UNFOLLOWED.has(name) && args.length > 0) return opaquePart(words, prefix, `${name} runs a command that is not followed`);

  switch (name) {
    case "watch":
      // watch joins its arguments into a command line for sh -c, run again and again.
      return watchCommand(words, args, depth, prefix);
    case "env":
      return envWrapper(words, args, depth, prefix);
    case "eval":
      if (literalArgs.some((value) => value === undefined)) return opaquePart(words, prefix, "an eval argument is an expansion");
      return script(literalArgs.join(" "), "eval's command", words, prefix, depth);
    case "trap":
      // `trap 'cmd' SIGNAL` runs cmd later; `trap - SIG` and `trap -p` run nothing.
      if (literalArgs[0] === undefined && args.length > 0) return opaquePart(words, prefix, "a trap command is an expansion");
      if (args.length < 2 || literalArgs[0] === "-" || (literalArgs[0] ?? "").startsWith("-")) return plain(name, words, prefix);
      return merge(plain(name, words, prefix), script(literalArgs[0], "trap's command", words, prefix, depth));
    case "find":
      return findExec(name, words, args, depth, prefix);
    case "source":
    case ".":
      // `source <(curl …)`, `. "$F"`: a script nobody can read from the line.
      if (args.length > 0 && literalArgs[0] === undefined) return opaquePart(words, prefix, `${name} runs a script from an expansion`);
      return plain(name, words, prefix, literalArgs[0]);
    case "alias":
      return aliases(name, words, args, depth, prefix);
  }
  if (SHELLS.has(name)) return shellWrapper(name, words, args, depth, prefix);
  if (INTERPRETERS[name] !== undefined) return interpreter(name, words, args, prefix);
  return plain(name, words, prefix);
}

/**
 * Programs that run a command given after an operand of their own: `flock [opts] FILE cmd…` (or
 * `-c 'script'`), `taskset [opts] MASK cmd…` (or `-p` for a running process, nothing run).
 */
interface OperandWrapper {
  valued: ReadonlySet<string>;
  /** After the operand: the option whose value is a shell script. */
  script?: ReadonlySet<string>;
  /** Options with which the program runs nothing of its own. */
  runsNothing?: ReadonlySet<string>;
}
const OPERAND_WRAPPERS: Record<string, OperandWrapper> = {
  flock: { valued: new Set(["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"]), script: new Set(["-c", "--command"]) },
  taskset: { valued: new Set(), runsNothing: new Set(["-p", "--pid", "-ap", "-pa", "-cp", "-pc", "-acp"]) },
};

/** Programs that run a command by rules not followed here: with any argument, such a part is opaque. */
const UNFOLLOWED = new Set(["unshare", "setpriv", "prlimit", "numactl", "chroot", "su", "runuser", "nsenter", "cgexec", "systemd-run", "firejail", "parallel", "script", "strace", "ltrace", "valgrind"]);

function operandWrapper(name: string, wrapper: OperandWrapper, words: readonly ShellWord[], args: readonly ShellWord[], depth: number, prefix: readonly PrefixWord[]): Analysis {
  const at = skipOptions(args, wrapper.valued, name);
  if (typeof at === "string") return opaquePart(words, prefix, at);
  if (args.slice(0, at).some((word) => wrapper.runsNothing?.has(word.literal ?? ""))) return plain(name, words, prefix);
  // The operand (a lock file, a CPU mask), then the command.
  const rest = args.slice(at + 1);
  if (rest.length === 0) return plain(name, words, prefix);
  const first = rest[0]!.literal;
  if (first !== undefined && wrapper.script?.has(first)) return script(rest[1]?.literal, `${name}'s command`, words, prefix, depth);
  return unwrap(rest, depth + 1, prefix);
}

function watchCommand(words: readonly ShellWord[], args: readonly ShellWord[], depth: number, prefix: readonly PrefixWord[]): Analysis {
  const at = skipOptions(args, new Set(["-n", "--interval", "-d", "--differences", "-q", "--equexit", "-s", "--shotsdir"]), "watch");
  if (typeof at === "string") return opaquePart(words, prefix, at);
  const rest = args.slice(at);
  if (rest.length === 0) return plain("watch", words, prefix);
  if (rest.some((word) => word.literal === undefined)) return opaquePart(words, prefix, "a watch argument is an expansion");
  return script(rest.map((word) => word.literal).join(" "), "watch's command", words, prefix, depth);
}

/** `alias ll='ls -l'`: a name for a command the shell may run later (bash -c with expand_aliases): the command is a part too. */
function aliases(name: string, words: readonly ShellWord[], args: readonly ShellWord[], depth: number, prefix: readonly PrefixWord[]): Analysis {
  const results = [plain(name, words, prefix)];
  for (const arg of args) {
    if (arg.literal === undefined) return merge(...results, opaquePart(words, prefix, "an alias is an expansion"));
    const at = arg.literal.indexOf("=");
    if (at > 0) results.push(script(arg.literal.slice(at + 1), "an alias's command", words, prefix, depth));
  }
  return merge(...results);
}

/** `env [-i] [-u NAME] [-C DIR] [NAME=value]… command`: its assignments count like leading ones. */
function envWrapper(words: readonly ShellWord[], args: readonly ShellWord[], depth: number, prefix: readonly PrefixWord[]): Analysis {
  const own: PrefixWord[] = [];
  let i = 0;
  for (; i < args.length; i += 1) {
    const value = args[i]?.literal;
    if (value === undefined) return opaquePart(words, prefix, "an env argument is an expansion");
    if (value === "--") {
      i += 1;
      break;
    }
    if (value === "-S" || value === "--split-string" || value.startsWith("--split-string=") || (value.startsWith("-S") && value.length > 2)) {
      const text = value === "-S" || value === "--split-string" ? args[i + 1]?.literal : value.replace(/^(?:-S|--split-string=)/, "");
      return script(text, "env -S's command", words, [...prefix, ...own], 0);
    }
    if (value === "-u" || value === "--unset") {
      own.push({ text: value }, { text: args[i + 1]?.literal ?? "" });
      i += 1;
    } else if (value === "-C" || value === "--chdir") {
      own.push({ text: value }, { text: args[i + 1]?.literal ?? "", why: "env -C" });
      i += 1;
    } else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
      const variable = value.slice(0, value.indexOf("="));
      if (!isSafeAssignment(variable)) own.push(assignmentWord(value, variable));
    } else if (value.startsWith("-")) {
      own.push({ text: value });
    } else break;
  }
  const rest = args.slice(i);
  // Only what must be named keeps `env` in the text rules see: `env -i LANG=C sort` is `sort`.
  const kept = own.some((word) => word.why !== undefined) ? [...prefix, { text: "env" }, ...own] : prefix;
  return rest.length === 0 ? plain("env", words, prefix) : unwrap(rest, depth + 1, kept);
}

/** `sh -c 'script'` (options may come first: `bash -ec`, `sh -x -c`); `sh file` runs a file; `sh` alone reads standard input. */
function shellWrapper(name: string, words: readonly ShellWord[], args: readonly ShellWord[], depth: number, prefix: readonly PrefixWord[]): Analysis {
  // `busybox sh -c …` and `busybox touch …`: busybox runs its first argument.
  if (name === "busybox") return args.length > 0 ? unwrap(args, depth + 1, prefix) : plain(name, words, prefix);
  let command = false;
  let stdin = false;
  let i = 0;
  for (; i < args.length; i += 1) {
    const value = args[i]?.literal;
    if (value === undefined) return opaquePart(words, prefix, `a ${name} option is an expansion`);
    if (value === "--" || value === "-") {
      stdin = value === "-";
      i += 1;
      break;
    }
    if (!/^[-+]/.test(value)) break;
    if (INFO_ONLY.has(value)) return plain(name, words, prefix);
    if (/^-[A-Za-z]*c/.test(value)) command = true;
    if (/^-[A-Za-z]*s/.test(value)) stdin = true;
    // `-o option` and `+O option` take a value.
    if (/^[-+][oO]$/.test(value)) i += 1;
  }
  if (command) return script(args[i]?.literal, `${name} -c's script`, words, prefix, depth);
  if (stdin || i >= args.length) return opaquePart(words, prefix, `${name} reads its commands from standard input`);
  const file = args[i]?.literal;
  if (file === undefined) return opaquePart(words, prefix, `${name} runs a script from an expansion`);
  return plain(name, words, prefix, file);
}

/** `python3 -c …`, `node -e …`, `perl -e …` run code the rules cannot read; so does an interpreter reading standard input. */
function interpreter(name: string, words: readonly ShellWord[], args: readonly ShellWord[], prefix: readonly PrefixWord[]): Analysis {
  const spec = INTERPRETERS[name] as { code: readonly string[]; stdin: boolean };
  for (let i = 0; i < args.length; i += 1) {
    const value = args[i]?.literal;
    if (value === undefined) return opaquePart(words, prefix, `a ${name} argument is an expansion`);
    // `-e code`, `-ecode`, `--eval=code`, and short flags bundled before it (`perl -ne`, `node -pe`, `python3 -uc`).
    const code = spec.code.find(
      (option) =>
        value === option ||
        value.startsWith(`${option}=`) ||
        (option.length === 2 && option.startsWith("-") && (value.startsWith(option) || new RegExp(`^-[A-Za-z]+${option[1]}`).test(value))),
    );
    if (code !== undefined) return opaquePart(words, prefix, `${name} ${code} runs code given on the command line`);
    if (value === "-") return opaquePart(words, prefix, `${name} reads its program from standard input`);
    if (INFO_ONLY.has(value)) return plain(name, words, prefix);
    if (value === "-m" || !value.startsWith("-")) return plain(name, words, prefix, value === "-m" ? undefined : value);
    if (INTERPRETER_VALUED.has(value)) i += 1;
  }
  if (spec.stdin && args.every((word) => !/^--(?:test|run|watch)/.test(word.literal ?? ""))) {
    return opaquePart(words, prefix, `${name} reads its program from standard input`);
  }
  return plain(name, words, prefix);
}

/**
 * A command given arguments the line does not show (`xargs rm`, `find -exec rm {} +`):
 * a program that changes the files it is given changes files nobody can name here.
 */
function fedArguments(result: Analysis, by: string): Analysis {
  const writes = result.writes.filter((write) => write.path === undefined || !write.path.includes("{}"));
  const fed = result.parts.some((part) => !part.opaque && programWrites(part.argv[0] ?? "", [...part.argv.slice(1), "x", "y"].map((text) => ({ source: text, literal: text }))).length > 0);
  if (fed) writes.push({ path: undefined, source: `${by} gives ${result.parts[0]?.argv[0]} the files it changes` });
  return { parts: result.parts, writes };
}

/** `find … -exec cmd {} ;` runs cmd: each -exec/-execdir/-ok/-okdir is a command of its own. */
function findExec(name: string, words: readonly ShellWord[], args: readonly ShellWord[], depth: number, prefix: readonly PrefixWord[]): Analysis {
  const results = [plain(name, words, prefix)];
  for (let i = 0; i < args.length; i += 1) {
    if (!/^-(?:exec|execdir|ok|okdir)$/.test(args[i]?.literal ?? "")) continue;
    const start = i + 1;
    let end = start;
    while (end < args.length && args[end]?.literal !== ";" && args[end]?.literal !== "+") end += 1;
    results.push(fedArguments(unwrap(args.slice(start, end), depth + 1, prefix), `find ${args[i]?.literal}`));
    i = end;
  }
  return merge(...results);
}
