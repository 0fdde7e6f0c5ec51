/**
 * What permission rules must know about particular programs, as data: which
 * leading assignments change nothing a rule cares about, which options make a
 * program run another program (an allow rule must spell them out), and which
 * interpreters run code given on the command line or on standard input.
 */

/** Assignments an allow rule may ignore: locale, time zone, colour and CI switches name no program and no file. */
export function isSafeAssignment(name: string): boolean {
  return /^(?:LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|CI)$/.test(name);
}

/**
 * Variables that make a program run other code: a search path for programs or
 * libraries, a startup file or option string of a shell or interpreter, a
 * program to run (pager, editor, askpass), git's and npm's configuration. A
 * command carrying one runs what the line does not show, so no deny rule can
 * be checked against it.
 */
export function namesCode(name: string): boolean {
  return (
    /^(?:PATH|CDPATH|IFS|ENV|BASH_ENV|SHELL|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|EDITOR|VISUAL|PAGER|MANPAGER|BROWSER|LESSOPEN|LESSCLOSE|MAKEFLAGS|CC|CXX|RUSTC_WRAPPER|NODE_OPTIONS|NODE_PATH|PERL5OPT|PERL5LIB|PERLLIB|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS)$/.test(name) ||
    /^(?:LD_|DYLD_|GIT_|BASH_FUNC_)|_ASKPASS$/.test(name) ||
    /^npm_config_/i.test(name)
  );
}

/**
 * Options that name a program, a script or a configuration that runs one:
 * `global` ones count before the first operand (git's `-c` comes before the
 * subcommand; `git commit -c` is something else), `any` ones anywhere,
 * `sub[subcommand]` ones after that subcommand. An entry not starting with `-`
 * is a word that makes the subcommand run a command (`git bisect run`).
 * Options are given as they are spelled; `--long=value` and `-xVALUE` count too.
 */
interface NamingOptions {
  global?: readonly string[];
  any?: readonly string[];
  sub?: Readonly<Record<string, readonly string[]>>;
}

const PACKAGE_MANAGER = ["--script-shell", "--shell", "--node-options", "--userconfig", "--globalconfig", "--prefix", "--call", "--node-gyp", "--init-module", "--editor", "--cwd", "--dir", "--config"];
const NODE = ["-r", "--require", "--import", "--loader", "--experimental-loader", "--preload", "--env-file"];

export const NAMING_OPTIONS: Readonly<Record<string, NamingOptions>> = {
  git: {
    global: ["-c", "--config-env", "--exec-path", "-C", "--git-dir", "--work-tree", "--namespace"],
    any: ["--upload-pack", "--receive-pack", "--exec", "--extcmd", "--open-files-in-pager", "--sendmail-cmd", "--to-cmd", "--cc-cmd", "--smtp-server", "--template"],
    sub: {
      clone: ["-u"],
      rebase: ["-x"],
      difftool: ["-x", "-t", "--tool"],
      mergetool: ["-t", "--tool"],
      grep: ["-O"],
      bisect: ["run"],
      submodule: ["foreach"],
      "filter-branch": ["--tree-filter", "--index-filter", "--msg-filter", "--env-filter", "--commit-filter", "--parent-filter", "--tag-name-filter"],
      config: ["--file", "-f", "--global", "--system"],
    },
  },
  npm: { any: [...PACKAGE_MANAGER, "-c"] },
  npx: { any: [...PACKAGE_MANAGER, "-c", "-p", "--package"] },
  pnpm: { any: [...PACKAGE_MANAGER, "-C"] },
  yarn: { any: PACKAGE_MANAGER },
  bun: { any: [...PACKAGE_MANAGER, ...NODE, "-c"] },
  node: { any: NODE },
  nodejs: { any: NODE },
  deno: { any: ["--config", "-c", "--import-map"] },
  find: { any: ["-exec", "-execdir", "-ok", "-okdir"] },
  tar: { any: ["--to-command", "-I", "--use-compress-program", "--checkpoint-action", "-F", "--info-script", "--new-volume-script", "--rsh-command", "--rmt-command"] },
  rsync: { any: ["-e", "--rsh", "--rsync-path"] },
  ssh: { any: ["-o", "-F"] },
  scp: { any: ["-S", "-o", "-F"] },
  sort: { any: ["--compress-program"] },
  zip: { any: ["-TT", "--unzip-command"] },
  cargo: { any: ["--config"] },
  make: { any: ["-f", "--file", "--makefile", "-C", "--directory", "--eval"] },
  vim: { any: ["-c", "--cmd", "-S"] },
  vi: { any: ["-c", "--cmd", "-S"] },
};

/** Options of a program that take their value in the next word, so the value is part of what must be named. */
const VALUED = new Set(["-c", "-C", "-e", "-f", "-F", "-I", "-o", "-p", "-r", "-S", "-t", "-u", "-x", "-O", "-m"]);

export interface NamedOption {
  /** Index in argv of the last word the option covers (its value's, when separate). */
  last: number;
  what: string;
  /** True when what it runs is a command of the line the rules see (`find -exec cmd`), not a program named in a value. */
  visible?: boolean;
}

/** Options whose command is written out on the line (and analysed as a command of its own). */
const VISIBLE = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/**
 * The options of argv (`[name, ...args]`, args as literals or undefined for an
 * expansion) that name a program. An expansion where such an option could be
 * is not looked into: an allow rule matches the expansion as written.
 */
export function namingOptions(argv: readonly (string | undefined)[]): NamedOption[] {
  const name = argv[0] ?? "";
  const spec = NAMING_OPTIONS[name];
  if (!spec) return [];
  const found: NamedOption[] = [];
  let subcommand: string | undefined;
  for (let i = 1; i < argv.length; i += 1) {
    const word = argv[i];
    // An expansion could be any option: it must be named like one.
    if (word === undefined) {
      found.push({ last: i, what: `${name} argument from an expansion` });
      continue;
    }
    if (word === "--") break;
    const lists = [spec.any ?? [], subcommand === undefined ? (spec.global ?? []) : [], subcommand !== undefined ? (spec.sub?.[subcommand] ?? []) : []];
    const option = lists.flat().find((candidate) => optionMatches(word, candidate));
    if (option !== undefined) {
      const separate = word === option && option.startsWith("-") && (option.startsWith("--") || VALUED.has(option));
      found.push({ last: separate ? Math.min(i + 1, argv.length - 1) : i, what: `${name} ${option}`, ...(VISIBLE.has(option) ? { visible: true } : {}) });
      if (separate) i += 1;
      continue;
    }
    if (subcommand === undefined && !word.startsWith("-")) subcommand = word;
  }
  return found;
}

function optionMatches(word: string, option: string): boolean {
  if (!option.startsWith("-")) return word === option;
  if (word === option) return true;
  // npm reads `--script_shell` as `--script-shell`.
  if (option.startsWith("--")) {
    const long = word.replaceAll("_", "-");
    return long === option || long.startsWith(`${option}=`);
  }
  // A short option with its value attached (`-cX`), not a longer option that starts alike (`-exec` vs `-e`).
  return option.length === 2 && !word.startsWith("--") && word.startsWith(option) && word.length > 2 && NAMING_SHORT_ATTACH.has(option);
}

/** Short options whose value may be attached (`-ccore.pager=x`, `-I{}`, `-epython`). */
const NAMING_SHORT_ATTACH = new Set(["-c", "-C", "-I", "-i", "-o", "-p", "-r", "-S", "-x", "-O", "-m", "-e", "-u", "-t", "-F", "-f"]);

/**
 * Interpreters: the options that make them run code given as an argument, and
 * whether they read a program from standard input when given no script
 * operand (`echo … | python3`, `node <<EOF`).
 */
export const INTERPRETERS: Readonly<Record<string, { code: readonly string[]; stdin: boolean }>> = {
  python: { code: ["-c"], stdin: true },
  python2: { code: ["-c"], stdin: true },
  python3: { code: ["-c"], stdin: true },
  pypy: { code: ["-c"], stdin: true },
  pypy3: { code: ["-c"], stdin: true },
  node: { code: ["-e", "--eval", "-p", "--print"], stdin: true },
  nodejs: { code: ["-e", "--eval", "-p", "--print"], stdin: true },
  bun: { code: ["-e", "--eval", "-p", "--print"], stdin: false },
  deno: { code: ["eval"], stdin: false },
  perl: { code: ["-e", "-E"], stdin: true },
  ruby: { code: ["-e"], stdin: true },
  php: { code: ["-r"], stdin: true },
  lua: { code: ["-e"], stdin: true },
  osascript: { code: ["-e"], stdin: true },
  pwsh: { code: ["-c", "-Command", "-command", "-EncodedCommand"], stdin: false },
};

/** Options of an interpreter that take a value (so the value is not the script operand). */
export const INTERPRETER_VALUED = new Set(["-m", "-W", "-X", "-r", "--require", "--import", "--loader", "-I", "-M", "-x", "-C"]);

/** Words that only print information, so an interpreter given them reads no program. */
export const INFO_ONLY = new Set(["--version", "-V", "--help", "-h", "-v", "-version"]);

/**
 * Programs with subcommands, and their options before the subcommand that take
 * a value: a deny rule on `git push*` must also meet `git --no-pager push` and
 * `git -C . push`, so deny rules see the command without those options too.
 */
const SUBCOMMAND_GLOBALS: Readonly<Record<string, ReadonlySet<string>>> = {
  git: new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--list-cmds"]),
  npm: new Set(["-w", "--workspace", "--prefix", "-C", "--userconfig", "--globalconfig", "--cache", "--registry", "--loglevel"]),
  pnpm: new Set(["-C", "--dir", "-F", "--filter", "-w", "--workspace"]),
  yarn: new Set(["--cwd"]),
  cargo: new Set(["-C", "--config", "--color", "-Z"]),
  docker: new Set(["-H", "--host", "-c", "--context", "--config", "-l", "--log-level"]),
  kubectl: new Set(["-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server"]),
  gh: new Set(["-R", "--repo"]),
};

/** argv without the options before the subcommand (`git --no-pager -C . push` → `git push`), or undefined when there are none. */
export function withoutGlobalOptions(argv: readonly string[]): string[] | undefined {
  const valued = SUBCOMMAND_GLOBALS[argv[0] ?? ""];
  if (valued === undefined) return undefined;
  let i = 1;
  while (i < argv.length && (argv[i] ?? "").startsWith("-")) i += valued.has(argv[i] as string) ? 2 : 1;
  return i === 1 ? undefined : [argv[0] as string, ...argv.slice(i)];
}
