import { isSafeAssignment, namesCode, namingOptions, withoutGlobalOptions } from "./programs.ts";

// What permission rules see of one command: the command as it will run, with
// what changes the program it runs in front of it, and what an allow rule must
// spell out to cover it.

/** One command the line would run, as permission rules see it. */
export interface CommandPart {
  /** Name (basename) and arguments after wrappers and leading assignments are stripped. */
  argv: string[];
  /** The argv joined by spaces: what deny rules match (as well as `ruled`), and what messages show. */
  text: string;
  /** For deny rules too: the text without the options before a subcommand (`git --no-pager push` → `git push`). */
  core?: string;
  /**
   * What allow rules match: the command with what changes the program it runs
   * put back before it — leading assignments not on the safe list (`PATH=…`,
   * `GIT_*=…`) and wrappers that change how it runs (`sudo`, `xargs`, `env -C`).
   */
  ruled: string;
  /**
   * How many leading characters of `ruled` an allow rule must spell out
   * literally (before its first `*`): through the last such assignment or
   * wrapper and the last option that names a program (`git -c …`,
   * `npm --script-shell …`). 0 when there is none.
   */
  namedThrough: number;
  /** What must be named, for messages: `sets PATH`, `git -c`. */
  mustName: string[];
  /** Set when what runs cannot be known (a command name from an expansion, `sh -c "$X"`, `python3 -c`): no pattern rule allows it. */
  opaque?: string;
  /**
   * Set when the command is known but runs code named where the rules cannot
   * see it (`PATH=./x`, `GIT_CONFIG_*`, `git -c core.fsmonitor=…`,
   * `npm --script-shell`): an allow rule that names it covers it, but no deny
   * rule can be checked against it.
   */
  hidden?: string;
  /** The script file a shell or interpreter runs (`sh build.sh`, `. ./env.sh`), when it is literal. */
  runsFile?: string;
}

/** A word put before a command (an assignment, a wrapper); `why` when an allow rule must name it, `hides` when it runs code the line does not show. */
export interface PrefixWord {
  text: string;
  why?: string;
  hides?: string;
}

export function makePart(
  prefix: readonly PrefixWord[],
  argv: string[],
  literals: readonly (string | undefined)[],
  extra: { opaque?: string; runsFile?: string; path?: string; hidden?: string } = {},
): CommandPart {
  // A program given by its path (`./evil/git`) is not the one PATH finds: allow rules see, and must name, the path.
  const program: PrefixWord[] = argv.length === 0 ? [] : [extra.path !== undefined ? { text: extra.path, why: `runs ${extra.path}` } : { text: argv[0] as string }];
  const words: PrefixWord[] = [...prefix, ...program, ...argv.slice(1).map((text) => ({ text }))];
  let hidden = extra.hidden ?? prefix.find((word) => word.hides !== undefined)?.hides;
  for (const option of namingOptions(literals)) {
    const at = prefix.length + option.last;
    const word = words[at] as PrefixWord;
    words[at] = { text: word.text, why: word.why ?? option.what };
    if (!option.visible) hidden ??= `${option.what} can name a program the line does not show`;
  }
  let offset = 0;
  let namedThrough = 0;
  const mustName: string[] = [];
  for (const word of words) {
    offset += (offset === 0 ? 0 : 1) + word.text.length;
    if (word.why === undefined) continue;
    namedThrough = offset;
    if (!mustName.includes(word.why)) mustName.push(word.why);
  }
  const core = extra.opaque ? undefined : withoutGlobalOptions(argv);
  return {
    argv,
    text: argv.join(" "),
    ...(core ? { core: core.join(" ") } : {}),
    ruled: words.map((word) => word.text).join(" "),
    namedThrough,
    mustName,
    ...(extra.opaque ? { opaque: extra.opaque } : {}),
    ...(hidden !== undefined ? { hidden } : {}),
    ...(extra.runsFile !== undefined ? { runsFile: extra.runsFile } : {}),
  };
}

/** The prefix the leading assignments make: those not on the safe list must be named. */
export function assignmentPrefix(assignments: readonly string[]): PrefixWord[] {
  return assignments
    .map((text) => ({ text, name: /^[A-Za-z_][A-Za-z0-9_]*/.exec(text)?.[0] ?? text }))
    .filter(({ name }) => !isSafeAssignment(name))
    .map(({ text, name }) => assignmentWord(text, name));
}

/** `PATH=./x; ls`, `export GIT_DIR=…`: what later commands of the line run changes. */
export function setsCode(assignments: readonly string[]): { hidden?: string } {
  const name = assignments.map((text) => /^[A-Za-z_][A-Za-z0-9_]*/.exec(text)?.[0] ?? "").find(namesCode);
  return name === undefined ? {} : { hidden: `it sets ${name} for the commands after it, which can change what they run` };
}

export function assignmentWord(text: string, name: string): PrefixWord {
  return { text, why: `sets ${name}`, ...(namesCode(name) ? { hides: `it sets ${name}, which can change what runs` } : {}) };
}

/** A part of a wrapped script with the wrapper's prefix (`PATH=x sh -c 'npm test'` runs `npm test` with PATH=x). */
export function prefixed(part: CommandPart, prefix: readonly PrefixWord[]): CommandPart {
  if (prefix.length === 0) return part;
  const head = makePart(prefix, [], []);
  const shift = head.ruled.length + 1;
  return {
    ...part,
    ruled: `${head.ruled} ${part.ruled}`,
    namedThrough: part.namedThrough > 0 ? shift + part.namedThrough : head.namedThrough,
    mustName: [...new Set([...head.mustName, ...part.mustName])],
    ...(part.hidden ?? head.hidden ? { hidden: part.hidden ?? head.hidden } : {}),
  };
}
