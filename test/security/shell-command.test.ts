import { describe, expect, test } from "bun:test";
import { analyseCommandLine } from "../../src/security/shell-command/analyse.ts";

const texts = (line: string) => {
  const analysed = analyseCommandLine(line);
  if (!analysed.ok) throw new Error(analysed.error);
  return analysed.parts.map((part) => part.text);
};
const writes = (line: string) => {
  const analysed = analyseCommandLine(line);
  if (!analysed.ok) throw new Error(analysed.error);
  return analysed.writes.map((write) => write.path);
};

describe("analyseCommandLine: every simple command the line runs", () => {
  test.each([
    ["npm test; touch X", ["npm test", "touch X"]],
    ["npm test && touch X", ["npm test", "touch X"]],
    ["npm test || touch X", ["npm test", "touch X"]],
    ["npm test | touch X", ["npm test", "touch X"]],
    ["npm test & touch X", ["npm test", "touch X"]],
    ["npm test\ntouch X", ["npm test", "touch X"]],
    ["(cd a && touch X)", ["cd a", "touch X"]],
    ["cat <(touch X)", ["cat <(touch X)", "touch X"]],
    ["if true; then touch X; fi", ["true", "touch X"]],
    ["f() { touch X; }; f", ["touch X", "f"]],
  ])("%j", (line, expected) => {
    expect(texts(line)).toEqual(expected);
  });

  test("substitutions are commands of their own", () => {
    expect(texts("npm test $(touch X)")).toEqual(["npm test $(touch X)", "touch X"]);
    expect(texts("npm test `touch X`")).toEqual(["npm test `touch X`", "touch X"]);
    expect(texts('echo "$(touch X)"')).toEqual(['echo "$(touch X)"', "touch X"]);
  });

  test("normalised: leading spaces and assignments, absolute paths, quotes", () => {
    expect(texts(" touch a")).toEqual(["touch a"]);
    expect(texts("FOO=1 BAR=2 /usr/bin/touch a")).toEqual(["touch a"]);
    expect(texts("'tou'ch \"a b\"")).toEqual(["touch a b"]);
    expect(texts("to\\uch a")).toEqual(["touch a"]);
  });

  test.each([
    ["sh -c 'touch a'", ["touch a"]],
    ["bash -ec 'true; touch a'", ["true", "touch a"]],
    ["sh -c \"sh -c 'touch a'\"", ["touch a"]],
    ["env -i A=1 touch a", ["touch a"]],
    ["env -- touch a", ["touch a"]],
    ["xargs -n 1 touch", ["touch"]],
    ["nice -n 5 touch a", ["touch a"]],
    ["timeout -s KILL 10 touch a", ["touch a"]],
    ["command touch a", ["touch a"]],
    ["exec touch a", ["touch a"]],
    ["eval 'touch a; rm b'", ["touch a", "rm b"]],
    ["sudo -u root touch a", ["touch a"]],
    ["nohup nice timeout 5 env X=1 /bin/touch a", ["touch a"]],
    ["find . -name x -exec touch {} +", ["find . -name x -exec touch {} +", "touch {}"]],
    ["busybox touch a", ["touch a"]],
    ["flock /tmp/l touch a", ["touch a"]],
    ["flock -x -w 5 /tmp/l touch a", ["touch a"]],
    ["flock /tmp/l -c 'touch a; rm b'", ["touch a", "rm b"]],
    ["flock -n 9", ["flock -n 9"]],
    ["taskset 0x1 touch a", ["touch a"]],
    ["taskset -c 0,1 nice touch a", ["touch a"]],
    ["taskset -p 0x1 1234", ["taskset -p 0x1 1234"]],
    ["watch -n 1 touch a", ["touch a"]],
  ])("wrapper %j", (line, expected) => {
    expect(texts(line)).toEqual(expected);
  });

  test.each(["unshare -r touch a", "setpriv --reuid=1 touch a", "prlimit --nofile=10 touch a", "numactl -C 0 touch a", "su -c 'touch a'", "strace -f touch a", "parallel touch ::: a"])(
    "a program that runs a command not followed here is opaque: %j",
    (line) => {
      const analysed = analyseCommandLine(line);
      expect(analysed.ok && analysed.parts.map((part) => part.opaque !== undefined)).toEqual([true]);
    },
  );

  test("what cannot be seen through is opaque; a bad line does not parse", () => {
    const dynamic = analyseCommandLine('$CMD a; sh -c "$S"');
    expect(dynamic.ok && dynamic.parts.map((part) => part.opaque !== undefined)).toEqual([true, true]);
    expect(analyseCommandLine("echo 'unterminated").ok).toBe(false);
    expect(analyseCommandLine("sh -c 'echo \"x'").ok && (analyseCommandLine("sh -c 'echo \"x'") as { parts: { opaque?: string }[] }).parts[0]?.opaque).toContain("does not parse");
  });

  test("a bare assignment or a declaration is a part a rule must allow", () => {
    expect(texts("PATH=/tmp/evil; npm test")).toEqual(["PATH=/tmp/evil", "npm test"]);
    expect(texts("export PATH=/tmp/evil && npm test")).toEqual(["export PATH=/tmp/evil", "npm test"]);
  });

  test("output redirections are writes of their file; descriptors and /dev/null are not", () => {
    expect(writes("echo a > out.txt")).toEqual(["out.txt"]);
    expect(writes("echo a >> 'my file' 2>&1")).toEqual(["my file"]);
    expect(writes("echo a &> log; echo b >| f; cat <> g")).toEqual(["log", "f", "g"]);
    expect(writes("echo a > /dev/null 2>/dev/stderr >&2")).toEqual([]);
    expect(writes("sh -c 'echo a > inner.txt'")).toEqual(["inner.txt"]);
    expect(writes("echo a > $OUT")).toEqual([undefined]);
    expect(writes("cat < in.txt")).toEqual([]);
  });
});

describe("analyseCommandLine: what an allow rule must name", () => {
  const part = (line: string) => {
    const analysed = analyseCommandLine(line);
    if (!analysed.ok) throw new Error(analysed.error);
    return analysed.parts[0] as { ruled: string; namedThrough: number; mustName: string[]; hidden?: string; opaque?: string };
  };

  test.each([
    ["LANG=C TZ=UTC git status", "git status", 0, []],
    ["PATH=./x:$PATH npm test", "PATH=./x:$PATH npm test", 14, ["sets PATH"]],
    ["sudo -u root npm test", "sudo -u root npm test", 4, ["sudo"]],
    ["env -i LANG=C GIT_DIR=x git log", "env -i GIT_DIR=x git log", 16, ["sets GIT_DIR"]],
    ["GIT_PAGER=cat sh -c 'FOO=1 git log'", "GIT_PAGER=cat FOO=1 git log", 19, ["sets GIT_PAGER", "sets FOO"]],
    ["git -c core.pager=cat log", "git -c core.pager=cat log", 21, ["git -c"]],
    ["npm test --script-shell=./x.sh", "npm test --script-shell=./x.sh", 30, ["npm --script-shell"]],
    ["./bin/git status", "./bin/git status", 9, ["runs ./bin/git"]],
  ])("%j is ruled as %j, named through %d", (line, ruled, through, why) => {
    const seen = part(line);
    expect([seen.ruled, seen.namedThrough, seen.mustName]).toEqual([ruled, through, why]);
  });

  test("hidden: it runs code the line does not name; opaque: the program itself is unknown", () => {
    expect(part("GIT_DIR=x git status").hidden).toContain("GIT_DIR");
    expect(part("FOO=1 git status").hidden).toBeUndefined();
    expect(part("git -c core.pager=cat log").hidden).toContain("git -c");
    expect(part("find . -exec rm {} +").hidden).toBeUndefined();
    for (const line of ["tou?h x", "{rm,-rf,x}", "echo x | sh", "python3 -uc 'x'", "perl -ne 'x'", "source <(echo x)"]) {
      const parts = (analyseCommandLine(line) as { parts: { opaque?: string }[] }).parts;
      expect(`${line}: ${parts.some((candidate) => candidate.opaque !== undefined)}`).toBe(`${line}: true`);
    }
    expect(texts("git $'-c' x status")).toEqual(["git -c x status"]);
  });

  test("programs' writes: tee, cp into a directory, mv both ways, sed -i, undetermined ones", () => {
    const all = (line: string) => (analyseCommandLine(line) as { writes: { path?: string; into?: string; source: string }[] }).writes;
    expect(writes("tee -a a b")).toEqual(["a", "b"]);
    expect(all("cp x/.env dir")).toEqual([{ path: "dir", source: "cp dir", into: ".env" }]);
    expect(writes("cp a b dir")).toEqual(["dir/a", "dir/b"]);
    expect(writes("mv a b")).toEqual(["b", "a"]);
    expect(writes("sed -i.bak -e s/a/b/ f g")).toEqual(["f", "g"]);
    expect(writes("sed s/a/b/ f")).toEqual([]);
    expect(writes("rm *.env; tar xf a.tar; cd x && echo > y; echo > ~/.bashrc")).toEqual([undefined, undefined, undefined, undefined]);
  });
});
