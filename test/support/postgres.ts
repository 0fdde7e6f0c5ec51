// A throw-away PostgreSQL cluster for the tests and benchmarks of the PostgreSQL
// store: `initdb` into a fresh temp dir, the server on a free 127.0.0.1 port with
// its Unix socket inside that dir, stopped and removed again by `stop()`.
//
// Durability settings: the cluster runs with fsync, synchronous_commit and
// full_page_writes off. Our crash tests SIGKILL *our* processes (claimers, the
// Lead, workers), never the server or the machine: a committed transaction is in
// the server's memory and the OS page cache, which survive a client's death, so
// what those tests check is unchanged — and each file's cluster starts in about
// a second instead of several on a shared disk. Benchmarks that compare against
// the file store (which always fsyncs) start the cluster with `durable: true`.
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { afterAll, beforeAll } from "bun:test";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { INSTALL_PREREQUISITES } from "./prerequisites.ts";

export interface PostgresCluster {
  /** `postgres://agent@127.0.0.1:<port>/postgres`: the superuser, trusted locally (no password). */
  readonly url: string;
  readonly port: number;
  /** The temp dir holding the data dir, the socket and the server log. */
  readonly dir: string;
  /** A new, empty database on this cluster; its URL. */
  database(name?: string): Promise<string>;
  /** Stops the server at once and removes its dir. Safe to call twice. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Keep fsync and synchronous commit on (benchmarks against fsyncing stores). */
  durable?: boolean;
  /**
   * Make the cluster's dir (and so its socket) here instead of the temp dir, open
   * to every user (0755): a host service's socket outside /tmp, for the sandbox's tests.
   */
  parent?: string;
}

/** The directory of `initdb`, `pg_ctl` and `postgres`: on PATH, else the newest Debian install. */
export function postgresBinDir(): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  }
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(`PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql/*/bin); install PostgreSQL's server: ${INSTALL_PREREQUISITES}`);
  }
  return join(root, versions[0]!, "bin");
}

const runningAsRoot = () => process.getuid?.() === 0;

/** The server refuses to run as root: as root, run its tools as the `postgres` user. */
function asServerUser(argv: string[]): string[] {
  return runningAsRoot() ? ["runuser", "-u", "postgres", "--", ...argv] : argv;
}

async function run(argv: string[], what: string): Promise<void> {
  const child = Bun.spawn(asServerUser(argv), { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`${what} failed (exit ${code}): ${err.trim() || out.trim()}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Starts a fresh cluster. Call `stop()` in afterAll. */
export async function startPostgres(options: ClusterOptions = {}): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(options.parent ?? tmpdir(), "agent-pg-"));
  const data = join(dir, "data");
  if (options.parent !== undefined) chmodSync(dir, 0o755);
  if (runningAsRoot()) {
    // The temp dir is 0700 root's: the server's user must own it.
    chmodSync(dir, options.parent !== undefined ? 0o755 : 0o700);
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      if (existsSync(join(data, "postmaster.pid"))) await run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"], "pg_ctl stop");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    await run(
      [join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "agent", "--no-sync", "-E", "UTF8", "--no-locale", "--no-instructions"],
      "initdb",
    );
    const settings = [
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${dir}`,
      "-c max_connections=200",
      ...(options.durable ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]),
    ];
    // A port found free may be taken before the server binds it: try another.
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      try {
        await run(
          [join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "server.log"), "-w", "-t", "60", "-o", `-p ${port} ${settings.join(" ")}`, "start"],
          "pg_ctl start",
        );
      } catch (error) {
        if (attempt >= 3) throw error;
        continue;
      }
      const url = `postgres://agent@127.0.0.1:${port}/postgres`;
      let databases = 0;
      return {
        url,
        port,
        dir,
        stop,
        async database(name) {
          databases += 1;
          const db = name ?? `t${databases}_${process.pid}`;
          const sql = new Bun.SQL(url, { max: 1 });
          try {
            await sql.unsafe(`CREATE DATABASE "${db}"`);
          } finally {
            await sql.close();
          }
          return `postgres://agent@127.0.0.1:${port}/${db}`;
        },
      };
    }
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

function postgresIds(): { uid: number; gid: number } {
  const passwd = readFileSync("/etc/passwd", "utf8");
  const line = passwd.split("\n").find((l) => l.startsWith("postgres:"));
  if (!line) throw new Error(`running as ${userInfo().username} (root) and there is no \`postgres\` user to run the server as; create one or run the tests as another user; ${INSTALL_PREREQUISITES}`);
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * One cluster for the calling test file: started before its tests (after
 * `before`, e.g. building the binary), stopped after them. Returns its getter.
 */
export function clusterForFile(before?: () => void): () => PostgresCluster {
  let cluster: PostgresCluster | undefined;
  beforeAll(async () => {
    before?.();
    cluster = await startPostgres();
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error("the test cluster is not started yet: call its getter inside a test");
    return cluster;
  };
}
