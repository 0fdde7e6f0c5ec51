import { basename, join } from "node:path";
import type { ShellWord } from "./parse.ts";

/**
 * A file a command line changes: by an output redirection or by a program
 * that writes, moves or removes the files it is given (`tee`, `cp`, `mv`,
 * `rm`, `sed -i`…). `path` is undefined when it cannot be known from the line
 * (an expansion, `tar x`, `find -delete`); `source` says where it came from.
 */
export interface FileWrite {
  path: string | undefined;
  source: string;
  /** When `path` may be an existing directory the file lands in (`cp a.txt dir`): the name it gets there. */
  into?: string;
}

type Args = readonly ShellWord[];

/** Splits arguments into options and operands; `valued` options take the next word (or `--opt=value`). */
function operands(args: Args, valued: ReadonlySet<string>): { operands: ShellWord[]; options: Map<string, ShellWord | undefined> } {
  const found: ShellWord[] = [];
  const options = new Map<string, ShellWord | undefined>();
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i] as ShellWord;
    const value = word.literal;
    if (value === "--") {
      found.push(...args.slice(i + 1));
      break;
    }
    if (value === undefined || !value.startsWith("-") || value === "-") {
      found.push(word);
      continue;
    }
    const eq = value.indexOf("=");
    if (value.startsWith("--") && eq > 0) {
      options.set(value.slice(0, eq), { source: value, literal: value.slice(eq + 1) });
    } else if (valued.has(value)) {
      options.set(value, args[i + 1]);
      i += 1;
    } else {
      options.set(value, undefined);
    }
  }
  return { operands: found, options };
}

const write = (word: ShellWord | undefined, source: string, into?: string): FileWrite => ({
  path: word?.literal,
  source: word ? `${source} ${word.source}` : source,
  ...(into !== undefined ? { into } : {}),
});

/** `cp`/`mv`/`ln`/`install`/`rsync`: the destination (a file, or a directory the sources land in). */
function copies(name: string, args: Args, valued: ReadonlySet<string>): FileWrite[] {
  const { operands: ops, options } = operands(args, valued);
  const target = options.get("-t") ?? options.get("--target-directory");
  const sources = target ? ops : ops.slice(0, -1);
  const writes: FileWrite[] = [];
  if (target) {
    for (const source of sources) writes.push(write(target.literal !== undefined && source.literal !== undefined ? { source: target.source, literal: join(target.literal, basename(source.literal)) } : undefined, name));
  } else if (ops.length === 1 && name === "ln") {
    // `ln -s ../x` makes a link named x here.
    const only = ops[0] as ShellWord;
    writes.push(write(only.literal !== undefined ? { source: only.source, literal: basename(only.literal) } : undefined, name));
  } else if (ops.length >= 2) {
    const dest = ops.at(-1) as ShellWord;
    const noDir = options.has("-T") || options.has("--no-target-directory");
    for (const source of sources) {
      if (dest.literal !== undefined && source.literal !== undefined && sources.length > 1) {
        writes.push(write({ source: dest.source, literal: join(dest.literal, basename(source.literal)) }, name));
      } else writes.push(write(dest, name, noDir || source.literal === undefined ? undefined : basename(source.literal)));
    }
  }
  // A move changes its sources too: they are gone.
  if (name === "mv") for (const source of sources) writes.push(write(source, name));
  return writes;
}

/** Each operand is a file the program changes (`rm`, `touch`, `tee`…). */
function each(name: string, args: Args, valued: ReadonlySet<string>): FileWrite[] {
  return operands(args, valued).operands.map((word) => write(word, name));
}

function sedWrites(args: Args): FileWrite[] {
  const inPlace = args.some((word) => /^(?:-[nrsuzE]*i|--in-place)/.test(word.literal ?? ""));
  if (!inPlace) return [];
  const { operands: ops, options } = operands(args, new Set(["-e", "--expression", "-f", "--file", "-l", "--line-length"]));
  const scripted = [...options.keys()].some((option) => /^(?:-e|--expression|-f|--file)$/.test(option));
  return (scripted ? ops : ops.slice(1)).map((word) => write(word, "sed -i"));
}

function tarWrites(args: Args): FileWrite[] {
  const first = args[0]?.literal ?? "";
  const bundle = first.startsWith("-") ? "" : first;
  const flags = args.map((word) => word.literal ?? "");
  const has = (short: string, long: string) => bundle.includes(short) || flags.some((flag) => flag === long || (/^-[A-Za-z]+$/.test(flag) && flag.includes(short)));
  if (has("x", "--extract") || flags.includes("--get")) return [{ path: undefined, source: "tar extracts files the archive names" }];
  if (!(has("c", "--create") || has("r", "--append") || has("u", "--update"))) return [];
  const at = flags.findIndex((flag) => flag === "-f" || flag === "--file" || (/^-[A-Za-z]+$/.test(flag) && flag.endsWith("f")));
  if (at >= 0) return [write(args[at + 1], "tar")];
  const long = flags.find((flag) => flag.startsWith("--file="));
  if (long !== undefined) return [write({ source: long, literal: long.slice(7) }, "tar")];
  // Bundled (`tar czf out.tgz dir`): the archive is the first operand after the bundle.
  if (bundle.includes("f")) return [write(args[1], "tar")];
  return [];
}

/** What one value-taking option names as its output file (`sort -o out`, `curl -o out`). */
function outputs(name: string, args: Args, names: readonly string[], valued: ReadonlySet<string>): FileWrite[] {
  const { options } = operands(args, valued);
  return names.filter((option) => options.has(option)).map((option) => write(options.get(option), `${name} ${option}`));
}

/**
 * Short options bundled with others, whose last letter takes a file
 * (`curl -sSLo out`, `wget -qO out`, `-oout`): the value attached, else the next word.
 */
function bundled(name: string, args: Args, pattern: RegExp): FileWrite[] {
  const writes: FileWrite[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const value = args[i]?.literal ?? "";
    const match = pattern.exec(value);
    // Plain `-o FILE` is read by outputs(); only bundles and attached values here.
    if (!match || value.startsWith("--") || value.length === 2) continue;
    const attached = match[2] ?? "";
    if (attached === "-") continue;
    if (attached !== "") writes.push({ path: attached, source: `${name} ${value}` });
    else writes.push(write(args[i + 1], `${name} ${value}`));
  }
  return writes.filter((entry) => entry.path !== "-");
}

const NONE = new Set<string>();

/** The files `name args…` changes, as far as the line says; `[]` for a program not known to write files. */
export function programWrites(name: string, args: Args): FileWrite[] {
  switch (name) {
    case "tee":
      return each(name, args, NONE);
    case "cp":
    case "mv":
    case "rsync":
      return copies(name, args, new Set(["-t", "--target-directory", "-S", "--suffix", "-e", "--rsh"]));
    case "ln":
      return copies(name, args, new Set(["-t", "--target-directory", "-S", "--suffix"]));
    case "install":
      return copies(name, args, new Set(["-t", "--target-directory", "-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"]));
    case "rm":
    case "unlink":
      return each(name, args, NONE);
    case "shred":
      return each(name, args, new Set(["-n", "--iterations", "-s", "--size"]));
    case "touch":
      return each(name, args, new Set(["-d", "--date", "-r", "--reference", "-t"]));
    case "truncate":
      return each(name, args, new Set(["-s", "--size", "-r", "--reference"]));
    case "sed":
      return sedWrites(args);
    case "dd":
      return args.filter((word) => (word.literal ?? word.source).startsWith("of=")).map((word) => ({ path: word.literal?.slice(3), source: `dd ${word.source}` }));
    case "sort":
      return outputs(name, args, ["-o", "--output"], new Set(["-o", "--output", "-k", "-t", "-T", "-S"]));
    case "curl": {
      const named = outputs(name, args, ["-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar"], new Set(["-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "-H", "-d", "-X", "-u", "-A", "-e", "-b", "-F"]));
      const remote = args.some((word) => /^-[A-Za-z]*O[A-Za-z]*$/.test(word.literal ?? "") || word.literal === "--remote-name" || word.literal === "--remote-name-all");
      const all = [...named, ...bundled(name, args, /^-[A-Za-z]*([oDc])(.*)$/)];
      return remote ? [...all, { path: undefined, source: "curl -O saves under a name from the URL" }] : all;
    }
    case "wget": {
      const named = [...outputs(name, args, ["-O", "--output-document", "-o", "--output-file"], new Set(["-O", "--output-document", "-o", "--output-file", "-P"])), ...bundled(name, args, /^-[A-Za-z]*([Oo])(.*)$/)];
      const documented = args.some((word) => /^(?:-[A-Za-z]*O.*|--output-document(?:=.*)?)$/.test(word.literal ?? ""));
      return documented ? named : [...named, { path: undefined, source: "wget saves under a name from the URL" }];
    }
    case "gzip":
    case "gunzip":
    case "bzip2":
    case "bunzip2":
    case "xz":
    case "unxz":
    case "zstd":
    case "unzstd":
    case "compress":
    case "uncompress": {
      // Each file is replaced by its (de)compressed twin, unless it goes to standard output.
      if (args.some((word) => /^(?:-[A-Za-z]*c[A-Za-z]*|--stdout|--to-stdout|-l|--list|-t|--test)$/.test(word.literal ?? ""))) return [];
      return operands(args, new Set(["-S", "--suffix", "-T", "--threads", "-o"])).operands.flatMap((word) => {
        const stripped = word.literal?.replace(/\.(?:gz|bz2|xz|zst|Z|tgz)$/, "");
        return [write(word, name), ...(stripped !== undefined && stripped !== word.literal ? [write({ source: word.source, literal: stripped }, name)] : [])];
      });
    }
    case "tar":
      return tarWrites(args);
    case "unzip":
      return args.some((word) => /^-[ltpvZ]/.test(word.literal ?? "")) ? [] : [{ path: undefined, source: "unzip extracts files the archive names" }];
    case "patch":
      return args.some((word) => word.literal === "--dry-run") ? [] : [{ path: undefined, source: "patch changes the files the patch names" }];
    case "find": {
      const writes: FileWrite[] = [];
      for (let i = 0; i < args.length; i += 1) {
        const value = args[i]?.literal;
        if (value === "-delete") writes.push({ path: undefined, source: "find -delete removes the files it finds" });
        if (value !== undefined && /^-(?:fprint0?|fprintf|fls)$/.test(value)) writes.push(write(args[i + 1], `find ${value}`));
      }
      return writes;
    }
  }
  return [];
}
