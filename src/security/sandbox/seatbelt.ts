import type { SandboxLayout } from "./sandbox.ts";

// macOS's sandbox-exec (Seatbelt). In SBPL the last matching rule wins: allow
// everything, take writes away, give back the workspace and temp dirs, take
// `.agent/` back again, then take the network away unless allowed, and unix
// sockets (the host's daemons) always, but for the ones the user's config lists
// and, with the network on, the DNS resolver's.
// Written to the documented profile language; not run by the test suite, which
// runs on Linux.

function quote(path: string): string {
  return `"${path.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** The Seatbelt profile for a layout. */
export function seatbeltProfile(layout: SandboxLayout): string {
  const lines = ["(version 1)", "(allow default)", "(deny file-write*)"];
  const writable = ["/dev/null", "/dev/tty", "/dev/dtracehelper"].map((path) => `(literal ${quote(path)})`);
  writable.push(`(subpath ${quote("/private/tmp")})`, `(subpath ${quote("/private/var/folders")})`);
  if (layout.mode === "workspace-write") writable.push(`(subpath ${quote(layout.workspace)})`);
  for (const path of layout.writable ?? []) writable.push(`(subpath ${quote(path)})`);
  lines.push(`(allow file-write* ${writable.join(" ")})`);
  for (const path of [...layout.readOnly, ...(layout.guarded ?? [])]) lines.push(`(deny file-write* (subpath ${quote(path)}))`);
  for (const path of layout.concealed ?? []) lines.push(`(deny file-read* file-write* (subpath ${quote(path)}))`);
  if (!layout.network) lines.push("(deny network-outbound)", "(deny network-inbound)");
  lines.push("(deny network-outbound (remote unix-socket))");
  const sockets = [...(layout.network ? ["/private/var/run/mDNSResponder"] : []), ...layout.unixSockets];
  for (const path of sockets) lines.push(`(allow network-outbound (literal ${quote(path)}))`);
  return `${lines.join("\n")}\n`;
}

export function seatbeltArgs(layout: SandboxLayout, cwd: string, argv: string[]): string[] {
  // sandbox-exec has no --chdir: the process is already started in cwd by the caller.
  void cwd;
  return ["/usr/bin/sandbox-exec", "-p", seatbeltProfile(layout), ...argv];
}

/** Why sandbox-exec cannot be used, or undefined. */
export function probeSeatbelt(): string | undefined {
  return Bun.which("sandbox-exec") === null && Bun.which("/usr/bin/sandbox-exec") === null ? "sandbox-exec is not available" : undefined;
}
